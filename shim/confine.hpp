// What the helper may do once it listens: it reads container traffic with
// its own parsers (request heads, TLS hellos, DNS queries), so it must not
// be worth taking over. Started as root, it leaves as nobody (65534:65534,
// no supplementary groups), with no capability, an empty bounding set,
// no_new_privs, not dumpable, and a seccomp allow-list of the calls its
// loop, relays and resolver make (everything else fails with EPERM): no
// execve, ptrace, kill, mount, unshare or namespace-making clone, no
// executable memory but mapped files (libraries loaded later: libidn2,
// NSS modules), files opened read-only, sockets of the internet families
// and rtnetlink only.
//
// The one call that needed a capability after start, making a socket in the
// container's network namespace for each published connection, is done by
// a SocketMaker thread that entered that namespace before the drop: the
// helper's other threads stay in the host's and never need CAP_SYS_ADMIN.
#pragma once

#include <string>

namespace ocirun::shim {

// The uid and gid the helper runs as when started as root (nobody, as
// passt/pasta do).
inline constexpr unsigned kHelperUid = 65534, kHelperGid = 65534;

// A thread in another network namespace that makes sockets there: TCP over
// IPv4, for the connections of published ports to the container's
// 127.0.0.1. It makes a few ahead (after confine()), so that take() does
// not wait for it.
class SocketMaker {
  public:
    SocketMaker() = default;
    SocketMaker(const SocketMaker &) = delete;
    SocketMaker &operator=(const SocketMaker &) = delete;
    ~SocketMaker();
    // Start the thread in the namespace of `netns_fd` (needs CAP_SYS_ADMIN,
    // before confine()); it drops its own capabilities once inside. Empty
    // string, or what failed with errno's text.
    std::string start(int netns_fd);
    // A non-blocking, close-on-exec AF_INET stream socket made in that
    // namespace, or -1 with errno set; the thread makes the next one.
    int take();
    // confine()'s part: the thread confines itself (begin), its answer
    // is read (end: "" or what failed); then it makes the first sockets
    // ahead.
    bool begin_confine();
    std::string end_confine();
    void make_ahead();

  private:
    int fd_ = -1;   // the helper's end of the socket pair
    int ahead_ = 0; // sockets asked for and not yet taken
};

// Drop to nobody, no capability and the allow-list (above), for every
// thread of the process. Empty string, or what failed (the helper then
// refuses to start). Not root (an unprivileged user's helper): no uid
// change, the rest as above. `maker`: the socket thread, if any.
std::string confine(SocketMaker *maker);

#ifdef OCI_RUN_FAULT_INJECTION
// Test builds: with OCI_RUN_SHIM_PROBE=1, confine() is followed by a line
// on stderr (the helper's shim.log) with what each forbidden call gave
// ("probe sanitized ..." in a sanitizer build, whose allow-list also lets
// its runtime write its report and run its leak check: filter_gen.cpp).
void probe_confinement();
#endif

} // namespace ocirun::shim
