// Loopback sockets and a tagging echo server for the network tests (network
// policy, exhaustion, crash): what the container reaches through the helper.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace test {

// A listening TCP socket on addr:port (port 0: an ephemeral one).
int listen_on(const char *addr, uint16_t port, int backlog = 64);
uint16_t port_of(int s);

// A server on addr (ephemeral port) answering each chunk a connection sends
// with `tag` + the chunk, until it closes. A child of the test, killed by its
// PID when the object goes.
struct Server {
    pid_t pid = -1;
    uint16_t port = 0;
    ~Server();
};
void serve(Server &srv, const char *addr, const std::string &tag, int backlog = 64);

} // namespace test
