// A TCP relay between two connected sockets: splice(2) through one pipe per
// direction, so the bytes never enter user space. Half-closes pass through
// (EOF one way shuts down writing the other way); an error on either side
// closes both. Pipes are reused across relays.
#pragma once

#include "loop.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace ocirun::shim {

struct Pipe {
    int r = -1, w = -1;
    size_t capacity = 0;
};

// Drained pipes kept for the next relay (a pipe costs two syscalls and a
// few pages).
class PipePool {
  public:
    ~PipePool();
    bool take(Pipe &p);
    void give(Pipe p); // must be empty
  private:
    std::vector<Pipe> free_;
};

class Relay : public Handler {
  public:
    // Called once when the relay ends, with the bytes moved a->b and b->a.
    using OnClose = std::function<void(uint64_t a_to_b, uint64_t b_to_a)>;

    // Takes ownership of both sockets (non-blocking, connected). Returns
    // null (and closes them) if no pipes could be had.
    static Relay *start(Loop &loop, PipePool &pool, int a, int b, OnClose on_close);
    ~Relay() override;
    void on_ready(Loop &loop, int fd, uint32_t events) override;
    // End now (shutdown of the helper): both sockets closed.
    void close(Loop &loop);

    // Every relay alive, for shutdown.
    static std::vector<Relay *> &all();

  private:
    struct Direction {
        int from = -1, to = -1;
        Pipe pipe;
        size_t in_pipe = 0;
        bool eof = false;  // `from` said EOF
        bool done = false; // EOF passed on: `to` shut down for writing
        uint64_t bytes = 0;
    };
    Relay(Loop &loop, PipePool &pool, int a, int b, OnClose on_close);
    // Move what can be moved now; false on an error.
    bool pump(Direction &d);
    void update(Loop &loop);

    PipePool &pool_;
    int a_, b_;
    Direction ab_, ba_;
    uint32_t want_a_ = 0, want_b_ = 0;
    OnClose on_close_;
    bool closed_ = false;
};

} // namespace ocirun::shim
