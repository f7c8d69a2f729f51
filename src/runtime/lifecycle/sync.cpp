#include "runtime/lifecycle/sync.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace ocirun::sync {

namespace {

// The peer's last word, when it reported an error and exited before reading
// what we sent (the kernel then answers our send EPIPE, or our receive
// ECONNRESET, ahead of the packet it left): that error is the cause.
std::optional<Error> peer_error(int fd) {
    int saved = errno;
    Packet p{};
    ssize_t n;
    // Looked at first: only an error packet is taken off the queue.
    while ((n = ::recv(fd, &p, sizeof p, MSG_DONTWAIT | MSG_PEEK)) < 0 && errno == EINTR) {
    }
    bool is_error = n == static_cast<ssize_t>(sizeof p) && p.type == Msg::error;
    if (is_error) (void)::recv(fd, &p, sizeof p, MSG_DONTWAIT);
    errno = saved;
    if (!is_error) return std::nullopt;
    p.text[sizeof p.text - 1] = '\0';
    return Error{p.value, p.text};
}

// A send that failed: the peer's own error when it left one (peer_error),
// else `failed`.
Status or_peer_error(int fd, Status failed) {
    if (!failed && (failed.error().code == EPIPE || failed.error().code == ECONNRESET))
        if (auto said = peer_error(fd)) return std::unexpected(std::move(*said));
    return failed;
}

} // namespace

Status send(int fd, Msg type, int32_t value, const char *text) {
    Packet p{};
    p.type = type;
    p.value = value;
    if (text) std::strncpy(p.text, text, sizeof p.text - 1);
    ssize_t n;
    while ((n = ::send(fd, &p, sizeof p, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof p))
        return or_peer_error(fd, fail_errno("sync socket: send"));
    return {};
}

Status send_with_fd(int fd, Msg type, int passed, const char *text) {
    Packet p{};
    p.type = type;
    if (text) std::strncpy(p.text, text, sizeof p.text - 1);
    return or_peer_error(fd, send_with_rights(fd, &p, sizeof p, passed, "sync socket: send an fd"));
}

Result<Packet> receive(int fd, const char *peer) {
    Packet p{};
    struct iovec iov = {&p, sizeof p};
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int))];
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    ssize_t n;
    while ((n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n < 0 && errno == ECONNRESET) {
        // Reported once, ahead of what the peer left queued: read on.
        if (auto said = peer_error(fd)) {
            Packet e{};
            e.type = Msg::error;
            e.value = said->code;
            std::strncpy(e.text, said->msg.c_str(), sizeof e.text - 1);
            e.fd = -1;
            return e;
        }
    }
    if (n < 0) return fail_errno("sync socket: receive");
    if (n == 0) return fail(std::string(peer) + " exited during setup");
    if (n != static_cast<ssize_t>(sizeof p))
        return fail("sync socket: short message from " + std::string(peer));
    p.text[sizeof p.text - 1] = '\0';
    p.sender = 0;
    p.fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred cred;
            std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
            p.sender = cred.pid;
        }
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(&p.fd, CMSG_DATA(c), sizeof(int));
    }
    return p;
}

void send_error(int fd, const Error &e) {
    (void)send(fd, Msg::error, e.code, e.msg.c_str());
}

Result<int> connect_unix(const std::string &path, const char *what) {
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path)
        return fail(std::string(what) + ": path too long: " + path);
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail_errno(std::string(what) + ": socket");
    if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) < 0) {
        int e = errno;
        ::close(fd);
        return fail_code(e, std::string(what) + ": connect " + path);
    }
    return fd;
}

Status send_with_rights(int sock, const void *data, size_t len, int fd, const std::string &what) {
    struct iovec iov = {const_cast<void *>(data), len};
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    ssize_t n;
    while ((n = ::sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(len)) return fail_errno(what);
    return {};
}

Status send_fd(int sock, int fd) {
    char dummy = 'F';
    return send_with_rights(sock, &dummy, 1, fd, "send fd");
}

Result<int> receive_fd(int sock) {
    char dummy;
    struct iovec iov = {&dummy, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u{};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = u.buf;
    msg.msg_controllen = sizeof u.buf;
    ssize_t n;
    while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return fail_errno("receive fd");
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return fail("receive fd: no descriptor in message");
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

} // namespace ocirun::sync
