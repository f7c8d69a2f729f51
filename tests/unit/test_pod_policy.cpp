// A pod's network policy and its containers' (inherit_network): without
// keys of its own a container gets the pod's; asking for more is refused
// naming the key; network=none tightens; anything else narrower is refused
// as the pod's to set. And the firewall's table (firewall_table): its
// comment names who installed it and for what.
#include "oci/policy/firewall_rules.hpp"
#include "oci/policy/network_policy.hpp"
#include "unit_support.hpp"

#include <string>

using namespace ocirun;

namespace {

NetworkPolicy net(const oci::StringMap &a) {
    oci::StringMap full;
    for (const auto &[k, v] : a)
        full["dev.ocirun." + k] = v;
    auto p = parse_network_policy(full);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return std::move(*p);
}

std::string refusal(const NetworkPolicy &pod, const NetworkPolicy &own) {
    auto r = inherit_network(pod, own);
    cr_assert(!r.has_value(), "accepted");
    return r.error().text();
}

const oci::StringMap kPod = {{"domains", "example.com,*.example.org:8443"},
                             {"local-ports", "5432"},
                             {"deny-domains", "bad.example.org"}};

} // namespace

Test(pod_policy, a_container_without_network_keys_gets_the_pods) {
    auto r = inherit_network(net(kPod), net({}));
    cr_assert(r.has_value());
    cr_assert_str_eq(r->mode.c_str(), "https");
    cr_assert_eq(r->allow.size(), 2u);
    cr_assert_eq(r->local_ports.size(), 1u);
    cr_assert_eq(r->given.size(), 3u, "the keys the container is held to");
}

Test(pod_policy, the_same_keys_however_spelt_are_the_pods) {
    auto r = inherit_network(net(kPod), net({{"network", "https"},
                                             {"domains", "*.example.org:8443, Example.COM"},
                                             {"local-ports", "5432:5432"},
                                             {"deny-domains", "bad.example.org"}}));
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
}

Test(pod_policy, asking_for_more_is_refused_naming_the_key) {
    const NetworkPolicy pod = net(kPod);
    struct {
        oci::StringMap own;
        const char *key;
    } cases[] = {
        {{{"network", "full"}}, "dev.ocirun.network"},
        {{{"domains", "example.com,other.test"}}, "dev.ocirun.domains"},
        {{{"domains", "*.example.com"}}, "dev.ocirun.domains"},
        {{{"domains", "example.com"}, {"local-ports", "6000"}}, "dev.ocirun.local-ports"},
        {{{"domains", "example.com,*.example.org:8443"}, {"local-ports", "5432"}},
         "dev.ocirun.deny-domains"},
        {{{"domains", "example.com"},
          {"deny-domains", "bad.example.org"},
          {"network-mode", "observe"}},
         "dev.ocirun.network-mode"},
    };
    for (const auto &c : cases) {
        std::string why = refusal(pod, net(c.own));
        cr_assert(why.find(std::string("annotations[") + c.key + "]") != std::string::npos &&
                      why.find("more than its pod allows") != std::string::npos,
                  "%s: %s", c.key, why.c_str());
    }
    // local asks for more than none; https than local.
    cr_assert(refusal(net({{"network", "none"}}), net({{"network", "local"}})).find("network") !=
              std::string::npos);
    cr_assert(refusal(net({{"local-ports", "80"}}), net({{"domains", "a.test"}}))
                  .find("more than its pod") != std::string::npos);
}

Test(pod_policy, none_tightens_and_other_narrowing_is_refused) {
    const NetworkPolicy pod = net(kPod);
    auto none = inherit_network(pod, net({{"network", "none"}}));
    cr_assert(none.has_value());
    cr_assert_str_eq(none->mode.c_str(), "none");
    std::string why = refusal(pod, net({{"domains", "example.com"},
                                        {"local-ports", "5432"},
                                        {"deny-domains", "bad.example.org"}}));
    cr_assert(why.find("dev.ocirun.domains") != std::string::npos &&
                  why.find("narrower") != std::string::npos,
              "%s", why.c_str());
    std::string limit = refusal(pod, net({{"domains", "example.com,*.example.org:8443"},
                                          {"local-ports", "5432"},
                                          {"deny-domains", "bad.example.org"},
                                          {"proxy-max-connections", "8"}}));
    cr_assert(limit.find("dev.ocirun.proxy-max-connections") != std::string::npos, "%s",
              limit.c_str());
}

Test(pod_policy, firewall_table_names_its_owner) {
    std::string t = firewall_table("pod-1.a_b", "https");
    cr_assert(t.rfind("table inet oci_run {\n", 0) == 0, "%s", t.c_str());
    cr_assert(t.find("policy drop;") != std::string::npos);
    cr_assert(t.find("oif \"lo\" accept") != std::string::npos);
    cr_assert(t.find("reject with tcp reset") != std::string::npos);
    auto o = firewall_owner(t);
    cr_assert(o.has_value());
    cr_assert_str_eq(o->id.c_str(), "pod-1.a_b");
    cr_assert_str_eq(o->need.c_str(), "https");
    cr_assert(!firewall_owner("table inet oci_run {\n\tchain input {\n\t}\n}\n").has_value());
}

// dev.ocirun.intercept: https only; a container may not ask for it when its
// pod does not, nor go without it when the pod has it (the pod's firewall
// redirects for all); the firewall sends ports 80 and 443 to the helper
// only with it.
Test(pod_policy, intercept_is_the_pods_and_needs_https) {
    oci::StringMap bad = {{"dev.ocirun.network", "local"}, {"dev.ocirun.intercept", "true"}};
    auto local = parse_network_policy(bad);
    cr_assert(!local && local.error().text().find("dev.ocirun.intercept") != std::string::npos);
    auto word = parse_network_policy({{"dev.ocirun.intercept", "yes"}});
    cr_assert(!word && word.error().text().find("expected true or false") != std::string::npos);
    auto port = parse_network_policy({{"dev.ocirun.domains", "a.test"},
                                      {"dev.ocirun.intercept", "true"},
                                      {"dev.ocirun.local-ports", "3443:80"}});
    cr_assert(!port && port.error().text().find("dev.ocirun.local-ports") != std::string::npos);

    const NetworkPolicy plain = net({{"domains", "a.test"}});
    const NetworkPolicy with = net({{"domains", "a.test"}, {"intercept", "true"}});
    std::string more = refusal(plain, with);
    cr_assert(more.find("annotations[dev.ocirun.intercept]") != std::string::npos &&
                  more.find("more than its pod allows") != std::string::npos,
              "%s", more.c_str());
    std::string less = refusal(with, net({{"domains", "a.test"}, {"intercept", "false"}}));
    cr_assert(less.find("dev.ocirun.intercept") != std::string::npos &&
                  less.find("narrower") != std::string::npos,
              "%s", less.c_str());
    auto inherited = inherit_network(with, net({}));
    cr_assert(inherited && inherited->intercept);
    std::string need = with.firewall_need();
    cr_assert(need == "https+intercept", "%s", need.c_str());
    cr_assert_eq(with.listen_ports().size(), 3u);

    std::string t = firewall_table("c1", "https+intercept");
    cr_assert(t.find("tcp dport 443 dnat ip to 127.0.0.1:3443") != std::string::npos, "%s",
              t.c_str());
    cr_assert(t.find("tcp dport 80 dnat ip to 127.0.0.1:3180") != std::string::npos, "%s",
              t.c_str());
    cr_assert(firewall_table("c1", "https").find("dport 443") == std::string::npos);
}
