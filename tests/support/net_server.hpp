// Loopback sockets and a tagging echo server for the network tests (network
// policy, exhaustion, crash): what the container reaches through the helper.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace test {

// A listening TCP socket on addr:port (port 0: an ephemeral one); addr is
// IPv4 or IPv6 (then v6-only).
int listen_on(const char *addr, uint16_t port, int backlog = 64);
uint16_t port_of(int s);
// A blocking TCP socket connected to 127.0.0.1:port (in the caller's network
// namespace), or -1 with errno.
int connect_loopback(uint16_t port);

// A server on addr (ephemeral port) answering each chunk a connection sends
// with `tag` + the chunk, until it closes. A child of the test, killed by its
// PID when the object goes.
struct Server {
    pid_t pid = -1;
    uint16_t port = 0;
    ~Server();
};
void serve(Server &srv, const char *addr, const std::string &tag, int backlog = 64,
           uint16_t port = 0);

// Put the calling test process (and what it starts from now on) in a network
// namespace of its own, with lo up and each of `addrs` (IPv4 or IPv6) on
// it: "outside" addresses the test's servers listen on, which
// go when the test's process ends.
void own_network(std::initializer_list<const char *> addrs);

// A network namespace made before the container, as CNI, netavark or `ip
// netns` make a pod's: held by a child of the test (killed by its PID when
// the object goes) and joined to the test's own namespace (own_network
// first) by a veth pair: 10.77.0.2/24 there, with lo up and a default route
// to the test's 10.77.0.1, so the test's "outside" addresses are reached
// from it. `path` is /proc/PID/ns/net, for linux.namespaces.
struct PodNetns {
    pid_t pid = -1;
    std::string path;
    ~PodNetns();
};
void make_pod_netns(PodNetns &p);

// A UDP socket bound to addr:port that only collects what arrives, and how
// many datagrams are waiting there now (it reads them all).
int bind_udp(const char *addr, uint16_t port);
long udp_datagrams(int s);

// `n` connections to 127.0.0.1:port from inside the network namespace of
// `pid` (a forwarded port, the proxy's 3128), all connected before any
// request is sent, then held open until release(): what each got back first
// (until it ends with `last`, EOF or a reset, or 3 s of quiet; "connect
// failed" when the connection was refused).
struct Held {
    pid_t child = -1;
    int release_fd = -1;
    std::vector<std::string> answers;
    void release();
    ~Held() { release(); }
};
void hold(Held &h, long pid, uint16_t port, int n, const std::string &request,
          const std::string &last);

// Answers as the network tests' clients report them: each followed by
// "\n----\n".
std::vector<std::string> split_answers(const std::string &s);

// The refusals egress events stand for, over the lines of `log` (JSON lines)
// that contain `needle`: each line's "count" (a line without one: 1).
long refusals_in(const std::string &log, const std::string &needle);

// A TLS 1.3-style ClientHello record naming `server_name` in its server_name
// extension (none when empty), as a client sends it first: what the
// intercepted port 443 decides by.
std::string tls_client_hello(const std::string &server_name);

} // namespace test
