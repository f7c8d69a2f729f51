// oci-run-shim: the per-container network helper. Started by `oci-run
// create` (src/runtime/network/shim_launch.cpp) with the listening sockets the
// container's init made inside its network namespace; it is the container's
// only way out: forwarded host loopback ports, published container ports and
// the egress proxy. One process, one thread, one epoll loop; it exits when
// the container's init does, or on SIGTERM (from `delete`).
//
//   oci-run-shim --id ID --state-dir DIR --init-pidfd FD --ready-fd FD --config-fd FD
//
// The configuration fd holds the network policy as the runtime parsed it,
// with the descriptors of the listeners and the network namespace it passed
// (one JSON document: oci/policy/helper_config.hpp); no annotation is parsed
// here.
// It answers on the ready fd with "ready PID" once everything listens, or
// "error TEXT".
//
//   oci-run-shim --netdev NAME NEWNAME NETNS
//
// is another job, run and waited for by create: moving a linux.netDevices
// interface into the container (netdev.hpp).
#include "confine.hpp"
#include "dns_stub.hpp"
#include "egress_log.hpp"
#include "egress_proxy.hpp"
#include "forward.hpp"
#include "loop.hpp"
#include "netdev.hpp"
#include "oci/policy/helper_config.hpp"
#include "oci/spec_io.hpp"
#include "relay.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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
    int init_pidfd = -1, ready_fd = -1, config_fd = -1;
    HelperConfig config;
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

// The whole configuration document, from the start of the (sealed) memfd.
HelperConfig read_config(int fd) {
    std::string text;
    char buf[65536];
    for (off_t at = 0;;) {
        ssize_t n = ::pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die(std::string("--config-fd: read: ") + std::strerror(errno));
        if (n == 0) break;
        text.append(buf, static_cast<size_t>(n));
        at += n;
        if (text.size() > oci::kMaxConfigSize) die("--config-fd: larger than 16 MiB");
    }
    ::close(fd);
    auto c = parse_helper_config(text);
    if (!c) die("--config-fd: " + c.error().text());
    return std::move(*c);
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
        else if (a == "--config-fd")
            o.config_fd = fd();
        else
            die("unknown argument \"" + a + "\"");
    }
    if (o.id.empty() || o.state_dir.empty() || o.init_pidfd < 0 || o.ready_fd < 0 ||
        o.config_fd < 0)
        die("--id, --state-dir, --init-pidfd, --ready-fd and --config-fd are required");
    o.config = read_config(o.config_fd);
    return o;
}

sockaddr_storage loopback(uint16_t port) {
    return to_sockaddr(egress::IpAddr{AF_INET, {127, 0, 0, 1}}, port);
}

// A listener on the host's address and port of a dev.ocirun.publish entry.
int listen_published(const PortPublish &p) {
    sockaddr_storage ss = to_sockaddr(p.host_addr, p.host_port);
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

    const HelperConfig &c = o.config;
    PipePool pool;
    ConnectionBudget budget;
    budget.max = c.total_max_connections;
    auto limits = [&](std::string what) {
        return ForwardLimits{&budget, c.forward_max_connections, &log, std::move(what)};
    };
    std::vector<std::unique_ptr<Forwarder>> forwarders;
    for (auto [fd, host_port] : c.forwards) {
        if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
            die("forward: fd " + std::to_string(fd) + ": " + std::strerror(errno));
        forwarders.push_back(std::make_unique<Forwarder>(
            pool, fd, loopback(host_port), nullptr,
            limits("forward to host port " + std::to_string(host_port))));
    }
    // Published connections are made from the container's namespace, by a
    // thread that entered it now, while the helper may (confine.hpp).
    SocketMaker maker;
    if (!c.publish.empty()) {
        if (std::string err = maker.start(c.netns_fd); !err.empty())
            die("dev.ocirun.publish: " + err);
        ::close(c.netns_fd);
        for (const auto &p : c.publish) {
            std::string addr = egress::to_string(p.host_addr);
            if (p.host_addr.family == AF_INET6) addr = "[" + addr + "]";
            std::string what = "publish " + addr + ":" + std::to_string(p.host_port) + ":" +
                               std::to_string(p.container_port);
            int l = listen_published(p);
            forwarders.push_back(std::make_unique<Forwarder>(pool, l, loopback(p.container_port),
                                                             &maker, limits(what)));
        }
    }
    for (auto &f : forwarders)
        if (!loop.watch(f->fd(), EPOLLIN, f.get()))
            die(std::string("epoll: ") + std::strerror(errno));

    std::unique_ptr<Resolver> resolver;
    std::unique_ptr<EgressProxy> proxy;
    std::unique_ptr<DnsStub> dns;
    std::vector<std::unique_ptr<Interceptor>> intercepts;
    if (c.proxy_fd >= 0) {
        ProxyConfig pc;
        pc.allow = c.allow;
        pc.deny = c.deny;
        pc.observe = c.observe;
        pc.max_connections = c.max_connections;
        if (const char *h = std::getenv("OCI_RUN_RESOLVE_HOSTS")) pc.hosts_file = h;
        if (const char *t = std::getenv("OCI_RUN_PROXY_REQUEST_TIMEOUT")) {
            char *end = nullptr;
            long secs = std::strtol(t, &end, 10);
            if (end == t || *end || secs < 1 || secs > 3600)
                die(std::string("OCI_RUN_PROXY_REQUEST_TIMEOUT: \"") + t +
                    "\" is not a number of seconds from 1 to 3600");
            pc.request_timeout_ms = static_cast<int>(secs * 1000);
        }
        resolver = std::make_unique<Resolver>(pc.hosts_file);
        if (!resolver->start(loop))
            die("resolver: " + (pc.hosts_file.empty() ? "" : "open " + pc.hosts_file + ": ") +
                std::strerror(errno));
        if (::fcntl(c.proxy_fd, F_SETFL, ::fcntl(c.proxy_fd, F_GETFL) | O_NONBLOCK) < 0)
            die(std::string("proxy: ") + std::strerror(errno));
        proxy =
            std::make_unique<EgressProxy>(pool, budget, log, *resolver, std::move(pc), c.proxy_fd);
        if (!loop.watch(c.proxy_fd, EPOLLIN, proxy.get()) || !proxy->start(loop))
            die(std::string("proxy: epoll/timerfd: ") + std::strerror(errno));
        for (auto [fd, kind] : {std::pair{c.intercept_http_fd, Intercept::http},
                                std::pair{c.intercept_tls_fd, Intercept::tls}}) {
            if (fd < 0) continue;
            if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
                die(std::string("intercept: ") + std::strerror(errno));
            intercepts.push_back(std::make_unique<Interceptor>(*proxy, kind, fd));
            if (!loop.watch(fd, EPOLLIN, intercepts.back().get()))
                die(std::string("epoll: ") + std::strerror(errno));
        }
        if (c.dns_fd >= 0) {
            for (int fd : {c.dns_fd, c.dns_tcp_fd})
                if (fd >= 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
                    die(std::string("DNS stub: ") + std::strerror(errno));
            dns = std::make_unique<DnsStub>(*proxy, c.dns_fd, c.dns_tcp_fd);
            if (!dns->start(loop)) die(std::string("DNS stub: epoll: ") + std::strerror(errno));
        }
    }

    if (std::string err = confine(c.publish.empty() ? nullptr : &maker); !err.empty())
        die("confine the helper: " + err);
#ifdef OCI_RUN_FAULT_INJECTION
    probe_confinement();
#endif
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
