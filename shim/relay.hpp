// A TCP relay between two connected sockets: splice(2) through one pipe per
// direction, so the bytes never enter user space. Both sockets' kernel
// buffers are capped (512 KiB with big pipes, else 64 KiB), so what a relay
// can hold is bounded whatever the two ends do. Half-closes pass through
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
// few pages). A pipe is made big (1 MiB: more per splice) while the pipes
// alive stay within `big_budget` bytes of capacity in all, else it keeps the
// kernel's default (16 pages): a flood of connections cannot make the
// helper hold more than big_budget plus 64 KiB per pipe, whatever the
// container pushes and the far end leaves unread.
class PipePool {
  public:
    explicit PipePool(size_t big_budget = kBigPipeBudget) : big_budget_(big_budget) {}
    ~PipePool();
    bool take(Pipe &p);
    void give(Pipe p); // must be empty
    void drop(Pipe p); // closed, with bytes in it or not
    size_t capacity_in_use() const { return in_use_; }

    static constexpr size_t kBigPipe = 1 << 20;
    static constexpr size_t kBigPipeBudget = 16 << 20;

  private:
    std::vector<Pipe> free_;
    size_t big_budget_;
    size_t in_use_ = 0; // capacity of the pipes alive (in relays and kept)
};

// Connections through the helper at once, every kind together (forwarded,
// published, proxied): past `max` a new one is refused. Each holds six
// descriptors and two pipes.
struct ConnectionBudget {
    int active = 0;
    int max = 512;
    bool full() const { return active >= max; }
};

// The kernel's buffers of a socket the helper relays, capped: autotuning
// would let each hold several MiB that the container pushed and the far
// end left unread. 512 KiB per buffer for a relay with big pipes, else 64
// KiB (the kernel counts either twice, for its overhead). 512 KiB also moves
// more than 1 MiB did (one iperf3 stream 15.8 -> 18.9 Gbit/s on this
// 2-CPU VM, four 21.1 -> 22.4), and more than 256 KiB or 4 MiB.
void cap_buffers(int fd, bool big);

class Relay : public Handler {
  public:
    // Called once when the relay ends, with the bytes moved a->b and b->a.
    using OnClose = std::function<void(uint64_t a_to_b, uint64_t b_to_a)>;

    // Takes ownership of both sockets (non-blocking, connected). Returns
    // null (and closes them) if no pipes could be had. `capped`: both
    // sockets' buffers are already capped for big pipes (cap_buffers(fd,
    // true)); they are capped again only if the pipes are small.
    static Relay *start(Loop &loop, PipePool &pool, int a, int b, OnClose on_close,
                        bool capped = false);
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
    bool pump(Direction &d, const Direction &other);
    void update(Loop &loop);

    PipePool &pool_;
    int a_, b_;
    Direction ab_, ba_;
    uint32_t want_a_ = 0, want_b_ = 0;
    OnClose on_close_;
    bool closed_ = false;
};

} // namespace ocirun::shim
