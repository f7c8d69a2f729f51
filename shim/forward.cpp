#include "forward.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ocirun::shim {

namespace {

// How a non-blocking connect of `sock` ended, from the events poll or epoll
// gave (POLLERR and POLLHUP are EPOLLERR and EPOLLHUP): writable alone is
// connected; with an error or a hang-up, the socket's pending error, and a
// hang-up without one is a connection reset before it was used.
static_assert(POLLERR == EPOLLERR && POLLHUP == EPOLLHUP);
int connect_result(int sock, uint32_t events) {
    if ((events & (POLLERR | POLLHUP)) == 0) return 0;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return errno;
    return err != 0 ? err : ECONNRESET;
}

class Dial : public Handler {
  public:
    Dial(int sock, std::function<void(Loop &, int)> done) : sock_(sock), done_(std::move(done)) {}
    std::function<void(Loop &, int)> take() { return std::move(done_); }
    void on_ready(Loop &loop, int, uint32_t events) override {
        int err = connect_result(sock_, events);
        loop.unwatch(sock_);
        loop.retire(this);
        done_(loop, err);
    }

  private:
    int sock_;
    std::function<void(Loop &, int)> done_;
};

} // namespace

socklen_t sockaddr_length(const sockaddr_storage &a) {
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

sockaddr_storage to_sockaddr(const egress::IpAddr &a, uint16_t port) {
    sockaddr_storage ss{};
    if (a.family == AF_INET) {
        auto *in = reinterpret_cast<sockaddr_in *>(&ss);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        std::memcpy(&in->sin_addr, a.bytes, 4);
    } else {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        std::memcpy(&in6->sin6_addr, a.bytes, 16);
    }
    return ss;
}

std::string address_text(const sockaddr_storage &a) {
    char host[INET6_ADDRSTRLEN] = "?";
    uint16_t port = 0;
    if (a.ss_family == AF_INET) {
        const auto *in = reinterpret_cast<const sockaddr_in *>(&a);
        ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
        return std::string(host) + ":" + std::to_string(port);
    }
    const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(&a);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
}

void set_nodelay(int sock) {
    int one = 1;
    (void)::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void dial(Loop &loop, int sock, const sockaddr_storage &addr,
          std::function<void(Loop &, int err)> done) {
    set_nodelay(sock);
    if (::connect(sock, reinterpret_cast<const sockaddr *>(&addr), sockaddr_length(addr)) == 0)
        return done(loop, 0);
    if (errno != EINPROGRESS) return done(loop, errno);
    // To a loopback address the handshake has mostly finished inside
    // connect(): a poll that does not wait says so without a round through
    // epoll (add, wait, remove).
    struct pollfd p {
        sock, POLLOUT, 0
    };
    if (::poll(&p, 1, 0) == 1) return done(loop, connect_result(sock, p.revents));
    auto *d = new Dial(sock, std::move(done));
    if (!loop.watch(sock, EPOLLOUT, d)) {
        int e = errno;
        auto cb = d->take();
        delete d;
        cb(loop, e);
    }
}

int accept_connection(int listener) {
    // One fd held back: when the helper runs out of fds, it is given up to
    // accept and drop a connection, so the listener does not stay readable
    // (and the loop spin) with a connection nobody can take.
    static int spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (;;) {
        int c = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c >= 0) return c;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && spare >= 0) {
            ::close(spare);
            int drop = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (drop >= 0) ::close(drop);
            spare = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            continue;
        }
        return -1;
    }
}

int open_socket(int family, SocketMaker *maker) {
    if (!maker) return ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (family == AF_INET) return maker->take();
    errno = EAFNOSUPPORT;
    return -1;
}

void reset_connection(int fd) {
    struct linger lg {
        1, 0
    };
    (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    ::close(fd);
}

Forwarder::~Forwarder() {
    ::close(listener_);
}

void Forwarder::refuse(int c) {
    reset_connection(c);
    if (!limits_.log) return;
    EgressEvent ev;
    ev.event = "refused";
    ev.host = address_text(target_);
    ev.blocked = true;
    bool mine = active_ >= limits_.max;
    ev.reason = limits_.what + ": more than " +
                std::to_string(mine ? limits_.max : limits_.budget->max) +
                (mine ? " connections at once (dev.ocirun.forward-max-connections)"
                      : " connections through the helper at once (dev.ocirun.max-connections)");
    limits_.log->refused_over(limits_.what, ev);
}

void Forwarder::release() {
    active_--;
    limits_.budget->active--;
}

void Forwarder::on_ready(Loop &loop, int, uint32_t) {
    for (;;) {
        int c = accept_connection(listener_);
        if (c < 0) return;
        if (active_ >= limits_.max || limits_.budget->full()) {
            refuse(c);
            continue;
        }
        if (limits_.log) limits_.log->under(limits_.what);
        int up = open_socket(target_.ss_family, maker_);
        if (up < 0) {
            reset_connection(c);
            continue;
        }
        // Before connect, as the listener's are: the window scale is chosen
        // for the capped buffer.
        cap_buffers(up, true);
        active_++;
        limits_.budget->active++;
        PipePool &pool = pool_;
        dial(loop, up, target_, [this, c, up, &pool](Loop &l, int err) {
            if (err != 0) {
                reset_connection(c);
                ::close(up);
                release();
                return;
            }
            if (!Relay::start(
                    l, pool, c, up, [this](uint64_t, uint64_t) { release(); }, true))
                release(); // no pipes: both closed, no callback
        });
    }
}

} // namespace ocirun::shim
