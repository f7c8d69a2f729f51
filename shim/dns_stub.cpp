#include "dns_stub.hpp"

#include "forward.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <memory>

namespace ocirun::shim {

namespace {

// A TCP client's socket, shared with the answers still being looked up:
// they write only while it is open (its number may be another socket's
// once it is closed).
struct Wire {
    int fd;
    bool open = true;
};

// Largest query taken over TCP: a question is at most 12 + 255 + 4 bytes.
constexpr size_t kTcpQueryMax = 512;

// One TCP client of the stub: its queries, each answered when it is looked
// up (the order may differ: the answer carries the query's id).
class DnsTcpConn : public Handler, public Awaiting {
  public:
    DnsTcpConn(DnsStub &stub, EgressProxy &px, int fd)
        : stub_(stub), px_(px), wire_(std::make_shared<Wire>(Wire{fd})) {
        px_.await(*this);
    }
    ~DnsTcpConn() override { ::close(wire_->fd); }
    void on_ready(Loop &loop, int fd, uint32_t events) override;
    void expired(Loop &loop) override { close(loop); }

  private:
    void close(Loop &loop) {
        wire_->open = false;
        px_.awaited(*this);
        loop.unwatch(wire_->fd);
        px_.release();
        loop.retire(this);
    }

    DnsStub &stub_;
    EgressProxy &px_;
    std::shared_ptr<Wire> wire_;
    std::string in_;
};

void DnsTcpConn::on_ready(Loop &loop, int, uint32_t) {
    char buf[4096];
    ssize_t n = ::recv(wire_->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) return close(loop); // EOF or an error: pending answers go nowhere
    in_.append(buf, static_cast<size_t>(n));
    while (in_.size() >= 2) {
        size_t len =
            static_cast<size_t>(static_cast<uint8_t>(in_[0])) << 8 | static_cast<uint8_t>(in_[1]);
        if (len == 0 || len > kTcpQueryMax) return close(loop);
        if (in_.size() < 2 + len) break;
        auto q = parse_dns_query(std::string_view(in_).substr(2, len));
        in_.erase(0, 2 + len);
        if (!q) return close(loop);
        px_.await(*this); // the next query's time starts now
        stub_.answer(loop, *q, kDnsTcpMax, [wire = wire_](const std::string &answer) {
            if (!wire->open) return;
            std::string msg;
            msg += static_cast<char>(answer.size() >> 8);
            msg += static_cast<char>(answer.size() & 0xff);
            msg += answer;
            // Whole or not at all: a client that reads nothing while its
            // buffer fills is cut off (the next read sees the shutdown).
            ssize_t w = ::send(wire->fd, msg.data(), msg.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (w != static_cast<ssize_t>(msg.size())) ::shutdown(wire->fd, SHUT_RDWR);
        });
    }
    if (in_.size() > 2 + kTcpQueryMax) close(loop);
}

} // namespace

DnsStub::~DnsStub() {
    ::close(udp_);
    if (tcp_ >= 0) ::close(tcp_);
}

bool DnsStub::start(Loop &loop) {
    return loop.watch(udp_, EPOLLIN, this) && (tcp_ < 0 || loop.watch(tcp_, EPOLLIN, this));
}

std::optional<std::string> DnsStub::allowed(const std::string &name) const {
    const ProxyConfig &config = proxy_.config();
    auto host = egress::normalize_host(name);
    if (!host || host->is_address) return std::nullopt;
    if (config.observe) return host->name;
    std::vector<uint16_t> ports = {443, 80};
    for (const auto &p : config.allow)
        ports.insert(ports.end(), p.ports.begin(), p.ports.end());
    for (uint16_t port : ports)
        if (!decide(config, *host, port).blocked) return host->name;
    return std::nullopt;
}

void DnsStub::answer(Loop &loop, const DnsQuery &q, size_t max_size, Reply reply) {
    auto name = allowed(q.name);
    if (!name) return reply(dns_answer(q, kDnsNxDomain, {}, 30, max_size));
    if (q.qclass != kDnsClassIN || (q.qtype != kDnsTypeA && q.qtype != kDnsTypeAAAA))
        return reply(dns_answer(q, kDnsNoError, {}, 30, max_size));
    if (pending_ >= kMaxPending) return reply(dns_answer(q, kDnsRefused, {}, 30, max_size));
    pending_++;
    proxy_.resolver().resolve(
        loop, *name,
        [this, q, max_size, reply = std::move(reply)](Loop &, std::vector<egress::IpAddr> addrs,
                                                      std::string error) {
            pending_--;
            reply(dns_answer(q, error.empty() ? kDnsNoError : kDnsServFail, addrs, 30, max_size));
        });
}

void DnsStub::on_ready(Loop &loop, int fd, uint32_t) {
    if (fd == udp_) return read_udp(loop);
    accept_tcp(loop);
}

// At most kBatch queries per wake-up: the loop is level-triggered, so the
// rest wait for the next round, after the helper's other connections (a
// flood of queries once kept the whole loop here for seconds).
void DnsStub::read_udp(Loop &loop) {
    for (int i = 0; i < kBatch; i++) {
        char buf[512];
        sockaddr_storage from{};
        socklen_t len = sizeof from;
        ssize_t n = ::recvfrom(udp_, buf, sizeof buf, MSG_DONTWAIT,
                               reinterpret_cast<sockaddr *>(&from), &len);
        if (n < 0) return; // EAGAIN: all read
        auto q = parse_dns_query(std::string_view(buf, static_cast<size_t>(n)));
        if (!q) continue;
        answer(loop, *q, kDnsUdpMax, [fd = udp_, from, len](const std::string &answer) {
            (void)::sendto(fd, answer.data(), answer.size(), MSG_DONTWAIT,
                           reinterpret_cast<const sockaddr *>(&from), len);
        });
    }
}

// A client over the proxy's limits is closed at once (its refusal is an
// egress event, as the proxy's are).
void DnsStub::accept_tcp(Loop &loop) {
    for (int i = 0; i < kBatch; i++) {
        int c = accept_connection(tcp_);
        if (c < 0) return;
        if (!proxy_.take_place("dns", "DNS over TCP: ").empty()) {
            reset_connection(c);
            continue;
        }
        auto *conn = new DnsTcpConn(*this, proxy_, c);
        if (!loop.watch(c, EPOLLIN, conn)) {
            proxy_.awaited(*conn);
            proxy_.release();
            delete conn;
        }
    }
}

} // namespace ocirun::shim
