// The network helper's event loop (shim/loop.cpp): which handler an event
// reaches when fd numbers are reused.
#include "shim/loop.hpp"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <unistd.h>

using ocirun::shim::Handler;
using ocirun::shim::Loop;

namespace {

struct Counter : Handler {
    int calls = 0;
    void on_ready(Loop &loop, int fd, uint32_t) override {
        calls++;
        char c;
        (void)!::read(fd, &c, 1);
        loop.stop();
    }
};

} // namespace

// A watched fd closed without unwatch, its number taken by a new pipe: the
// new handler is registered and gets the event (before the fix, epoll
// refused the MOD with ENOENT while the slot already pointed at the new
// handler, which the caller then deleted: a dangling handler).
Test(shim_loop, an_fd_number_closed_while_watched_can_be_watched_again) {
    Loop loop;
    cr_assert(loop.valid());
    int p[2];
    cr_assert_eq(::pipe(p), 0);
    Counter old_handler, new_handler;
    cr_assert(loop.watch(p[0], EPOLLIN, &old_handler));
    ::close(p[0]);
    ::close(p[1]);
    int q[2];
    cr_assert_eq(::pipe(q), 0);
    cr_assert_eq(q[0], p[0], "the kernel did not reuse the fd number (%d, %d)", q[0], p[0]);
    cr_assert(loop.watch(q[0], EPOLLIN, &new_handler), "watch of the reused number failed");
    cr_assert_eq(::write(q[1], "x", 1), 1);
    cr_assert(loop.run());
    cr_assert_eq(new_handler.calls, 1);
    cr_assert_eq(old_handler.calls, 0);
    ::close(q[0]);
    ::close(q[1]);
}

// A failed watch leaves the slot as it was: nothing points at a handler the
// caller deletes after the failure (here an fd epoll cannot watch, a
// regular file, EPERM).
Test(shim_loop, a_failed_watch_does_not_keep_the_handler) {
    Loop loop;
    int p[2];
    cr_assert_eq(::pipe(p), 0);
    Counter first;
    cr_assert(loop.watch(p[0], EPOLLIN, &first));
    ::close(p[0]);
    int fd = ::dup2(::open("/proc/self/status", O_RDONLY), p[0]);
    cr_assert_eq(fd, p[0]);
    auto *doomed = new Counter;
    cr_assert(!loop.watch(fd, EPOLLIN, doomed), "epoll watched a regular file");
    delete doomed;
    // The slot still works for a pollable fd of that number.
    ::close(fd);
    int q[2];
    cr_assert_eq(::pipe(q), 0);
    cr_assert_eq(q[0], p[0]);
    Counter second;
    cr_assert(loop.watch(q[0], EPOLLIN, &second));
    cr_assert_eq(::write(q[1], "x", 1), 1);
    cr_assert(loop.run());
    cr_assert_eq(second.calls, 1);
    ::close(q[0]);
    ::close(q[1]);
    ::close(p[1]);
}
