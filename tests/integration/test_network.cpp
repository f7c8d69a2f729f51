// The network policy on real containers: forwarded host loopback ports,
// published container ports, the egress proxy (allowing, refusing,
// observing, bounding), what finds no route, and the helper's life. The
// "remote" servers are test servers on 127.0.0.x; names resolve through a
// hosts file given to the helper ($OCI_RUN_RESOLVE_HOSTS).
#include "oci/json.hpp"
#include "support/container_env.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
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
using test::split_answers;

namespace {

void setup() {
    const char *shim = std::getenv("OCI_RUN_SHIM");
    cr_assert(shim && ::access(shim, X_OK) == 0,
              "OCI_RUN_SHIM must name the built oci-run-shim (tests/run-suites.sh sets it)");
}

// In the network namespace of `pid`, one connection per request to
// 127.0.0.1:port, all held open together: each request is sent, then what
// comes back within `ms` of quiet (or until EOF) is collected. The answers,
// separated by "\n----\n". `half_close`: each request is followed by the
// client's EOF (shutdown(SHUT_WR), as `printf ... | nc` does).
std::string netns_talk(long pid, uint16_t port, const std::vector<std::string> &requests,
                       int ms = 600, bool half_close = false) {
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
            int s = test::connect_loopback(port);
            std::string got;
            if (s < 0) {
                got = std::string("connect: ") + std::strerror(errno);
            } else {
                if (!req.empty() && ::write(s, req.data(), req.size()) < 0) got = "write failed";
                if (half_close) ::shutdown(s, SHUT_WR);
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
    std::string out = test::read_to_eof(p[0]);
    ::close(p[0]);
    ::waitpid(child, nullptr, 0);
    return out;
}

// `cmd` run by sh on the host (ip, for the tests' interfaces and namespaces).
test::Output sh(const std::string &cmd) {
    return test::run(std::vector<std::string>{"sh", "-c", cmd});
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

// A sleeping container with a forward (so a helper), started.
Env forwarding(const char *tag) {
    Env e = make_env(tag, {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "9";
    e.b.save();
    started(e);
    return e;
}

// A sleeping container whose proxy allows a.test (and 127.0.0.2, where it
// and other.test resolve) on the server's port, plus `extra` annotations.
Env proxied(const char *tag, const Server &a,
            std::initializer_list<std::pair<const char *, const char *>> extra) {
    Env e = make_env(tag, {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] =
        "a.test:" + std::to_string(a.port) + ",127.0.0.2:" + std::to_string(a.port);
    for (const auto &[k, v] : extra)
        e.b.spec.annotations[k] = v;
    e.b.save();
    use_hosts(e, "127.0.0.2 a.test other.test\n");
    return e;
}

// What the container's server at the host's 127.0.0.1:`port` (published)
// says until it closes, after 200 ms for it to listen; "connect: ERROR".
std::string from_published(uint16_t port) {
    usleep(200000);
    int s = test::connect_loopback(port);
    if (s < 0) return std::string("connect: ") + std::strerror(errno);
    std::string got;
    char buf[256];
    ssize_t n;
    pollfd pf{s, POLLIN, 0};
    while (::poll(&pf, 1, 2000) > 0 && (n = ::read(s, buf, sizeof buf)) > 0)
        got.append(buf, static_cast<size_t>(n));
    ::close(s);
    return got;
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
    e.b.spec.annotations["dev.ocirun.domains"] = ap + ",127.0.0.2:" + std::to_string(a.port);
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

// Attack: glibc appends the host's search domains to a name that does not
// resolve (or tries them first, for a name with fewer dots than ndots), so
// an allowed *.a.test name could reach x.a.test.corp.example, a name the
// policy never matched. The helper looks names up as they are: its DNS
// server (here a fake one the test runs on 127.0.0.77, named by a
// resolv.conf with a search domain bound over the host's for oci-run and
// its helper) is asked for x.a.test only.
Test(network, attack_the_proxy_never_appends_a_search_domain) {
    int dns = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(53);
    at.sin_addr.s_addr = htonl(0x7f00004d); // 127.0.0.77
    cr_assert(dns >= 0 && ::bind(dns, reinterpret_cast<sockaddr *>(&at), sizeof at) == 0,
              "bind 127.0.0.77:53: %s", std::strerror(errno));
    timeval tv{0, 100000};
    ::setsockopt(dns, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    // Every name asked for, answered NXDOMAIN.
    std::vector<std::string> asked;
    std::atomic<bool> stop{false};
    std::thread server([&] {
        while (!stop) {
            unsigned char q[512];
            sockaddr_in from{};
            socklen_t len = sizeof from;
            ssize_t n = ::recvfrom(dns, q, sizeof q, 0, reinterpret_cast<sockaddr *>(&from), &len);
            if (n < 17) continue;
            std::string name;
            size_t i = 12;
            while (i < static_cast<size_t>(n) && q[i] != 0 && i + q[i] < static_cast<size_t>(n)) {
                name.append(reinterpret_cast<char *>(q) + i + 1, q[i]);
                name += '.';
                i += q[i] + 1u;
            }
            asked.push_back(name);
            q[2] = 0x81;
            q[3] = 0x83; // a response, recursion available, NXDOMAIN
            (void)::sendto(dns, q, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr *>(&from),
                           len);
        }
    });
    Env e = make_env("netsearch", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = "*.a.test:443";
    e.b.save();
    std::string conf = e.root + "/resolv.conf";
    test::write_file(conf, "nameserver 127.0.0.77\nsearch corp.example\n"
                           "options ndots:5 timeout:1 attempts:1\n");
    ::unsetenv("OCI_RUN_RESOLVE_HOSTS");
    // (The container's stdio on a file: it outlives the command.)
    std::string out = e.root + "/run.out";
    auto c = test::run(std::vector<std::string>{
        "unshare", "-m", "sh", "-c",
        "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\" </dev/null >" + out + " 2>&1", conf,
        std::getenv("OCI_RUN"), "--root", e.root, "run", "-d", "--bundle", e.b.dir, e.id});
    c.err += test::read_file(out);
    long pid = test::state_of(e.root, e.id).pid;
    auto answers = pid > 0 ? split_answers(netns_talk(pid, 3128, {connect_req("x.a.test:443")}))
                           : std::vector<std::string>{};
    stop = true;
    server.join();
    ::close(dns);
    cleanup_all();
    cr_assert_eq(c.status, 0, "%s", c.err.c_str());
    cr_assert_eq(answers.size(), 1u);
    cr_assert(answers[0].rfind("HTTP/1.1 ", 0) == 0 && contains(answers[0], "does not resolve"),
              "%s", answers[0].c_str());
    std::string all;
    for (const auto &n : asked)
        all += n + " ";
    cr_assert(contains(all, "x.a.test. "), "asked: %s", all.c_str());
    cr_assert(!contains(all, "corp.example"), "a search domain was appended: %s", all.c_str());
}

// Attack: slow clients hold the proxy's connection limit (slowloris). A
// request head must be complete within the request timeout (30 s; 1 s here,
// through OCI_RUN_PROXY_REQUEST_TIMEOUT), and a tunnel's client must send
// its first bytes within it: a head that stops half-way gets 408, a silent
// tunnel is closed, each with its event.
Test(network, attack_slow_clients_do_not_hold_the_proxy) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string ap = "127.0.0.2:" + std::to_string(a.port);
    Env e = make_env("netslow", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = ap;
    e.b.save();
    ::setenv("OCI_RUN_PROXY_REQUEST_TIMEOUT", "1", 1);
    long pid = started(e);
    ::unsetenv("OCI_RUN_PROXY_REQUEST_TIMEOUT");
    auto answers = split_answers(netns_talk(
        pid, 3128, {"CONNECT " + ap + " HTTP/1.1\r\nHost: ", connect_req(ap), connect_req(ap, "x")},
        3500));
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(answers.size(), 3u);
    cr_assert(answers[0].rfind("HTTP/1.1 408 Request Timeout", 0) == 0 &&
                  contains(answers[0], "no complete request in 1 s") &&
                  contains(answers[0], "<EOF>"),
              "%s", answers[0].c_str());
    cr_assert(answers[1].rfind("HTTP/1.1 200", 0) == 0 && contains(answers[1], "<EOF>"), "%s",
              answers[1].c_str());
    cr_assert(answers[2].rfind("HTTP/1.1 200", 0) == 0 && contains(answers[2], "A:x"), "%s",
              answers[2].c_str());
    cr_assert(contains(log, "\"event\":\"refused\"") &&
                  contains(log, "\"reason\":\"no complete request in 1 s\""),
              "%s", log.c_str());
    cr_assert(contains(log, "\"reason\":\"nothing from the client through the tunnel in 1 s\""),
              "%s", log.c_str());
}

// Attack: the egress log is on the host's tmpfs and its lines carry what a
// client sent. Hosts of thousands of bytes, refused, are written cut to 256
// bytes each and marked, so a flood costs the host little memory per
// connection (and the file stops at its limit: unit test egress_log).
Test(network, attack_a_long_host_is_cut_in_the_egress_log) {
    Env e = make_env("netlong", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = "a.test:443";
    e.b.save();
    long pid = started(e);
    std::string label(60, 'x'), host;
    while (host.size() < 4000)
        host += label + ".";
    host += "test";
    std::vector<std::string> reqs;
    for (int i = 0; i < 20; i++)
        reqs.push_back(connect_req(host + ":443", "hello"));
    auto answers = split_answers(netns_talk(pid, 3128, reqs));
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(answers.size(), reqs.size());
    for (const auto &a : answers)
        cr_assert(a.rfind("HTTP/1.1 4", 0) == 0, "%s", a.c_str());
    size_t lines = 0, at = 0, nl;
    while ((nl = log.find('\n', at)) != std::string::npos) {
        std::string line = log.substr(at, nl - at);
        at = nl + 1;
        if (!contains(line, "\"event\":\"refused\"")) continue;
        lines++;
        cr_assert(line.size() < 1000, "%zu bytes: %s", line.size(), line.c_str());
        cr_assert(contains(line, "\"host\":\"" + host.substr(0, 256) + "\"") &&
                      contains(line, "\"truncated\":true"),
                  "%s", line.c_str());
    }
    cr_assert_eq(lines, reqs.size(), "%s", log.c_str());
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
    cr_assert(contains(log, "\"reason\":\"a proxy request (CONNECT or an absolute URL) inside the "
                            "tunnel\""),
              "%s", log.c_str());
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
    std::string got = from_published(hp);
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    cleanup_all();
    cr_assert_eq(got, "from-inside\n");
    cr_assert(contains(rep.out, "{\"dimension\":\"publish 127.0.0.1:" + std::to_string(hp) +
                                    "\",\"state\":\"enforced\""),
              "%s", rep.out.c_str());
}

// The helper reads container traffic with its own parsers: taken over, it
// must be worth nothing. Every thread of it (with publish, one is in the
// container's network namespace) is nobody with no groups, no capability,
// an empty bounding set, no_new_privs and a seccomp filter; publish, a
// forward and the proxy still work through it, and report says so.
Test(network, attack_the_helper_runs_as_nobody_without_capabilities) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    int probe = listen_on("127.0.0.1", 0);
    uint16_t hp = port_of(probe);
    ::close(probe);
    Env e = proxied("netconf", a, {{"dev.ocirun.local-ports", "9"}});
    e.b.spec.annotations["dev.ocirun.publish"] = std::to_string(hp) + ":8080";
    e.b.spec.process->args = {"sh", "-c", "nc -l -p 8080 -e echo from-inside; sleep 30"};
    e.b.save();
    long pid = started(e);
    long shim = shim_pid(e);
    std::vector<std::string> threads;
    std::string task_dir = "/proc/" + std::to_string(shim) + "/task";
    if (DIR *d = ::opendir(task_dir.c_str())) {
        while (dirent *de = ::readdir(d))
            if (de->d_name[0] != '.')
                threads.push_back(read_file(task_dir + "/" + de->d_name + "/status"));
        ::closedir(d);
    }
    std::string published = from_published(hp);
    auto answers = split_answers(
        netns_talk(pid, 3128, {connect_req("a.test:" + std::to_string(a.port), "x")}));
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    cleanup_all();
    cr_assert_eq(threads.size(), 2u, "threads of the helper: %zu", threads.size());
    auto field = [](const std::string &status, const char *name) {
        size_t at = status.find(std::string("\n") + name + ":\t");
        if (at == std::string::npos) return std::string("(none)");
        at += std::strlen(name) + 3;
        return status.substr(at, status.find('\n', at) - at);
    };
    for (const auto &st : threads) {
        cr_assert(field(st, "Uid") == "65534\t65534\t65534\t65534", "%s", st.c_str());
        cr_assert(field(st, "Gid") == "65534\t65534\t65534\t65534", "%s", st.c_str());
        cr_assert(field(st, "Groups").find_first_not_of(' ') == std::string::npos, "%s",
                  st.c_str());
        for (const char *caps : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
            cr_assert(field(st, caps) == "0000000000000000", "%s: %s", caps, st.c_str());
        cr_assert(field(st, "NoNewPrivs") == "1", "%s", st.c_str());
        cr_assert(field(st, "Seccomp") == "2", "%s", st.c_str());
    }
    cr_assert_eq(published, "from-inside\n");
    // report measures it too.
    cr_assert(contains(rep.out, "{\"dimension\":\"network helper\",\"state\":\"enforced\"") &&
                  contains(rep.out, "(uid 65534, no capability, seccomp filter)"),
              "%s", rep.out.c_str());
    cr_assert(!answers.empty() && contains(answers[0], "HTTP/1.1 200") &&
                  contains(answers[0], "A:x"),
              "%s", answers.empty() ? "no answer" : answers[0].c_str());
}

// What a taken-over helper would try, tried by the helper itself right
// after it confined itself (OCI_RUN_SHIM_PROBE=1, a -Dfault_injection
// build, into shim.log): writing a host file or a sysctl, signalling,
// a user namespace, executable memory, another socket family, becoming
// root again, running a program. Each fails with EPERM.
Test(network, attack_the_confined_helper_cannot_write_signal_or_run) {
    Env e = make_env("netprobe", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.network"] = "https";
    e.b.save();
    ::setenv("OCI_RUN_SHIM_PROBE", "1", 1);
    auto c = test::create(e);
    ::unsetenv("OCI_RUN_SHIM_PROBE");
    std::string log = read_file(e.root + "/" + e.id + "/shim.log");
    bool alive = c.status == 0 && !test::pid_gone_now(shim_pid(e));
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    if (!contains(log, "probe"))
        cr_skip_test("%s was built without -Dfault_injection=true", test::oci_run_path().c_str());
    cr_assert(alive, "the helper is gone after its probe: %s", log.c_str());
    // A sanitizer build's helper may open files for writing (its report)
    // and signal (its leak check's tracer): nobody's permissions still
    // refuse both files.
    bool sanitized = contains(log, "probe sanitized");
    for (const char *what : {"open-write", "open-sysctl", "kill", "unshare-user", "mmap-exec",
                             "socket-unix", "setuid-0", "execve"}) {
        std::string want = "EPERM";
        if (sanitized && std::string(what).starts_with("open-")) want = "EACCES";
        if (sanitized && std::string(what) == "kill") continue;
        cr_assert(contains(log, std::string(" ") + what + "=" + want), "%s: %s", what, log.c_str());
    }
}

// The helper: outside the container's PID namespace, in a cgroup of its own
// under the container's in the v2 hierarchy and the v1 memory and pids
// ones (charged to the container's limits, not listed in its cgroup.procs),
// gone soon after the init exits, and delete leaves nothing of it.
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
    std::string mismatch = test::helper_cgroup_mismatch(shim_cgroup, init_cgroup);
    cr_assert(mismatch.empty(), "%s", mismatch.c_str());
    cr_assert(contains(inside.out, "kill=1") && !contains(inside.out, "oci-run-shim"), "%s",
              inside.out.c_str());
    cr_assert(gone_by_itself, "the helper outlived the container");
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(!test::exists(e.root + "/" + e.id));
}

// A helper that dies while the container runs (SIGKILLed here, as the OOM
// killer would) leaves the container without its forwards and proxy:
// `events` says so, once, with the helper's PID. It said nothing, and only
// `report` showed it.
Test(network, events_say_when_the_helper_is_gone) {
    Env e = forwarding("nethgone");
    long shim = shim_pid(e);
    auto ev = test::spawn_oci({"--root", e.root, "events", "--interval", "60s", e.id});
    usleep(300000);
    ::kill(static_cast<pid_t>(shim), SIGKILL); // the helper this test's create started
    usleep(800000);
    test::oci({"--root", e.root, "kill", e.id, "KILL"});
    int evs = test::wait_bounded(ev.pid, 5000);
    std::string events = read_file(ev.out_path);
    cleanup_all();
    cr_assert_eq(evs, 0, "events exit %d: %s", evs, read_file(ev.err_path).c_str());
    std::string want = "{\"type\":\"helper\",\"id\":\"" + e.id +
                       "\",\"pid\":" + std::to_string(shim) + ",\"event\":\"exited\"";
    size_t at = events.find(want);
    cr_assert(at != std::string::npos, "%s", events.c_str());
    cr_assert(events.find("\"type\":\"helper\"", at + want.size()) == std::string::npos,
              "twice: %s", events.c_str());
}

// delete --force of a running container stops the helper too.
Test(network, delete_force_stops_the_helper) {
    Env e = forwarding("netdel");
    long shim = shim_pid(e);
    auto d = test::oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = test::pid_gone_now(shim);
    cleanup_all();
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(gone, "helper %ld still there after delete --force", shim);
}

// A foreground run of a short process with a forward: the helper leaves
// with the init, and run's delete may find it on its way out, its command
// line already empty. That is no reason to warn: before, about one run in
// eight said "not stopped: its command line is not the helper's".
Test(network, foreground_run_with_a_helper_says_nothing) {
    Env e = make_env("netrun", {"true"});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "9";
    e.b.save();
    std::string said;
    for (int i = 0; i < 40 && said.empty(); i++) {
        auto r = test::oci_files({"--root", e.root, "run", "--bundle", e.b.dir, e.id});
        if (r.status != 0 || !r.err.empty())
            said = "run " + std::to_string(i) + ": exit " + std::to_string(r.status) + ": " + r.err;
    }
    cleanup_all();
    cr_assert(said.empty(), "%s", said.c_str());
}

// linux.netDevices: a host interface moves in under its new name with its
// addresses, and is up; one that does not exist is an error naming it, and so
// is a move the kernel refuses (a name the container's namespace already
// has), which leaves nothing behind. (The kernel moves the interface before
// it renames it: the refused veth goes with the container's namespace.)
Test(network, net_devices_move_a_host_interface_in) {
    std::string host_if = "ocrt" + std::to_string(::getpid() % 100000);
    std::string peer = host_if + "p";
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
    // The kernel takes a namespace apart later, in a work queue: wait for it.
    auto gone = [&](const std::string &link) {
        return sh("for i in $(seq 50); do ip link show " + link +
                  " >/dev/null 2>&1 || break; sleep 0.1; done; ip link show " + link +
                  " 2>&1; ip link del " + link + " 2>/dev/null; true");
    };
    auto clash_after = gone(clash_if + "p");
    Env e = make_env(
        "netdev", {"sh", "-c", "ip -o addr show eth1; cat /sys/class/net/eth1/flags; ip -o link"});
    e.b.spec.linux_->net_devices[host_if].name = "eth1";
    auto o = test::run(e);
    Env f = make_env("netdev2", {"true"});
    f.b.spec.linux_->net_devices["ocrt-nosuch"].name = "";
    auto missing = test::run(f);
    auto left = test::dir_entries(f.root);
    // With the container's namespace gone, the veth pair is gone too.
    auto after = gone(peer);
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

// The joined namespace's path is a symlink that is turned to another
// namespace while create runs (held 300 ms twice, once the namespace is
// checked and before the devices move): the device still goes into the
// namespace that was checked, the container's, not where the path leads now.
Test(network, net_devices_go_to_the_checked_namespace_when_its_path_is_swapped) {
    std::string tag = std::to_string(::getpid() % 100000);
    std::string ns_a = "ocrtsa" + tag, ns_b = "ocrtsb" + tag, host_if = "ocrts" + tag;
    auto made = sh("ip netns add " + ns_a + " && ip netns add " + ns_b + " && ip link add " +
                   host_if + " type veth peer name " + host_if + "p");
    Env e = make_env("netdevswap", {"sh", "-c", "ip -o link show eth2"});
    std::string link = e.b.dir + "/netns";
    bool linked = ::symlink(("/run/netns/" + ns_a).c_str(), link.c_str()) == 0;
    for (auto &n : e.b.spec.linux_->namespaces)
        if (n.type == ocirun::oci::NsType::network) n.path = link;
    e.b.spec.linux_->net_devices[host_if].name = "eth2";
    e.b.save();
    ::setenv("OCI_RUN_FAULT_DELAY", "create:recorded,create:cgroup-v1,create:scope", 1);
    std::thread swap([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        std::string next = link + ".next";
        if (::symlink(("/run/netns/" + ns_b).c_str(), next.c_str()) == 0)
            (void)::rename(next.c_str(), link.c_str());
    });
    auto o = test::run(e);
    swap.join();
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    char to[256] = "";
    (void)::readlink(link.c_str(), to, sizeof to - 1);
    auto in_a = sh("ip -n " + ns_a + " -o link show eth2 2>&1");
    auto in_b = sh("ip -n " + ns_b + " -o link show eth2 2>&1");
    sh("ip netns del " + ns_a + "; ip netns del " + ns_b + "; ip link del " + host_if +
       "p 2>/dev/null; true");
    ::unlink(link.c_str());
    cleanup_all();
    cr_assert_eq(made.status, 0, "%s", made.err.c_str());
    cr_assert(linked);
    cr_assert(std::string(to) == "/run/netns/" + ns_b, "the path was not swapped in time: %s", to);
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "eth2"), "%s", o.out.c_str());
    cr_assert_eq(in_a.status, 0, "%s", in_a.out.c_str());
    cr_assert_neq(in_b.status, 0, "the device went to the namespace the path led to later");
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

// ---- attacks from inside the container ------------------------------------
// Each runs the attack in a real container; the "outside" addresses sit on
// a dummy interface of a network namespace the test process makes for
// itself (test::own_network), with the test's servers listening there.

namespace {

// The egress events of `log` with "blocked":true, as "host:port" lines,
// sorted and unique.
std::string blocked_destinations(const std::string &log) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < log.size()) {
        size_t end = log.find('\n', start);
        std::string line = log.substr(start, end - start);
        start = end == std::string::npos ? log.size() : end + 1;
        if (!contains(line, "\"blocked\":true")) continue;
        auto field = [&](const char *key) {
            size_t at = line.find(std::string("\"") + key + "\":");
            if (at == std::string::npos) return std::string();
            at += std::strlen(key) + 3;
            if (line[at] == '"') return line.substr(at + 1, line.find('"', at + 1) - at - 1);
            return line.substr(at, line.find_first_of(",}", at) - at);
        };
        out.push_back(field("host") + ":" + field("port"));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    std::string joined;
    for (const auto &d : out)
        joined += d + "\n";
    return joined;
}

} // namespace

// A name's rule and the address rule covering what it resolves to must both
// allow the port: with loop.test:443 allowed by name and 127.0.0.1 only on
// the API's port, CONNECT loop.test:443 is refused (it reached 127.0.0.1:443).
Test(network, attack_resolved_name_takes_the_address_patterns_port) {
    test::own_network({});
    Server api, tls;
    serve(api, "127.0.0.1", "API:");
    serve(tls, "127.0.0.1", "TLS:", 64, 443);
    std::string ap = std::to_string(api.port);
    Env e = make_env("netapt", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] =
        "loop.test:443,loop.test:" + ap + ",127.0.0.1:" + ap;
    e.b.save();
    use_hosts(e, "127.0.0.1 loop.test\n");
    long pid = started(e);
    auto answers = split_answers(
        netns_talk(pid, 3128,
                   {connect_req("loop.test:443", "x\n"), connect_req("127.0.0.1:443", "x\n"),
                    connect_req("loop.test:" + ap, "x\n")}));
    cleanup_all();
    cr_assert_eq(answers.size(), 3u);
    cr_assert(answers[0].rfind("HTTP/1.1 403", 0) == 0 && !contains(answers[0], "TLS:") &&
                  contains(answers[0], "its address pattern does not allow port 443"),
              "%s", answers[0].c_str());
    cr_assert(answers[1].rfind("HTTP/1.1 403", 0) == 0 && !contains(answers[1], "TLS:"), "%s",
              answers[1].c_str());
    cr_assert(contains(answers[2], "200 Connection established") && contains(answers[2], "API:x"),
              "%s", answers[2].c_str());
}

// Names resolving to outside addresses of every kind: only the global ones
// are reached (a public-looking address, NAT64 of a global one); metadata,
// private, NAT64 local-use (RFC 8215) and 6to4 of a private address are not.
Test(network, attack_special_purpose_addresses_are_not_reached_by_name) {
    test::own_network({"169.254.169.254", "10.1.2.3", "8.8.8.8", "64:ff9b:1::a01:203",
                       "2002:a01:203::1", "64:ff9b::808:808"});
    struct Dest {
        const char *name, *addr, *tag;
        bool reached;
        const char *why;
    } dests[] = {
        {"meta.test", "169.254.169.254", "META:", false, "(metadata)"},
        {"priv.test", "10.1.2.3", "PRIV:", false, "(private)"},
        {"pub.test", "8.8.8.8", "PUB:", true, ""},
        {"nat64l.test", "64:ff9b:1::a01:203", "N64L:", false, "(NAT64 local-use)"},
        {"sixtofour.test", "2002:a01:203::1", "6TO4:", false, "(private)"},
        {"nat64g.test", "64:ff9b::808:808", "N64G:", true, ""},
    };
    std::vector<std::unique_ptr<Server>> servers;
    std::string hosts;
    std::vector<std::string> reqs;
    for (const auto &d : dests) {
        servers.push_back(std::make_unique<Server>());
        serve(*servers.back(), d.addr, d.tag, 64, 443);
        hosts += std::string(d.addr) + " " + d.name + "\n";
        reqs.push_back(connect_req(std::string(d.name) + ":443", "x\n"));
    }
    Env e = make_env("netspa", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = "*.test";
    e.b.save();
    use_hosts(e, hosts);
    long pid = started(e);
    auto answers = split_answers(netns_talk(pid, 3128, reqs));
    cleanup_all();
    cr_assert_eq(answers.size(), std::size(dests));
    for (size_t i = 0; i < std::size(dests); i++) {
        const Dest &d = dests[i];
        if (d.reached)
            cr_assert(contains(answers[i], std::string(d.tag) + "x"), "%s: %s", d.name,
                      answers[i].c_str());
        else
            cr_assert(answers[i].rfind("HTTP/1.1 403", 0) == 0 && !contains(answers[i], d.tag) &&
                          contains(answers[i], d.why),
                      "%s: %s", d.name, answers[i].c_str());
    }
}

namespace {

// a.test (127.0.0.2, its echoes tagged "A:"), which the proxy allows, and
// evil.test (127.0.0.3, "EVIL:"), which it does not, with a container
// started behind the proxy; the servers' ports as text.
struct AllowedAndEvil {
    Server a, evil;
    std::string p, ep;
    Env e;
    long pid = 0;
};

void allowed_and_evil(AllowedAndEvil &t, const char *tag) {
    serve(t.a, "127.0.0.2", "A:");
    serve(t.evil, "127.0.0.3", "EVIL:");
    t.p = std::to_string(t.a.port);
    t.ep = std::to_string(t.evil.port);
    t.e = proxied(tag, t.a, {});
    use_hosts(t.e, "127.0.0.2 a.test\n127.0.0.3 evil.test\n");
    t.pid = started(t.e);
}

} // namespace

// Request smuggling: nothing reaches a server that the proxy has not parsed
// and decided on. A CONNECT behind blank lines inside a tunnel is refused; a
// request pipelined after a GET, after a Content-Length body or after a
// chunked body never leaves the proxy (the allowed server sees only the
// first request and its body).
Test(network, attack_smuggled_requests_are_not_relayed) {
    AllowedAndEvil t;
    allowed_and_evil(t, "netsmg");
    const std::string &p = t.p, &ep = t.ep;
    Env &e = t.e;
    long pid = t.pid;
    std::string second = "GET http://evil.test:" + ep + "/two HTTP/1.1\r\nHost: evil\r\n\r\n";
    std::string url = "http://a.test:" + p;
    auto answers = split_answers(netns_talk(
        pid, 3128,
        {connect_req("a.test:" + p, "\r\n\r\nCONNECT evil.test:" + ep + " HTTP/1.1\r\n\r\n"),
         connect_req("a.test:" + p, "\r\nGET http://evil.test:" + ep + "/ HTTP/1.1\r\n\r\n"),
         "GET " + url + "/one HTTP/1.1\r\nHost: a\r\n\r\n" + second,
         "POST " + url + "/len HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + second,
         "POST " + url +
             "/chunk HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n0\r\n\r\n" +
             second}));
    // The close events come once the client's connections are gone.
    std::string log;
    for (int i = 0; i < 40 && !contains(log = egress_log(e), "were not relayed"); i++)
        usleep(50000);
    cleanup_all();
    cr_assert_eq(answers.size(), 5u);
    for (const auto &ans : answers)
        cr_assert(!contains(ans, "EVIL:") && !contains(ans, "/two") && !contains(ans, "evil.test"),
                  "%s", ans.c_str());
    cr_assert(contains(answers[0], "200 Connection established") && !contains(answers[0], "A:"),
              "%s", answers[0].c_str());
    cr_assert(!contains(answers[1], "A:"), "%s", answers[1].c_str());
    cr_assert(contains(answers[2], "A:GET /one HTTP/1.1\r\n"), "%s", answers[2].c_str());
    cr_assert(contains(answers[3], "POST /len HTTP/1.1\r\n") && contains(answers[3], "hello"), "%s",
              answers[3].c_str());
    cr_assert(contains(answers[4], "POST /chunk HTTP/1.1\r\n") &&
                  contains(answers[4], "5\r\nhello\r\n0\r\n\r\n"),
              "%s", answers[4].c_str());
    cr_assert(contains(log, "were not relayed: one request per connection"), "%s", log.c_str());
}

// A tunnel whose first bytes fill the probe's buffer is decided at once (a
// request line longer than the buffer, or blank lines filling it, once
// spun the helper's loop for 30 s and then reset the connection): the long
// request is relayed, the blank lines ahead of a CONNECT refused. A request
// sent with its EOF at once (`printf ... | nc`) is answered (it was dropped
// unanswered), plain and through a tunnel, and the EOF reaches the server.
Test(network, long_and_half_closed_requests_are_decided_at_once) {
    AllowedAndEvil t;
    allowed_and_evil(t, "netlong");
    const std::string &p = t.p, &ep = t.ep;
    Env &e = t.e;
    long pid = t.pid;
    std::string path = "/" + std::string(5000, 'a');
    auto long_ones = split_answers(
        netns_talk(pid, 3128,
                   {connect_req("a.test:" + p, "GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n"),
                    connect_req("a.test:" + p, std::string(5000, '\n') + "CONNECT evil.test:" + ep +
                                                   " HTTP/1.1\r\n\r\n")}));
    auto closed =
        split_answers(netns_talk(pid, 3128,
                                 {"GET http://a.test:" + p + "/fin HTTP/1.1\r\nHost: a\r\n\r\n",
                                  connect_req("a.test:" + p, "hello")},
                                 600, true));
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(long_ones.size(), 2u);
    // (the server echoes each read with its tag)
    cr_assert(contains(long_ones[0], "A:GET /aaaa") &&
                  contains(long_ones[0], "aaaa HTTP/1.1\r\nHost: a\r\n"),
              "%.300s", long_ones[0].c_str());
    cr_assert(contains(long_ones[1], "200 Connection established") &&
                  contains(long_ones[1], "<EOF>") && !contains(long_ones[1], "EVIL:"),
              "%s", long_ones[1].c_str());
    cr_assert(contains(log, "\"event\":\"refused\"") &&
                  contains(log, "a proxy request (CONNECT or an absolute URL) inside the tunnel"),
              "%s", log.c_str());
    cr_assert_eq(closed.size(), 2u);
    cr_assert(contains(closed[0], "A:GET /fin HTTP/1.1\r\n") && contains(closed[0], "<EOF>"), "%s",
              closed[0].c_str());
    cr_assert(contains(closed[1], "200 Connection established") && contains(closed[1], "A:hello") &&
                  contains(closed[1], "<EOF>"),
              "%s", closed[1].c_str());
}

// A plain-http request's Host, sent on to the server, is the name the
// proxy decided on: an international name in punycode, lowercase, without
// its trailing dot, with the port unless it is 80 (the raw UTF-8 bytes the
// client wrote went on as they were).
Test(network, the_server_is_sent_the_host_as_decided) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string p = std::to_string(a.port);
    Env e = make_env("nethost", {"sleep", "30"});
    e.b.spec.annotations["dev.ocirun.domains"] = "xn--bcher-kva.test:" + p + ",127.0.0.2:" + p;
    e.b.save();
    use_hosts(e, "127.0.0.2 xn--bcher-kva.test\n");
    long pid = started(e);
    auto answers = split_answers(netns_talk(pid, 3128,
                                            {"GET http://B\xc3\x9c"
                                             "CHER.test.:" +
                                             p + "/x HTTP/1.1\r\nHost: a\r\n\r\n"}));
    cleanup_all();
    cr_assert_eq(answers.size(), 1u);
    cr_assert(contains(answers[0], "A:GET /x HTTP/1.1\r\nHost: xn--bcher-kva.test:" + p + "\r\n"),
              "%s", answers[0].c_str());
}

// Socket families per network need, from a process that is root in the
// container with the default capabilities and with all of them, with and
// without a user namespace: none leaves AF_UNIX only; local AF_UNIX, AF_INET,
// AF_INET6 and NETLINK_ROUTE. Vsock (whose ports are the machine's, not the
// namespace's), packet, key, alg, xdp, ... are EAFNOSUPPORT, also with bits
// above the 32 the kernel reads, and through i386 socketcall.
Test(network, attack_socket_families_follow_the_network_need) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    const std::string af = std::to_string(EAFNOSUPPORT), proto = std::to_string(EPROTONOSUPPORT);
    for (const char *need : {"none", "local"}) {
        for (int variant = 0; variant < 4; variant++) {
            bool userns = variant & 1, all = variant & 2;
            Env e = make_env("netfam", {"/syscall-probe", "sockets"});
            test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
            ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
            if (userns) test::use_user_namespace(e);
            if (all) test::add_all_capabilities(e);
            e.b.spec.annotations["dev.ocirun.network"] = need;
            auto o = test::run(e);
            cleanup_all();
            std::string what = std::string(need) + (userns ? ", user namespace" : "") +
                               (all ? ", all capabilities" : "") + ": " + o.out + o.err;
            cr_assert_eq(o.status, 0, "%s", what.c_str());
            bool local = std::strcmp(need, "local") == 0;
            std::vector<std::pair<const char *, std::string>> want = {
                {"unix", "0"},
                {"socketpair_unix", "0"},
                {"inet", local ? "0" : af},
                {"inet6", local ? "0" : af},
                {"netlink_route", local ? "0" : af},
                {"netlink_audit", local ? proto : af},
                {"netlink_uevent", local ? proto : af},
                {"packet", af},
                {"key", af},
                {"alg", af},
                {"xdp", af},
                {"vsock", af},
                {"vsock_high_bits", af},
                {"unix_high_bits", af},
                {"socketpair_tipc", af},
            };
#if defined(__x86_64__)
            for (const char *n : {"i386_socketcall_vsock", "i386_socketcall_unix",
                                  "i386_socketcall_pair_unix", "i386_socket_vsock"})
                want.push_back({n, test::i386_answer(af)});
            want.push_back({"i386_socket_unix", test::i386_answer("0")});
#endif
            for (const auto &[name, value] : want)
                cr_assert(contains(o.out, std::string(name) + "=" + value + "\n"), "%s=%s: %s",
                          name, value.c_str(), what.c_str());
            cr_assert(!contains(o.out, "vsock_bind="), "%s", what.c_str());
        }
    }
}

namespace {

// `n` connections to the forwarded 127.0.0.1:port inside the container,
// each sending "x", held open while `during()` runs: "answered A refused R"
// (answered: the host server's "H:x" came back).
template <class F> std::string flood(long pid, uint16_t port, int n, F during) {
    test::Held h;
    test::hold(h, pid, port, n, "x", "H:x");
    during();
    h.release();
    int answered = 0;
    for (const auto &a : h.answers)
        answered += a == "H:x";
    return "answered " + std::to_string(answered) + " refused " +
           std::to_string(static_cast<int>(h.answers.size()) - answered);
}

struct HelperHolds {
    int fds = 0;
    size_t pipe_capacity = 0;
    int pipes = 0;
};

// What the helper holds: descriptors, and the capacity of its pipes (each
// pipe end opened through /proc and asked, once per pipe).
HelperHolds helper_holds(long shim) {
    HelperHolds h;
    std::string dir = "/proc/" + std::to_string(shim) + "/fd";
    std::vector<std::string> seen;
    DIR *d = ::opendir(dir.c_str());
    cr_assert(d, "%s", dir.c_str());
    while (dirent *ent = ::readdir(d)) {
        if (ent->d_name[0] == '.') continue;
        h.fds++;
        std::string fd = dir + "/" + ent->d_name;
        char target[128] = {};
        if (::readlink(fd.c_str(), target, sizeof target - 1) <= 0) continue;
        if (std::strncmp(target, "pipe:", 5) != 0 ||
            std::find(seen.begin(), seen.end(), target) != seen.end())
            continue;
        seen.push_back(target);
        int f = ::open(fd.c_str(), O_RDONLY | O_NONBLOCK);
        if (f < 0) continue;
        int cap = ::fcntl(f, F_GETPIPE_SZ);
        ::close(f);
        if (cap > 0) {
            h.pipe_capacity += static_cast<size_t>(cap);
            h.pipes++;
        }
    }
    ::closedir(d);
    return h;
}

} // namespace

// A flood through one forward ends in refused connections, not a host-side
// shortage: with forward-max-connections=8 the host service sees 8, the rest
// are reset at once (and logged once), the helper's descriptors stay
// bounded; with the defaults (128 per port) 200 connections get 128 through,
// and the helper's pipes stay within their budget (16 MiB of big pipes, the
// rest at the kernel's 64 KiB default).
Test(network, attack_forward_flood_is_bounded) {
    test::own_network({});
    Server host;
    serve(host, "127.0.0.1", "H:", 512);
    for (const char *limit : {"", "8"}) {
        Env e = make_env("netfld", {"sleep", "60"});
        e.b.spec.annotations["dev.ocirun.local-ports"] = "8080:" + std::to_string(host.port);
        if (*limit) e.b.spec.annotations["dev.ocirun.forward-max-connections"] = limit;
        e.b.save();
        long pid = started(e);
        long shim = shim_pid(e);
        int n = *limit ? 20 : 200, max = *limit ? 8 : 128;
        HelperHolds held;
        std::string got = flood(pid, 8080, n, [&] { held = helper_holds(shim); });
        auto rep = test::oci({"--root", e.root, "report", e.id});
        // Room again once they closed; that ends the run of refusals.
        std::vector<std::string> after;
        for (int i = 0; i < 50; i++) {
            after = split_answers(netns_talk(pid, 8080, {"y"}));
            if (!after.empty() && contains(after[0], "H:y")) break;
            usleep(100000);
        }
        std::string log = egress_log(e);
        cleanup_all();
        std::string want =
            "answered " + std::to_string(max) + " refused " + std::to_string(n - max);
        cr_assert_eq(got, want, "limit %s: %s", *limit ? limit : "default", got.c_str());
        cr_assert_leq(held.fds, max * 6 + 24, "limit %s: the helper held %d fds", limit, held.fds);
        cr_assert_leq(held.pipe_capacity, (16u << 20) + static_cast<size_t>(held.pipes) * 65536,
                      "pipes: %zu bytes in %d", held.pipe_capacity, held.pipes);
        // Counted, not a line each: the first at once, the rest in one event.
        cr_assert_eq(test::refusals_in(log, "dev.ocirun.forward-max-connections"), n - max, "%s",
                     log.c_str());
        cr_assert_eq(std::count(log.begin(), log.end(), '\n'), 2, "two events: %s", log.c_str());
        cr_assert(
            contains(rep.out, "at most 512 connections, " + std::to_string(max) + " per port"),
            "%s", rep.out.c_str());
        cr_assert(!after.empty() && contains(after[0], "H:y"), "%s",
                  after.empty() ? "" : after[0].c_str());
    }
}

// observe logs as blocked exactly what enforce refuses: the same requests
// through both, the same set of blocked destinations.
Test(network, attack_observe_blocks_what_enforce_refuses) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    std::string p = std::to_string(a.port);
    std::vector<std::string> reqs = {
        connect_req("a.test:" + p, "x"),
        connect_req("c.test:443", "x"),
        connect_req("bad.a.test:" + p, "x"),
        connect_req("priv.test:" + p, "x"),
        connect_req("a.test:1", "x"),
        connect_req("x.a.test:" + p, "CONNECT other.test:443 HTTP/1.1\r\n\r\n"),
        "GET http://c.test/ HTTP/1.1\r\nHost: c\r\n\r\n",
    };
    std::string logs[2];
    for (int observe = 0; observe < 2; observe++) {
        Env e = make_env("netoeq", {"sleep", "30"});
        e.b.spec.annotations["dev.ocirun.domains"] =
            "a.test:" + p + ",*.a.test:" + p + ",priv.test:" + p + ",127.0.0.2:" + p;
        e.b.spec.annotations["dev.ocirun.deny-domains"] = "bad.a.test";
        if (observe) e.b.spec.annotations["dev.ocirun.network-mode"] = "observe";
        e.b.save();
        use_hosts(e, "127.0.0.2 a.test x.a.test bad.a.test\n10.1.2.3 priv.test\n");
        long pid = started(e);
        (void)netns_talk(pid, 3128, reqs);
        usleep(200000);
        logs[observe] = egress_log(e);
        cleanup_all();
    }
    std::string enforce = blocked_destinations(logs[0]), observe = blocked_destinations(logs[1]);
    const std::string want = "a.test:1\nbad.a.test:" + p +
                             "\nc.test:443\nc.test:80\npriv.test:" + p + "\nx.a.test:" + p + "\n";
    cr_assert_str_eq(enforce.c_str(), want.c_str(), "blocked: %s in %s", enforce.c_str(),
                     logs[0].c_str());
    cr_assert_str_eq(observe.c_str(), enforce.c_str(), "%s", logs[1].c_str());
    // A refused name was never looked up: its event has no address.
    cr_assert(contains(logs[0], "\"host\":\"c.test\",\"port\":443,\"blocked\":true"), "%s",
              logs[0].c_str());
}

// A request whose host is not UTF-8 is refused and logged as valid JSON,
// the bytes replaced by U+FFFD, and the event says so.
Test(network, attack_invalid_utf8_host_is_logged_as_valid_json) {
    Server a;
    serve(a, "127.0.0.2", "A:");
    Env e = proxied("netutf", a, {});
    long pid = started(e);
    auto answers = split_answers(netns_talk(pid, 3128,
                                            {"CONNECT \xff\xfe\xc3(.test:443 HTTP/1.1\r\n\r\n",
                                             "GET http://\xed\xa0\x80.test/ HTTP/1.1\r\n\r\n"}));
    std::string log = egress_log(e);
    cleanup_all();
    cr_assert_eq(answers.size(), 2u);
    cr_assert(answers[0].rfind("HTTP/1.1 40", 0) == 0, "%s", answers[0].c_str());
    size_t start = 0, lines = 0;
    while (start < log.size()) {
        size_t end = log.find('\n', start);
        std::string line = log.substr(start, end - start);
        start = end == std::string::npos ? log.size() : end + 1;
        auto doc = ocirun::json::Document::parse(line);
        cr_assert(doc.has_value(), "not JSON (%s): %s", doc ? "" : doc.error().text().c_str(),
                  line.c_str());
        cr_assert(contains(line, "\"note\":\"invalid UTF-8 replaced by U+FFFD\"") &&
                      contains(line, "\xef\xbf\xbd"),
                  "%s", line.c_str());
        lines++;
    }
    cr_assert_eq(lines, 2u, "%s", log.c_str());
}

// Under https a process that ignores the proxy variables finds no route at
// once (not after a timeout), for TCP, UDP and ICMP, IPv4 and IPv6.
Test(network, attack_bypassing_the_proxy_fails_at_once) {
    test::own_network({"8.8.8.8", "2001:4860::8888"});
    Server pub;
    serve(pub, "8.8.8.8", "PUB:", 64, 443);
    Env e = make_env("netbyp", {"sh", "-c",
                                "nc -w 10 8.8.8.8 443 </dev/null; echo tcp=$?; "
                                "nc -w 10 2001:4860::8888 443 </dev/null; echo tcp6=$?; "
                                "echo q | nc -u -w 10 8.8.8.8 53; echo udp=$?; "
                                "ping -c 1 -W 10 8.8.8.8; echo icmp=$?; "
                                "ping -6 -c 1 -W 10 2001:4860::8888; echo icmp6=$?"});
    e.b.spec.annotations["dev.ocirun.domains"] = "example.com";
    auto t0 = std::chrono::steady_clock::now();
    auto o = test::run(e);
    auto took = std::chrono::steady_clock::now() - t0;
    cleanup_all();
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    for (const char *k : {"tcp=1", "tcp6=1", "icmp=1", "icmp6=1"})
        cr_assert(contains(all, k), "%s: %s", k, all.c_str());
    cr_assert(!contains(all, "udp=0") || contains(all, "Network is unreachable"), "%s",
              all.c_str());
    cr_assert(!contains(all, "PUB:"), "%s", all.c_str());
    cr_assert_lt(std::chrono::duration_cast<std::chrono::seconds>(took).count(), 8,
                 "the five attempts took as long as their timeouts: %s", all.c_str());
}

// Duplicate keys in annotations (and any object): refused with the key's
// path, nothing left behind.
Test(network, attack_duplicate_annotation_keys_are_refused) {
    Env e = make_env("netdup", {"true"});
    e.b.spec.annotations["dev.ocirun.network"] = "none";
    e.b.save();
    std::string path = e.b.dir + "/config.json";
    std::string text = read_file(path);
    size_t at = text.find("\"dev.ocirun.network\"");
    cr_assert(at != std::string::npos, "%s", text.c_str());
    text.insert(at, "\"dev.ocirun.network\": \"full\", ");
    test::write_file(path, text);
    auto c = test::create(e);
    const std::string &err = c.err;
    bool state_dir = ::access((e.root + "/" + e.id).c_str(), F_OK) == 0;
    cleanup_all();
    cr_assert_neq(c.status, 0);
    cr_assert(contains(err, "annotations[\"dev.ocirun.network\"]: duplicate key"), "%s",
              err.c_str());
    cr_assert(!state_dir);
}

namespace {

// The largest rb or tb of the sockets `ss -tmnHO FILTER` lists, in the
// calling process's network namespace (0: none listed).
long largest_buffer(const std::string &filter, int *count) {
    char path[] = "/tmp/oci-run-test-ss-XXXXXX";
    int fd = ::mkstemp(path);
    cr_assert(fd >= 0);
    ::close(fd);
    std::string cmd = "ss -tmnHO " + filter + " > " + path;
    cr_assert(std::system(cmd.c_str()) == 0, "%s", cmd.c_str());
    std::string out = read_file(path);
    ::unlink(path);
    long most = 0;
    *count = 0;
    for (const char *key : {",rb", ",tb"}) {
        for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1))
            most = std::max(most, std::atol(out.c_str() + at + 3));
    }
    for (size_t at = out.find("skmem:"); at != std::string::npos; at = out.find("skmem:", at + 1))
        (*count)++;
    return most;
}

} // namespace

// A container pushing into a forwarded port whose far end never reads: each
// of the helper's sockets holds at most its capped buffer (1 MiB, which the
// kernel counts as 2 MiB; autotuning gave 4 to 6 MiB), on both sides of the
// relay.
Test(network, attack_forward_push_is_bounded_per_connection) {
    test::own_network({});
    int sink = listen_on("127.0.0.1", 0, 64); // never accepts, never reads
    uint16_t sp = port_of(sink);
    Env e = make_env("netpsh", {"sleep", "60"});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "8080:" + std::to_string(sp);
    e.b.save();
    long pid = started(e);
    int res[2];
    cr_assert(::pipe(res) == 0);
    pid_t child = ::fork();
    cr_assert(child >= 0);
    if (child == 0) {
        ::close(res[0]);
        std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
        int ns = ::open(path.c_str(), O_RDONLY);
        if (ns < 0 || ::setns(ns, CLONE_NEWNET) < 0) ::_exit(2);
        std::vector<int> socks;
        for (int i = 0; i < 4; i++) {
            int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_port = htons(8080);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            (void)::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
            socks.push_back(s);
        }
        static char buf[1 << 16];
        long pushed = 0;
        auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
        while (std::chrono::steady_clock::now() < until) {
            for (int s : socks) {
                ssize_t n = ::send(s, buf, sizeof buf, MSG_NOSIGNAL);
                if (n > 0) pushed += n;
            }
            usleep(1000);
        }
        int count = 0;
        long inside = largest_buffer("sport = :8080", &count);
        std::string out =
            std::to_string(pushed) + " " + std::to_string(inside) + " " + std::to_string(count);
        (void)!::write(res[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(res[1]);
    std::string got = test::read_to_eof(res[0]);
    ::close(res[0]);
    int count = 0;
    long outside = largest_buffer("dport = :" + std::to_string(sp), &count);
    ::waitpid(child, nullptr, 0);
    cleanup_all();
    ::close(sink);
    long pushed = 0, inside = 0;
    int inside_count = 0;
    cr_assert_eq(std::sscanf(got.c_str(), "%ld %ld %d", &pushed, &inside, &inside_count), 3, "%s",
                 got.c_str());
    cr_assert_gt(pushed, 4 << 20, "pushed only %ld bytes", pushed);
    cr_assert_eq(inside_count, 4, "%s", got.c_str());
    cr_assert_eq(count, 4);
    cr_assert_leq(inside, 2l << 20, "a helper socket in the container's namespace held %ld",
                  inside);
    cr_assert_leq(outside, 2l << 20, "a helper socket to the far end held %ld", outside);
}
