// What the runtime hands the network helper (oci-run-shim): the container's
// network policy as the runtime parsed and checked it, with the descriptor
// of each listener it passes. The helper parses no annotation: it reads this
// one document from a sealed memfd (--config-fd), so what the runtime
// checked is what the helper enforces.
//
// The document (JSON, version 1):
//
//   { "version": 1,
//     "forward": [ { "fd": 5, "hostPort": 8080 } ],          dev.ocirun.local-ports
//     "netnsFd": 6,                                          with "publish"
//     "publish": [ { "hostAddress": "127.0.0.1", "hostPort": 8080,
//                    "containerPort": 80 } ],                dev.ocirun.publish
//     "proxy": { "fd": 7, "observe": false, "maxConnections": 256,
//                "allow": [ PATTERN ], "deny": [ PATTERN ],   dev.ocirun.domains, ...
//                "dnsFd": 8,                                  a joined namespace's DNS
//                "interceptHttpFd": 9, "interceptTlsFd": 10 },  dev.ocirun.intercept
//     "forwardMaxConnections": 128, "totalMaxConnections": 512 }
//
//   PATTERN: { "kind": "exact" | "subdomains" | "address",
//              "name": "example.com",                        exact, subdomains
//              "network": "10.0.0.0", "prefix": 8,            address
//              "ports": [ 443 ],                              none: 80 and 443
//              "text": "*.example.com:443" }                  as the annotation wrote it
//
// Every member but "version" may be left out (none of that kind); unknown
// members are refused, like a version other than 1.
#pragma once

#include "oci/error.hpp"
#include "oci/policy/egress_rules.hpp"
#include "oci/policy/network_policy.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

inline constexpr int kHelperConfigVersion = 1;

struct HelperForward {
    int fd = -1; // the listener the init made inside the container
    uint16_t host_port = 0;
};

struct HelperConfig {
    std::vector<HelperForward> forwards;
    int netns_fd = -1; // the container's network namespace, for publish
    std::vector<PortPublish> publish;
    int proxy_fd = -1; // the proxy's listener inside the container, or -1: no proxy
    // The DNS stub's UDP socket and TCP listener inside the container (a
    // joined namespace's firewall sends DNS there), or -1; it answers the
    // proxy's allowed names.
    int dns_fd = -1, dns_tcp_fd = -1;
    // dev.ocirun.intercept: the listeners the firewall sends TCP to ports 80
    // and 443 to, or -1.
    int intercept_http_fd = -1, intercept_tls_fd = -1;
    std::vector<egress::Pattern> allow, deny;
    bool observe = false;
    int max_connections = kDefaultProxyMaxConnections;
    int forward_max_connections = kDefaultForwardMaxConnections;
    int total_max_connections = kDefaultMaxConnections;
};

std::string write_helper_config(const HelperConfig &c);
// Errors name the member ("proxy.allow[2].network: ...").
Result<HelperConfig> parse_helper_config(std::string_view text);

} // namespace ocirun
