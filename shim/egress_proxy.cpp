#include "egress_proxy.hpp"

#include "forward.hpp"
#include "http_request.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace ocirun::shim {

using egress::Host;
using egress::IpAddr;

Verdict decide(const ProxyConfig &c, const Host &host, uint16_t port) {
    Verdict v;
    if (const egress::Pattern *d = egress::match(c.deny, host, port, true)) {
        v.blocked = true;
        v.reason = "denied by dev.ocirun.deny-domains entry \"" + d->text + "\"";
        return v;
    }
    if (const egress::Pattern *a = egress::match(c.allow, host, port)) {
        v.matched = a->text;
        return v;
    }
    v.blocked = true;
    v.reason = host.name + ":" + std::to_string(port) + " is not in dev.ocirun.domains";
    return v;
}

Pick pick_address(const ProxyConfig &c, const std::string &name, const std::vector<IpAddr> &addrs) {
    Pick p;
    std::string seen;
    for (const IpAddr &raw : addrs) {
        IpAddr a = egress::canonical(raw);
        egress::AddressClass cls = egress::classify(a);
        seen += (seen.empty() ? "" : ", ") + egress::to_string(a) + " (" + egress::class_name(cls) +
                ")";
        if (egress::covering(c.deny, a)) continue;
        if (cls == egress::AddressClass::global || egress::covering(c.allow, a)) {
            p.addr = a;
            return p;
        }
    }
    p.blocked = true;
    p.reason = addrs.empty() ? name + " does not resolve"
                             : name + " resolves to no address it may reach: " + seen;
    if (!addrs.empty()) p.addr = egress::canonical(addrs.front());
    return p;
}

// --- name resolution -------------------------------------------------------

namespace {

void wake(union sigval v) {
    uint64_t one = 1;
    (void)!::write(v.sival_int, &one, sizeof one);
}

// Every address of `name` in a hosts-format file.
std::vector<IpAddr> from_hosts_file(const std::string &path, const std::string &name) {
    std::vector<IpAddr> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream f(line);
        std::string addr, n;
        if (!(f >> addr)) continue;
        while (f >> n) {
            for (char &ch : n)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (n != name) continue;
            IpAddr a;
            a.family = addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
            if (::inet_pton(a.family, addr.c_str(), a.bytes) == 1) out.push_back(a);
        }
    }
    return out;
}

} // namespace

Resolver::Resolver(std::string hosts_file) : hosts_file_(std::move(hosts_file)) {}

Resolver::~Resolver() {
    for (auto &p : pending_)
        if (::gai_cancel(&p->cb) == EAI_CANCELED && p->cb.ar_result)
            ::freeaddrinfo(p->cb.ar_result);
    // Requests still running keep their memory: the helper is exiting.
    for (auto &p : pending_)
        (void)p.release();
    if (efd_ >= 0) ::close(efd_);
}

bool Resolver::start(Loop &loop) {
    efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return efd_ >= 0 && loop.watch(efd_, EPOLLIN, this);
}

void Resolver::resolve(Loop &loop, const std::string &name, Done done) {
    if (!hosts_file_.empty()) {
        auto addrs = from_hosts_file(hosts_file_, name);
        return done(loop, std::move(addrs), "");
    }
    auto p = std::make_unique<Pending>();
    p->name = name;
    p->done = std::move(done);
    p->hints.ai_family = AF_UNSPEC;
    p->hints.ai_socktype = SOCK_STREAM;
    p->cb.ar_name = p->name.c_str();
    p->cb.ar_request = &p->hints;
    gaicb *list[1] = {&p->cb};
    struct sigevent sev {};
    sev.sigev_notify = SIGEV_THREAD;
    sev.sigev_notify_function = wake;
    sev.sigev_value.sival_int = efd_;
    int r = ::getaddrinfo_a(GAI_NOWAIT, list, 1, &sev);
    if (r != 0) return p->done(loop, {}, ::gai_strerror(r));
    pending_.push_back(std::move(p));
}

void Resolver::on_ready(Loop &loop, int, uint32_t) {
    uint64_t n;
    (void)!::read(efd_, &n, sizeof n);
    for (auto it = pending_.begin(); it != pending_.end();) {
        int r = ::gai_error(&(*it)->cb);
        if (r == EAI_INPROGRESS) {
            ++it;
            continue;
        }
        std::unique_ptr<Pending> p = std::move(*it);
        it = pending_.erase(it);
        std::vector<IpAddr> addrs;
        for (addrinfo *ai = p->cb.ar_result; ai; ai = ai->ai_next) {
            IpAddr a = egress::from_sockaddr(ai->ai_addr);
            bool dup = false;
            for (const auto &x : addrs)
                dup = dup || x == a;
            if (a.family && !dup) addrs.push_back(a);
        }
        if (p->cb.ar_result) ::freeaddrinfo(p->cb.ar_result);
        std::string err = r == 0 || r == EAI_NONAME ? "" : ::gai_strerror(r);
        p->done(loop, std::move(addrs), err);
    }
}

// --- one client connection -------------------------------------------------

namespace {

const char *status_text(int status) {
    switch (status) {
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 405:
        return "Method Not Allowed";
    case 431:
        return "Request Header Fields Too Large";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

// Everything or nothing, on a non-blocking socket whose buffer is empty (a
// fresh connection): a short write is an error.
bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

void answer(int fd, int status, const std::string &reason) {
    std::string body = "oci-run egress proxy: " + reason + "\n";
    std::string msg =
        "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
        "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    (void)send_all(fd, msg);
}

constexpr std::string_view kConnect = "CONNECT ";

// Does `data` (the first bytes inside a tunnel) start a CONNECT? nullopt
// while too short to say.
std::optional<bool> nested_connect(std::string_view data) {
    size_t n = std::min(data.size(), kConnect.size());
    bool prefix = ::strncasecmp(data.data(), kConnect.data(), n) == 0;
    if (!prefix) return false;
    if (n < kConnect.size()) return std::nullopt;
    return true;
}

class ProxyConn : public Handler {
  public:
    ProxyConn(EgressProxy &px, int client) : px_(px), client_(client) {
        ev_.observe = px.config().observe;
    }
    ~ProxyConn() override {
        if (client_ >= 0) ::close(client_);
        if (up_ >= 0) ::close(up_);
    }
    void on_ready(Loop &loop, int fd, uint32_t events) override;

  private:
    void read_head(Loop &loop);
    void decided(Loop &loop);
    void resolved(Loop &loop, std::vector<IpAddr> addrs, const std::string &err);
    void connect_to(Loop &loop, const IpAddr &addr);
    void connected(Loop &loop, int err);
    void probe(Loop &loop);
    void relay(Loop &loop);
    // Refuse with `status`: answer, log, close.
    void refuse(Loop &loop, int status, const std::string &reason);
    void finish(Loop &loop);

    EgressProxy &px_;
    int client_, up_ = -1;
    std::string buf_;
    uint64_t sent_up_ = 0; // bytes sent upstream before the relay took over
    egress::Request req_;
    EgressEvent ev_;
};

void ProxyConn::finish(Loop &loop) {
    if (client_ >= 0) loop.unwatch(client_);
    px_.active--;
    loop.retire(this);
}

void ProxyConn::refuse(Loop &loop, int status, const std::string &reason) {
    ev_.event = "refused";
    ev_.blocked = true;
    ev_.reason = reason;
    px_.log().write(ev_);
    answer(client_, status, reason);
    finish(loop);
}

void ProxyConn::on_ready(Loop &loop, int, uint32_t events) {
    (void)events;
    if (up_ >= 0) return probe(loop);
    read_head(loop);
}

void ProxyConn::read_head(Loop &loop) {
    char tmp[4096];
    for (;;) {
        ssize_t n = ::recv(client_, tmp, sizeof tmp, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) return finish(loop); // gone before asking anything
        buf_.append(tmp, static_cast<size_t>(n));
        if (buf_.size() > 20000) break;
    }
    egress::ParseResult r = egress::parse_request(buf_);
    if (r.state == egress::ParseState::incomplete) return;
    loop.unwatch(client_);
    if (r.state == egress::ParseState::bad) {
        ev_.host = r.req.host;
        ev_.port = r.req.port;
        ev_.method = r.req.method;
        return refuse(loop, r.status, r.reason);
    }
    req_ = std::move(r.req);
    ev_.method = req_.method;
    ev_.host = req_.host;
    ev_.port = req_.port;
    auto host = egress::normalize_host(req_.host);
    if (!host) return refuse(loop, 403, host.error().text());
    ev_.host = host->name;
    Verdict v = decide(px_.config(), *host, req_.port);
    ev_.matched = v.matched;
    if (v.blocked) {
        if (!ev_.observe) return refuse(loop, 403, v.reason);
        ev_.blocked = true;
        ev_.reason = v.reason;
    }
    if (host->is_address) return connect_to(loop, host->addr);
    px_.resolver().resolve(loop, host->name,
                           [this](Loop &l, std::vector<IpAddr> addrs, std::string err) {
                               resolved(l, std::move(addrs), err);
                           });
}

void ProxyConn::resolved(Loop &loop, std::vector<IpAddr> addrs, const std::string &err) {
    if (addrs.empty())
        return refuse(loop, 502, ev_.host + " does not resolve" + (err.empty() ? "" : ": " + err));
    Pick p = pick_address(px_.config(), ev_.host, addrs);
    if (p.blocked) {
        if (!ev_.observe) return refuse(loop, 403, p.reason);
        ev_.blocked = true;
        ev_.reason += (ev_.reason.empty() ? "" : "; ") + p.reason;
    }
    connect_to(loop, p.addr);
}

void ProxyConn::connect_to(Loop &loop, const IpAddr &addr) {
    ev_.address = egress::to_string(addr);
    up_ = ::socket(addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (up_ < 0) return refuse(loop, 502, std::string("socket: ") + std::strerror(errno));
    dial(loop, up_, to_sockaddr(addr, req_.port), [this](Loop &l, int err) { connected(l, err); });
}

void ProxyConn::connected(Loop &loop, int err) {
    if (err != 0)
        return refuse(loop, 502,
                      "connect to " + ev_.address + ":" + std::to_string(req_.port) + ": " +
                          std::strerror(err));
    ev_.event = "allowed";
    px_.log().write(ev_);
    std::string_view rest = std::string_view(buf_).substr(req_.head_len);
    if (req_.kind == egress::Request::Kind::http) {
        if (!send_all(up_, req_.forward_head) || !send_all(up_, rest)) return finish(loop);
        sent_up_ = req_.forward_head.size() + rest.size();
        return relay(loop);
    }
    if (!send_all(client_, "HTTP/1.1 200 Connection established\r\n\r\n")) return finish(loop);
    buf_.erase(0, req_.head_len);
    probe(loop);
}

// The first bytes inside a CONNECT tunnel must not be another CONNECT (a
// tunnel through an allowed host that is itself a proxy would reach any).
void ProxyConn::probe(Loop &loop) {
    std::string seen = buf_;
    bool eof = false;
    if (seen.size() < kConnect.size()) {
        char tmp[16];
        ssize_t n = ::recv(client_, tmp, sizeof tmp, MSG_PEEK);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return finish(loop);
        if (n == 0) eof = true;
        if (n > 0) seen.append(tmp, static_cast<size_t>(n));
    }
    if (seen.empty() && eof) {
        // Closed without a byte: the tunnel ends here, and says so.
        ev_.event = "close";
        ev_.bytes = true;
        px_.log().write(ev_);
        return finish(loop);
    }
    std::optional<bool> nested = seen.empty() ? std::nullopt : nested_connect(seen);
    if (!nested && eof) nested = false;
    if (!nested) {
        // Wait for more bytes (or EOF).
        if (!loop.watch(client_, EPOLLIN, this)) return finish(loop);
        return;
    }
    loop.unwatch(client_);
    if (*nested) {
        ev_.blocked = true;
        ev_.reason = "a second CONNECT inside the tunnel";
        if (!ev_.observe) {
            ev_.event = "refused";
            px_.log().write(ev_);
            return finish(loop);
        }
    }
    if (!buf_.empty() && !send_all(up_, buf_)) return finish(loop);
    sent_up_ = buf_.size();
    relay(loop);
}

void ProxyConn::relay(Loop &loop) {
    EgressProxy &px = px_;
    EgressEvent ev = ev_;
    uint64_t sent = sent_up_;
    ev.event = "close";
    ev.bytes = true;
    int c = client_, u = up_;
    client_ = up_ = -1;
    px.active++; // the relay's own count; this connection's ends in finish()
    finish(loop);
    Relay *r =
        Relay::start(loop, px.pool(), c, u, [&px, ev, sent](uint64_t up, uint64_t down) mutable {
            ev.bytes_up = sent + up;
            ev.bytes_down = down;
            px.log().write(ev);
            px.active--;
        });
    if (!r) {
        // No pipes (the helper is out of descriptors): both sockets are
        // closed without the callback, so the count is given back here, or
        // the place would be lost for good.
        ev.bytes_up = sent;
        ev.reason = "no pipe for the relay (out of file descriptors)";
        px.log().write(ev);
        px.active--;
    }
}

} // namespace

EgressProxy::~EgressProxy() {
    ::close(listener_);
}

void EgressProxy::on_ready(Loop &loop, int, uint32_t) {
    for (;;) {
        int c = accept_connection(listener_);
        if (c < 0) return;
        if (active >= config_.max_connections) {
            EgressEvent ev;
            ev.event = "refused";
            ev.blocked = true;
            ev.observe = config_.observe;
            ev.reason = "more than " + std::to_string(config_.max_connections) +
                        " connections at once (dev.ocirun.proxy-max-connections)";
            log_.write(ev);
            answer(c, 503, ev.reason);
            ::close(c);
            continue;
        }
        active++;
        auto *conn = new ProxyConn(*this, c);
        if (!loop.watch(c, EPOLLIN, conn)) {
            active--;
            delete conn;
        }
    }
}

} // namespace ocirun::shim
