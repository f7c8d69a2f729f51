// oci-run-shim: the per-container network helper. Started by `oci-run
// create` (src/runtime/shim_launch.cpp) with the listening sockets the
// container's init made inside its network namespace; it is the container's
// only way out: forwarded host loopback ports, published container ports and
// the egress proxy. One process, one thread, one epoll loop; it exits when
// the container's init does, or on SIGTERM (from `delete`).
//
//   oci-run-shim --id ID --state-dir DIR --init-pidfd FD --ready-fd FD
//                [--forward FD:HOSTPORT]... [--netns-fd FD --publish ADDR:HOSTPORT:CPORT]...
//                [--proxy FD [--domains LIST] [--deny-domains LIST] [--observe]
//                 [--max-connections N]]
//                [--forward-max-connections N] [--total-max-connections N]
//
// It answers on the ready fd with "ready PID" once everything listens, or
// "error TEXT".
//
//   oci-run-shim --netdev NAME NEWNAME NETNS
//
// is another job, run and waited for by create: moving a linux.netDevices
// interface into the container (netdev.hpp).
#include "egress_log.hpp"
#include "egress_proxy.hpp"
#include "forward.hpp"
#include "loop.hpp"
#include "netdev.hpp"
#include "relay.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace ocirun;
using namespace ocirun::shim;

namespace {

struct Options {
    std::string id, state_dir;
    int init_pidfd = -1, ready_fd = -1, netns_fd = -1, proxy_fd = -1;
    std::vector<std::pair<int, uint16_t>> forwards; // listener fd, host port
    std::vector<std::string> publish;
    std::string domains, deny_domains;
    bool observe = false;
    int max_connections = 256;         // the proxy's
    int forward_max_connections = 128; // each forward's (local port, published port)
    int total_max_connections = 512;   // the helper's, every kind together
};

int ready_fd = -1;

[[noreturn]] void die(const std::string &msg) {
    std::string line = "error " + msg + "\n";
    if (ready_fd >= 0) (void)!::write(ready_fd, line.data(), line.size());
    std::fprintf(stderr, "oci-run-shim: %s\n", msg.c_str());
    std::exit(2);
}

long number(const std::string &flag, std::string_view s, long lo, long hi) {
    long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
        die(flag + ": \"" + std::string(s) + "\" is not a number from " + std::to_string(lo) +
            " to " + std::to_string(hi));
    return v;
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(a + ": missing value");
            return argv[++i];
        };
        auto fd = [&]() { return static_cast<int>(number(a, value(), 3, 65535)); };
        if (a == "--id")
            o.id = value();
        else if (a == "--state-dir")
            o.state_dir = value();
        else if (a == "--init-pidfd")
            o.init_pidfd = fd();
        else if (a == "--ready-fd")
            ready_fd = o.ready_fd = fd();
        else if (a == "--netns-fd")
            o.netns_fd = fd();
        else if (a == "--proxy")
            o.proxy_fd = fd();
        else if (a == "--domains")
            o.domains = value();
        else if (a == "--deny-domains")
            o.deny_domains = value();
        else if (a == "--observe")
            o.observe = true;
        else if (a == "--max-connections")
            o.max_connections = static_cast<int>(number(a, value(), 1, 65536));
        else if (a == "--forward-max-connections")
            o.forward_max_connections = static_cast<int>(number(a, value(), 1, 65536));
        else if (a == "--total-max-connections")
            o.total_max_connections = static_cast<int>(number(a, value(), 1, 65536));
        else if (a == "--publish")
            o.publish.push_back(value());
        else if (a == "--forward") {
            std::string v = value();
            size_t colon = v.find(':');
            if (colon == std::string::npos) die("--forward: expected FD:HOSTPORT, got " + v);
            o.forwards.push_back(
                {static_cast<int>(number(a, std::string_view(v).substr(0, colon), 3, 65535)),
                 static_cast<uint16_t>(
                     number(a, std::string_view(v).substr(colon + 1), 1, 65535))});
        } else
            die("unknown argument \"" + a + "\"");
    }
    if (o.id.empty() || o.state_dir.empty() || o.init_pidfd < 0 || o.ready_fd < 0)
        die("--id, --state-dir, --init-pidfd and --ready-fd are required");
    if (!o.publish.empty() && o.netns_fd < 0) die("--publish needs --netns-fd");
    return o;
}

sockaddr_storage loopback(uint16_t port) {
    return to_sockaddr(egress::IpAddr{AF_INET, {127, 0, 0, 1}}, port);
}

// "ADDR:HOSTPORT:CPORT" (ADDR IPv4 or [IPv6]) -> a listener on the host.
int listen_published(const std::string &spec, uint16_t &container_port) {
    std::string addr, rest;
    if (!spec.empty() && spec[0] == '[') {
        size_t close = spec.find("]:");
        if (close == std::string::npos) die("--publish: bad address in " + spec);
        addr = spec.substr(1, close - 1);
        rest = spec.substr(close + 2);
    } else {
        size_t colon = spec.find(':');
        if (colon == std::string::npos) die("--publish: expected ADDR:HOSTPORT:CPORT, got " + spec);
        addr = spec.substr(0, colon);
        rest = spec.substr(colon + 1);
    }
    size_t colon = rest.find(':');
    if (colon == std::string::npos) die("--publish: expected ADDR:HOSTPORT:CPORT, got " + spec);
    auto host_port = static_cast<uint16_t>(number("--publish", rest.substr(0, colon), 1, 65535));
    container_port = static_cast<uint16_t>(number("--publish", rest.substr(colon + 1), 1, 65535));
    egress::IpAddr ip;
    ip.family = addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
    if (::inet_pton(ip.family, addr.c_str(), ip.bytes) != 1) die("--publish: bad address " + addr);
    sockaddr_storage ss = to_sockaddr(ip, host_port);
    int s = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) die(std::string("dev.ocirun.publish: socket: ") + std::strerror(errno));
    int one = 1;
    (void)::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6)
        (void)::setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    std::string where = address_text(ss);
    if (::bind(s, reinterpret_cast<sockaddr *>(&ss), sockaddr_length(ss)) < 0)
        die("dev.ocirun.publish: bind " + where + ": " + std::strerror(errno));
    if (::listen(s, SOMAXCONN) < 0)
        die("dev.ocirun.publish: listen on " + where + ": " + std::strerror(errno));
    return s;
}

// Keep only what the helper still needs: CAP_SYS_ADMIN to open sockets in
// the container's network namespace when it publishes ports, else nothing.
void drop_privileges(bool keep_setns) {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2] = {};
    if (::syscall(SYS_capget, &h, d) < 0) die(std::string("capget: ") + std::strerror(errno));
    // The bounding set, where the helper may change it (CAP_SETPCAP: as
    // root). Unprivileged, it holds no capability and no_new_privs (below)
    // keeps it from gaining one. Up to the kernel's last capability (EINVAL
    // past it, when this build's headers know more than the kernel does).
    if (d[0].effective & (1u << CAP_SETPCAP))
        for (int c = 0; c <= CAP_LAST_CAP; c++)
            if (!(keep_setns && c == CAP_SYS_ADMIN) && ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
                !(errno == EINVAL && ::prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0))
                die("drop capability " + std::to_string(c) +
                    " from the bounding set: " + std::strerror(errno));
    d[0] = d[1] = {};
    if (keep_setns) {
        d[0].effective = d[0].permitted = 1u << CAP_SYS_ADMIN;
    }
    if (::syscall(SYS_capset, &h, d) < 0) die(std::string("capset: ") + std::strerror(errno));
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die(std::string("no_new_privs: ") + std::strerror(errno));
}

// The end: every relay closed (each logs its close event), then exit.
class Stopper : public Handler {
  public:
    void on_ready(Loop &loop, int, uint32_t) override {
        for (Relay *r : std::vector<Relay *>(Relay::all()))
            r->close(loop);
        loop.stop();
    }
};

// Each proxied or forwarded connection holds six descriptors (two sockets,
// two pipes): the soft limit of whoever ran oci-run (1024 from a login
// shell) would cut the default 256 proxy connections short, with tunnels
// that answer 200 and close. The hard limit is the helper's budget.
void raise_fd_limit() {
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

} // namespace

int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "--netdev") == 0) return netdev_main(argc, argv);
    // Nothing in the container may ptrace this process or open its
    // /proc/PID files, even with the same uid.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
        die(std::string("prctl PR_SET_DUMPABLE 0: ") + std::strerror(errno));
    ::signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    Options o = parse(argc, argv);

    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP})
        sigaddset(&stop_signals, s);
    ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
    int sfd = ::signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);

    Loop loop;
    if (!loop.valid() || sfd < 0) die(std::string("epoll/signalfd: ") + std::strerror(errno));
    Stopper stopper;
    if (!loop.watch(sfd, EPOLLIN, &stopper) || !loop.watch(o.init_pidfd, EPOLLIN, &stopper))
        die(std::string("watch the init: ") + std::strerror(errno));

    EgressLog log;
    std::string log_path = o.state_dir + "/egress.jsonl";
    if (!log.open(log_path, o.id)) die("open " + log_path + ": " + std::strerror(errno));

    PipePool pool;
    ConnectionBudget budget;
    budget.max = o.total_max_connections;
    auto limits = [&](std::string what) {
        return ForwardLimits{&budget, o.forward_max_connections, &log, std::move(what)};
    };
    std::vector<std::unique_ptr<Forwarder>> forwarders;
    for (auto [fd, host_port] : o.forwards) {
        if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
            die("--forward: fd " + std::to_string(fd) + ": " + std::strerror(errno));
        forwarders.push_back(std::make_unique<Forwarder>(
            pool, fd, loopback(host_port), -1, -1,
            limits("forward to host port " + std::to_string(host_port))));
    }
    int home = -1;
    if (!o.publish.empty()) {
        home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (home < 0) die(std::string("open /proc/self/ns/net: ") + std::strerror(errno));
        for (const auto &p : o.publish) {
            uint16_t cport = 0;
            int l = listen_published(p, cport);
            forwarders.push_back(std::make_unique<Forwarder>(pool, l, loopback(cport), o.netns_fd,
                                                             home, limits("publish " + p)));
        }
    }
    for (auto &f : forwarders)
        if (!loop.watch(f->fd(), EPOLLIN, f.get()))
            die(std::string("epoll: ") + std::strerror(errno));

    std::unique_ptr<Resolver> resolver;
    std::unique_ptr<EgressProxy> proxy;
    if (o.proxy_fd >= 0) {
        ProxyConfig pc;
        if (!o.domains.empty()) {
            auto p = egress::parse_patterns(o.domains, "dev.ocirun.domains");
            if (!p) die(p.error().text());
            pc.allow = std::move(*p);
        }
        if (!o.deny_domains.empty()) {
            auto p = egress::parse_patterns(o.deny_domains, "dev.ocirun.deny-domains");
            if (!p) die(p.error().text());
            pc.deny = std::move(*p);
        }
        pc.observe = o.observe;
        pc.max_connections = o.max_connections;
        if (const char *h = std::getenv("OCI_RUN_RESOLVE_HOSTS")) pc.hosts_file = h;
        resolver = std::make_unique<Resolver>(pc.hosts_file);
        if (!resolver->start(loop)) die(std::string("resolver: ") + std::strerror(errno));
        if (::fcntl(o.proxy_fd, F_SETFL, ::fcntl(o.proxy_fd, F_GETFL) | O_NONBLOCK) < 0)
            die(std::string("--proxy: ") + std::strerror(errno));
        proxy =
            std::make_unique<EgressProxy>(pool, budget, log, *resolver, std::move(pc), o.proxy_fd);
        if (!loop.watch(o.proxy_fd, EPOLLIN, proxy.get()))
            die(std::string("epoll: ") + std::strerror(errno));
    }

    drop_privileges(!o.publish.empty());
    std::string ready = "ready " + std::to_string(::getpid()) + "\n";
    (void)!::write(o.ready_fd, ready.data(), ready.size());
    ::close(o.ready_fd);
    ready_fd = -1;
    bool ran = loop.run();
    log.flush(); // the refusals still counted
    if (!ran) {
        std::perror("oci-run-shim: epoll_wait");
        return 1;
    }
    return 0;
}
