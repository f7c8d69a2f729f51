#include "runtime/lifecycle/container.hpp"
#include "runtime/lifecycle/container_impl.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/lifecycle/init.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/lifecycle/tty_relay.hpp"
#include "runtime/log.hpp"
#include "runtime/network/netlink.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/caps.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/spawn.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/report.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

namespace ocirun {

namespace {

// Everything written to a non-blocking fifo until its last writer closes.
std::string read_until_eof(int fd) {
    std::string out;
    for (;;) {
        char buf[4096];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            out.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n == 0) return out;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return out;
        struct pollfd p = {fd, POLLIN, 0};
        ::poll(&p, 1, -1);
    }
}

// dev.ocirun.trace: strace (from the host) attached to the init before it is
// released, following every process. Its log is trace.log in the container's
// state directory, opened here (never a path from the bundle) and given to
// strace as its stderr, where it writes without -o: no file name, and no
// "|command" pipe, is ever passed to it. It runs in the helpers' cgroup
// under the container's, as the network helper does: what the container's
// processes make it do counts against the container's memory and tasks.
Status attach_strace(const ContainerDir &dir, const CgroupHost &host, const ContainerRecord &rec) {
    pid_t init = rec.state.pid;
    Fd log(
        ::openat(dir.fd(), kTraceLog, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!log.valid()) return fail_errno("trace: create " + dir.path() + "/" + kTraceLog);
    // Detached from `start`: it outlives it.
    SpawnSpec strace;
    strace.path = "/usr/bin/strace";
    strace.args = {"strace", "-f", "-qq", "-p", std::to_string(init)};
    strace.err = log.get();
    strace.detach = true;
    // The log is the host's (the state directory is often on a tmpfs, in
    // memory): what the container's processes make strace write is capped,
    // and strace goes on without logging past it (a loop filled 45 MB in 8 s).
    strace.max_file_size = kTraceLogMax;
    // It reads what the container's processes pass to the kernel: as
    // nobody, holding only what attaching takes.
    strace.as_nobody_with = CAP_SYS_PTRACE;
    OCI_CHECK(place_in_helper_cgroup(strace, host, rec.cgroup_dirs, "trace"));
    OCI_TRY(spawn_program(strace, "trace"));
    // Released only once strace has attached (bounded: 5 s).
    std::string status_path = "/proc/" + std::to_string(init) + "/status";
    for (int i = 0; i < 500; i++) {
        auto text = oci::read_file(status_path);
        if (!text) return forward(std::move(text.error()), "trace");
        if (std::strtol(status_field(*text, "TracerPid").c_str(), nullptr, 10) > 0) return {};
        struct timespec ts = {0, 10 * 1000000};
        ::nanosleep(&ts, nullptr);
    }
    return fail("trace: strace did not attach to the init within 5 s");
}

// A foreground run without --console-socket keeps the pty master itself
// (runtime/lifecycle/tty_relay.hpp): the init sends it over this pair. It is sent
// before the init reports ready, so after create it is there or never comes.
struct ForegroundConsole {
    int ours = -1, theirs = -1;
    ~ForegroundConsole() {
        if (ours >= 0) ::close(ours);
        if (theirs >= 0) ::close(theirs);
    }
    int master() {
        ::close(theirs);
        theirs = -1;
        ::fcntl(ours, F_SETFL, O_NONBLOCK);
        auto fd = sync::receive_fd(ours);
        return fd ? *fd : -1;
    }
};

// The recorded init's /proc/PID, while it is that process.
Result<Fd> open_init_dir(const ContainerDir &dir, const ContainerRecord &rec) {
    auto init = open_process_dir(rec.state.pid, rec.init_start_time);
    if (!init && init.error().code == ESRCH)
        return fail("container \"" + dir.id() + "\": its init is gone");
    return init;
}

// One of the init's pipes for `start` (create.cpp open_channels), opened
// anew through /proc/PID/fd/N below `init` (open_init_dir), and only when it
// is the pipe the record names: another file at that number, or none (the
// init's exec closed it), is refused.
Result<Fd> init_pipe(const ContainerDir &dir, int init, uint32_t fd, uint64_t pipe, int flags) {
    std::string name = "fd/" + std::to_string(fd);
    Fd f(::openat(init, name.c_str(), flags | O_NONBLOCK | O_CLOEXEC));
    struct stat st;
    if (f.valid() && ::fstat(f.get(), &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == pipe)
        return f;
    if (!f.valid() && errno != ENOENT) return fail_errno("start: open the init's " + name);
    return fail("container \"" + dir.id() + "\": its init no longer waits for start (its " + name +
                " is not the pipe create gave it)");
}

} // namespace

// `here`: run's, with the record straight from create under the same lock
// (an init that died since shows when the release finds no reader).
Status start_locked(ContainerDir &dir, StartHere *here) {
    ContainerRecord rec;
    CgroupHost host; // (not for run's)
    if (here) {
        rec = std::move(here->rec);
    } else {
        rec = OCI_TRY(dir.load());
        host = OCI_TRY(host_for(rec));
        oci::ContainerStatus st = live_status(dir, host, rec);
        if (st != oci::ContainerStatus::created)
            return fail("container \"" + dir.id() + "\" is " + oci::status_name(st) +
                        ", not created");
    }
    if (rec.trace) OCI_CHECK(attach_strace(dir, here ? here->host : host, rec));
    // config.json, read once, where the policy or the hooks need it.
    std::optional<oci::Spec> spec;
    SandboxPolicy policy;
    if (here && here->spec)
        spec = *here->spec;
    else if (rec.sandboxed || rec.has_hooks)
        spec = OCI_TRY(dir.load_spec());
    if (rec.sandboxed) policy = OCI_TRY(container_policy(rec, *spec));
    auto not_enforced = [&](const ReportRow &r) {
        return "sandbox policy of " + dir.id() + ": " + r.dimension + " is not enforced (" +
               r.detail + ")";
    };
    // The filesystem rules, tried from inside before the process runs: in
    // strict mode a rule the container could get round refuses the start.
    bool fs_measured = false;
    if (rec.sandboxed && !rec.fs_rules.empty()) {
        for (const auto &r : OCI_TRY(measure_fs_rules(rec, *spec, policy))) {
            if (r.state != "degraded") continue;
            if (policy.strict) return fail(not_enforced(r) + " (dev.ocirun.enforcement=strict)");
            log::error(not_enforced(r));
        }
        fs_measured = true;
    }
    // The running record is written before the init is released and put in
    // place right after, while the init execs: once it runs, nothing (not a
    // full --root) may leave it recorded as created.
    mark_running(rec);
    oci::StagedFile running =
        here && here->running ? std::move(*here->running) : OCI_TRY(dir.stage(rec));
    std::string answer;
    if (here) {
        char c = '0';
        if (::send(here->release.get(), &c, 1, MSG_NOSIGNAL) != 1) {
            if (errno == EPIPE) return fail("container \"" + dir.id() + "\": its init is gone");
            return fail_errno("start: release the init");
        }
        here->release.reset();
        fault_point("start:released");
        OCI_CHECK(running.commit()); // while the init execs
        answer = read_until_eof(here->result.get());
        here->result.reset();
    } else if (rec.release_pipe) {
        // The init's pipes, reached through /proc/PID/fd (init_pipe); the
        // answer's end is opened before the init is released, so that it
        // cannot be missed.
        if (rec.release_pipe == rec.result_pipe || rec.release_fd == rec.result_fd)
            return fail(dir.path() + "/state.json: the record names one pipe for both the "
                                     "release and the answer");
        Fd init = OCI_TRY(open_init_dir(dir, rec));
        // (After the directory is held: a PID reused since fails below.)
        OCI_CHECK(check_init_is_the_containers(host, rec));
        Fd result = OCI_TRY(init_pipe(dir, init.get(), rec.result_fd, rec.result_pipe, O_RDONLY));
        Fd release =
            OCI_TRY(init_pipe(dir, init.get(), rec.release_fd, rec.release_pipe, O_WRONLY));
        // (A pipe reopened has a writer even without a reader: an init that
        // died since the open makes the write fail with EPIPE, and SIGPIPE,
        // blocked here and taken back, must not end this command.)
        sigset_t pipe_sig, old;
        sigemptyset(&pipe_sig);
        sigaddset(&pipe_sig, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
        char c = '0';
        ssize_t n;
        while ((n = ::write(release.get(), &c, 1)) < 0 && errno == EINTR) {
        }
        int e = errno;
        if (n < 0 && e == EPIPE) {
            struct timespec now {};
            (void)::sigtimedwait(&pipe_sig, nullptr, &now);
        }
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        if (n < 0 && e == EPIPE) return fail("container \"" + dir.id() + "\": its init is gone");
        if (n != 1) return fail_code(e, "start: release the init");
        release.reset();
        fault_point("start:released");
        OCI_CHECK(running.commit()); // while the init execs
        // The init's exec closes the pipe (CLOEXEC), or it writes "ERRNO
        // TEXT" first when startContainer hooks or exec fail.
        answer = read_until_eof(result.get());
    } else {
        // A record from before the pipes: the fifos in the state directory.
        std::string fifo = dir.path() + "/" + kFifo;
        std::string start_fifo = dir.path() + "/" + kStartFifo;
        // Opened before the init is released, so that its answer cannot be
        // missed.
        // (Below the directory's fd, never through a symlink.)
        int result = ::openat(dir.fd(), kStartFifo, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (result < 0) return fail_errno("open " + start_fifo);
        int fd = ::openat(dir.fd(), kFifo, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            ::close(result);
            if (e == ENXIO) return fail("container \"" + dir.id() + "\": its init is gone");
            return fail_code(e, "open " + fifo);
        }
        char c = '0';
        ssize_t n = ::write(fd, &c, 1);
        int e = errno;
        ::close(fd);
        if (n != 1) {
            ::close(result);
            return fail_code(e, "start: write " + fifo);
        }
        ::unlink(fifo.c_str());
        fault_point("start:released");
        if (auto r = running.commit(); !r) { // while the init execs
            ::close(result);
            ::unlink(start_fifo.c_str());
            return r;
        }
        // The init closes the start fifo by exec'ing the process (CLOEXEC),
        // or writes "ERRNO TEXT" first when startContainer hooks or exec fail.
        answer = read_until_eof(result);
        ::close(result);
        ::unlink(start_fifo.c_str());
    }
    if (!answer.empty()) {
        char *end = nullptr;
        long code = std::strtol(answer.c_str(), &end, 10);
        std::string text = *end == ' ' ? end + 1 : answer;
        while (!text.empty() && text.back() == '\n')
            text.pop_back();
        return fail_code(static_cast<int>(code), text);
    }
    // A sandbox policy is measured once the process runs: what contradicts
    // it is an error in the log (and shows in `report`).
    if (rec.sandboxed) {
        if (auto rows = measure_container(dir, rec, *spec, policy, !fs_measured)) {
            for (const auto &r : *rows)
                if (r.state == "degraded") log::error(not_enforced(r));
        }
    }
    if (rec.has_hooks) {
        if (spec->hooks) {
            auto r = run_hooks(spec->hooks->poststart, "poststart",
                               hook_state(rec, oci::ContainerStatus::running));
            if (!r) {
                // runtime-spec Lifecycle step 9: stop the container.
                if (auto h = host_for(rec)) (void)signal_init(*h, rec, SIGKILL);
                return forward(std::move(r.error()));
            }
        }
    }
    return {};
}

Status start_container(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    auto r = start_locked(dir);
    if (!r) return forward(std::move(r.error()), "start");
    return {};
}

Result<int> run_container(const CreateOptions &o, bool detach, bool keep) {
    pid_t pid;
    CreateOptions opts = o;
    ForegroundConsole console;
    if (!detach && o.console_socket.empty()) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
            return fail_errno("run: socketpair");
        console.ours = sv[0];
        console.theirs = opts.console_fd = sv[1];
        opts.clear_onlcr = !::isatty(STDOUT_FILENO);
        opts.console_size = own_terminal_size();
    }
    int master = -1;
    std::optional<oci::Spec> spec; // read once, by create
    CgroupHost host;               // found once, by create
    RunInit made;                  // the init, as create recorded it
    {
        ContainerDir dir = OCI_TRY(ContainerDir::create(o.root, o.id));
        StartHere here;
        auto p = create_impl(opts, dir, &here);
        if (!p) {
            (void)dir.remove();
            return forward(std::move(p.error()), "run");
        }
        pid = *p;
        if (console.ours >= 0) master = console.master();
        if (!detach) forward_signals_to(pid);
        if (auto r = start_locked(dir, &here); !r) {
            if (master >= 0) ::close(master);
            kill_and_reap(pid);
            if (auto d = remove_container(dir, true, here.spec ? &*here.spec : nullptr, &here.host);
                !d)
                log::warning(d.error().text());
            return forward(std::move(r.error()), "run");
        }
        spec = std::move(here.spec);
        host = std::move(here.host);
        made = {pid, here.rec.init_start_time};
    }
    if (detach) return 0;
    auto code = master >= 0 ? relay_terminal(master, pid) : wait_exit_status(pid);
    forward_signals_to(0);
    if (!code) return forward(std::move(code.error()), "run");
    if (!keep) {
        // The container this run made, not one made under its ID while it
        // waited, which a forced delete would kill.
        auto r = delete_container(o.root, o.id, true, spec ? &*spec : nullptr, &host, &made);
        if (!r) log::warning(r.error().text());
    }
    return code;
}

} // namespace ocirun
