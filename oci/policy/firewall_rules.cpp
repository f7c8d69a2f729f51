#include "oci/policy/firewall_rules.hpp"

#include "oci/policy/network_policy.hpp"

#include <initializer_list>

namespace ocirun {

namespace {

constexpr std::string_view kCommentStart = "\tcomment \"oci-run container ";
constexpr std::string_view kCommentNeed = " network ";

} // namespace

std::string firewall_table(const std::string &id, const std::string &need) {
    std::string t = std::string("table ") + kFirewallFamily + " " + kFirewallTable + " {\n";
    t += std::string(kCommentStart) + id + std::string(kCommentNeed) + need + "\"\n";
    // raw (-300): before conntrack and any other table's filter.
    auto chain = [&](const char *name, std::initializer_list<const char *> rules) {
        t += std::string("\tchain ") + name + " {\n\t\ttype filter hook " + name +
             " priority raw; policy drop;\n";
        for (const char *r : rules)
            t += std::string("\t\t") + r + "\n";
        t += "\t}\n";
    };
    chain("input", {"iif \"lo\" accept"});
    t += "\n";
    chain("forward", {});
    t += "\n";
    // Answered, not dropped: a dropped SYN leaves connect(2) retrying for
    // minutes; a reset or an ICMP error fails it at once.
    const std::initializer_list<const char *> refuse = {"oif \"lo\" accept",
                                                        "meta l4proto tcp reject with tcp reset",
                                                        "reject with icmpx admin-prohibited"};
    const bool intercept = need == "https+intercept";
    if (need != "https" && !intercept) {
        chain("output", refuse);
    } else {
        // DNS to any server goes on to the nat hook, which sends it to the
        // helper's stub on loopback; after it (priority filter) whatever
        // still would leave is refused.
        // With intercept, TCP to ports 80 and 443 likewise, to the helper's
        // listeners for them.
        auto to = [](uint16_t port) { return "dnat ip to 127.0.0.1:" + std::to_string(port); };
        if (intercept)
            chain("output",
                  {"oif \"lo\" accept", "udp dport 53 accept", "tcp dport 53 accept",
                   "tcp dport 80 accept", "tcp dport 443 accept",
                   "meta l4proto tcp reject with tcp reset", "reject with icmpx admin-prohibited"});
        else
            chain("output",
                  {"oif \"lo\" accept", "udp dport 53 accept", "tcp dport 53 accept",
                   "meta l4proto tcp reject with tcp reset", "reject with icmpx admin-prohibited"});
        t += "\n";
        t += "\tchain dns {\n\t\ttype nat hook output priority -100; policy accept;\n";
        t += "\t\toif != \"lo\" udp dport 53 " + to(kDnsStubPort) + "\n";
        t += "\t\toif != \"lo\" tcp dport 53 " + to(kDnsStubPort) + "\n";
        if (intercept) {
            t += "\t\toif != \"lo\" tcp dport 80 " + to(kInterceptHttpPort) + "\n";
            t += "\t\toif != \"lo\" tcp dport 443 " + to(kInterceptTlsPort) + "\n";
        }
        t += "\t}\n\n";
        // (The hook's output interface stays the one before the redirect.)
        t += "\tchain output_after_dns {\n\t\ttype filter hook output priority filter; policy "
             "drop;\n";
        t += "\t\toif \"lo\" accept\n";
        for (const char *proto : {"udp", "tcp"})
            t += std::string("\t\tip daddr 127.0.0.1 ") + proto + " dport " +
                 std::to_string(kDnsStubPort) + " accept\n";
        if (intercept)
            for (uint16_t port : {kInterceptHttpPort, kInterceptTlsPort})
                t += "\t\tip daddr 127.0.0.1 tcp dport " + std::to_string(port) + " accept\n";
        for (const char *r : refuse)
            if (std::string_view(r).rfind("oif", 0) != 0) t += std::string("\t\t") + r + "\n";
        t += "\t}\n";
    }
    t += "}\n";
    return t;
}

std::optional<FirewallOwner> firewall_owner(std::string_view listing) {
    size_t at = listing.find(kCommentStart);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = listing.substr(at + kCommentStart.size());
    size_t end = rest.find("\"\n");
    size_t need = rest.find(kCommentNeed);
    if (end == std::string_view::npos || need == std::string_view::npos || need > end)
        return std::nullopt;
    FirewallOwner o;
    o.id = std::string(rest.substr(0, need));
    o.need = std::string(rest.substr(need + kCommentNeed.size(), end - need - kCommentNeed.size()));
    if (o.id.empty() || o.need.empty()) return std::nullopt;
    return o;
}

} // namespace ocirun
