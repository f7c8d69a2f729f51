// The sandbox policy parser and the protected-path check, without a container.
#include "oci/spec_io.hpp"
#include "runtime/security/device_reach.hpp"
#include "runtime/security/sandbox_policy.hpp"
#include "unit_support.hpp"

using namespace ocirun;

namespace {

SandboxPolicy parse(const oci::StringMap &a) {
    auto p = parse_sandbox_policy(a);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return *p;
}

std::string error_of(const oci::StringMap &a) {
    auto p = parse_sandbox_policy(a);
    cr_assert(!p.has_value(), "parsed without error");
    return p.error().text();
}

} // namespace

Test(sandbox_policy, lists_are_normalised) {
    SandboxPolicy p = parse({{"dev.ocirun.deny", "/a//b/:/c/./d"},
                             {"dev.ocirun.deny-rename", "/w"},
                             {"dev.ocirun.enforcement", "report"},
                             {"org.other.key", "ignored"}});
    cr_assert(p.present);
    cr_assert(!p.strict);
    cr_assert_eq(p.deny.size(), 2u);
    unit::expect_eq(p.deny[0], "/a/b");
    unit::expect_eq(p.deny[1], "/c/d");
    unit::expect_eq(p.deny_rename[0], "/w");
    cr_assert(!parse({{"org.other.key", "x"}}).present);
}

Test(sandbox_policy, errors_name_the_key) {
    unit::expect_eq(error_of({{"dev.ocirun.deny", "x"}}),
                    "annotations[dev.ocirun.deny]: \"x\" is not an absolute path");
    cr_assert(error_of({{"dev.ocirun.protected", "/a/../b"}}).find("\"..\"") != std::string::npos);
    cr_assert(error_of({{"dev.ocirun.deny-write", "/"}}).find("the root itself") !=
              std::string::npos);
    unit::expect_eq(error_of({{"dev.ocirun.what", "1"}}),
                    "annotations[dev.ocirun.what]: unknown sandbox policy key");
    unit::expect_eq(
        error_of({{"dev.ocirun.publish", "8080"}}),
        "annotations[dev.ocirun.publish]: \"8080\": expected [HOSTADDR:]HOSTPORT:CPORT");
    unit::expect_eq(error_of({{"dev.ocirun.trace", "yes"}}),
                    "annotations[dev.ocirun.trace]: expected true or false, got \"yes\"");
}

// A list is bounded (each path becomes a mount or a check against every
// mount): 1024 paths are taken, 1025 refused with the key and the count.
Test(sandbox_policy, path_lists_are_bounded) {
    auto list = [](size_t n) {
        std::string v;
        for (size_t i = 0; i < n; i++)
            v += (i ? ":/p" : "/p") + std::to_string(i);
        return v;
    };
    cr_assert_eq(parse({{"dev.ocirun.deny-write", list(kMaxPolicyPaths)}}).deny_write.size(),
                 kMaxPolicyPaths);
    for (const char *key : {"dev.ocirun.deny", "dev.ocirun.deny-write", "dev.ocirun.deny-rename",
                            "dev.ocirun.protected"})
        unit::expect_eq(error_of({{key, list(kMaxPolicyPaths + 1)}}),
                        std::string("annotations[") + key + "]: 1025 paths, more than 1024");
}

// strict against a host that lacks what the policy needs (a fake of the
// host's facts): one error listing every gap; report lets it run.
Test(sandbox_policy, strict_lists_every_gap_report_runs) {
    oci::Spec s = oci::default_spec(false, 0, 0);
    SandboxPolicy p = parse({{"dev.ocirun.deny", "/secret"}, {"dev.ocirun.trace", "true"}});
    HostFacts bare;
    auto strict = check_policy_gaps(p, s, bare);
    cr_assert(!strict.has_value());
    std::string e = strict.error().text();
    cr_assert(e.find("dev.ocirun.enforcement=strict") != std::string::npos, "%s", e.c_str());
    cr_assert(e.find("needs /usr/bin/strace") != std::string::npos, "%s", e.c_str());
    cr_assert(e.find("no mount_setattr") != std::string::npos, "%s", e.c_str());
    cr_assert(e.find("the filesystem rules need the host's disks closed: which character "
                     "devices reach them is not known (/proc/devices not read)") !=
                  std::string::npos,
              "%s", e.c_str());
    HostFacts full;
    full.strace = true;
    full.mount_setattr = true;
    full.raw_char_majors = raw_char_majors("Character devices:\n  1 mem\n 21 sg\n");
    cr_assert(check_policy_gaps(p, s, full).has_value());
    SandboxPolicy r = parse({{"dev.ocirun.deny", "/secret"},
                             {"dev.ocirun.trace", "true"},
                             {"dev.ocirun.enforcement", "report"}});
    cr_assert(check_policy_gaps(r, s, bare).has_value());
}

// The network keys: each value, the modes they imply, what a mode leaves no
// room for.
Test(sandbox_policy, network_keys_and_implied_modes) {
    NetworkPolicy n = parse({{"dev.ocirun.local-ports", "11434,5433:5432"}}).net;
    unit::expect_eq(n.mode, "local");
    cr_assert_eq(n.local_ports.size(), 2u);
    cr_assert(n.local_ports[0].container_port == 11434 && n.local_ports[0].host_port == 11434);
    cr_assert(n.local_ports[1].container_port == 5433 && n.local_ports[1].host_port == 5432);
    cr_assert(n.helper() && !n.proxy() && n.own_namespace());

    n = parse({{"dev.ocirun.domains", "example.com,*.example.org:8443"}}).net;
    unit::expect_eq(n.mode, "https");
    cr_assert_eq(n.allow.size(), 2u);
    cr_assert_eq(n.listen_ports().size(), 1u);
    cr_assert_eq(n.listen_ports()[0], kProxyPort);
    cr_assert_eq(n.max_connections, 256);
    cr_assert(!n.observe);

    n = parse({{"dev.ocirun.network", "https"},
               {"dev.ocirun.local-ports", "8080:80"},
               {"dev.ocirun.network-mode", "observe"},
               {"dev.ocirun.proxy-max-connections", "7"}})
            .net;
    cr_assert(n.observe && n.max_connections == 7);
    cr_assert_eq(n.listen_ports().size(), 2u);
    cr_assert_eq(n.listen_ports()[0], 8080);

    n = parse({{"dev.ocirun.publish", "8080:80,[::1]:8443:443,0.0.0.0:9000:9000"}}).net;
    unit::expect_eq(n.mode, "local");
    cr_assert_eq(n.publish.size(), 3u);
    unit::expect_eq(egress::to_string(n.publish[0].host_addr), "127.0.0.1");
    cr_assert(n.publish[0].host_port == 8080 && n.publish[0].container_port == 80);
    unit::expect_eq(egress::to_string(n.publish[1].host_addr), "::1");
    unit::expect_eq(egress::to_string(n.publish[2].host_addr), "0.0.0.0");
    // publish alone needs no listener inside: the helper dials in.
    cr_assert(n.listen_ports().empty() && n.helper());

    n = parse({{"dev.ocirun.network", "full"}}).net;
    cr_assert(!n.own_namespace() && !n.helper());
    n = parse({{"dev.ocirun.network", "none"}}).net;
    cr_assert(n.own_namespace() && !n.helper());
}

Test(sandbox_policy, network_errors_name_the_key) {
    unit::expect_eq(error_of({{"dev.ocirun.network", "sometimes"}}),
                    "annotations[dev.ocirun.network]: expected none, local, https or full, got "
                    "\"sometimes\"");
    unit::expect_eq(error_of({{"dev.ocirun.local-ports", "0"}}),
                    "annotations[dev.ocirun.local-ports]: \"0\" is not a port (1-65535)");
    unit::expect_eq(error_of({{"dev.ocirun.local-ports", "80,,81"}}),
                    "annotations[dev.ocirun.local-ports]: \"\" is not a port (1-65535)");
    unit::expect_eq(error_of({{"dev.ocirun.local-ports", "70000"}}),
                    "annotations[dev.ocirun.local-ports]: \"70000\" is not a port (1-65535)");
    unit::expect_eq(error_of({{"dev.ocirun.local-ports", "80:1,80:2"}}),
                    "annotations[dev.ocirun.local-ports]: container port 80 is forwarded twice");
    unit::expect_eq(error_of({{"dev.ocirun.publish", "1.2.3:80:80"}}),
                    "annotations[dev.ocirun.publish]: \"1.2.3\" is not an IPv4 or [IPv6] address");
    unit::expect_eq(error_of({{"dev.ocirun.publish", "80:80,80:81"}}),
                    "annotations[dev.ocirun.publish]: host port 127.0.0.1:80 is published twice");
    cr_assert(error_of({{"dev.ocirun.domains", "a.com,*"}})
                  .rfind("annotations[dev.ocirun.domains]: \"*\"", 0) == 0);
    unit::expect_eq(error_of({{"dev.ocirun.network-mode", "watch"}}),
                    "annotations[dev.ocirun.network-mode]: expected enforce or observe, got "
                    "\"watch\"");
    unit::expect_eq(error_of({{"dev.ocirun.proxy-max-connections", "0"}}),
                    "annotations[dev.ocirun.proxy-max-connections]: expected a number from 1 to "
                    "256 (the default, which an annotation may only lower), got \"0\"");
    // The helper's limits may only be lowered, and need something to limit.
    unit::expect_eq(
        error_of({{"dev.ocirun.local-ports", "80"}, {"dev.ocirun.forward-max-connections", "129"}}),
        "annotations[dev.ocirun.forward-max-connections]: expected a number from 1 "
        "to 128 (the default, which an annotation may only lower), got \"129\"");
    unit::expect_eq(
        error_of({{"dev.ocirun.domains", "a.com"}, {"dev.ocirun.max-connections", "513"}}),
        "annotations[dev.ocirun.max-connections]: expected a number from 1 to 512 "
        "(the default, which an annotation may only lower), got \"513\"");
    unit::expect_eq(
        error_of({{"dev.ocirun.domains", "a.com"}, {"dev.ocirun.forward-max-connections", "4"}}),
        "annotations[dev.ocirun.forward-max-connections]: no dev.ocirun.local-ports "
        "or publish to limit");
    unit::expect_eq(error_of({{"dev.ocirun.network", "none"}, {"dev.ocirun.max-connections", "4"}}),
                    "annotations[dev.ocirun.max-connections]: no network helper to limit "
                    "(dev.ocirun.local-ports, publish or https)");
    // What a mode leaves no room for.
    cr_assert(error_of({{"dev.ocirun.network", "full"}, {"dev.ocirun.local-ports", "80"}})
                  .find("annotations[dev.ocirun.local-ports]: dev.ocirun.network=full") == 0);
    cr_assert(error_of({{"dev.ocirun.network", "none"}, {"dev.ocirun.domains", "a.com"}})
                  .find("annotations[dev.ocirun.domains]: dev.ocirun.network=none allows "
                        "loopback only") == 0);
    unit::expect_eq(error_of({{"dev.ocirun.network", "local"}, {"dev.ocirun.domains", "a.com"}}),
                    "annotations[dev.ocirun.domains]: needs the egress proxy: "
                    "dev.ocirun.network=https, not local");
    unit::expect_eq(
        error_of({{"dev.ocirun.network", "https"}, {"dev.ocirun.local-ports", "3128"}}),
        "annotations[dev.ocirun.local-ports]: container port 3128 is the egress proxy's");
}

// The helper is needed for forwards and the proxy; publishing needs root.
Test(sandbox_policy, network_gaps) {
    oci::Spec s = oci::default_spec(false, 0, 0); // has a new network namespace
    SandboxPolicy p = parse({{"dev.ocirun.publish", "8080:80"}});
    HostFacts h;
    h.mount_setattr = true;
    auto e = check_policy_gaps(p, s, h);
    cr_assert(!e.has_value());
    cr_assert(e.error().text().find("needs the network helper oci-run-shim") != std::string::npos,
              "%s", e.error().text().c_str());
    cr_assert(e.error().text().find("dev.ocirun.publish needs root") != std::string::npos);
    h.shim = h.privileged = true;
    cr_assert(check_policy_gaps(p, s, h).has_value());
    // Joined by path: the namespace's firewall, which needs its program and
    // no CAP_NET_ADMIN in the bounding set.
    for (auto &n : s.linux_->namespaces)
        if (n.type == oci::NsType::network) n.path = "/run/netns/pod";
    e = check_policy_gaps(p, s, h);
    cr_assert(!e.has_value());
    cr_assert(e.error().text().find("needs the firewall program oci-run-firewall") !=
                  std::string::npos,
              "%s", e.error().text().c_str());
    h.firewall = true;
    cr_assert(check_policy_gaps(p, s, h).has_value());
    s.process->capabilities->bounding.push_back("CAP_NET_ADMIN");
    e = check_policy_gaps(p, s, h);
    cr_assert(!e.has_value());
    cr_assert(e.error().text().find("bounding holds CAP_NET_ADMIN") != std::string::npos, "%s",
              e.error().text().c_str());
    // None at all: the host's.
    std::erase_if(s.linux_->namespaces,
                  [](const auto &n) { return n.type == oci::NsType::network; });
    e = check_policy_gaps(p, s, h);
    cr_assert(!e.has_value());
    cr_assert(e.error().text().find("dev.ocirun.network=local needs a network namespace other "
                                    "than the host's") != std::string::npos,
              "%s", e.error().text().c_str());
}

// The proxy variables replace any the process had.
Test(sandbox_policy, proxy_env) {
    std::vector<std::string> env = {"PATH=/bin", "HTTP_PROXY=http://elsewhere:1", "no_proxy=x"};
    add_proxy_env(env);
    auto count = [&](const std::string &prefix) {
        return std::count_if(env.begin(), env.end(),
                             [&](const std::string &e) { return e.rfind(prefix, 0) == 0; });
    };
    cr_assert_eq(count("HTTP_PROXY="), 1);
    cr_assert(std::find(env.begin(), env.end(), "HTTP_PROXY=http://127.0.0.1:3128") != env.end());
    cr_assert(std::find(env.begin(), env.end(), "https_proxy=http://127.0.0.1:3128") != env.end());
    cr_assert(std::find(env.begin(), env.end(), "no_proxy=localhost,127.0.0.1") != env.end());
    cr_assert(std::find(env.begin(), env.end(), "NO_PROXY=localhost,127.0.0.1") != env.end());
    cr_assert_eq(env.size(), 7u);
}
