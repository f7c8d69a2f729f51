#include "runtime/lifecycle/tty_relay.hpp"

#include "runtime/process/proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace ocirun {

namespace {

// Write all of buf, waiting (poll) when the fd is full.
bool write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, buf, n);
        if (w > 0) {
            buf += w;
            n -= static_cast<size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = {fd, POLLOUT, 0};
            ::poll(&p, 1, 1000);
            continue;
        }
        return false;
    }
    return true;
}

} // namespace

std::optional<oci::Box> own_terminal_size() {
    struct winsize ws;
    if (!::isatty(STDIN_FILENO) || ::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 ||
        ws.ws_col == 0)
        return std::nullopt;
    return oci::Box{ws.ws_row, ws.ws_col};
}

namespace {

void copy_size(int from, int to) {
    struct winsize ws;
    if (::ioctl(from, TIOCGWINSZ, &ws) == 0) ::ioctl(to, TIOCSWINSZ, &ws);
}

// Copy what `from` has now; false at EOF or error.
bool pump(int from, int to) {
    char buf[8192];
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n > 0) return write_all(to, buf, static_cast<size_t>(n));
    return n < 0 && (errno == EAGAIN || errno == EINTR);
}

} // namespace

Result<int> relay_terminal(int master, pid_t pid) {
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) {
        ::close(master);
        return fail_errno("terminal: pidfd_open");
    }
    bool tty_in = ::isatty(STDIN_FILENO);
    struct termios saved {};
    if (tty_in && ::tcgetattr(STDIN_FILENO, &saved) == 0) {
        struct termios raw = saved;
        ::cfmakeraw(&raw);
        ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
        copy_size(STDIN_FILENO, master);
    } else {
        tty_in = false;
    }
    sigset_t winch, old;
    sigemptyset(&winch);
    sigaddset(&winch, SIGWINCH);
    ::sigprocmask(SIG_BLOCK, &winch, &old);
    int sigfd = ::signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
    ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);

    bool in_open = true;
    for (;;) {
        struct pollfd p[4] = {{pidfd, POLLIN, 0},
                              {master, POLLIN, 0},
                              {in_open ? STDIN_FILENO : -1, POLLIN, 0},
                              {sigfd, POLLIN, 0}};
        if (::poll(p, 4, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[1].revents & POLLIN) pump(master, STDOUT_FILENO);
        if (p[2].revents & (POLLIN | POLLHUP)) {
            if (!pump(STDIN_FILENO, master)) {
                // End of input: the pty's EOF character, as a user's ^D.
                char eot = 4;
                (void)write_all(master, &eot, 1);
                in_open = false;
            }
        }
        if (p[3].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (::read(sigfd, &si, sizeof si) == sizeof si) {
            }
            if (tty_in) copy_size(STDIN_FILENO, master);
        }
        if (p[0].revents & POLLIN) break;
        if ((p[1].revents & (POLLHUP | POLLERR)) && !(p[1].revents & POLLIN)) {
            // Every slave closed: wait for the exit without spinning.
            struct pollfd e = {pidfd, POLLIN, 0};
            ::poll(&e, 1, -1);
            break;
        }
    }
    // What the process wrote just before it exited.
    while (pump(master, STDOUT_FILENO)) {
        struct pollfd p = {master, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) break;
    }
    if (tty_in) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    if (sigfd >= 0) ::close(sigfd);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::close(pidfd);
    ::close(master);
    return wait_exit_status(pid);
}

} // namespace ocirun
