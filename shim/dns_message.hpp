// DNS messages as the helper's stub reads and answers them (RFC 1035): one
// question per query, answers of A or AAAA records. Pure code, shared with
// the unit and fuzz suites.
#pragma once

#include "oci/policy/egress_rules.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun::shim {

struct DnsQuery {
    uint16_t id = 0;
    bool recursion_desired = false;
    std::string name;     // dotted, as asked (no trailing dot)
    uint16_t qtype = 0;   // 1 A, 28 AAAA, ...
    uint16_t qclass = 0;  // 1 IN
    std::string question; // its bytes, echoed in the answer
};

inline constexpr uint16_t kDnsTypeA = 1, kDnsTypeAAAA = 28, kDnsClassIN = 1;
inline constexpr int kDnsNoError = 0, kDnsFormErr = 1, kDnsServFail = 2, kDnsNxDomain = 3,
                     kDnsRefused = 5;

// A standard query with exactly one question and names without compression;
// anything else is nullopt (the stub drops it).
std::optional<DnsQuery> parse_dns_query(std::string_view msg);

// The answer to `q` with `rcode`, and one record (TTL `ttl`) per address of
// the type it asked for (at most 16), as many as fit in `max_size` bytes:
// with fewer, the answer says it is truncated (TC), and the client asks
// again over TCP.
inline constexpr size_t kDnsUdpMax = 512, kDnsTcpMax = 65535;
std::string dns_answer(const DnsQuery &q, int rcode, const std::vector<egress::IpAddr> &addrs,
                       uint32_t ttl = 30, size_t max_size = kDnsUdpMax);

} // namespace ocirun::shim
