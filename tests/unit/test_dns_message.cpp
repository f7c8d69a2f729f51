// The DNS stub's messages (shim/dns_message.hpp): a standard query with one
// question is read; anything else is not; the answer echoes the question and
// carries only records of the type asked for.
#include "dns_message.hpp"
#include "unit_support.hpp"

#include <sys/socket.h>

#include <string>

using namespace ocirun;
using namespace ocirun::shim;

namespace {

// A query for `name` of `qtype`, id 0x1234, RD set.
std::string query(const std::string &name, uint16_t qtype) {
    std::string m = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    size_t start = 0;
    while (start <= name.size()) {
        size_t dot = name.find('.', start);
        if (dot == std::string::npos) dot = name.size();
        m += static_cast<char>(dot - start);
        m += name.substr(start, dot - start);
        start = dot + 1;
    }
    m += '\0';
    m += static_cast<char>(qtype >> 8);
    m += static_cast<char>(qtype & 0xff);
    m += std::string("\0\1", 2);
    return m;
}

} // namespace

Test(dns_message, a_query_is_read_and_answered) {
    auto q = parse_dns_query(query("a.example.com", kDnsTypeA));
    cr_assert(q.has_value());
    cr_assert(q->name == "a.example.com");
    cr_assert_eq(q->id, 0x1234);
    cr_assert(q->recursion_desired);
    egress::IpAddr v4{AF_INET, {192, 0, 2, 7}};
    egress::IpAddr v6{AF_INET6, {0x20, 0x01, 0x0d, 0xb8}};
    std::string a = dns_answer(*q, kDnsNoError, {v4, v6});
    cr_assert_eq(static_cast<uint8_t>(a[3]) & 0xf, 0, "rcode");
    cr_assert_eq(static_cast<uint8_t>(a[7]), 1, "one record: the A, not the AAAA");
    cr_assert(a.substr(12, q->question.size()) == q->question);
    cr_assert(a.substr(a.size() - 4) == std::string("\xc0\x00\x02\x07", 4));
    std::string nx = dns_answer(*q, kDnsNxDomain, {v4});
    cr_assert_eq(static_cast<uint8_t>(nx[3]) & 0xf, kDnsNxDomain);
    cr_assert_eq(static_cast<uint8_t>(nx[7]), 0);
}

Test(dns_message, anything_but_one_plain_question_is_dropped) {
    std::string m = query("a.test", kDnsTypeA);
    cr_assert(!parse_dns_query(m.substr(0, 11)).has_value());
    std::string answer = m;
    answer[2] = static_cast<char>(0x81); // QR: a response
    cr_assert(!parse_dns_query(answer).has_value());
    std::string two = m;
    two[5] = 2;
    cr_assert(!parse_dns_query(two).has_value());
    std::string compressed = m.substr(0, 12) + std::string("\xc0\x0c", 2) + m.substr(m.size() - 4);
    cr_assert(!parse_dns_query(compressed).has_value());
    cr_assert(!parse_dns_query(m.substr(0, m.size() - 2)).has_value());
    cr_assert(!parse_dns_query(std::string(600, 'x')).has_value());
}

// Sixteen AAAA records of a long name do not fit in 512 bytes: over UDP as
// many as fit, with TC set (the client asks again over TCP, whose answer has
// all sixteen and no TC). It used to send 719 bytes to a client that reads
// 512.
Test(dns_message, an_answer_past_512_bytes_is_truncated_for_udp) {
    std::string name =
        std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + ".test";
    auto q = parse_dns_query(query(name, kDnsTypeAAAA));
    cr_assert(q.has_value());
    std::vector<egress::IpAddr> addrs;
    for (uint8_t i = 0; i < 20; i++)
        addrs.push_back({AF_INET6, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i}});
    std::string udp = dns_answer(*q, kDnsNoError, addrs);
    std::string tcp = dns_answer(*q, kDnsNoError, addrs, 30, kDnsTcpMax);
    size_t fit = (kDnsUdpMax - 12 - q->question.size()) / 28; // 10 here
    cr_assert(fit > 0 && fit < 16);
    cr_assert_eq(udp.size(), 12 + q->question.size() + fit * 28);
    cr_assert_eq(static_cast<uint8_t>(udp[2]) & 0x02, 0x02, "TC");
    cr_assert_eq(static_cast<uint8_t>(udp[7]), fit);
    cr_assert_eq(static_cast<uint8_t>(tcp[2]) & 0x02, 0, "no TC");
    cr_assert_eq(static_cast<uint8_t>(tcp[7]), 16);
    cr_assert_eq(tcp.size(), 12 + q->question.size() + 16 * 28u);
}
