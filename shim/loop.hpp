// The helper's one event loop: epoll over non-blocking fds, each owned by a
// Handler. Single-threaded; a handler that is done asks to be destroyed and
// goes after the current batch of events, so no event reaches a dead one.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace ocirun::shim {

class Loop;

class Handler {
  public:
    virtual ~Handler() = default;
    // `fd` is the registered fd that is ready, `events` its EPOLL* bits.
    virtual void on_ready(Loop &loop, int fd, uint32_t events) = 0;
};

class Loop {
  public:
    Loop();
    ~Loop();
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;

    bool valid() const { return epfd_ >= 0; }
    // Watch `fd` for `events` on behalf of `h` (EPOLL_CTL_ADD, or MOD when
    // already watched). Returns false with errno set on failure.
    bool watch(int fd, uint32_t events, Handler *h);
    void unwatch(int fd);
    // Take ownership of `h`; it is deleted once the current batch is done.
    void retire(Handler *h);
    // Run until stop(); returns false on an epoll error.
    bool run();
    void stop() { running_ = false; }

  private:
    struct Slot {
        Handler *h;
        int fd;
    };
    int epfd_;
    bool running_ = true;
    std::vector<std::unique_ptr<Handler>> retired_;
    std::vector<Slot *> slots_; // by fd
    std::vector<Slot *> free_;
    std::vector<Slot *> retired_slots_; // unwatched in this batch: reused after it
};

} // namespace ocirun::shim
