// The network helper's dial() (shim/forward.cpp) against real loopback
// listeners: a connect that finishes inside connect() or at once, and one
// left waiting for a SYN retransmission (the listener's accept queue full)
// that ends through the event loop; each says connected or refused the same
// way whichever path it took; and TCP_NODELAY passing from a listener to
// the connections it accepts.
#include "shim/forward.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

using ocirun::shim::dial;
using ocirun::shim::Loop;

namespace {

// A loopback listener with `backlog` on an ephemeral port, and its address.
int listener(int backlog, sockaddr_storage &addr) {
    int l = test::listen_on("127.0.0.1", 0, backlog);
    addr = {};
    socklen_t len = sizeof addr;
    cr_assert_eq(::getsockname(l, reinterpret_cast<sockaddr *>(&addr), &len), 0);
    return l;
}

int nonblocking_socket() {
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    cr_assert_geq(s, 0, "socket: %s", strerror(errno));
    return s;
}

struct Outcome {
    bool called = false;
    bool at_once = false; // before dial() returned
    int err = -1;
};

// dial() `s` to `addr`; when it does not end at once, run the loop (in its
// own thread, while `meanwhile` runs here) until it does.
template <typename Meanwhile>
Outcome dial_and_wait(int s, const sockaddr_storage &addr, Meanwhile meanwhile) {
    Loop loop;
    cr_assert(loop.valid());
    Outcome o;
    bool returned = false;
    dial(loop, s, addr, [&](Loop &l, int err) {
        o = {true, !returned, err};
        l.stop();
    });
    returned = true;
    if (o.called) return o;
    std::thread runner([&] { loop.run(); });
    meanwhile();
    runner.join();
    return o;
}

// A listener (backlog 0) whose accept queue holds its one connection,
// `first`: a SYN to it now is dropped.
struct FullQueue {
    sockaddr_storage addr{};
    int listener = -1, first = -1;
};

FullQueue full_queue() {
    FullQueue q;
    q.listener = listener(0, q.addr);
    q.first = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(::connect(q.first, reinterpret_cast<sockaddr *>(&q.addr), sizeof(sockaddr_in)), 0,
                 "connect: %s", strerror(errno));
    return q;
}

// dial() to the full queue, which must leave the connect to the loop, while
// `meanwhile` makes room or takes the listener away.
template <typename Meanwhile> Outcome dial_left_waiting(FullQueue &q, Meanwhile meanwhile) {
    int s = nonblocking_socket();
    Outcome o = dial_and_wait(s, q.addr, meanwhile);
    cr_assert(o.called);
    cr_assert_not(o.at_once, "the accept queue was not full: the loop's path was not taken");
    ::close(s);
    ::close(q.first);
    return o;
}

} // namespace

Test(dial, a_listening_port_is_connected) {
    sockaddr_storage addr;
    int l = listener(8, addr);
    int s = nonblocking_socket();
    Outcome o = dial_and_wait(s, addr, [] {});
    cr_assert(o.called);
    cr_assert_eq(o.err, 0, "dial: %s", strerror(o.err));
    int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    cr_assert_geq(c, 0, "accept4: %s", strerror(errno));
    cr_assert_eq(::write(s, "x", 1), 1, "write after the dial: %s", strerror(errno));
    char b = 0;
    cr_assert_eq(::read(c, &b, 1), 1);
    cr_assert_eq(b, 'x');
    ::close(c);
    ::close(s);
    ::close(l);
}

Test(dial, a_port_nobody_listens_on_is_refused) {
    sockaddr_storage addr;
    // Shut down, a listener stops listening and keeps its port: a SYN to it
    // is answered with a reset.
    int bound = listener(8, addr);
    cr_assert_eq(::shutdown(bound, SHUT_RD), 0, "shutdown: %s", strerror(errno));
    int s = nonblocking_socket();
    Outcome o = dial_and_wait(s, addr, [] {});
    cr_assert(o.called);
    cr_assert_eq(o.err, ECONNREFUSED, "dial: %s", strerror(o.err));
    ::close(s);
    ::close(bound);
}

// The listener's accept queue (backlog 0: one connection) is full, so the
// SYN is dropped and dial() cannot finish at once; once the queue has room,
// the retransmitted SYN (after about a second) connects, through the loop.
Test(dial, a_connect_left_waiting_is_connected_through_the_loop, .timeout = 20) {
    FullQueue q = full_queue();
    Outcome o = dial_left_waiting(q, [&] {
        int c = ::accept4(q.listener, nullptr, nullptr, SOCK_CLOEXEC);
        cr_assert_geq(c, 0, "accept4: %s", strerror(errno));
        ::close(c);
    });
    cr_assert_eq(o.err, 0, "dial: %s", strerror(o.err));
    ::close(q.listener);
}

// As above, but the listener goes away: the retransmitted SYN is answered
// with a reset, which the loop's path reports as refused, as the fast path
// does.
Test(dial, a_connect_left_waiting_is_refused_through_the_loop, .timeout = 20) {
    FullQueue q = full_queue();
    Outcome o = dial_left_waiting(q, [&] { ::close(q.listener); });
    cr_assert_eq(o.err, ECONNREFUSED, "dial: %s", strerror(o.err));
}

// What the forwarder and the egress proxy rely on to set TCP_NODELAY once:
// a connection accept_connection() takes from a listener that has it, has it.
Test(dial, a_listeners_nodelay_is_on_each_accepted_connection) {
    sockaddr_storage addr;
    int l = listener(8, addr);
    ocirun::shim::set_nodelay(l);
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(::connect(s, reinterpret_cast<sockaddr *>(&addr), sizeof(sockaddr_in)), 0,
                 "connect: %s", strerror(errno));
    int c = ocirun::shim::accept_connection(l);
    cr_assert_geq(c, 0, "accept: %s", strerror(errno));
    int on = 0;
    socklen_t len = sizeof on;
    cr_assert_eq(::getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, &len), 0);
    cr_assert_neq(on, 0, "the accepted connection has no TCP_NODELAY");
    ::close(c);
    ::close(s);
    ::close(l);
}
