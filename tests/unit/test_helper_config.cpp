// The network helper's configuration document (oci/policy/helper_config.hpp):
// what the runtime parsed is what the helper reads back, member for member,
// and a document the runtime did not write is refused naming the member.
#include "oci/policy/helper_config.hpp"
#include "oci/policy/network_policy.hpp"
#include "unit_support.hpp"

#include <string>

using namespace ocirun;

namespace {

HelperConfig from_annotations(const oci::StringMap &a) {
    auto net = parse_network_policy(a);
    cr_assert(net.has_value(), "%s", net ? "" : net.error().text().c_str());
    HelperConfig c;
    for (const auto &f : net->local_ports)
        c.forwards.push_back({10 + static_cast<int>(c.forwards.size()), f.host_port});
    if (!net->publish.empty()) c.netns_fd = 7;
    c.publish = net->publish;
    if (net->proxy()) c.proxy_fd = 8;
    if (net->intercept) {
        c.intercept_http_fd = 20;
        c.intercept_tls_fd = 21;
        c.dns_fd = 22;
        c.dns_tcp_fd = 23;
    }
    c.allow = net->allow;
    c.deny = net->deny;
    c.observe = net->observe;
    c.max_connections = net->max_connections;
    c.forward_max_connections = net->forward_max_connections;
    return c;
}

std::string error_of(const std::string &text) {
    auto c = parse_helper_config(text);
    cr_assert(!c.has_value(), "accepted: %s", text.c_str());
    return c.error().text();
}

} // namespace

Test(helper_config, round_trip_of_a_parsed_policy) {
    HelperConfig c = from_annotations({
        {"dev.ocirun.domains", "example.com,*.example.org:8443,10.0.0.0/8,[fd00::]/8:443,::1"},
        {"dev.ocirun.deny-domains", "bad.example.com"},
        {"dev.ocirun.network-mode", "observe"},
        {"dev.ocirun.proxy-max-connections", "17"},
        {"dev.ocirun.publish", "127.0.0.1:8080:80,[::1]:8081:81"},
        {"dev.ocirun.local-ports", "5432,6000:7000"},
        {"dev.ocirun.intercept", "true"},
    });
    std::string text = write_helper_config(c);
    auto back = parse_helper_config(text);
    cr_assert(back.has_value(), "%s: %s", back ? "" : back.error().text().c_str(), text.c_str());
    // The same document again: nothing lost or changed on the way.
    std::string again = write_helper_config(*back);
    cr_assert_str_eq(again.c_str(), text.c_str());
    cr_assert_eq(back->allow.size(), 5u);
    cr_assert_eq(back->allow[1].kind, egress::Pattern::Kind::subdomains);
    cr_assert_str_eq(back->allow[1].name.c_str(), "example.org");
    cr_assert_eq(back->allow[1].ports.size(), 1u);
    cr_assert_eq(back->allow[1].ports[0], 8443);
    cr_assert_eq(back->allow[3].kind, egress::Pattern::Kind::address);
    cr_assert_eq(back->allow[3].prefix, 8);
    cr_assert(back->allow[3].net == c.allow[3].net);
    cr_assert_str_eq(back->allow[3].text.c_str(), "[fd00::]/8:443");
    cr_assert_eq(back->deny.size(), 1u);
    cr_assert(back->observe);
    cr_assert_eq(back->max_connections, 17);
    cr_assert_eq(back->publish.size(), 2u);
    cr_assert(back->publish[1].host_addr == c.publish[1].host_addr);
    cr_assert_eq(back->publish[1].container_port, 81);
    cr_assert_eq(back->forwards.size(), 2u);
    cr_assert_eq(back->forwards[1].fd, 11);
    cr_assert_eq(back->forwards[1].host_port, 7000);
    cr_assert_eq(back->netns_fd, 7);
    cr_assert_eq(back->proxy_fd, 8);
    cr_assert_eq(back->intercept_http_fd, 20);
    cr_assert_eq(back->intercept_tls_fd, 21);
    cr_assert_eq(back->dns_fd, 22);
    cr_assert_eq(back->dns_tcp_fd, 23);
}

Test(helper_config, refusals_name_the_member) {
    unit::expect_eq(error_of("{\"version\": 2}"), "version: version 2 is not 1");
    cr_assert(error_of("{\"version\": 1, \"extra\": 1}").starts_with("extra: unknown member"));
    cr_assert(error_of("{\"version\": 1, \"publish\": [{\"hostAddress\": \"1.2.3.4\", "
                       "\"hostPort\": 1, \"containerPort\": 2}]}")
                  .starts_with("publish: needs netnsFd"));
    cr_assert(error_of("{\"version\": 1, \"netnsFd\": 5, \"publish\": [{\"hostAddress\": "
                       "\"1.2.3\", \"hostPort\": 1, \"containerPort\": 2}]}")
                  .starts_with("publish[0].hostAddress: \"1.2.3\" is not an IP address"));
    cr_assert(error_of("{\"version\": 1, \"proxy\": {\"fd\": 5, \"allow\": [{\"kind\": "
                       "\"regex\", \"name\": \"x\"}]}}")
                  .starts_with("proxy.allow[0].kind: unknown kind"));
    cr_assert(error_of("{\"version\": 1, \"forward\": [{\"fd\": 1, \"hostPort\": 80}]}")
                  .starts_with("forward[0].fd:"));
}
