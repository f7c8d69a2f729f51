#include "loop.hpp"

#include <errno.h>
#include <unistd.h>

namespace ocirun::shim {

Loop::Loop() : epfd_(::epoll_create1(EPOLL_CLOEXEC)) {}

Loop::~Loop() {
    for (Slot *s : slots_)
        delete s;
    for (Slot *s : free_)
        delete s;
    if (epfd_ >= 0) ::close(epfd_);
}

bool Loop::watch(int fd, uint32_t events, Handler *h) {
    if (fd < 0) {
        errno = EBADF;
        return false;
    }
    size_t i = static_cast<size_t>(fd);
    if (i >= slots_.size()) slots_.resize(i + 1, nullptr);
    struct epoll_event ev {};
    ev.events = events;
    if (slots_[i]) {
        // The slot takes the handler only once epoll has the fd: a caller
        // that deletes its handler after a failed watch leaves nothing
        // pointing at it.
        ev.data.ptr = slots_[i];
        int r = ::epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
        // ENOENT: the fd was closed while watched (epoll dropped it) and its
        // number is in use again: a new registration.
        if (r < 0 && errno == ENOENT) r = ::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
        if (r < 0) return false;
        slots_[i]->h = h;
        return true;
    }
    Slot *s;
    if (!free_.empty()) {
        s = free_.back();
        free_.pop_back();
    } else {
        s = new Slot;
    }
    *s = {h, fd};
    ev.data.ptr = s;
    if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
        free_.push_back(s);
        return false;
    }
    slots_[i] = s;
    return true;
}

void Loop::unwatch(int fd) {
    size_t i = static_cast<size_t>(fd);
    if (fd < 0 || i >= slots_.size() || !slots_[i]) return;
    (void)::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
    // Events already fetched for this fd in the current batch are dropped.
    slots_[i]->h = nullptr;
    retired_slots_.push_back(slots_[i]);
    slots_[i] = nullptr;
}

void Loop::retire(Handler *h) {
    retired_.emplace_back(h);
}

bool Loop::run() {
    struct epoll_event evs[64];
    while (running_) {
        int n = ::epoll_wait(epfd_, evs, 64, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        for (int i = 0; i < n && running_; i++) {
            auto *s = static_cast<Slot *>(evs[i].data.ptr);
            if (s->h) s->h->on_ready(*this, s->fd, evs[i].events);
        }
        retired_.clear();
        for (Slot *s : retired_slots_)
            free_.push_back(s);
        retired_slots_.clear();
    }
    return true;
}

} // namespace ocirun::shim
