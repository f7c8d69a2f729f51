#include "runtime/process/process_setup.hpp"

#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/process/caps.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <grp.h>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ocirun {

namespace {

// The multiplexer of the devpts on /dev/pts, never what the rootfs has at
// /dev/ptmx: exec's intermediate opens it with the host's privileges before
// it is in the container's cgroup, so a device node the container made
// there (CAP_MKNOD) would be opened past the device rules (a watchdog, a
// serial line). On a devpts "ptmx" can only be its multiplexer (devpts
// takes no mknod), and RESOLVE_NO_XDEV refuses anything mounted over it.
// The kernel's /dev/ptmx needs a devpts at pts beside it anyway.
Result<int> open_pty_master() {
    int pts = ::open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pts < 0) return fail_errno("open /dev/pts");
    struct statfs fs {};
    if (::fstatfs(pts, &fs) < 0) {
        int e = errno;
        ::close(pts);
        return fail_code(e, "statfs /dev/pts");
    }
    if (fs.f_type != DEVPTS_SUPER_MAGIC) {
        ::close(pts);
        return fail_code(ENOTTY, "/dev/pts: not a devpts (a terminal needs one)");
    }
    struct open_how how {};
    how.flags = O_RDWR | O_NOCTTY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    long master = ::syscall(SYS_openat2, pts, "ptmx", &how, sizeof how);
    int e = errno;
    ::close(pts);
    if (master < 0) return fail_code(e, "open /dev/pts/ptmx");
    return static_cast<int>(master);
}

} // namespace

Result<int> open_terminal(int console_fd, const std::optional<oci::Box> &size, uint32_t uid,
                          bool clear_onlcr) {
    int master = OCI_TRY(open_pty_master());
    if (::unlockpt(master) < 0) {
        int e = errno;
        ::close(master);
        return fail_code(e, "unlockpt");
    }
    int peer = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
    if (peer < 0) {
        int e = errno;
        ::close(master);
        return fail_code(e, "open the pty peer");
    }
    if (::fchown(peer, uid, static_cast<gid_t>(-1)) < 0) {
        int e = errno;
        ::close(peer);
        ::close(master);
        return fail_code(e, "chown the pty to uid " + std::to_string(uid));
    }
    if (clear_onlcr) {
        struct termios t;
        if (::tcgetattr(peer, &t) == 0) {
            t.c_oflag &= ~static_cast<tcflag_t>(ONLCR);
            (void)::tcsetattr(peer, TCSANOW, &t);
        }
    }
    if (size) {
        struct winsize ws {};
        ws.ws_row = static_cast<unsigned short>(size->height);
        ws.ws_col = static_cast<unsigned short>(size->width);
        ::ioctl(peer, TIOCSWINSZ, &ws);
    }
    auto sent = sync::send_fd(console_fd, master);
    ::close(master);
    if (!sent) {
        ::close(peer);
        return forward(std::move(sent.error()), "--console-socket");
    }
    return peer;
}

Status attach_terminal(int console_fd, const std::optional<oci::Box> &size, uint32_t uid,
                       bool clear_onlcr) {
    int peer = OCI_TRY(open_terminal(console_fd, size, uid, clear_onlcr));
    for (int i = 0; i < 3; i++)
        if (::dup2(peer, i) < 0) return fail_errno("dup2 the pty peer");
    if (peer > 2) ::close(peer);
    if (::ioctl(0, TIOCSCTTY, 0) < 0) return fail_errno("TIOCSCTTY");
    return {};
}

Status set_dumpable(bool on) {
    if (::prctl(PR_SET_DUMPABLE, on ? 1 : 0, 0, 0, 0) < 0)
        return fail_errno(std::string("prctl PR_SET_DUMPABLE ") + (on ? "1" : "0"));
    int now = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (now < 0) return fail_errno("prctl PR_GET_DUMPABLE");
    if ((now != 0) != on)
        return fail(std::string("prctl PR_SET_DUMPABLE ") + (on ? "1" : "0") +
                    ": the process is still " + (now ? "dumpable" : "not dumpable"));
    return {};
}

Status set_death_signal(int sig) {
    if (::prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) < 0)
        return fail_errno("prctl PR_SET_PDEATHSIG " + std::to_string(sig));
    return {};
}

void set_home(oci::Process &p, int root_fd) {
    for (const auto &e : p.env)
        if (e.starts_with("HOME=") && e.size() > 5) return;
    std::string home = "/";
    // name:password:uid:gid:gecos:home:shell
    // Whatever the rootfs made of it: a FIFO does not block (O_NONBLOCK), a
    // device that never ends stops at 1 MiB; through `root_fd`, its symlinks
    // and ".." stay below that root.
    Result<std::string> text = fail("no /etc/passwd");
    if (root_fd < 0) {
        text = oci::read_file("/etc/passwd", O_NONBLOCK, 1 << 20);
    } else {
        // Opened only once it is known to be a regular file: from outside,
        // the runtime opens no device node the rootfs put there.
        struct open_how how {};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
        long path = ::syscall(SYS_openat2, root_fd, "etc/passwd", &how, sizeof how);
        struct stat st;
        if (path >= 0 && ::fstat(static_cast<int>(path), &st) == 0 && S_ISREG(st.st_mode)) {
            char self[40];
            std::snprintf(self, sizeof self, "/proc/self/fd/%ld", path);
            text = oci::read_file(self, O_NOCTTY, 1 << 20);
        }
        if (path >= 0) ::close(static_cast<int>(path));
    }
    if (text) {
        const std::string uid = std::to_string(p.user.uid);
        for_each_line(*text, [&](std::string_view line) {
            std::vector<std::string> f = split(line, ':');
            if (home == "/" && f.size() >= 7 && f[2] == uid && !f[5].empty()) home = f[5];
        });
    }
    std::erase_if(p.env, [](const std::string &e) { return e.starts_with("HOME="); });
    p.env.push_back("HOME=" + home);
}

namespace {

// "Every CPU": the mask (as oci::bit_mask makes one) of each CPU number the
// spec allows, set word by word. The kernel keeps of a mask only the CPUs
// this machine can have, so the count of those is not needed (sysconf reads
// it from /sys, which in the init is the container's own and is looked up
// under a lock other creates take for their network devices).
std::vector<unsigned long> every_cpu_mask() {
    constexpr unsigned kBits = sizeof(unsigned long) * 8;
    static_assert(oci::kMaxCpus % kBits == 0);
    return std::vector<unsigned long>(oci::kMaxCpus / kBits, ~0ul);
}

} // namespace

Status set_cpu_affinity(pid_t pid, const std::vector<unsigned> &cpus, const std::string &what) {
    std::vector<unsigned long> mask = cpus.empty() ? every_cpu_mask() : oci::bit_mask(cpus);
    if (::sched_setaffinity(pid, mask.size() * sizeof mask[0],
                            reinterpret_cast<cpu_set_t *>(mask.data())) < 0)
        return fail_errno(what + ": sched_setaffinity");
    return {};
}

Status reset_cpu_affinity() {
    return set_cpu_affinity(0, {}, "CPU affinity (every CPU)");
}

namespace {

// What apply_final_cpu_affinity sets: nothing, every CPU (empty), or a list.
Result<std::optional<std::vector<unsigned>>> final_cpus(const oci::Process &p) {
    std::vector<unsigned> every;
    if (!p.exec_cpu_affinity) return every;
    const oci::CpuAffinity &a = *p.exec_cpu_affinity;
    // Only `initial`: the kernel keeps it within the cgroup's cpuset, and the
    // runtime SHOULD NOT change it (runtime-spec 1.2.1).
    if (a.final.empty())
        return a.initial.empty() ? std::optional(every) : std::optional<std::vector<unsigned>>();
    auto cpus = oci::parse_cpu_list(a.final);
    if (!cpus) return fail("process.execCPUAffinity.final: " + cpus.error().msg);
    return std::optional(std::move(*cpus));
}

} // namespace

Status apply_final_cpu_affinity(const oci::Process &p) {
    auto cpus = OCI_TRY(final_cpus(p));
    if (!cpus) return {};
    if (cpus->empty()) return reset_cpu_affinity();
    return set_cpu_affinity(0, *cpus,
                            "process.execCPUAffinity.final \"" + p.exec_cpu_affinity->final + "\"");
}

Result<std::optional<std::vector<unsigned long>>> final_cpu_mask(const oci::Process &p) {
    auto cpus = OCI_TRY(final_cpus(p));
    if (!cpus) return std::optional<std::vector<unsigned long>>();
    return std::optional(cpus->empty() ? every_cpu_mask() : oci::bit_mask(*cpus));
}

Result<std::optional<std::vector<unsigned>>> initial_cpus(const oci::Process &p) {
    if (!p.exec_cpu_affinity || p.exec_cpu_affinity->initial.empty())
        return std::optional<std::vector<unsigned>>();
    auto cpus = oci::parse_cpu_list(p.exec_cpu_affinity->initial);
    if (!cpus) return fail("process.execCPUAffinity.initial: " + cpus.error().msg);
    return std::optional(std::move(*cpus));
}

Result<MemoryPolicyPlan> memory_policy_plan(const std::optional<oci::MemoryPolicy> &m) {
    MemoryPolicyPlan plan;
    if (!m) return plan;
    static const std::pair<const char *, int> kModes[] = {
        {"MPOL_DEFAULT", 0},
        {"MPOL_PREFERRED", 1},
        {"MPOL_BIND", 2},
        {"MPOL_INTERLEAVE", 3},
        {"MPOL_LOCAL", 4},
        {"MPOL_PREFERRED_MANY", 5},
        {"MPOL_WEIGHTED_INTERLEAVE", 6},
    };
    static const std::pair<const char *, int> kFlags[] = {
        {"MPOL_F_NUMA_BALANCING", 1 << 13},
        {"MPOL_F_RELATIVE_NODES", 1 << 14},
        {"MPOL_F_STATIC_NODES", 1 << 15},
    };
    int mode = -1;
    for (const auto &[n, v] : kModes)
        if (m->mode == n) mode = v;
    if (mode < 0) return fail("linux.memoryPolicy.mode: " + m->mode + " is not supported");
    for (const auto &f : m->flags)
        for (const auto &[n, v] : kFlags)
            if (f == n) mode |= v;
    auto nodes = oci::parse_cpu_list(m->nodes);
    if (!nodes) return fail("linux.memoryPolicy.nodes: " + nodes.error().msg);
    plan.mask = oci::bit_mask(*nodes);
    plan.mode = mode;
    plan.policy = &*m;
    return plan;
}

Status apply_memory_policy(const MemoryPolicyPlan &plan) {
    if (!plan.policy) return {};
    // The kernel reads maxnode - 1 bits.
    constexpr unsigned kBits = sizeof(unsigned long) * 8;
    unsigned long maxnode = plan.mask.empty() ? 0 : plan.mask.size() * kBits + 1;
    if (::syscall(SYS_set_mempolicy, plan.mode, plan.mask.empty() ? nullptr : plan.mask.data(),
                  maxnode) < 0)
        return fail_errno("linux.memoryPolicy: set_mempolicy " + plan.policy->mode +
                          (plan.policy->nodes.empty() ? "" : " nodes " + plan.policy->nodes));
    return {};
}

Status set_memory_policy(const std::optional<oci::MemoryPolicy> &m) {
    return apply_memory_policy(OCI_TRY(memory_policy_plan(m)));
}

unsigned long persona_of(const oci::Personality &p) {
    return p.domain == "LINUX32" ? PER_LINUX32 : PER_LINUX;
}

Status set_personality(const std::optional<oci::Personality> &p) {
    if (!p) return {};
    if (::personality(persona_of(*p)) < 0) return fail_errno("linux.personality " + p->domain);
    return {};
}

namespace {

int scheduler_policy(const std::string &name) {
    static const std::pair<const char *, int> kPolicies[] = {
        {"SCHED_OTHER", SCHED_OTHER}, {"SCHED_FIFO", SCHED_FIFO}, {"SCHED_RR", SCHED_RR},
        {"SCHED_BATCH", SCHED_BATCH}, {"SCHED_IDLE", SCHED_IDLE}, {"SCHED_DEADLINE", 6},
    };
    for (const auto &[n, v] : kPolicies)
        if (name == n) return v;
    return -1;
}

uint64_t scheduler_flags(const std::vector<std::string> &names) {
    static const std::pair<const char *, uint64_t> kFlags[] = {
        {"SCHED_FLAG_RESET_ON_FORK", 0x01},  {"SCHED_FLAG_RECLAIM", 0x02},
        {"SCHED_FLAG_DL_OVERRUN", 0x04},     {"SCHED_FLAG_KEEP_POLICY", 0x08},
        {"SCHED_FLAG_KEEP_PARAMS", 0x10},    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
        {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
    };
    uint64_t flags = 0;
    for (const auto &name : names)
        for (const auto &[n, v] : kFlags)
            if (name == n) flags |= v;
    return flags;
}

// struct sched_attr of sched_setattr(2), its first version (the C library
// has no wrapper).
struct SchedAttr {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};

} // namespace

Status apply_scheduling(const oci::Process &p) {
    if (const auto &s = p.scheduler) {
        int policy = scheduler_policy(s->policy);
        if (policy < 0) return fail("process.scheduler.policy: " + s->policy + " is not supported");
        SchedAttr a{};
        a.size = sizeof a;
        a.policy = static_cast<uint32_t>(policy);
        a.flags = scheduler_flags(s->flags);
        a.nice = s->nice;
        a.priority = static_cast<uint32_t>(s->priority);
        a.runtime = s->runtime;
        a.deadline = s->deadline;
        a.period = s->period;
        if (::syscall(SYS_sched_setattr, 0, &a, 0) < 0)
            return fail_errno("process.scheduler: sched_setattr " + s->policy);
    }
    if (const auto &io = p.io_priority) {
        // ioprio_set(2): IOPRIO_WHO_PROCESS, this process (its children
        // inherit it); the class in the top bits above 13 bits of level.
        int klass = io->klass == "IOPRIO_CLASS_RT" ? 1 : io->klass == "IOPRIO_CLASS_BE" ? 2 : 3;
        long value = long(klass) << 13 | io->priority;
        if (::syscall(SYS_ioprio_set, 1, 0, value) < 0)
            return fail_errno("process.ioPriority: ioprio_set " + io->klass + " " +
                              std::to_string(io->priority));
    }
    return {};
}

Status reset_signals() {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        if (::sigaction(sig, &dfl, nullptr) == 0) continue;
        // EINVAL: a signal the C library keeps for itself (32, 33), which the
        // caller may ignore all the same; the kernel's call takes it (all
        // zero: SIG_DFL, no flags, an empty mask, in every layout).
        uint64_t zero[8] = {};
        if (errno != EINVAL ||
            ::syscall(SYS_rt_sigaction, sig, zero, nullptr, sizeof(uint64_t)) < 0)
            return fail_errno("sigaction " + std::to_string(sig) + " SIG_DFL");
    }
    sigset_t none;
    sigemptyset(&none);
    if (::sigprocmask(SIG_SETMASK, &none, nullptr) < 0) return fail_errno("sigprocmask");
    return {};
}

Status apply_rlimits(const oci::Process &p, Rlimits which) {
    for (const auto &r : p.rlimits) {
        bool nproc = r.resource == RLIMIT_NPROC;
        if ((which == Rlimits::but_nproc && nproc) || (which == Rlimits::nproc && !nproc)) continue;
        struct rlimit rl = {r.soft, r.hard};
        if (::setrlimit(r.resource, &rl) < 0)
            return fail_errno("process.rlimits: set " + r.type + " to " + std::to_string(r.soft) +
                              "/" + std::to_string(r.hard));
    }
    return {};
}

bool setgroups_denied(pid_t pid) {
    char path[48];
    std::snprintf(path, sizeof path, "/proc/%d/setgroups", pid > 0 ? pid : ::getpid());
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[8] = {};
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    return n >= 4 && std::strncmp(buf, "deny", 4) == 0;
}

Status apply_identity(const oci::Process &p) {
    oci::Capabilities none;
    const oci::Capabilities &caps = p.capabilities ? *p.capabilities : none;
    OCI_CHECK(drop_bounding(caps));
    if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) return fail_errno("prctl PR_SET_KEEPCAPS");
    std::vector<gid_t> groups(p.user.additional_gids.begin(), p.user.additional_gids.end());
    if (::setgroups(groups.size(), groups.data()) < 0) {
        // Rootless with a self-mapping: setgroups is denied in the namespace;
        // with no additionalGids asked for there is nothing to apply.
        if (errno != EPERM || !groups.empty() || !setgroups_denied())
            return fail_errno("process.user.additionalGids: setgroups");
    }
    if (::setresgid(p.user.gid, p.user.gid, p.user.gid) < 0)
        return fail_errno("process.user.gid: setresgid " + std::to_string(p.user.gid));
    if (::setresuid(p.user.uid, p.user.uid, p.user.uid) < 0)
        return fail_errno("process.user.uid: setresuid " + std::to_string(p.user.uid));
    // The change of credentials set dumpable from fs.suid_dumpable, which
    // may be 1: not dumpable again until the exec.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return fail_errno("prctl PR_SET_DUMPABLE 0");
    if (::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) return fail_errno("prctl PR_SET_KEEPCAPS");
    OCI_CHECK_CTX(apply_capabilities(caps), "process.capabilities");
    if (p.no_new_privileges && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return fail_errno("process.noNewPrivileges");
    return {};
}

Result<bool> apply_cwd_umask(const oci::Process &p, bool may_retry) {
    ::umask(p.user.umask.value_or(022));
    if (::chdir(p.cwd.c_str()) < 0) {
        if (may_retry && (errno == EACCES || errno == EPERM)) return false;
        return fail_errno("process.cwd: chdir " + p.cwd);
    }
    // A cwd inherited from outside the root shows as "(unreachable)..." (CVE-2024-21626).
    char buf[4096];
    if (!::getcwd(buf, sizeof buf)) return fail_errno("process.cwd: getcwd in " + p.cwd);
    if (buf[0] != '/') return fail("process.cwd: " + p.cwd + " is outside the container");
    return true;
}

Status mark_fds_cloexec(int preserve_fds) {
    unsigned first = 3u + static_cast<unsigned>(preserve_fds);
    if (::syscall(SYS_close_range, first, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
        return fail_errno("close_range");
    return {};
}

static const char *env_path(const std::vector<std::string> &env) {
    for (const auto &e : env)
        if (e.rfind("PATH=", 0) == 0) return e.c_str() + 5;
    return nullptr;
}

std::vector<char *> exec_strings(const std::vector<std::string> &strings) {
    std::vector<char *> v;
    v.reserve(strings.size() + 1);
    for (const auto &x : strings)
        v.push_back(const_cast<char *>(x.c_str()));
    v.push_back(nullptr);
    return v;
}

ExecCandidates exec_candidates(const oci::Process &p) {
    const std::string &prog = p.args[0];
    if (prog.find('/') != std::string::npos) return {"", {prog}};
    const char *path = env_path(p.env);
    ExecCandidates c{path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     {}};
    for (const std::string &dir : split(c.dirs, ':'))
        c.files.push_back((dir.empty() ? "." : dir) + "/" + prog);
    return c;
}

Status find_executable(const oci::Process &p) {
    const std::string &prog = p.args[0];
    auto usable = [](const std::string &file) -> int {
        struct stat st {};
        if (::stat(file.c_str(), &st) < 0) return errno;
        if (!S_ISREG(st.st_mode)) return EACCES;
        return ::access(file.c_str(), X_OK) < 0 ? errno : 0;
    };
    ExecCandidates c = exec_candidates(p);
    if (c.dirs.empty()) {
        int e = usable(prog);
        return e == 0 ? Status{} : fail_code(e, "exec " + prog);
    }
    int denied = 0;
    for (const std::string &file : c.files) {
        int e = usable(file);
        if (e == 0) return {};
        if (e == EACCES) denied = e;
    }
    if (denied) return fail_code(denied, "exec " + prog + ": found in $PATH but not executable");
    return fail_code(ENOENT,
                     "exec " + prog + ": executable file not found in $PATH (" + c.dirs + ")");
}

Error exec_process(const oci::Process &p) {
    std::vector<char *> argv = exec_strings(p.args), envp = exec_strings(p.env);
    const std::string &prog = p.args[0];
    ExecCandidates c = exec_candidates(p);
    int last = ENOENT;
    for (const std::string &file : c.files) {
        ::execve(file.c_str(), argv.data(), envp.data());
        if (c.dirs.empty()) return Error{errno, "exec " + prog};
        if (errno != ENOENT && errno != ENOTDIR) last = errno;
    }
    return Error{last, "exec " + prog + ": executable file not found in $PATH (" + c.dirs + ")"};
}

} // namespace ocirun
