#include "console.hpp"

#include "harness.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace test {

namespace {

long now_ms() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

} // namespace

ConsoleSocket make_console_socket() {
    ConsoleSocket s;
    s.path = track_dir(make_temp_dir("sock")) + "/console.sock";
    s.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, s.path.c_str(), sizeof sa.sun_path - 1);
    if (bind(s.listen_fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) < 0 ||
        listen(s.listen_fd, 1) < 0) {
        close(s.listen_fd);
        s.listen_fd = -1;
    }
    return s;
}

int accept_fd(int listen_fd, int timeout_ms, std::string *data) {
    int got = -1;
    struct pollfd p = {listen_fd, POLLIN, 0};
    if (listen_fd < 0 || poll(&p, 1, timeout_ms) != 1) return -1;
    int conn = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return -1;
    char buf[8192];
    struct iovec iov = {buf, sizeof buf};
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct pollfd cp = {conn, POLLIN, 0};
    ssize_t n = poll(&cp, 1, timeout_ms) == 1 ? recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) : -1;
    if (n >= 0) {
        if (data) data->assign(buf, static_cast<size_t>(n));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            std::memcpy(&got, CMSG_DATA(cm), sizeof got);
    }
    close(conn);
    return got;
}

int receive_master(ConsoleSocket &s, int timeout_ms) {
    int master = accept_fd(s.listen_fd, timeout_ms);
    if (s.listen_fd >= 0) close(s.listen_fd);
    s.listen_fd = -1;
    return master;
}

std::string read_until(int fd, const std::string &needle, int timeout_ms) {
    std::string seen;
    long start = now_ms();
    while (seen.find(needle) == std::string::npos) {
        long left = timeout_ms - (now_ms() - start);
        if (left <= 0) break;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left < 100 ? left : 100)) <= 0) continue;
        char buf[512];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break; // EIO once every slave is closed
        seen.append(buf, static_cast<size_t>(n));
    }
    return seen;
}

PtyChild spawn_oci_on_pty(const std::vector<std::string> &args, unsigned short rows,
                          unsigned short cols) {
    PtyChild c;
    struct winsize ws {};
    ws.ws_row = rows;
    ws.ws_col = cols;
    int slave = -1;
    if (openpty(&c.master, &slave, nullptr, nullptr, &ws) < 0) return c;
    std::vector<std::string> argv{oci_run_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    c.pid = fork();
    if (c.pid == 0) {
        setsid();
        ioctl(slave, TIOCSCTTY, 0);
        dup2(slave, 0);
        dup2(slave, 1);
        dup2(slave, 2);
        if (slave > 2) close(slave);
        close(c.master);
        std::vector<char *> av;
        for (auto &a : argv)
            av.push_back(const_cast<char *>(a.c_str()));
        av.push_back(nullptr);
        execv(av[0], av.data());
        _exit(127);
    }
    close(slave);
    return c;
}

ConsoleCreate create_with_console_socket(const std::string &root, const std::string &bundle,
                                         const std::string &id) {
    ConsoleSocket sock = make_console_socket();
    Spawned cr = spawn_oci(
        {"--root", root, "create", "--console-socket", sock.path, "--bundle", bundle, id});
    ConsoleCreate c;
    c.master = receive_master(sock);
    c.status = wait_bounded(cr.pid, 5000);
    c.err = read_file(cr.err_path);
    return c;
}

} // namespace test
