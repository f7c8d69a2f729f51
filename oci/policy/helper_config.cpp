#include "oci/policy/helper_config.hpp"

#include "oci/json.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <initializer_list>

namespace ocirun {

namespace {

constexpr int kMaxFd = 65535;
constexpr int kMaxConnections = 65536;

const char *kind_name(egress::Pattern::Kind k) {
    switch (k) {
    case egress::Pattern::Kind::exact:
        return "exact";
    case egress::Pattern::Kind::subdomains:
        return "subdomains";
    case egress::Pattern::Kind::address:
        return "address";
    }
    return "?";
}

void write_patterns(json::Writer &w, const char *key, const std::vector<egress::Pattern> &ps) {
    if (ps.empty()) return;
    w.key(key).begin_array();
    for (const auto &p : ps) {
        w.begin_object().kv("kind", kind_name(p.kind));
        if (p.kind == egress::Pattern::Kind::address)
            w.kv("network", egress::to_string(p.net)).kv_i64("prefix", p.prefix);
        else
            w.kv("name", p.name);
        if (!p.ports.empty()) {
            w.key("ports").begin_array();
            for (uint16_t port : p.ports)
                w.u64(port);
            w.end_array();
        }
        w.kv("text", p.text).end_object();
    }
    w.end_array();
}

// Every member of `obj` is one of `known`.
Status known_members(yajl_val obj, const json::Path &p, std::initializer_list<const char *> known) {
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i];
        bool ok = false;
        for (const char *n : known)
            if (std::strcmp(k, n) == 0) ok = true;
        if (!ok) return json::fail_at(p.field(k), "unknown member");
    }
    return {};
}

Result<egress::IpAddr> address(yajl_val obj, const json::Path &p, const char *key) {
    std::string text;
    OCI_CHECK(json::get_string(obj, p, key, text, true));
    egress::IpAddr a;
    a.family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
    if (::inet_pton(a.family, text.c_str(), a.bytes) != 1)
        return json::fail_at(p.field(key), "\"" + text + "\" is not an IP address");
    return a;
}

Status read_patterns(yajl_val obj, const json::Path &p, const char *key,
                     std::vector<egress::Pattern> &out) {
    return json::for_each_object(obj, p, key, [&](yajl_val o, const json::Path &ip) -> Status {
        OCI_CHECK(known_members(o, ip, {"kind", "name", "network", "prefix", "ports", "text"}));
        egress::Pattern pat;
        std::string kind;
        OCI_CHECK(json::get_string(o, ip, "kind", kind, true));
        if (kind == "exact" || kind == "subdomains") {
            pat.kind =
                kind == "exact" ? egress::Pattern::Kind::exact : egress::Pattern::Kind::subdomains;
            OCI_CHECK(json::get_string(o, ip, "name", pat.name, true));
            if (pat.name.empty()) return json::fail_at(ip.field("name"), "empty");
        } else if (kind == "address") {
            pat.kind = egress::Pattern::Kind::address;
            pat.net = OCI_TRY(address(o, ip, "network"));
            OCI_CHECK(json::get_int(o, ip, "prefix", pat.prefix, 0,
                                    pat.net.family == AF_INET ? 32 : 128, true));
        } else {
            return json::fail_at(ip.field("kind"), "unknown kind \"" + kind + "\"");
        }
        OCI_CHECK(
            json::each(o, ip, "ports", [&](yajl_val v, const json::Path &pp, size_t) -> Status {
                pat.ports.push_back(static_cast<uint16_t>(OCI_TRY(json::to_int(v, pp, 1, 65535))));
                return Status{};
            }));
        OCI_CHECK(json::get_string(o, ip, "text", pat.text));
        out.push_back(std::move(pat));
        return {};
    });
}

} // namespace

std::string write_helper_config(const HelperConfig &c) {
    json::Writer w;
    w.begin_object().kv_i64("version", kHelperConfigVersion);
    if (!c.forwards.empty()) {
        w.key("forward").begin_array();
        for (const auto &f : c.forwards)
            w.begin_object().kv_i64("fd", f.fd).kv_u64("hostPort", f.host_port).end_object();
        w.end_array();
    }
    if (c.netns_fd >= 0) w.kv_i64("netnsFd", c.netns_fd);
    if (!c.publish.empty()) {
        w.key("publish").begin_array();
        for (const auto &p : c.publish)
            w.begin_object()
                .kv("hostAddress", egress::to_string(p.host_addr))
                .kv_u64("hostPort", p.host_port)
                .kv_u64("containerPort", p.container_port)
                .end_object();
        w.end_array();
    }
    if (c.proxy_fd >= 0) {
        w.key("proxy").begin_object().kv_i64("fd", c.proxy_fd).kv_bool("observe", c.observe);
        if (c.dns_fd >= 0) w.kv_i64("dnsFd", c.dns_fd);
        if (c.dns_tcp_fd >= 0) w.kv_i64("dnsTcpFd", c.dns_tcp_fd);
        if (c.intercept_http_fd >= 0) w.kv_i64("interceptHttpFd", c.intercept_http_fd);
        if (c.intercept_tls_fd >= 0) w.kv_i64("interceptTlsFd", c.intercept_tls_fd);
        w.kv_i64("maxConnections", c.max_connections);
        write_patterns(w, "allow", c.allow);
        write_patterns(w, "deny", c.deny);
        w.end_object();
    }
    w.kv_i64("forwardMaxConnections", c.forward_max_connections)
        .kv_i64("totalMaxConnections", c.total_max_connections)
        .end_object();
    return std::string(w.view());
}

Result<HelperConfig> parse_helper_config(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    json::Path root;
    yajl_val top = OCI_TRY(json::as_object(doc.root(), root));
    OCI_CHECK(known_members(top, root,
                            {"version", "forward", "netnsFd", "publish", "proxy",
                             "forwardMaxConnections", "totalMaxConnections"}));
    int version = 0;
    OCI_CHECK(json::get_int(top, root, "version", version, 0, 1000, true));
    if (version != kHelperConfigVersion)
        return json::fail_at(root.field("version"), "version " + std::to_string(version) +
                                                        " is not " +
                                                        std::to_string(kHelperConfigVersion));
    HelperConfig c;
    OCI_CHECK(
        json::for_each_object(top, root, "forward", [&](yajl_val o, const json::Path &p) -> Status {
            OCI_CHECK(known_members(o, p, {"fd", "hostPort"}));
            HelperForward f;
            OCI_CHECK(json::get_int(o, p, "fd", f.fd, 3, kMaxFd, true));
            OCI_CHECK(json::get_int(o, p, "hostPort", f.host_port, 1, 65535, true));
            c.forwards.push_back(f);
            return Status{};
        }));
    OCI_CHECK(json::get_int(top, root, "netnsFd", c.netns_fd, 3, kMaxFd));
    OCI_CHECK(
        json::for_each_object(top, root, "publish", [&](yajl_val o, const json::Path &p) -> Status {
            OCI_CHECK(known_members(o, p, {"hostAddress", "hostPort", "containerPort"}));
            PortPublish pub;
            pub.host_addr = OCI_TRY(address(o, p, "hostAddress"));
            OCI_CHECK(json::get_int(o, p, "hostPort", pub.host_port, 1, 65535, true));
            OCI_CHECK(json::get_int(o, p, "containerPort", pub.container_port, 1, 65535, true));
            c.publish.push_back(pub);
            return Status{};
        }));
    if (!c.publish.empty() && c.netns_fd < 0)
        return json::fail_at(root.field("publish"), "needs netnsFd");
    if (yajl_val proxy = json::member(top, "proxy")) {
        json::Path pp = root.field("proxy");
        OCI_TRY(json::as_object(proxy, pp));
        OCI_CHECK(known_members(proxy, pp,
                                {"fd", "dnsFd", "dnsTcpFd", "interceptHttpFd", "interceptTlsFd",
                                 "observe", "maxConnections", "allow", "deny"}));
        OCI_CHECK(json::get_int(proxy, pp, "fd", c.proxy_fd, 3, kMaxFd, true));
        OCI_CHECK(json::get_int(proxy, pp, "dnsFd", c.dns_fd, 3, kMaxFd));
        OCI_CHECK(json::get_int(proxy, pp, "dnsTcpFd", c.dns_tcp_fd, 3, kMaxFd));
        OCI_CHECK(json::get_int(proxy, pp, "interceptHttpFd", c.intercept_http_fd, 3, kMaxFd));
        OCI_CHECK(json::get_int(proxy, pp, "interceptTlsFd", c.intercept_tls_fd, 3, kMaxFd));
        OCI_CHECK(json::get_bool(proxy, pp, "observe", c.observe));
        OCI_CHECK(
            json::get_int(proxy, pp, "maxConnections", c.max_connections, 1, kMaxConnections));
        OCI_CHECK(read_patterns(proxy, pp, "allow", c.allow));
        OCI_CHECK(read_patterns(proxy, pp, "deny", c.deny));
    }
    OCI_CHECK(json::get_int(top, root, "forwardMaxConnections", c.forward_max_connections, 1,
                            kMaxConnections));
    OCI_CHECK(json::get_int(top, root, "totalMaxConnections", c.total_max_connections, 1,
                            kMaxConnections));
    return c;
}

} // namespace ocirun
