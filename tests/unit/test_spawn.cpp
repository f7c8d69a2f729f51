// The one way the runtime starts programs (runtime/process/spawn.hpp), without
// root: the fds the program gets, its signals, and each failure reported
// with its errno.
#include "runtime/process/spawn.hpp"
#include "unit_support.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

using namespace ocirun;

namespace {

// What the program wrote to its stdout, read to EOF; its exit status.
struct Ran {
    std::string out;
    int status = -1;
};

Ran run(SpawnSpec s, bool reap = true) {
    int p[2];
    cr_assert(::pipe2(p, O_CLOEXEC) == 0);
    s.out = p[1];
    auto pid = spawn_program(s, "test");
    ::close(p[1]);
    cr_assert(pid.has_value(), "%s", pid ? "" : pid.error().text().c_str());
    Ran r;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0)
        r.out.append(buf, static_cast<size_t>(n));
    ::close(p[0]);
    if (reap) {
        int st = 0;
        cr_assert_eq(::waitpid(*pid, &st, 0), *pid);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    return r;
}

} // namespace

// Stdio and the passed fds at 3, 4 in order, nothing else (a stray
// close-on-exec-less fd of ours included); the mask and ignored signals
// reset; the environment and directory given.
Test(spawn, fds_signals_environment_and_directory) {
    int stray = ::open("/dev/null", O_RDONLY); // not close-on-exec
    int a = ::open("/dev/zero", O_RDONLY | O_CLOEXEC),
        b = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct sigaction ign {
    }, old{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    ::sigprocmask(SIG_BLOCK, &block, &old_mask);
    SpawnSpec s;
    s.path = "/bin/sh";
    std::vector<std::string> env = {"ONLY=this"};
    s.env = &env;
    s.cwd = "/tmp";
    s.pass = {b, a};
    s.args = {"sh", "-c",
              "ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; readlink /proc/self/fd/3 "
              "/proc/self/fd/4; grep -E '^Sig(Blk|Ign)' /proc/self/status; env; pwd"};
    Ran r = run(s);
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGPIPE, &old, nullptr);
    ::close(stray);
    ::close(a);
    ::close(b);
    cr_assert_eq(r.status, 0);
    // 0-2, 3 and 4, and the one ls opens to read the directory.
    cr_assert(r.out.starts_with("0 1 2 3 4 5 \n"), "%s", r.out.c_str());
    cr_assert(r.out.find("/dev/null\n/dev/zero\n") != std::string::npos, "%s", r.out.c_str());
    cr_assert(r.out.find("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n") !=
                  std::string::npos,
              "%s", r.out.c_str());
    cr_assert(r.out.find("ONLY=this\n") != std::string::npos, "%s", r.out.c_str());
    cr_assert(r.out.find("PATH=") == std::string::npos, "%s", r.out.c_str());
    cr_assert(r.out.ends_with("/tmp\n"), "%s", r.out.c_str());
}

// Each step that fails in the child comes back with its errno, and leaves
// no child behind.
Test(spawn, failures_come_back_with_errno) {
    SpawnSpec missing;
    missing.path = "/nonexistent/program";
    auto m = spawn_program(missing, "x");
    cr_assert(!m.has_value());
    cr_assert_eq(m.error().code, ENOENT);
    cr_assert(m.error().text().starts_with("x: exec /nonexistent/program"), "%s",
              m.error().text().c_str());
    SpawnSpec dir;
    dir.path = "/bin/true";
    dir.cwd = "/nonexistent";
    auto d = spawn_program(dir, "y");
    cr_assert(!d.has_value());
    cr_assert(d.error().text().starts_with("y: chdir /nonexistent"), "%s",
              d.error().text().c_str());
    SpawnSpec cg;
    cg.path = "/bin/true";
    cg.cgroups = {"/nonexistent-cgroup"};
    cg.detach = true;
    auto c = spawn_program(cg, "z");
    cr_assert(!c.has_value());
    cr_assert(c.error().text().starts_with("z: enter the cgroup /nonexistent-cgroup/cgroup.procs"),
              "%s", c.error().text().c_str());
    // Nothing left to reap: each failed child was waited for.
    cr_assert_eq(::waitpid(-1, nullptr, WNOHANG), -1);
    cr_assert_eq(errno, ECHILD);
}

// Detached: a session of its own (not its leader: it can never take a
// controlling terminal), and not our child; PATH searched.
Test(spawn, detached_in_its_own_session) {
    SpawnSpec s;
    s.path = "sh";
    s.search = true;
    s.detach = true;
    s.args = {"sh", "-c", "echo $$ $(cut -d' ' -f6 /proc/$$/stat)"};
    Ran r = run(s, false);
    long pid = 0, sid = 0;
    cr_assert_eq(std::sscanf(r.out.c_str(), "%ld %ld", &pid, &sid), 2, "%s", r.out.c_str());
    cr_assert_neq(sid, static_cast<long>(::getsid(0)), "our session: %s", r.out.c_str());
    cr_assert_neq(pid, sid, "a session leader: %s", r.out.c_str());
    cr_assert_eq(::waitpid(static_cast<pid_t>(pid), nullptr, WNOHANG), -1);
    cr_assert_eq(errno, ECHILD);
}
