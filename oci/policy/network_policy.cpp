#include "oci/policy/network_policy.hpp"

#include <sys/socket.h>

#include "oci/text.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace ocirun {

namespace {

constexpr const char *kPrefix = "dev.ocirun.";

std::string key_of(const char *name) {
    return std::string(kPrefix) + name;
}

std::unexpected<Error> bad(const char *name, const std::string &why) {
    return fail("annotations[" + key_of(name) + "]: " + why);
}

Result<uint16_t> port_of(const char *name, std::string_view s) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v == 0 || v > 65535)
        return bad(name, "\"" + std::string(s) + "\" is not a port (1-65535)");
    return static_cast<uint16_t>(v);
}

// PORT or CPORT:HPORT, comma-separated.
Result<std::vector<PortForward>> parse_local_ports(std::string_view v) {
    std::vector<PortForward> out;
    for (std::string_view e : split(v, ',')) {
        PortForward f;
        size_t colon = e.find(':');
        if (colon == std::string_view::npos) {
            f.container_port = f.host_port = OCI_TRY(port_of("local-ports", e));
        } else {
            f.container_port = OCI_TRY(port_of("local-ports", e.substr(0, colon)));
            f.host_port = OCI_TRY(port_of("local-ports", e.substr(colon + 1)));
        }
        for (const auto &o : out)
            if (o.container_port == f.container_port)
                return bad("local-ports", "container port " + std::to_string(f.container_port) +
                                              " is forwarded twice");
        out.push_back(f);
    }
    return out;
}

// [HOSTADDR:]HOSTPORT:CPORT, comma-separated; HOSTADDR is IPv4 or [IPv6].
Result<std::vector<PortPublish>> parse_publish(std::string_view v) {
    std::vector<PortPublish> out;
    for (std::string_view e : split(v, ',')) {
        PortPublish p;
        std::string addr = "127.0.0.1";
        std::string_view rest = e;
        if (!e.empty() && e[0] == '[') {
            size_t close = e.find("]:");
            if (close == std::string_view::npos)
                return bad("publish", "\"" + std::string(e) + "\": expected [IPV6]:HOSTPORT:CPORT");
            addr = std::string(e.substr(1, close - 1));
            rest = e.substr(close + 2);
        } else if (std::count(e.begin(), e.end(), ':') == 2) {
            size_t colon = e.find(':');
            addr = std::string(e.substr(0, colon));
            rest = e.substr(colon + 1);
        }
        size_t colon = rest.find(':');
        if (colon == std::string_view::npos || rest.find(':', colon + 1) != std::string_view::npos)
            return bad("publish", "\"" + std::string(e) + "\": expected [HOSTADDR:]HOSTPORT:CPORT");
        p.host_port = OCI_TRY(port_of("publish", rest.substr(0, colon)));
        p.container_port = OCI_TRY(port_of("publish", rest.substr(colon + 1)));
        p.host_addr.family = addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
        if (::inet_pton(p.host_addr.family, addr.c_str(), p.host_addr.bytes) != 1)
            return bad("publish", "\"" + addr + "\" is not an IPv4 or [IPv6] address");
        for (const auto &o : out)
            if (o.host_port == p.host_port && o.host_addr == p.host_addr)
                return bad("publish", "host port " + addr + ":" + std::to_string(p.host_port) +
                                          " is published twice");
        out.push_back(p);
    }
    return out;
}

const std::string *find(const oci::StringMap &a, const char *name) {
    auto it = a.find(key_of(name));
    return it == a.end() ? nullptr : &it->second;
}

} // namespace

std::vector<uint16_t> NetworkPolicy::listen_ports() const {
    std::vector<uint16_t> out;
    for (const auto &f : local_ports)
        out.push_back(f.container_port);
    if (proxy()) out.push_back(kProxyPort);
    if (proxy() && intercept) {
        out.push_back(kInterceptHttpPort);
        out.push_back(kInterceptTlsPort);
    }
    return out;
}

// A connection limit: 1 up to the default, which is also the most (the
// helper's descriptors and memory are the host's, not the bundle's).
Result<int> connection_limit(const std::string &name, const std::string &v, int most) {
    int n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 1 || n > most)
        return bad(name.c_str(), "expected a number from 1 to " + std::to_string(most) +
                                     " (the default, which an annotation may only lower), got \"" +
                                     v + "\"");
    return n;
}

Status parse_network_key(NetworkPolicy &p, const std::string &name, const std::string &v) {
    if (name == "network") {
        if (v != "none" && v != "local" && v != "https" && v != "full")
            return bad("network", "expected none, local, https or full, got \"" + v + "\"");
        p.mode = v;
        p.mode_set = true;
    } else if (name == "local-ports") {
        p.local_ports = OCI_TRY(parse_local_ports(v));
    } else if (name == "publish") {
        p.publish = OCI_TRY(parse_publish(v));
    } else if (name == "domains") {
        p.domains = v;
        p.allow = OCI_TRY(egress::parse_patterns(v, key_of("domains")));
    } else if (name == "deny-domains") {
        p.deny_domains = v;
        p.deny = OCI_TRY(egress::parse_patterns(v, key_of("deny-domains")));
    } else if (name == "network-mode") {
        if (v != "enforce" && v != "observe")
            return bad("network-mode", "expected enforce or observe, got \"" + v + "\"");
        p.observe = v == "observe";
    } else if (name == "intercept") {
        if (v != "true" && v != "false")
            return bad("intercept", "expected true or false, got \"" + v + "\"");
        p.intercept = v == "true";
    } else if (name == "proxy-max-connections") {
        p.max_connections = OCI_TRY(connection_limit(name, v, kDefaultProxyMaxConnections));
    } else if (name == "forward-max-connections") {
        p.forward_max_connections =
            OCI_TRY(connection_limit(name, v, kDefaultForwardMaxConnections));
    } else if (name == "max-connections") {
        p.total_max_connections = OCI_TRY(connection_limit(name, v, kDefaultMaxConnections));
    } else {
        return bad(name.c_str(), "not a network key");
    }
    p.set_keys.push_back(name);
    p.given[name] = v;
    return {};
}

Status finish_network_policy(NetworkPolicy &p) {
    // The first key of each kind that is set, in the order errors name them.
    auto first_set = [&](std::initializer_list<const char *> keys) -> const char * {
        for (const char *k : keys)
            if (std::find(p.set_keys.begin(), p.set_keys.end(), k) != p.set_keys.end()) return k;
        return nullptr;
    };
    const char *port_key = first_set({"local-ports", "publish"});
    // Limits of the helper: nothing to limit without it.
    if (const char *k = first_set({"forward-max-connections"});
        k && p.local_ports.empty() && p.publish.empty())
        return bad(k, "no dev.ocirun.local-ports or publish to limit");
    const char *proxy_key =
        first_set({"domains", "deny-domains", "network-mode", "proxy-max-connections"});
    // The mode the keys imply when dev.ocirun.network is not set.
    if (!p.mode_set) {
        if (proxy_key)
            p.mode = "https";
        else if (port_key)
            p.mode = "local";
    }
    // What the mode leaves no room for.
    const char *extra = port_key ? port_key : proxy_key;
    if (p.mode == "full" && extra)
        return bad(extra, "dev.ocirun.network=full: the runtime adds nothing to the "
                          "network namespace; remove this key");
    if (p.mode == "none" && extra)
        return bad(extra, "dev.ocirun.network=none allows loopback only; use local or https");
    if (p.mode == "local" && proxy_key)
        return bad(proxy_key, "needs the egress proxy: dev.ocirun.network=https, not local");
    if (const char *k = first_set({"max-connections"}); k && !p.helper())
        return bad(k, "no network helper to limit (dev.ocirun.local-ports, publish or https)");
    if (p.intercept && !p.proxy())
        return bad("intercept", "decides by dev.ocirun.domains: needs dev.ocirun.network=https");
    for (const auto &f : p.local_ports) {
        if (p.proxy() && f.container_port == kProxyPort)
            return bad("local-ports",
                       "container port " + std::to_string(kProxyPort) + " is the egress proxy's");
        if (p.intercept &&
            (f.container_port == kInterceptHttpPort || f.container_port == kInterceptTlsPort))
            return bad("local-ports", "container port " + std::to_string(f.container_port) +
                                          " is dev.ocirun.intercept's");
    }
    return {};
}

namespace {

// An allow-list entry as the proxy matches it (not as it was spelt).
std::string pattern_key(const egress::Pattern &p) {
    std::string k = std::to_string(static_cast<int>(p.kind)) + "|" + p.name + "|" +
                    egress::to_string(p.net) + "/" + std::to_string(p.prefix);
    for (uint16_t port : p.ports)
        k += ":" + std::to_string(port);
    return k;
}

std::vector<std::string> pattern_keys(const std::vector<egress::Pattern> &v) {
    std::vector<std::string> out;
    for (const auto &p : v)
        out.push_back(pattern_key(p));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

int need_rank(const std::string &mode) {
    if (mode == "none") return 0;
    if (mode == "local") return 1;
    if (mode == "https") return 2;
    return 3; // full, or no network key: the namespace as it is
}

// Whether every element of `a` is in `b` (both sorted).
bool subset(const std::vector<std::string> &a, const std::vector<std::string> &b) {
    return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

} // namespace

Result<NetworkPolicy> inherit_network(const NetworkPolicy &pod, const NetworkPolicy &own) {
    return held_to(pod, own, false, "its pod");
}

Result<NetworkPolicy> held_to(const NetworkPolicy &pod, const NetworkPolicy &own, bool narrower_ok,
                              const char *whose) {
    if (own.set_keys.empty()) return pod;
    std::string pod_mode = pod.mode.empty() ? "full" : pod.mode;
    std::string own_mode = own.mode.empty() ? "full" : own.mode;
    auto looser = [&](const char *name, const std::string &why) {
        return bad(name, std::string("asks for more than ") + whose + " allows: " + why +
                             " (annotations may only tighten " + whose + "'s network policy)");
    };
    if (need_rank(own_mode) > need_rank(pod_mode))
        return looser("network", own_mode + ", and the pod's is " + pod_mode);
    if (own_mode == "none") return own;
    for (const auto &f : own.local_ports) {
        bool found = false;
        for (const auto &g : pod.local_ports)
            found = found || (g.container_port == f.container_port && g.host_port == f.host_port);
        if (!found)
            return looser("local-ports", "port " + std::to_string(f.container_port) +
                                             " is not one the pod forwards");
    }
    for (const auto &f : own.publish) {
        bool found = false;
        for (const auto &g : pod.publish)
            found = found || (g.host_port == f.host_port && g.host_addr == f.host_addr &&
                              g.container_port == f.container_port);
        if (!found)
            return looser("publish", "host port " + std::to_string(f.host_port) +
                                         " is not one the pod publishes");
    }
    auto own_allow = pattern_keys(own.allow), pod_allow = pattern_keys(pod.allow);
    auto own_deny = pattern_keys(own.deny), pod_deny = pattern_keys(pod.deny);
    if (!subset(own_allow, pod_allow))
        return looser("domains", "\"" + own.domains + "\" names what the pod's \"" + pod.domains +
                                     "\" does not");
    if (!subset(pod_deny, own_deny))
        return looser("deny-domains", "\"" + own.deny_domains +
                                          "\" leaves out some of the pod's \"" + pod.deny_domains +
                                          "\"");
    if (own.observe && !pod.observe) return looser("network-mode", "observe, and the pod enforces");
    if (own.intercept && !pod.intercept)
        return looser("intercept", "true, and the pod does not intercept");
    if (own.max_connections > pod.max_connections)
        return looser("proxy-max-connections",
                      "more than the pod's " + std::to_string(pod.max_connections));
    if (own.forward_max_connections > pod.forward_max_connections)
        return looser("forward-max-connections",
                      "more than the pod's " + std::to_string(pod.forward_max_connections));
    if (own.total_max_connections > pod.total_max_connections)
        return looser("max-connections",
                      "more than the pod's " + std::to_string(pod.total_max_connections));
    // Not looser; anything narrower is the pod's to set.
    if (narrower_ok) return own;
    const char *narrower = nullptr;
    if (own_mode != pod_mode)
        narrower = "network";
    else if (own.local_ports.size() != pod.local_ports.size())
        narrower = "local-ports";
    else if (own.publish.size() != pod.publish.size())
        narrower = "publish";
    else if (own_allow != pod_allow)
        narrower = "domains";
    else if (own_deny != pod_deny)
        narrower = "deny-domains";
    else if (own.observe != pod.observe)
        narrower = "network-mode";
    else if (own.intercept != pod.intercept)
        narrower = "intercept";
    else if (own.max_connections != pod.max_connections)
        narrower = "proxy-max-connections";
    else if (own.forward_max_connections != pod.forward_max_connections)
        narrower = "forward-max-connections";
    else if (own.total_max_connections != pod.total_max_connections)
        narrower = "max-connections";
    if (narrower)
        return bad(narrower, "narrower than its pod's network policy, which one container cannot "
                             "be held to alone: the pod's firewall, proxy and forwards serve all "
                             "its containers (set it on the pod, or use dev.ocirun.network=none)");
    return pod;
}

Result<NetworkPolicy> parse_network_policy(const oci::StringMap &a) {
    NetworkPolicy p;
    for (const char *name : kNetworkKeys)
        if (const std::string *v = find(a, name)) OCI_CHECK(parse_network_key(p, name, *v));
    OCI_CHECK(finish_network_policy(p));
    return p;
}

SocketFamilies socket_families(const NetworkPolicy &p) {
    SocketFamilies f;
    if (p.mode == "none") {
        f.restricted = true;
        f.allowed = {AF_UNIX};
    } else if (p.mode == "local" || p.mode == "https") {
        f.restricted = true;
        f.allowed = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
        f.netlink_route_only = true;
    }
    return f;
}

std::string SocketFamilies::text() const {
    if (!restricted) return "all";
    std::string out;
    for (int af : allowed) {
        if (!out.empty()) out += ", ";
        out += af == AF_UNIX      ? "AF_UNIX"
               : af == AF_INET    ? "AF_INET"
               : af == AF_INET6   ? "AF_INET6"
               : af == AF_NETLINK ? "AF_NETLINK"
                                  : "AF_" + std::to_string(af);
        if (af == AF_NETLINK && netlink_route_only) out += " (NETLINK_ROUTE only)";
    }
    return out;
}

void add_proxy_env(std::vector<std::string> &env) {
    const std::string url = "http://127.0.0.1:" + std::to_string(kProxyPort);
    const std::pair<const char *, std::string> vars[] = {{"HTTP_PROXY", url},
                                                         {"HTTPS_PROXY", url},
                                                         {"http_proxy", url},
                                                         {"https_proxy", url},
                                                         {"NO_PROXY", "localhost,127.0.0.1"},
                                                         {"no_proxy", "localhost,127.0.0.1"}};
    for (const auto &[name, value] : vars) {
        std::string prefix = std::string(name) + "=";
        std::erase_if(env, [&](const std::string &e) { return e.rfind(prefix, 0) == 0; });
        env.push_back(prefix + value);
    }
}

} // namespace ocirun
