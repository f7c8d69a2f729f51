// Port forwarding: a listening socket whose connections are relayed to a
// fixed address. For dev.ocirun.local-ports the listener is the init's, in
// the container's network namespace, and the target the host's loopback;
// for dev.ocirun.publish the listener is on the host and each connection to
// the container's loopback is made from a socket opened in its namespace.
#pragma once

#include "confine.hpp"
#include "egress_log.hpp"
#include "loop.hpp"
#include "oci/policy/egress_rules.hpp"
#include "relay.hpp"

#include <sys/socket.h>

#include <functional>
#include <string>

namespace ocirun::shim {

// Connect the non-blocking `sock` to `addr`; `done(loop, err)` runs once it
// is connected (err 0) or failed (errno). `sock` stays the caller's.
void dial(Loop &loop, int sock, const sockaddr_storage &addr,
          std::function<void(Loop &, int err)> done);

// TCP_NODELAY on `sock`: the relay passes on segments as they come. Set on
// a listener, its accepted connections have it too.
void set_nodelay(int sock);

// Accept one connection (non-blocking, close-on-exec; the listener's options
// such as TCP_NODELAY and buffer sizes), or -1 when none is waiting.
int accept_connection(int listener);

// A socket (non-blocking, close-on-exec) for connecting to `family`, made by
// `maker` in its network namespace (AF_INET only; nullptr: in the helper's
// own).
int open_socket(int family, SocketMaker *maker);

// Refuse an accepted connection at once: closed with a reset, so the
// client's next call fails (ECONNRESET) rather than waiting.
void reset_connection(int fd);

struct ForwardLimits {
    ConnectionBudget *budget = nullptr; // the helper's, shared
    int max = 128;                      // this forward's connections at once
    EgressLog *log = nullptr;           // where refusals are said (in runs)
    std::string what;                   // "local port 8080", for the event
};

class Forwarder : public Handler {
  public:
    // `listener` (owned) is non-blocking; connections go to `target`, from
    // sockets made by `maker` (nullptr: here). Past the forward's or the
    // helper's limit a connection is accepted and reset.
    Forwarder(PipePool &pool, int listener, sockaddr_storage target, SocketMaker *maker,
              ForwardLimits limits)
        : pool_(pool), listener_(listener), target_(target), maker_(maker),
          limits_(std::move(limits)) {
        // Set once here, inherited by every accepted connection: the relay's
        // TCP_NODELAY and its buffer caps for big pipes (cap_buffers).
        set_nodelay(listener_);
        cap_buffers(listener_, true);
    }
    ~Forwarder() override;
    int fd() const { return listener_; }
    void on_ready(Loop &loop, int fd, uint32_t events) override;
    int active() const { return active_; }

  private:
    void refuse(int c);
    void release();

    PipePool &pool_;
    int listener_;
    sockaddr_storage target_;
    SocketMaker *maker_;
    ForwardLimits limits_;
    int active_ = 0;
};

// "ADDR:PORT" of an IPv4 or [IPv6] address, for messages.
std::string address_text(const sockaddr_storage &a);
// The socket address of `a` and `port`, and its length for bind/connect.
sockaddr_storage to_sockaddr(const egress::IpAddr &a, uint16_t port);
socklen_t sockaddr_length(const sockaddr_storage &a);

} // namespace ocirun::shim
