#include "runtime/lifecycle/hooks.hpp"

#include "runtime/log.hpp"
#include "runtime/process/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ocirun {

namespace {

constexpr size_t kKeepOutput = 4096; // bytes of hook output kept for the error

int64_t now_ms() {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// The last non-empty line of what the hook printed.
std::string last_line(const std::string &out) {
    size_t end = out.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return {};
    size_t start = out.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    return out.substr(start, end - start + 1);
}

} // namespace

namespace {

// Run it; a timeout or a signal is an error, the exit status is the caller's.
Status run_impl(const oci::Hook &h, const std::string &what, const std::string &state,
                const std::string &cwd, const std::vector<int> &pass, ProgramRun &ran) {
    int in[2], out[2];
    // stdin is a socket so that a hook which never reads it cannot raise
    // SIGPIPE in the runtime (send with MSG_NOSIGNAL).
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
        return fail_errno(what + ": socketpair");
    if (::pipe2(out, O_CLOEXEC) < 0) {
        int e = errno;
        ::close(in[0]);
        ::close(in[1]);
        return fail_code(e, what + ": pipe");
    }
    SpawnSpec spec;
    spec.path = h.path;
    spec.args = h.args;
    spec.env = &h.env;
    spec.in = in[1];
    spec.out = spec.err = out[1];
    spec.cwd = cwd;
    spec.pass = pass;
    auto spawned = spawn_program(spec, what);
    ::close(in[1]);
    ::close(out[1]);
    if (!spawned) {
        ::close(in[0]);
        ::close(out[0]);
        return forward(std::move(spawned.error()));
    }
    pid_t pid = *spawned;
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    ::fcntl(in[0], F_SETFL, O_NONBLOCK);
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);
    int64_t deadline = h.timeout ? now_ms() + int64_t{*h.timeout} * 1000 : -1;
    size_t sent = 0;
    if (state.empty()) ::shutdown(in[0], SHUT_WR);
    std::string output;
    bool exited = false, timed_out = false;
    while (!exited) {
        struct pollfd p[3] = {{pidfd, POLLIN, 0}, {out[0], POLLIN, 0}, {-1, POLLOUT, 0}};
        if (sent < state.size()) p[2].fd = in[0];
        int wait_ms = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) {
                timed_out = true;
                break;
            }
            wait_ms = static_cast<int>(left);
        }
        int n = ::poll(p, 3, wait_ms);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        if (p[1].revents & (POLLIN | POLLHUP)) {
            char buf[4096];
            ssize_t r = ::read(out[0], buf, sizeof buf);
            if (r > 0) {
                output.append(buf, static_cast<size_t>(r));
                if (output.size() > kKeepOutput) output.erase(0, output.size() - kKeepOutput);
            } else if (r == 0) {
                ::close(out[0]); // EOF: the hook (and anything it forked) closed stdout
                out[0] = -1;
            }
        }
        if (p[2].revents) {
            ssize_t w = ::send(in[0], state.data() + sent, state.size() - sent, MSG_NOSIGNAL);
            if (w > 0) sent += static_cast<size_t>(w);
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                sent = state.size(); // hook closed stdin
            if (sent == state.size()) ::shutdown(in[0], SHUT_WR);
        }
        if (p[0].revents & POLLIN) exited = true;
    }
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (out[0] >= 0) { // what the hook printed just before it exited
        char buf[4096];
        ssize_t r;
        while ((r = ::read(out[0], buf, sizeof buf)) > 0)
            output.append(buf, static_cast<size_t>(r));
        ::close(out[0]);
    }
    if (pidfd >= 0) ::close(pidfd);
    ::close(in[0]);
    std::string said = last_line(output);
    if (!said.empty()) said = ": " + said;
    if (timed_out)
        return fail_code(ETIMEDOUT, what + ": killed after its timeout of " +
                                        std::to_string(*h.timeout) + " s" + said);
    if (WIFSIGNALED(status))
        return fail(what + ": killed by SIG" + ::sigabbrev_np(WTERMSIG(status)) + said);
    ran.status = WEXITSTATUS(status);
    ran.output = std::move(output);
    return {};
}

} // namespace

Status run_program(const oci::Hook &h, const std::string &what, const std::string &state,
                   const std::string &cwd) {
    ProgramRun ran;
    OCI_CHECK(run_impl(h, what, state, cwd, {}, ran));
    std::string said = last_line(ran.output);
    if (!said.empty()) said = ": " + said;
    if (ran.status != 0)
        return fail(what + ": exited with status " + std::to_string(ran.status) + said);
    log::debug(what + ": ok" + said);
    return {};
}

Result<ProgramRun> run_program_status(const oci::Hook &h, const std::string &what,
                                      const std::vector<int> &pass) {
    ProgramRun ran;
    OCI_CHECK(run_impl(h, what, "", "", pass, ran));
    return ran;
}

namespace {

std::string hook_name(const char *kind, size_t i, const oci::Hook &h) {
    return std::string("hooks.") + kind + "[" + std::to_string(i) + "] " + h.path;
}

} // namespace

Status run_hooks(const std::vector<oci::Hook> &hooks, const char *kind,
                 const std::string &state_json, const std::string &cwd) {
    for (size_t i = 0; i < hooks.size(); i++)
        OCI_CHECK(run_program(hooks[i], hook_name(kind, i, hooks[i]), state_json, cwd));
    return {};
}

void run_hooks_warning(const std::vector<oci::Hook> &hooks, const char *kind,
                       const std::string &state_json) {
    for (size_t i = 0; i < hooks.size(); i++)
        if (auto r = run_program(hooks[i], hook_name(kind, i, hooks[i]), state_json); !r)
            log::warning(r.error().text());
}

} // namespace ocirun
