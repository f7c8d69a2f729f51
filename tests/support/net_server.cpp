#include "net_server.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace test {

int listen_on(const char *addr, uint16_t port, int backlog) {
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(s >= 0);
    int one = 1;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, addr, &a.sin_addr);
    cr_assert(::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0, "bind %s: %s", addr,
              std::strerror(errno));
    cr_assert(::listen(s, backlog) == 0);
    return s;
}

uint16_t port_of(int s) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
    return ntohs(a.sin_port);
}

Server::~Server() {
    if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
}

void serve(Server &srv, const char *addr, const std::string &tag, int backlog) {
    int s = listen_on(addr, 0, backlog);
    srv.port = port_of(s);
    srv.pid = ::fork();
    cr_assert(srv.pid >= 0);
    if (srv.pid > 0) {
        ::close(s);
        return;
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::signal(SIGCHLD, SIG_IGN);
    for (;;) {
        int c = ::accept(s, nullptr, nullptr);
        if (c < 0) continue;
        if (::fork() == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            char buf[4096];
            ssize_t n;
            while ((n = ::read(c, buf, sizeof buf)) > 0) {
                std::string out = tag + std::string(buf, static_cast<size_t>(n));
                if (::write(c, out.data(), out.size()) < 0) break;
            }
            ::_exit(0);
        }
        ::close(c);
    }
}

} // namespace test
