#include "dns_message.hpp"

#include <sys/socket.h>

namespace ocirun::shim {

namespace {

uint16_t be16(std::string_view s, size_t at) {
    return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) |
                                 static_cast<uint8_t>(s[at + 1]));
}

void put16(std::string &out, uint16_t v) {
    out += static_cast<char>(v >> 8);
    out += static_cast<char>(v & 0xff);
}

void put32(std::string &out, uint32_t v) {
    put16(out, static_cast<uint16_t>(v >> 16));
    put16(out, static_cast<uint16_t>(v & 0xffff));
}

} // namespace

std::optional<DnsQuery> parse_dns_query(std::string_view m) {
    if (m.size() < 12 || m.size() > 512) return std::nullopt;
    DnsQuery q;
    q.id = be16(m, 0);
    uint16_t flags = be16(m, 2);
    // QR 0 (a query), opcode 0 (standard); one question, nothing else.
    if ((flags & 0x8000) || ((flags >> 11) & 0xf) != 0) return std::nullopt;
    if (be16(m, 4) != 1 || be16(m, 6) != 0 || be16(m, 8) != 0) return std::nullopt;
    q.recursion_desired = (flags & 0x0100) != 0;
    size_t at = 12;
    for (;;) {
        if (at >= m.size()) return std::nullopt;
        uint8_t len = static_cast<uint8_t>(m[at++]);
        if (len == 0) break;
        if (len > 63 || at + len > m.size()) return std::nullopt; // (0xc0: compression)
        if (!q.name.empty()) q.name += '.';
        q.name.append(m.substr(at, len));
        at += len;
        if (q.name.size() > 253) return std::nullopt;
    }
    if (at + 4 > m.size() || q.name.empty()) return std::nullopt;
    q.qtype = be16(m, at);
    q.qclass = be16(m, at + 2);
    at += 4;
    q.question = std::string(m.substr(12, at - 12));
    return q;
}

std::string dns_answer(const DnsQuery &q, int rcode, const std::vector<egress::IpAddr> &addrs,
                       uint32_t ttl, size_t max_size) {
    std::vector<const egress::IpAddr *> records;
    int family = q.qtype == kDnsTypeA ? AF_INET : q.qtype == kDnsTypeAAAA ? AF_INET6 : 0;
    size_t size = 12 + q.question.size(), record = family == AF_INET ? 16 : 28;
    bool truncated = false;
    if (rcode == kDnsNoError && q.qclass == kDnsClassIN)
        for (const auto &a : addrs) {
            if (a.family != family || records.size() >= 16) continue;
            if (size + record > max_size) {
                truncated = true;
                break;
            }
            records.push_back(&a);
            size += record;
        }
    std::string out;
    put16(out, q.id);
    // QR, TC when records were left out, RD as asked, RA, rcode.
    put16(out, static_cast<uint16_t>(0x8000 | (truncated ? 0x0200 : 0) |
                                     (q.recursion_desired ? 0x0100 : 0) | 0x0080 | (rcode & 0xf)));
    put16(out, 1);
    put16(out, static_cast<uint16_t>(records.size()));
    put16(out, 0);
    put16(out, 0);
    out += q.question;
    for (const auto *a : records) {
        put16(out, 0xc00c); // the question's name
        put16(out, q.qtype);
        put16(out, kDnsClassIN);
        put32(out, ttl);
        size_t n = a->family == AF_INET ? 4 : 16;
        put16(out, static_cast<uint16_t>(n));
        out.append(reinterpret_cast<const char *>(a->bytes), n);
    }
    return out;
}

} // namespace ocirun::shim
