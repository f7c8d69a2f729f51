#include "relay.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ocirun::shim {

PipePool::~PipePool() {
    for (auto &p : free_) {
        ::close(p.r);
        ::close(p.w);
    }
}

bool PipePool::take(Pipe &p) {
    if (!free_.empty()) {
        p = free_.back();
        free_.pop_back();
        return true;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) return false;
    // Bigger pipes move more per splice; the default (16 pages) halves the
    // throughput of a bulk transfer. Unprivileged users may get less.
    if (in_use_ + kBigPipe <= big_budget_)
        (void)::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kBigPipe));
    int cap = ::fcntl(fds[1], F_GETPIPE_SZ);
    p = {fds[0], fds[1], static_cast<size_t>(cap > 0 ? cap : 4096)};
    in_use_ += p.capacity;
    return true;
}

void PipePool::give(Pipe p) {
    if (p.r < 0) return;
    // Keep a few, the big ones first: a pipe kept still counts.
    if (free_.size() < 16) {
        free_.push_back(p);
        return;
    }
    drop(p);
}

void PipePool::drop(Pipe p) {
    if (p.r < 0) return;
    ::close(p.r);
    ::close(p.w);
    in_use_ -= std::min(in_use_, p.capacity);
}

std::vector<Relay *> &Relay::all() {
    static std::vector<Relay *> relays;
    return relays;
}

void cap_buffers(int fd, bool big) {
    int size = big ? 512 << 10 : 64 << 10;
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

Relay *Relay::start(Loop &loop, PipePool &pool, int a, int b, OnClose on_close, bool capped) {
    auto *r = new Relay(loop, pool, a, b, std::move(on_close));
    if (r->ab_.pipe.r < 0 || r->ba_.pipe.r < 0) {
        r->on_close_ = nullptr;
        r->close(loop); // retires it
        return nullptr;
    }
    bool big = std::min(r->ab_.pipe.capacity, r->ba_.pipe.capacity) >= PipePool::kBigPipe;
    if (!capped || !big) {
        cap_buffers(a, big);
        cap_buffers(b, big);
    }
    all().push_back(r);
    r->update(loop);
    return r;
}

Relay::Relay(Loop &, PipePool &pool, int a, int b, OnClose on_close)
    : pool_(pool), a_(a), b_(b), on_close_(std::move(on_close)) {
    ab_.from = a;
    ab_.to = b;
    ba_.from = b;
    ba_.to = a;
    if (!pool.take(ab_.pipe) || !pool.take(ba_.pipe)) {
        pool.give(ab_.pipe);
        ab_.pipe = {};
    }
}

Relay::~Relay() {
    std::erase(all(), this);
}

bool Relay::pump(Direction &d, const Direction &other) {
    // A few rounds at most, so one busy relay does not starve the others.
    for (int round = 0; round < 8; round++) {
        bool moved = false;
        if (!d.eof && d.in_pipe < d.pipe.capacity) {
            ssize_t n = ::splice(d.from, nullptr, d.pipe.w, nullptr, d.pipe.capacity - d.in_pipe,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                d.in_pipe += static_cast<size_t>(n);
                moved = true;
            } else if (n == 0) {
                d.eof = true;
            } else if (errno != EAGAIN && errno != EINTR) {
                return false;
            }
        }
        if (d.in_pipe > 0) {
            ssize_t n = ::splice(d.pipe.r, nullptr, d.to, nullptr, d.in_pipe,
                                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (n > 0) {
                d.in_pipe -= static_cast<size_t>(n);
                d.bytes += static_cast<uint64_t>(n);
                moved = true;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return false;
            }
        }
        if (!moved) break;
    }
    if (d.eof && d.in_pipe == 0 && !d.done) {
        // The last direction to end needs no shutdown: both sockets are
        // closed at once (update), and a close with nothing left unread
        // sends the same FIN.
        if (!other.done) ::shutdown(d.to, SHUT_WR);
        d.done = true;
    }
    return true;
}

void Relay::update(Loop &loop) {
    if (closed_) return;
    if (ab_.done && ba_.done) {
        close(loop);
        return;
    }
    // Read a side while its direction is open; watch it for writing while
    // the other direction has bytes waiting for it.
    auto want = [](const Direction &out, const Direction &in) {
        return (!out.eof && out.in_pipe < out.pipe.capacity ? uint32_t{EPOLLIN} : 0u) |
               (in.in_pipe > 0 ? uint32_t{EPOLLOUT} : 0u);
    };
    auto set = [&](int fd, uint32_t w, uint32_t &cur) {
        if (w == cur) return true;
        if (w == 0)
            loop.unwatch(fd);
        else if (!loop.watch(fd, w, this))
            return false;
        cur = w;
        return true;
    };
    if (!set(a_, want(ab_, ba_), want_a_) || !set(b_, want(ba_, ab_), want_b_)) close(loop);
}

void Relay::on_ready(Loop &loop, int fd, uint32_t events) {
    if (closed_) return;
    // Only the directions this event is about: a socket readable moves its
    // own direction, one writable the other's (the other direction is
    // pumped when its own socket says so; epoll is level-triggered). An
    // error or hang-up looks at both.
    bool in = (events & EPOLLIN) != 0, out = (events & EPOLLOUT) != 0;
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) in = out = true;
    bool a_side = fd == a_;
    bool pump_ab = a_side ? in : out, pump_ba = a_side ? out : in;
    bool ok = (!pump_ab || pump(ab_, ba_)) && (!pump_ba || pump(ba_, ab_));
    if (!ok || (events & EPOLLERR) != 0) {
        close(loop);
        return;
    }
    update(loop);
}

void Relay::close(Loop &loop) {
    if (closed_) return;
    closed_ = true;
    loop.unwatch(a_);
    loop.unwatch(b_);
    ::close(a_);
    ::close(b_);
    // A pipe with bytes left in it is not reusable.
    for (Direction *d : {&ab_, &ba_}) {
        if (d->in_pipe == 0)
            pool_.give(d->pipe);
        else
            pool_.drop(d->pipe);
        d->pipe = {};
    }
    if (on_close_) on_close_(ab_.bytes, ba_.bytes);
    on_close_ = nullptr;
    loop.retire(this);
}

} // namespace ocirun::shim
