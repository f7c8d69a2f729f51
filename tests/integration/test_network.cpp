// The network policy on real containers: forwarded host loopback ports,
// published container ports, the egress proxy (allowing, refusing,
// observing, bounding), what finds no route, and the helper's life. The
// "remote" servers are test servers on 127.0.0.x; names resolve through a
// hosts file given to the helper ($OCI_RUN_RESOLVE_HOSTS).
#include "support/container_env.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::listen_on;
using test::make_env;
using test::port_of;
using test::read_file;
using test::serve;
using test::Server;

namespace {

void setup() {
    const char *shim = std::getenv("OCI_RUN_SHIM");
    cr_assert(shim && ::access(shim, X_OK) == 0,
              "OCI_RUN_SHIM must name the built oci-run-shim (tests/run-suites.sh sets it)");
}

// In the network namespace of `pid`, one connection per request to
// 127.0.0.1:port, all held open together: each request is sent, then what
// comes back within `ms` of quiet (or until EOF) is collected. The answers,
// separated by "\n----\n".
std::string netns_talk(long pid, uint16_t port, const std::vector<std::string> &requests,
                       int ms = 600) {
    int p[2];
    cr_assert(::pipe(p) == 0);
    pid_t child = ::fork();
    cr_assert(child >= 0);
    if (child == 0) {
        ::close(p[0]);
        std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
        int ns = ::open(path.c_str(), O_RDONLY);
        if (ns < 0 || ::setns(ns, CLONE_NEWNET) < 0) ::_exit(2);
        std::string all;
        std::vector<int> held;
        for (const auto &req : requests) {
            int s = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(port);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            std::string got;
            if (::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
                got = std::string("connect: ") + std::strerror(errno);
            } else {
                if (!req.empty() && ::write(s, req.data(), req.size()) < 0) got = "write failed";
                for (;;) {
                    pollfd pf{s, POLLIN, 0};
                    if (::poll(&pf, 1, ms) <= 0) break;
                    char buf[4096];
                    ssize_t n = ::read(s, buf, sizeof buf);
                    if (n <= 0) {
                        got += "<EOF>";
                        break;
                    }
                    got.append(buf, static_cast<size_t>(n));
                }
            }
            held.push_back(s);
            all += got + "\n----\n";
        }
        (void)!::write(p[1], all.data(), all.size());
        ::_exit(0);
    }
    ::close(p[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(n));
    ::close(p[0]);
    ::waitpid(child, nullptr, 0);
    return out;
}

std::vector<std::string> split_answers(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0, at;
    while ((at = s.find("\n----\n", start)) != std::string::npos) {
        out.push_back(s.substr(start, at - start));
        start = at + 6;
    }
    return out;
}

std::string connect_req(const std::string &authority, const std::string &tail = "") {
    return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n" + tail;
}

// A hosts file for the helper, in the test's temp directory.
void use_hosts(const Env &e, const std::string &content) {
    std::string path = e.root + "/hosts";
    test::write_file(path, content);
    ::setenv("OCI_RUN_RESOLVE_HOSTS", path.c_str(), 1);
}

long started(const Env &e) {
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto s = test::oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    auto st = test::state_of(e.root, e.id);
    cr_assert(st.pid > 0);
    return st.pid;
}

long shim_pid(const Env &e) {
    std::string rec = read_file(e.root + "/" + e.id + "/state.json");
    size_t at = rec.find("\"shimPid\":");
    cr_assert(at != std::string::npos, "no shimPid in %s", rec.c_str());
    return std::atol(rec.c_str() + at + 10);
}

// A sleeping container whose proxy allows a.test (and 127.0.0.2, where it
// and other.test resolve) on the server's port, plus `extra` annotations.
Env proxied(const char *tag, const Server &a,
            std::initializer_list<std::pair<const char *, const char *>> extra) {
    Env e = make_env(tag, {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = "a.test:" + std::to_string(a.port) + ",127.0.0.2";
    for (const auto &[k, v] : extra)
        e.b.spec.annotations[k] = v;
    e.b.save();
    use_hosts(e, "127.0.0.2 a.test other.test\n");
    return e;
}

std::string egress_log(const Env &e) {
    return read_file(e.root + "/" + e.id + "/egress.jsonl");
}

} // namespace

TestSuite(network, .init = setup, .fini = cleanup_all, .timeout = 60);

// local-ports: the container's 127.0.0.1:CPORT reaches the host's
// 127.0.0.1:HPORT (both forms), and nothing of the helper is in the
// container: no fd, no process it can see.
Test(network, local_ports_reach_host_loopback_servers) {
    Server one, two;
    serve(one, "127.0.0.1", "one:");
    serve(two, "127.0.0.1", "two:");
    std::string p2 = std::to_string(two.port);
    Env e = make_env("netlp", {"sh", "-c",
                               "(echo hi; sleep 0.3) | nc 127.0.0.1 8080; "
                               "(echo ho; sleep 0.3) | nc 127.0.0.1 " +
                                   p2 +
                                   "; "
                                   "ls /proc/1/fd /proc/self/fd; ps -o pid,args; sleep 30"});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "8080:" + std::to_string(one.port) + "," + p2;
    e.b.save();
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(test::oci({"--root", e.root, "start", e.id}).status, 0);
    usleep(1200000);
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    std::string out = read_file(c.out_path);
    cleanup_all();
    cr_assert(contains(out, "one:hi\n"), "%s", out.c_str());
    cr_assert(contains(out, "two:ho\n"), "%s", out.c_str());
    // The init has stdio and nothing else; ls sees its own directory fd.
    cr_assert(contains(out, "/proc/1/fd:\n0  1  2\n") || contains(out, "/proc/1/fd:\n0\n1\n2\n"),
              "%s", out.c_str());
    cr_assert(!contains(out, "oci-run-shim"), "%s", out.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"network local\",\"state\":\"enforced\""), "%s",
              rep.out.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"network helper\",\"state\":\"enforced\""), "%s",
              rep.out.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"local port 8080\",\"state\":\"enforced\""), "%s",
              rep.out.c_str());
}

// Without the proxy nothing leaves: TCP, UDP, IPv6 and DNS find no route.
Test(network, raw_traffic_finds_no_route) {
    Env e = make_env("netraw", {"sh", "-c",
                                "nc 10.1.2.3 80 </dev/null; echo tcp=$?; "
                                "nc 2001:db8::1 80 </dev/null; echo tcp6=$?; "
                                "nslookup example.com 192.0.2.53; echo dns=$?; "
                                "ip route 2>&1; ip -6 route 2>&1; echo end"});
    e.b.spec.annotations["dev.ocirun.network"] = "local";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::string all = o.out + o.err;
    cr_assert(contains(all, "tcp=1") && contains(all, "tcp6=1") && !contains(all, "dns=0"), "%s",
              all.c_str());
    // nslookup's query is UDP.
    cr_assert(contains(all, "(10.1.2.3): Network is unreachable") &&
                  contains(all, "(192.0.2.53): Network is unreachable"),
              "%s", all.c_str());
}

// The proxy: the process is told where it is (run and exec), an allowed
// CONNECT and an absolute-form GET reach the server, a refusal answers 403
// with the reason, and each decision is an egress event, also in `events`.
Test(network, proxy_allows_refuses_and_logs) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string ap = "a.test:" + std::to_string(a.port);
    Env e = make_env("netpx", {"sh", "-c",
                               "env | grep -i _proxy | sort; "
                               "(printf 'CONNECT " +
                                   ap +
                                   " HTTP/1.1\\r\\n\\r\\nping\\n'; sleep 0.4)"
                                   " | nc 127.0.0.1 3128; "
                                   "(printf 'GET http://" +
                                   ap +
                                   "/x HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n';"
                                   " sleep 0.4) | nc 127.0.0.1 3128; "
                                   "(printf 'CONNECT c.test:443 HTTP/1.1\\r\\n\\r\\n'; sleep 0.4)"
                                   " | nc 127.0.0.1 3128; sleep 30"});
    e.b.spec.annotations["dev.ocirun.domains"] = ap + ",127.0.0.2";
    e.b.save();
    use_hosts(e, "127.0.0.2 a.test\n");
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto ev = test::spawn_oci({"--root", e.root, "events", "--interval", "60s", e.id});
    cr_assert_eq(test::oci({"--root", e.root, "start", e.id}).status, 0);
    auto x = test::oci({"--root", e.root, "exec", e.id, "sh", "-c", "echo $HTTPS_PROXY"});
    usleep(1800000);
    std::string out = read_file(c.out_path);
    std::string log = egress_log(e);
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    test::oci({"--root", e.root, "kill", e.id, "KILL"});
    int evs = test::wait_bounded(ev.pid, 5000);
    std::string events = read_file(ev.out_path);
    cleanup_all();
    cr_assert(contains(out, "HTTPS_PROXY=http://127.0.0.1:3128\nHTTP_PROXY=http://127.0.0.1:3128\n"
                            "NO_PROXY=localhost,127.0.0.1\n"),
              "%s", out.c_str());
    cr_assert(contains(x.out, "http://127.0.0.1:3128"), "exec: %s %s", x.out.c_str(),
              x.err.c_str());
    cr_assert(contains(out, "HTTP/1.1 200 Connection established\r\n\r\nA:ping\n"), "%s",
              out.c_str());
    // The plain-http request reached the server in origin-form, Host set from the URL.
    cr_assert(contains(out, "A:GET /x HTTP/1.1\r\nHost: " + ap + "\r\n"), "%s", out.c_str());
    cr_assert(contains(out, "HTTP/1.1 403 Forbidden") &&
                  contains(out, "c.test:443 is not in dev.ocirun.domains"),
              "%s", out.c_str());
    cr_assert(contains(log, "\"event\":\"allowed\",\"method\":\"CONNECT\",\"host\":\"a.test\"") &&
                  contains(log, "\"address\":\"127.0.0.2\",\"matched\":\"" + ap + "\""),
              "%s", log.c_str());
    cr_assert(contains(log, "\"event\":\"close\",\"method\":\"CONNECT\"") &&
                  contains(log, "\"bytesUp\":5,\"bytesDown\":7"),
              "%s", log.c_str());
    cr_assert(contains(log, "\"event\":\"refused\",\"method\":\"CONNECT\",\"host\":\"c.test\","
                            "\"port\":443,\"blocked\":true,\"mode\":\"enforce\""),
              "%s", log.c_str());
    cr_assert_eq(evs, 0, "events exit %d: %s", evs, read_file(ev.err_path).c_str());
    cr_assert(contains(events, "{\"type\":\"egress\"") && contains(events, "\"host\":\"c.test\""),
              "%s", events.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"egress proxy\",\"state\":\"enforced\","
                                "\"mechanism\":\"HTTP CONNECT proxy, enforce\""),
              "%s", rep.out.c_str());
}

// How hosts are matched: wildcards on label boundaries, case and a trailing
// dot folded, userinfo and percent-encoding refused, IP literals in any
// notation matched as addresses only; names that resolve to private,
// metadata or loopback addresses refused unless an address pattern names
// them, and the address checked is the one connected to; no CONNECT inside
// a tunnel.
Test(network, proxy_matching_edge_cases) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string p = std::to_string(a.port);
    Env e = make_env("netmx", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] =
        "*.a.test:" + p + ",a.test:" + p + ",priv.test:" + p + ",meta.test:" + p +
        ",mixed.test:" + p + ",loop.test:" + p + ",127.0.0.2:" + p;
    e.b.spec.annotations["dev.ocirun.deny-domains"] = "bad.a.test";
    e.b.save();
    use_hosts(e, "127.0.0.2 a.test x.a.test bad.a.test evila.test\n"
                 "10.1.2.3 priv.test\n169.254.169.254 meta.test\n"
                 "10.9.9.9 mixed.test\n127.0.0.2 mixed.test\n127.0.0.3 loop.test\n");
    long pid = started(e);
    struct Case {
        std::string host;
        const char *want; // start of the answer
        const char *also; // in the answer, or ""
    } cases[] = {
        {"a.test", "HTTP/1.1 200", "A:hello"},
        {"x.a.test", "HTTP/1.1 200", "A:hello"},
        {"X.A.TEST.", "HTTP/1.1 200", "A:hello"},
        {"evila.test", "HTTP/1.1 403", "is not in dev.ocirun.domains"},
        {"bad.a.test", "HTTP/1.1 403", "denied by dev.ocirun.deny-domains"},
        {"user@a.test", "HTTP/1.1 40", ""},
        {"a%2etest", "HTTP/1.1 40", ""},
        {"2130706434", "HTTP/1.1 200", "A:hello"}, // 127.0.0.2
        {"0x7f000002", "HTTP/1.1 200", "A:hello"},
        {"0177.0.0.2", "HTTP/1.1 200", "A:hello"},
        {"127.2", "HTTP/1.1 200", "A:hello"}, // inet_aton's short form
        {"[::ffff:127.0.0.2]", "HTTP/1.1 200", "A:hello"},
        {"127.0.0.3", "HTTP/1.1 403", ""},
        {"priv.test", "HTTP/1.1 403", "10.1.2.3 (private)"},
        {"meta.test", "HTTP/1.1 403", "169.254.169.254 (metadata)"},
        {"loop.test", "HTTP/1.1 403", "127.0.0.3 (loopback)"},
        {"mixed.test", "HTTP/1.1 200", "A:hello"},
    };
    std::vector<std::string> reqs;
    for (const auto &c : cases)
        reqs.push_back(connect_req(c.host + ":" + p, "hello"));
    // Wrong port, a second CONNECT inside a tunnel, a malformed request.
    reqs.push_back(connect_req("a.test:1", "hello"));
    reqs.push_back(connect_req("a.test:" + p, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n"));
    reqs.push_back("GET / HTTP/1.1\r\n\r\n");
    auto answers = split_answers(netns_talk(pid, 3128, reqs));
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(answers.size(), reqs.size());
    for (size_t i = 0; i < std::size(cases); i++) {
        cr_assert(answers[i].rfind(cases[i].want, 0) == 0 && contains(answers[i], cases[i].also),
                  "%s: %s", cases[i].host.c_str(), answers[i].c_str());
        // A refusal answers before anything reaches the server.
        if (contains(cases[i].want, "40"))
            cr_assert(!contains(answers[i], "A:"), "%s", answers[i].c_str());
    }
    size_t n = std::size(cases);
    cr_assert(answers[n].rfind("HTTP/1.1 403", 0) == 0, "%s", answers[n].c_str());
    cr_assert(answers[n + 1].rfind("HTTP/1.1 200", 0) == 0 && !contains(answers[n + 1], "A:") &&
                  contains(answers[n + 1], "<EOF>"),
              "%s", answers[n + 1].c_str());
    cr_assert(answers[n + 2].rfind("HTTP/1.1 400", 0) == 0, "%s", answers[n + 2].c_str());
    // mixed.test: the global-or-named address it checked is the one it used.
    cr_assert(contains(log, "\"host\":\"mixed.test\",\"port\":" + p + ",\"address\":\"127.0.0.2\""),
              "%s", log.c_str());
    cr_assert(contains(log, "\"reason\":\"a second CONNECT inside the tunnel\""), "%s",
              log.c_str());
}

// observe: everything goes through; what enforce would refuse is logged as
// blocked in observe mode, and the report says so.
Test(network, proxy_observe_mode) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string p = std::to_string(a.port);
    Env e = proxied("netobs", a, {{"dev.ocirun.network-mode", "observe"}});
    long pid = started(e);
    auto answers = split_answers(netns_talk(
        pid, 3128, {connect_req("other.test:" + p, "hi"), connect_req("a.test:" + p, "hi")}));
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(answers.size(), 2u);
    cr_assert(contains(answers[0], "200 Connection established") && contains(answers[0], "A:hi"),
              "%s", answers[0].c_str());
    cr_assert(contains(log, "\"event\":\"allowed\",\"method\":\"CONNECT\",\"host\":\"other.test\""),
              "%s", log.c_str());
    cr_assert(contains(log, "\"blocked\":true,\"mode\":\"observe\",\"reason\":\"other.test:" + p +
                                " is not in dev.ocirun.domains"),
              "%s", log.c_str());
    cr_assert(contains(log, "\"host\":\"a.test\",\"port\":" + p +
                                ",\"address\":\"127.0.0.2\",\"matched\":\"a.test:" + p +
                                "\",\"blocked\":false,\"mode\":\"observe\""),
              "%s", log.c_str());
    cr_assert(contains(rep.out, "HTTP CONNECT proxy, observe mode"), "%s", rep.out.c_str());
}

// proxy-max-connections bounds the connections open at once: the next one
// gets 503 and an event; once one closes, there is room again.
Test(network, proxy_max_connections) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string p = std::to_string(a.port);
    Env e = proxied("netmax", a, {{"dev.ocirun.proxy-max-connections", "2"}});
    long pid = started(e);
    std::string req = connect_req("a.test:" + p, "x");
    auto held = split_answers(netns_talk(pid, 3128, {req, req, req}));
    // The three above are closed now: room again, once the proxy has seen
    // them close (it may accept the next one first: bounded retries).
    std::vector<std::string> after;
    for (int i = 0; i < 50; i++) {
        after = split_answers(netns_talk(pid, 3128, {req}));
        if (!after.empty() && contains(after[0], "200")) break;
        usleep(100000);
    }
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(held.size(), 3u);
    cr_assert(contains(held[0], "200") && contains(held[1], "200"), "%s | %s", held[0].c_str(),
              held[1].c_str());
    cr_assert(held[2].rfind("HTTP/1.1 503", 0) == 0 &&
                  contains(held[2], "more than 2 connections at once"),
              "%s", held[2].c_str());
    cr_assert(!after.empty() && contains(after[0], "200") && contains(after[0], "A:x"), "%s",
              after.empty() ? "no answer" : after[0].c_str());
    cr_assert(contains(log, "dev.ocirun.proxy-max-connections"), "%s", log.c_str());
}

// publish: the host's 127.0.0.1:HOSTPORT reaches the container's
// 127.0.0.1:CPORT.
Test(network, publish_reaches_the_container) {
    int probe = listen_on("127.0.0.1", 0);
    uint16_t hp = port_of(probe);
    ::close(probe);
    Env e = make_env("netpub", {"sh", "-c", "nc -l -p 8080 -e echo from-inside; sleep 30"});
    e.b.spec.annotations["dev.ocirun.publish"] = std::to_string(hp) + ":8080";
    e.b.save();
    started(e);
    usleep(200000);
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(hp);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
    std::string got;
    char buf[256];
    ssize_t n;
    pollfd pf{s, POLLIN, 0};
    while (rc == 0 && ::poll(&pf, 1, 2000) > 0 && (n = ::read(s, buf, sizeof buf)) > 0)
        got.append(buf, static_cast<size_t>(n));
    ::close(s);
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    cleanup_all();
    cr_assert_eq(rc, 0, "connect: %s", std::strerror(errno));
    cr_assert_eq(got, "from-inside\n");
    cr_assert(contains(rep.out, "{\"dimension\":\"publish 127.0.0.1:" + std::to_string(hp) +
                                    "\",\"state\":\"enforced\""),
              "%s", rep.out.c_str());
}

// The helper: outside the container's cgroup and PID namespace, gone soon
// after the init exits, and delete leaves nothing of it.
Test(network, helper_lives_and_dies_with_the_container) {
    Env e = make_env("nethlp", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.network"] = "https";
    e.b.save();
    long pid = started(e);
    long shim = shim_pid(e);
    std::string shim_cgroup = read_file("/proc/" + std::to_string(shim) + "/cgroup");
    std::string init_cgroup = read_file("/proc/" + std::to_string(pid) + "/cgroup");
    auto inside = test::oci({"--root", e.root, "exec", e.id, "sh", "-c",
                             "kill -0 " + std::to_string(shim) + "; echo kill=$?; ps -o comm"});
    test::oci({"--root", e.root, "kill", e.id, "KILL"});
    bool gone_by_itself = test::pid_gone(shim, 5000);
    auto d = test::oci({"--root", e.root, "delete", e.id});
    cleanup_all();
    cr_assert(shim > 0 && shim_cgroup != init_cgroup, "%s", shim_cgroup.c_str());
    cr_assert(contains(inside.out, "kill=1") && !contains(inside.out, "oci-run-shim"), "%s",
              inside.out.c_str());
    cr_assert(gone_by_itself, "the helper outlived the container");
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(!test::exists(e.root + "/" + e.id));
}

// delete --force of a running container stops the helper too.
Test(network, delete_force_stops_the_helper) {
    Env e = make_env("netdel", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "9";
    e.b.save();
    started(e);
    long shim = shim_pid(e);
    auto d = test::oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = test::pid_gone_now(shim);
    cleanup_all();
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(gone, "helper %ld still there after delete --force", shim);
}

// linux.netDevices: a host interface moves in under its new name with its
// addresses, and is up; one that does not exist is an error naming it, and so
// is a move the kernel refuses (a name the container's namespace already
// has), which leaves nothing behind. (The kernel moves the interface before
// it renames it: the refused veth goes with the container's namespace.)
Test(network, net_devices_move_a_host_interface_in) {
    std::string host_if = "ocrt" + std::to_string(::getpid() % 100000);
    std::string peer = host_if + "p";
    auto sh = [](const std::string &cmd) {
        return test::run(std::vector<std::string>{"sh", "-c", cmd});
    };
    auto made = sh("ip link add " + host_if + " type veth peer name " + peer +
                   " && ip addr add "
                   "192.0.2.10/24 dev " +
                   host_if + " && ip -6 addr add 2001:db8::10/64 dev " + host_if);
    std::string clash_if = host_if + "c";
    auto made_clash = sh("ip link add " + clash_if + " type veth peer name " + clash_if + "p");
    Env clash = make_env("netdev3", {"true"});
    clash.b.spec.linux_->net_devices[clash_if].name = "lo";
    auto refused = test::run(clash);
    auto clash_left = test::dir_entries(clash.root);
    auto clash_after =
        sh("ip link show " + clash_if + "p 2>&1; ip link del " + clash_if + "p 2>/dev/null; true");
    Env e = make_env(
        "netdev", {"sh", "-c", "ip -o addr show eth1; cat /sys/class/net/eth1/flags; ip -o link"});
    e.b.spec.linux_->net_devices[host_if].name = "eth1";
    auto o = test::run(e);
    Env f = make_env("netdev2", {"true"});
    f.b.spec.linux_->net_devices["ocrt-nosuch"].name = "";
    auto missing = test::run(f);
    auto left = test::dir_entries(f.root);
    // With the container's namespace gone, the veth pair is gone too.
    auto after = sh("ip link show " + peer + " 2>&1; ip link del " + peer + " 2>/dev/null; true");
    cleanup_all();
    cr_assert_eq(made.status, 0, "%s", made.err.c_str());
    cr_assert_eq(made_clash.status, 0, "%s", made_clash.err.c_str());
    cr_assert_eq(refused.status, 1, "%s", refused.err.c_str());
    cr_assert(contains(refused.err, "linux.netDevices[" + clash_if + "]: network helper") &&
                  contains(refused.err, "as lo: File exists"),
              "%s", refused.err.c_str());
    cr_assert(clash_left.empty());
    cr_assert(contains(clash_after.out, "does not exist"), "%s", clash_after.out.c_str());
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "eth1    inet 192.0.2.10/24 scope global eth1") &&
                  contains(o.out, "inet6 2001:db8::10/64 scope global"),
              "%s", o.out.c_str());
    // IFF_UP is bit 0 of the flags.
    cr_assert(contains(o.out, "0x1003\n") || contains(o.out, "0x1103\n"), "%s", o.out.c_str());
    cr_assert(!contains(o.out, host_if), "%s", o.out.c_str());
    cr_assert_eq(missing.status, 1);
    cr_assert(contains(missing.err, "linux.netDevices[ocrt-nosuch]: no interface ocrt-nosuch"),
              "%s", missing.err.c_str());
    cr_assert(left.empty());
    cr_assert(contains(after.out, "does not exist"), "%s", after.out.c_str());
}

// linux.netDevices with a network namespace joined by path: the interface
// goes into that namespace (not the runtime's, which the init is still in
// when it is moved), with its address, and stays there when the container
// is gone.
Test(network, net_devices_into_a_joined_namespace) {
    std::string tag = std::to_string(::getpid() % 100000);
    std::string ns = "ocrtns" + tag, host_if = "ocrtj" + tag;
    auto sh = [](const std::string &cmd) {
        return test::run(std::vector<std::string>{"sh", "-c", cmd});
    };
    auto made = sh("ip netns add " + ns + " && ip link add " + host_if + " type veth peer name " +
                   host_if + "p && ip addr add 192.0.2.20/24 dev " + host_if);
    Env e = make_env("netdevj", {"sh", "-c", "ip -o addr show eth2"});
    for (auto &n : e.b.spec.linux_->namespaces)
        if (n.type == ocirun::oci::NsType::network) n.path = "/run/netns/" + ns;
    e.b.spec.linux_->net_devices[host_if].name = "eth2";
    auto o = test::run(e);
    auto in_ns = sh("ip -n " + ns + " -o addr show eth2");
    auto on_host = sh("ip link show " + host_if + " 2>&1");
    sh("ip netns del " + ns + "; ip link del " + host_if + "p 2>/dev/null; true");
    cleanup_all();
    cr_assert_eq(made.status, 0, "%s", made.err.c_str());
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "eth2    inet 192.0.2.20/24 scope global eth2"), "%s", o.out.c_str());
    cr_assert(contains(in_ns.out, "192.0.2.20/24"), "%s", in_ns.out.c_str());
    cr_assert(contains(on_host.out, "does not exist"), "%s", on_host.out.c_str());
}

// Domain patterns are checked when the container is made, internationalised
// names through libidn2 (linked into the static oci-run, loaded by a dynamic
// one): a valid one is taken, an invalid one refused with its reason.
Test(network, international_domain_patterns_are_checked_at_create) {
    Env ok = make_env("netidn", {"true"});
    ok.b.spec.annotations["dev.ocirun.domains"] = "b\xc3\xbc"
                                                  "cher.test";
    auto good = test::run(ok);
    Env bad = make_env("netidn2", {"true"});
    bad.b.spec.annotations["dev.ocirun.domains"] = "-\xc3\xbc.test";
    auto refused = test::run(bad);
    auto left = test::dir_entries(bad.root);
    cleanup_all();
    cr_assert_eq(good.status, 0, "%s", good.err.c_str());
    cr_assert_eq(refused.status, 1, "%s", refused.err.c_str());
    cr_assert(contains(refused.err, "dev.ocirun.domains") &&
                  contains(refused.err, "invalid internationalised name"),
              "%s", refused.err.c_str());
    cr_assert(left.empty());
}

// Any new network namespace gets its loopback up (as runc and crun do), with
// or without a policy.
Test(network, new_namespace_has_loopback_up) {
    Env e = make_env("netlo", {"sh", "-c",
                               "cat /sys/class/net/lo/flags; nc -l -p 8080 -e echo reached & "
                               "sleep 0.2; nc 127.0.0.1 8080 </dev/null"});
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s %s", o.out.c_str(), o.err.c_str());
    // IFF_UP | IFF_LOOPBACK, and a server on 127.0.0.1 answers.
    cr_assert(contains(o.out, "0x9\nreached\n"), "%s", o.out.c_str());
}
