// The DNS stub's query parser and answers (shim/dns_message.cpp), fed the
// datagrams a container sends to its resolver. Invariants: a query read is
// one question whose name has labels of 1..63 bytes and at most 253 bytes in
// all; the question echoed is the query's own bytes; an answer is a
// response with that id, that question and only records of the type asked.
#include "fuzz_check.hpp"

#include "shim/dns_message.hpp"

#include <sys/socket.h>

using namespace ocirun;
using namespace ocirun::shim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view msg = fuzz::text(data, size);
    auto q = parse_dns_query(msg);
    if (!q) return 0;
    if (q->name.empty() || q->name.size() > 253) fuzz::broken("a name out of bounds", q->name);
    if (msg.substr(12, q->question.size()) != q->question)
        fuzz::broken("the question is not the query's bytes", std::string(msg));
    egress::IpAddr v4{AF_INET, {192, 0, 2, 1}}, v6{AF_INET6, {0x20, 0x01}};
    std::string a = dns_answer(*q, kDnsNoError, {v4, v6, v4});
    if (a.size() < 12 + q->question.size() || (static_cast<uint8_t>(a[2]) & 0x80) == 0 ||
        a.substr(0, 2) != msg.substr(0, 2) || a.substr(12, q->question.size()) != q->question)
        fuzz::broken("an answer without the query's id or question", std::string(msg));
    size_t records = static_cast<uint8_t>(a[7]);
    size_t want = q->qclass == kDnsClassIN && q->qtype == kDnsTypeA      ? 2
                  : q->qclass == kDnsClassIN && q->qtype == kDnsTypeAAAA ? 1
                                                                         : 0;
    if (records != want) fuzz::broken("records of another type", std::to_string(records));
    return 0;
}
