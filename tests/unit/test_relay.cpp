// The network helper's relay (shim/relay.cpp) between two real loopback TCP
// connections: every byte passes, a half-close passes each way in turn
// while the other direction keeps flowing, and the end is a clean EOF on
// both sides, not a reset.
#include "shim/relay.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

using ocirun::shim::Loop;
using ocirun::shim::PipePool;
using ocirun::shim::Relay;

namespace {

// A connected loopback pair: `outer` (blocking, the test's end, reads time
// out after 10 s) and `inner` (non-blocking, the relay's end).
struct Pair {
    int outer = -1, inner = -1;
};

Pair connected_pair() {
    int l = test::listen_on("127.0.0.1", 0, 1);
    sockaddr_in a{};
    socklen_t len = sizeof a;
    cr_assert_eq(::getsockname(l, reinterpret_cast<sockaddr *>(&a), &len), 0);
    Pair p;
    p.outer = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(::connect(p.outer, reinterpret_cast<sockaddr *>(&a), sizeof a), 0, "connect: %s",
                 strerror(errno));
    p.inner = ::accept4(l, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    cr_assert_geq(p.inner, 0, "accept4: %s", strerror(errno));
    ::close(l);
    timeval tv{10, 0};
    cr_assert_eq(::setsockopt(p.outer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    cr_assert_eq(::setsockopt(p.outer, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    return p;
}

unsigned char pattern(size_t i) {
    return static_cast<unsigned char>((i * 7 + i / 4093) & 0xff);
}

// Read until EOF; fails the test on an error (a reset, a timeout).
std::string read_to_eof(int fd) {
    std::string got;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        cr_assert_geq(n, 0, "read after %zu bytes: %s", got.size(), strerror(errno));
        if (n == 0) return got;
        got.append(buf, static_cast<size_t>(n));
    }
}

void write_all(int fd, const std::string &s) {
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = ::write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; // the reader's assertions say what went wrong
        off += static_cast<size_t>(n);
    }
}

struct Ended {
    bool called = false;
    uint64_t a_to_b = 0, b_to_a = 0;
};

// One relay between x.inner and y.inner, run by a loop in its own thread
// while `body` talks through the outer ends; returns how the relay ended.
template <typename Body> Ended relay_between(Pair x, Pair y, Body body) {
    Loop loop;
    cr_assert(loop.valid());
    PipePool pool;
    Ended ended;
    Relay *r = Relay::start(loop, pool, x.inner, y.inner, [&](uint64_t ab, uint64_t ba) {
        ended = {true, ab, ba};
        loop.stop();
    });
    cr_assert_not_null(r, "no pipes for the relay");
    std::thread runner([&] { loop.run(); });
    body();
    runner.join();
    return ended;
}

} // namespace

// More than a pipe and both socket buffers hold, one way, then a half-close;
// the other way still carries a reply after it, then closes too. Each side
// reads everything and then EOF (the relay's last close is a FIN, not a
// reset), and the relay reports the bytes of each direction.
Test(relay, half_closes_pass_each_way_and_the_end_is_a_clean_eof) {
    Pair x = connected_pair(), y = connected_pair();
    const size_t big = 3 << 20;
    std::string payload(big, '\0');
    for (size_t i = 0; i < big; i++)
        payload[i] = static_cast<char>(pattern(i));
    const std::string reply = "written after the other side's half-close";
    Ended e = relay_between(x, y, [&] {
        std::thread writer([&] {
            write_all(x.outer, payload);
            ::shutdown(x.outer, SHUT_WR);
        });
        std::string got = read_to_eof(y.outer);
        writer.join();
        cr_assert_eq(got.size(), big, "%zu of %zu bytes before EOF", got.size(), big);
        cr_assert(got == payload, "the bytes changed on the way");
        // y's direction is still open after x's half-close.
        write_all(y.outer, reply);
        cr_assert_eq(::shutdown(y.outer, SHUT_WR), 0);
        std::string back = read_to_eof(x.outer);
        cr_assert(back == reply, "x read \"%s\"", back.c_str());
    });
    cr_assert(e.called, "the relay did not end after both half-closes");
    cr_assert_eq(e.a_to_b, big);
    cr_assert_eq(e.b_to_a, reply.size());
    ::close(x.outer);
    ::close(y.outer);
}

// The far side (b) half-closes first, before anything was sent: x sees EOF
// while its own direction still carries data to y.
Test(relay, a_half_close_from_the_far_side_leaves_the_near_side_writing) {
    Pair x = connected_pair(), y = connected_pair();
    const std::string request = "sent after reading the far side's EOF";
    Ended e = relay_between(x, y, [&] {
        cr_assert_eq(::shutdown(y.outer, SHUT_WR), 0);
        cr_assert_eq(read_to_eof(x.outer), "");
        write_all(x.outer, request);
        cr_assert_eq(::shutdown(x.outer, SHUT_WR), 0);
        std::string got = read_to_eof(y.outer);
        cr_assert(got == request, "y read \"%s\"", got.c_str());
    });
    cr_assert(e.called);
    cr_assert_eq(e.a_to_b, request.size());
    cr_assert_eq(e.b_to_a, 0u);
    ::close(x.outer);
    ::close(y.outer);
}
