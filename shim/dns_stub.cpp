#include "dns_stub.hpp"

#include "dns_message.hpp"

#include <sys/socket.h>

namespace ocirun::shim {

std::optional<std::string> DnsStub::allowed(const std::string &name) const {
    auto host = egress::normalize_host(name);
    if (!host || host->is_address) return std::nullopt;
    if (config_.observe) return host->name;
    std::vector<uint16_t> ports = {443, 80};
    for (const auto &p : config_.allow)
        ports.insert(ports.end(), p.ports.begin(), p.ports.end());
    for (uint16_t port : ports)
        if (!decide(config_, *host, port).blocked) return host->name;
    return std::nullopt;
}

// At most kBatch queries per wake-up: the loop is level-triggered, so the
// rest wait for the next round, after the helper's other connections (a
// flood of queries once kept the whole loop here for seconds).
void DnsStub::on_ready(Loop &loop, int, uint32_t) {
    for (int i = 0; i < kBatch; i++) {
        char buf[512];
        sockaddr_storage from{};
        socklen_t len = sizeof from;
        ssize_t n = ::recvfrom(fd_, buf, sizeof buf, MSG_DONTWAIT,
                               reinterpret_cast<sockaddr *>(&from), &len);
        if (n < 0) return; // EAGAIN: all read
        auto q = parse_dns_query(std::string_view(buf, static_cast<size_t>(n)));
        if (!q) continue;
        auto reply = [fd = fd_, from, len](const std::string &answer) {
            (void)::sendto(fd, answer.data(), answer.size(), MSG_DONTWAIT,
                           reinterpret_cast<const sockaddr *>(&from), len);
        };
        auto name = allowed(q->name);
        if (!name) {
            reply(dns_answer(*q, kDnsNxDomain, {}));
            continue;
        }
        if (q->qclass != kDnsClassIN || (q->qtype != kDnsTypeA && q->qtype != kDnsTypeAAAA)) {
            reply(dns_answer(*q, kDnsNoError, {}));
            continue;
        }
        if (pending_ >= kMaxPending) {
            reply(dns_answer(*q, kDnsRefused, {}));
            continue;
        }
        pending_++;
        resolver_.resolve(
            loop, *name,
            [this, q = *q, reply](Loop &, std::vector<egress::IpAddr> addrs, std::string error) {
                pending_--;
                reply(dns_answer(q, error.empty() ? kDnsNoError : kDnsServFail, addrs));
            });
    }
}

} // namespace ocirun::shim
