#include "net_server.hpp"

#include "process.hpp"

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

namespace test {

int listen_on(const char *addr, uint16_t port, int backlog) {
    bool v6 = std::strchr(addr, ':') != nullptr;
    int s = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(s >= 0);
    int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len;
    if (v6) {
        auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        cr_assert(::inet_pton(AF_INET6, addr, &a->sin6_addr) == 1, "address %s", addr);
        ::setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        len = sizeof *a;
    } else {
        auto *a = reinterpret_cast<sockaddr_in *>(&ss);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        cr_assert(::inet_pton(AF_INET, addr, &a->sin_addr) == 1, "address %s", addr);
        len = sizeof *a;
    }
    cr_assert(::bind(s, reinterpret_cast<sockaddr *>(&ss), len) == 0, "bind %s: %s", addr,
              std::strerror(errno));
    cr_assert(::listen(s, backlog) == 0);
    return s;
}

uint16_t port_of(int s) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
    return ntohs(reinterpret_cast<sockaddr_in *>(&a)->sin_port); // the same place in both
}

int connect_loopback(uint16_t port) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) < 0) {
        int e = errno;
        ::close(s);
        errno = e;
        return -1;
    }
    return s;
}

Server::~Server() {
    if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
}

void serve(Server &srv, const char *addr, const std::string &tag, int backlog, uint16_t port) {
    int s = listen_on(addr, port, backlog);
    srv.port = port_of(s);
    srv.pid = ::fork();
    cr_assert(srv.pid >= 0);
    if (srv.pid > 0) {
        ::close(s);
        return;
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGCHLD, SIG_IGN);
    for (;;) {
        int c = ::accept(s, nullptr, nullptr);
        if (c < 0) continue;
        if (::fork() == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            char buf[4096];
            ssize_t n;
            while ((n = ::read(c, buf, sizeof buf)) > 0) {
                std::string out = tag + std::string(buf, static_cast<size_t>(n));
                if (::write(c, out.data(), out.size()) < 0) break;
            }
            ::_exit(0);
        }
        ::close(c);
    }
}

void own_network(std::initializer_list<const char *> addrs) {
    // An IPv6 address is tentative until duplicate address detection is
    // over, and a bind to it fails until then: nodad.
    cr_assert(::unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", std::strerror(errno));
    std::string cmd = "ip link set lo up";
    for (const char *a : addrs)
        cmd += std::string(" && ip ") + (std::strchr(a, ':') ? "-6 " : "") + "addr add " + a +
               (std::strchr(a, ':') ? "/128 dev lo nodad" : "/32 dev lo");
    cr_assert(std::system(cmd.c_str()) == 0, "%s", cmd.c_str());
}

int bind_udp(const char *addr, uint16_t port) {
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    cr_assert(s >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    cr_assert(::inet_pton(AF_INET, addr, &a.sin_addr) == 1);
    cr_assert(::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0, "bind udp %s:%u: %s",
              addr, port, std::strerror(errno));
    return s;
}

long udp_datagrams(int s) {
    long n = 0;
    char buf[2048];
    while (::recv(s, buf, sizeof buf, MSG_DONTWAIT) >= 0)
        n++;
    return n;
}

PodNetns::~PodNetns() {
    if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
}

void make_pod_netns(PodNetns &p) {
    int ready[2];
    cr_assert(::pipe(ready) == 0);
    p.pid = ::fork();
    cr_assert(p.pid >= 0);
    if (p.pid == 0) {
        ::close(ready[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        char ok = ::unshare(CLONE_NEWNET) == 0 ? '1' : '0';
        (void)!::write(ready[1], &ok, 1);
        ::close(ready[1]);
        for (;;)
            ::pause();
    }
    ::close(ready[1]);
    char ok = 0;
    cr_assert(::read(ready[0], &ok, 1) == 1 && ok == '1', "unshare(CLONE_NEWNET) in the holder");
    ::close(ready[0]);
    p.path = "/proc/" + std::to_string(p.pid) + "/ns/net";
    std::string pid = std::to_string(p.pid);
    std::string cmd = "ip link add ocpod0 type veth peer name eth0 netns " + pid +
                      " && ip addr add 10.77.0.1/24 dev ocpod0 && ip link set ocpod0 up"
                      " && nsenter --net=" +
                      p.path +
                      " sh -c 'ip link set lo up && ip addr add 10.77.0.2/24 dev eth0"
                      " && ip link set eth0 up && ip route add default via 10.77.0.1'";
    cr_assert(std::system(cmd.c_str()) == 0, "%s", cmd.c_str());
}

long refusals_in(const std::string &log, const std::string &needle) {
    long n = 0;
    size_t start = 0;
    while (start < log.size()) {
        size_t end = log.find('\n', start);
        std::string line = log.substr(start, end - start);
        start = end == std::string::npos ? log.size() : end + 1;
        if (line.find(needle) == std::string::npos) continue;
        size_t at = line.find("\"count\":");
        n += at == std::string::npos ? 1 : std::atol(line.c_str() + at + 8);
    }
    return n;
}

namespace {

// In the child: connect all, send, collect each answer (until it ends with
// `last`, EOF, or 3 s of quiet), report, then wait for the release.
[[noreturn]] void hold_in_child(long pid, uint16_t port, int n, const std::string &request,
                                const std::string &last, int report, int released) {
    std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
    int ns = ::open(path.c_str(), O_RDONLY);
    if (ns < 0 || ::setns(ns, CLONE_NEWNET) < 0) ::_exit(2);
    std::vector<int> socks;
    std::string all;
    for (int i = 0; i < n; i++) {
        socks.push_back(connect_loopback(port));
    }
    for (int s : socks)
        if (s >= 0) (void)!::send(s, request.data(), request.size(), MSG_NOSIGNAL);
    for (int s : socks) {
        std::string got = s < 0 ? "connect failed" : "";
        while (s >= 0 && !got.ends_with(last)) {
            pollfd pf{s, POLLIN, 0};
            if (::poll(&pf, 1, 3000) <= 0) break;
            char buf[4096];
            ssize_t r = ::read(s, buf, sizeof buf);
            if (r <= 0) {
                got += "<EOF>";
                break;
            }
            got.append(buf, static_cast<size_t>(r));
        }
        all += got + "\n----\n";
    }
    (void)!::write(report, all.data(), all.size());
    ::close(report);
    char c;
    (void)!::read(released, &c, 1);
    ::_exit(0);
}

} // namespace

void Held::release() {
    if (child <= 0) return;
    ::close(release_fd);
    ::waitpid(child, nullptr, 0);
    child = -1;
}

void hold(Held &h, long pid, uint16_t port, int n, const std::string &request,
          const std::string &last) {
    int rep[2], rel[2];
    cr_assert(::pipe2(rep, O_CLOEXEC) == 0 && ::pipe2(rel, O_CLOEXEC) == 0);
    h.child = ::fork();
    cr_assert(h.child >= 0);
    if (h.child == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::close(rep[0]);
        ::close(rel[1]);
        hold_in_child(pid, port, n, request, last, rep[1], rel[0]);
    }
    ::close(rep[1]);
    ::close(rel[0]);
    h.release_fd = rel[1];
    h.answers = split_answers(read_to_eof(rep[0]));
    ::close(rep[0]);
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

std::string tls_client_hello(const std::string &server_name) {
    auto u16 = [](size_t v) {
        return std::string{static_cast<char>(v >> 8 & 0xff), static_cast<char>(v & 0xff)};
    };
    std::string exts;
    if (!server_name.empty()) {
        std::string entry = std::string(1, '\0') + u16(server_name.size()) + server_name;
        std::string list = u16(entry.size()) + entry;
        exts += u16(0) + u16(list.size()) + list; // server_name
    }
    exts += u16(43) + u16(3) + std::string("\x02\x03\x04", 3); // supported_versions
    std::string hello = std::string("\x03\x03", 2) + std::string(32, 'r');
    hello += std::string(1, '\0');                // no session id
    hello += u16(2) + std::string("\x13\x01", 2); // TLS_AES_128_GCM_SHA256
    hello += std::string("\x01\x00", 2);          // null compression
    hello += u16(exts.size()) + exts;
    std::string hs = std::string(1, '\x01') + std::string(1, '\0') + u16(hello.size()) + hello;
    return std::string("\x16\x03\x01", 3) + u16(hs.size()) + hs;
}

} // namespace test
