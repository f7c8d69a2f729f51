// The network part of the sandbox policy (dev.ocirun.network and the keys
// that go with it): parsed and cross-checked before anything is created, then
// given to the helper as it is (oci/policy/helper_config.hpp). The
// container then gets its own network namespace holding loopback only, and
// the per-container helper (oci-run-shim, shim/) is its only way out:
// forwarded host ports, published container ports and the egress proxy.
#pragma once

#include "oci/error.hpp"
#include "oci/policy/egress_rules.hpp"
#include "oci/spec.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ocirun {

// Where the egress proxy listens inside the container (HTTP_PROXY points there).
inline constexpr uint16_t kProxyPort = 3128;
// Where the DNS stub listens (UDP, 127.0.0.1) in a joined namespace under
// https: its firewall redirects the container's DNS there (a port above
// 1023: the container's root may not bind below in a namespace it does not
// own).
inline constexpr uint16_t kDnsStubPort = 3153;
// dev.ocirun.intercept: where the firewall of a joined namespace sends TCP to
// ports 80 and 443 of any address (the helper's listeners, 127.0.0.1).
inline constexpr uint16_t kInterceptHttpPort = 3180;
inline constexpr uint16_t kInterceptTlsPort = 3443;
// Connections at once, each the default and the most an annotation may ask
// for (it may only lower them): the proxy's (dev.ocirun.proxy-max-
// connections), each forwarded or published port's (forward-max-
// connections), and the helper's in all (max-connections). Each connection
// holds six descriptors and two pipes in the helper.
inline constexpr int kDefaultProxyMaxConnections = 256;
inline constexpr int kDefaultForwardMaxConnections = 128;
inline constexpr int kDefaultMaxConnections = 512;

// dev.ocirun.local-ports: inside, 127.0.0.1:container_port reaches the host's
// 127.0.0.1:host_port.
struct PortForward {
    uint16_t container_port = 0;
    uint16_t host_port = 0;
};

// dev.ocirun.publish: the host's address:host_port reaches the container's
// 127.0.0.1:container_port.
struct PortPublish {
    egress::IpAddr host_addr;
    uint16_t host_port = 0;
    uint16_t container_port = 0;
};

struct NetworkPolicy {
    // dev.ocirun.network as in effect: "" (not set), none, local, https or
    // full. domains alone mean https; local-ports or publish alone mean local.
    std::string mode;
    std::vector<PortForward> local_ports;
    std::vector<PortPublish> publish;
    std::string domains;      // dev.ocirun.domains as written (for report)
    std::string deny_domains; // dev.ocirun.deny-domains as written
    std::vector<egress::Pattern> allow, deny;
    bool observe = false; // dev.ocirun.network-mode=observe
    // dev.ocirun.intercept=true: TCP to ports 80 and 443 goes to the helper,
    // decided by the HTTP Host header or the TLS server name (https, in a
    // namespace joined by path only).
    bool intercept = false;
    int max_connections = kDefaultProxyMaxConnections;
    int forward_max_connections = kDefaultForwardMaxConnections;
    int total_max_connections = kDefaultMaxConnections;
    bool mode_set = false;             // dev.ocirun.network itself was given
    std::vector<std::string> set_keys; // the network keys given (without the prefix)
    oci::StringMap given;              // each given key (without the prefix): its value

    // The runtime builds the namespace: loopback only, plus what the helper adds.
    bool own_namespace() const { return mode == "none" || mode == "local" || mode == "https"; }
    bool proxy() const { return mode == "https"; }
    // The helper runs for forwarded ports, published ports and the proxy.
    bool helper() const { return !local_ports.empty() || !publish.empty() || proxy(); }
    // The ports the init listens on inside the container, in this order:
    // every local port, then the proxy, then the intercepted HTTP and TLS.
    std::vector<uint16_t> listen_ports() const;
    // The need a joined namespace's firewall is built for
    // (oci/policy/firewall_rules.hpp): the mode, "https+intercept" with
    // intercept.
    std::string firewall_need() const { return intercept ? mode + "+intercept" : mode; }
};

// The socket families a network need leaves the container's processes; the
// sandbox guard answers socket(2) and socketpair(2) of any other family with
// EAFNOSUPPORT (and a netlink protocol other than the allowed one with
// EPROTONOSUPPORT). none: AF_UNIX; local and https: AF_UNIX, AF_INET,
// AF_INET6 and AF_NETLINK for NETLINK_ROUTE (addresses and routes of the
// container's own namespace, which getaddrinfo asks); full or no network
// key: every family. Vsock, packet, key, bluetooth, alg, xdp, ... are
// refused: some are not per network namespace (a vsock port is the
// machine's). On i386 socketcall(2) the family is in memory a filter cannot
// read: its socket and socketpair calls are refused whenever families are
// restricted (i386 programs built for kernels since 4.3 call socket(2) and
// are checked like the others).
struct SocketFamilies {
    bool restricted = false;
    std::vector<int> allowed; // AF_* in ascending order, restricted only
    bool netlink_route_only = false;
    // "AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE only)", or "all".
    std::string text() const;
};
SocketFamilies socket_families(const NetworkPolicy &p);

// The network keys (after the dev.ocirun. prefix), in the order they are
// checked: the mode first.
inline constexpr const char *kNetworkKeys[] = {
    "network",        "local-ports",           "publish",
    "domains",        "deny-domains",          "network-mode",
    "intercept",      "proxy-max-connections", "forward-max-connections",
    "max-connections"};

// One network key's value (`name` after the dev.ocirun. prefix), into `p`;
// the sandbox policy's key table (sandbox_policy.cpp) calls it per key.
Status parse_network_key(NetworkPolicy &p, const std::string &name, const std::string &value);
// Once every key is in: the mode the keys imply, and what the mode leaves no
// room for. Errors name the annotation.
Status finish_network_policy(NetworkPolicy &p);

// The network keys of `annotations`, checked each and together; errors name
// the annotation.
Result<NetworkPolicy> parse_network_policy(const oci::StringMap &annotations);

// The network keys a container in a pod's network namespace is held to:
// `pod`'s (the container whose create installed the namespace's firewall and
// started its helper), which `own` (the container's own keys) may only
// tighten. Without network keys of its own, the pod's. dev.ocirun.network=
// none is the one tightening a container gets alone: its socket families
// leave it no way to the pod's helper. Anything else narrower than the pod's
// (fewer domains, fewer ports, lower limits) is refused, as the firewall,
// the proxy and the forwards are the namespace's, shared by all its
// containers: it is the pod's to set. Loosening is refused, naming the key.
Result<NetworkPolicy> inherit_network(const NetworkPolicy &pod, const NetworkPolicy &own);
// The same check against a ceiling, `whose` in the errors ("its pod", "the
// runtime configuration"); with `narrower_ok`, a narrower policy is `own`.
Result<NetworkPolicy> held_to(const NetworkPolicy &ceiling, const NetworkPolicy &own,
                              bool narrower_ok, const char *whose);

// The proxy variables added to the environment of the container's process
// and of every process exec'd into it (replacing any of the same name).
void add_proxy_env(std::vector<std::string> &env);

} // namespace ocirun
