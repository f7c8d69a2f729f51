// oci-run-exec-stage: the last step before a container's process runs, from
// a sealed view (runtime/lifecycle/exec_stage.hpp), so that no process the
// container can see runs the runtime's own binary. Two uses (arguments:
// runtime/lifecycle/exec_stage_protocol.hpp):
//  - the container's init execs it once it has set everything up and
//    reported ready: it waits for `start`, loads the seccomp filters that go
//    in last, and execs the container's process;
//  - `exec`'s intermediate execs it once it is in the container's
//    namespaces (and still out of sight in the host's PID namespace): it
//    forks the process into the container's PID namespace as the runtime's
//    child, which takes its session, terminal, filters and identity and
//    execs (join_main).
//
// No C library: it is built static and freestanding, so that exec'ing it
// costs a handful of pages, not a dynamic loader's (measured: ~0.2 ms
// against ~1.2 ms for a static glibc program on the benchmark machine).
// Messages mirror runtime/process/process_setup.cpp and
// runtime/lifecycle/exec.cpp, which do the same where the stage is not used.
#include "runtime/lifecycle/exec_stage_protocol.hpp"

#include <asm/fcntl.h>
#include <asm/unistd.h>
#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

// Defined at the end: what the compiler may call for copies and clears.
extern "C" void *memset(void *d, int v, unsigned long n);
extern "C" void *memcpy(void *d, const void *s, unsigned long n);

namespace {

using namespace ocirun::exec_stage;

// Unused arguments are passed as 0: some calls check them (prctl's
// PR_CAP_AMBIENT and PR_SET_NO_NEW_PRIVS refuse anything else).
#if defined(__x86_64__)
long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
    long r;
    register long r10 asm("r10") = d;
    register long r8 asm("r8") = e;
    register long r9 asm("r9") = f;
    asm volatile("syscall"
                 : "=a"(r)
                 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                 : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
    register long x8 asm("x8") = n;
    register long x0 asm("x0") = a;
    register long x1 asm("x1") = b;
    register long x2 asm("x2") = c;
    register long x3 asm("x3") = d;
    register long x4 asm("x4") = e;
    register long x5 asm("x5") = f;
    asm volatile("svc #0"
                 : "+r"(x0)
                 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                 : "memory");
    return x0;
}
#else
#error "oci-run-exec-stage: no system call stub for this architecture"
#endif

long sys_read(int fd, void *buf, unsigned long n) {
    return sys(__NR_read, fd, reinterpret_cast<long>(buf), static_cast<long>(n));
}
long sys_write(int fd, const void *buf, unsigned long n) {
    return sys(__NR_write, fd, reinterpret_cast<long>(buf), static_cast<long>(n));
}
[[noreturn]] void sys_exit(int code) {
    for (;;)
        sys(__NR_exit_group, code);
}

bool same(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

// A decimal int, -1 included; false for anything else.
bool parse_int(const char *s, int &out) {
    bool neg = *s == '-';
    if (neg) s++;
    if (!*s) return false;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000) return false;
        v = v * 10 + (*s - '0');
    }
    out = static_cast<int>(neg ? -v : v);
    return true;
}

// The failure line `start` reads: "ERRNO TEXT\n", at most 2048 bytes of
// text, newlines turned into spaces (runtime/lifecycle/init.cpp run_init's format).
struct Line {
    char buf[2200];
    unsigned long n = 0;
    Line &add(const char *s) {
        for (; *s && n < 2060; s++)
            buf[n++] = *s == '\n' ? ' ' : *s;
        return *this;
    }
    Line &add_number(long v) {
        char digits[24];
        int k = 0;
        unsigned long u = v < 0 ? static_cast<unsigned long>(-v) : static_cast<unsigned long>(v);
        do
            digits[k++] = static_cast<char>('0' + u % 10);
        while ((u /= 10) != 0);
        if (v < 0) buf[n++] = '-';
        while (k > 0)
            buf[n++] = digits[--k];
        return *this;
    }
};

int g_result = -1; // the init's use: the start fifo
int g_sync = -1;   // exec's use: the sync socket

constexpr long kMsgNoSignal = 0x4000; // MSG_NOSIGNAL

Packet g_packet;

long send_packet(unsigned type, int value) {
    g_packet.type = type;
    g_packet.value = value;
    return sys(__NR_sendto, g_sync, reinterpret_cast<long>(&g_packet), sizeof g_packet,
               kMsgNoSignal, 0, 0);
}

[[noreturn]] void fail(long err, const char *a, const char *b = "", const char *c = "",
                       const char *d = "", const char *e = "") {
    Line l;
    if (g_sync >= 0) {
        // An error packet: errno, and the text (runtime/lifecycle/sync.cpp send_error).
        l.add(a).add(b).add(c).add(d).add(e);
        if (l.n > kPacketText - 1) l.n = kPacketText - 1;
        memset(g_packet.text, 0, sizeof g_packet.text);
        memcpy(g_packet.text, l.buf, l.n);
        (void)send_packet(kError, static_cast<int>(err));
        sys_exit(127);
    }
    l.add_number(err).add(" ").add(a).add(b).add(c).add(d).add(e);
    if (l.n > 2048 + 12) l.n = 2048 + 12;
    l.buf[l.n++] = '\n';
    (void)sys_write(g_result >= 0 ? g_result : 2, l.buf, l.n);
    sys_exit(127);
}

bool read_full(int fd, void *buf, unsigned long n, bool &eof) {
    auto *p = static_cast<char *>(buf);
    unsigned long got = 0;
    while (got < n) {
        long r = sys_read(fd, p + got, n - got);
        if (r == -EINTR) continue;
        if (r < 0) fail(-r, "exec stage: read the seccomp filters");
        if (r == 0) break;
        got += static_cast<unsigned long>(r);
    }
    eof = got == 0;
    return got == n;
}

struct sock_filter g_program[BPF_MAXINSNS];

// struct msghdr and cmsghdr of the LP64 ABIs this stage is built for.
struct IoVec {
    void *base;
    unsigned long len;
};
struct MsgHdr {
    void *name;
    int namelen;
    IoVec *iov;
    unsigned long iovlen;
    void *control;
    unsigned long controllen;
    int flags;
};
struct Rights {
    unsigned long len;
    int level, type;
    int fd, pad;
};

// A seccomp listener to the runtime (a seccomp_notify packet, SCM_RIGHTS),
// which hands it on to linux.seccomp.listenerPath.
void pass_listener(int fd) {
    memset(&g_packet, 0, sizeof g_packet);
    g_packet.type = kSeccompNotify;
    IoVec iov = {&g_packet, sizeof g_packet};
    Rights r = {sizeof(unsigned long) + 2 * sizeof(int) + sizeof(int), 1 /* SOL_SOCKET */,
                1 /* SCM_RIGHTS */, fd, 0};
    MsgHdr m = {nullptr, 0, &iov, 1, &r, sizeof r, 0};
    long n = sys(__NR_sendmsg, g_sync, reinterpret_cast<long>(&m), kMsgNoSignal);
    if (n != static_cast<long>(sizeof g_packet)) fail(n < 0 ? -n : EIO, "sync socket: send an fd");
    sys(__NR_close, fd);
}

// Listeners of filters exec's stage loaded, for its process to pass on
// after the hello (join_main).
int g_listeners[16];
int g_nlisteners = 0;

// Each filter in turn, as the init would have loaded it; exec's process
// passes each listener on, now or (`keep`: loaded before the hello) kept
// in g_listeners for later.
void load_filters(int fd, bool keep = false) {
    for (;;) {
        unsigned int head[2];
        bool eof = false;
        if (!read_full(fd, head, sizeof head, eof)) {
            if (eof) break;
            fail(EIO, "exec stage: a truncated seccomp filter");
        }
        if (head[1] == 0 || head[1] > BPF_MAXINSNS)
            fail(EINVAL, "exec stage: a seccomp filter of a bad length");
        if (!read_full(fd, g_program, head[1] * sizeof g_program[0], eof))
            fail(EIO, "exec stage: a truncated seccomp filter");
        struct sock_fprog prog;
        prog.len = static_cast<unsigned short>(head[1]);
        prog.filter = g_program;
        long r = sys(__NR_seccomp, SECCOMP_SET_MODE_FILTER, head[0], reinterpret_cast<long>(&prog));
        if (r < 0) fail(-r, "linux.seccomp: load the filter");
        if (head[0] & SECCOMP_FILTER_FLAG_NEW_LISTENER) {
            if (g_sync < 0) fail(EINVAL, "exec stage: a seccomp listener with no one to take it");
            if (!keep) {
                pass_listener(static_cast<int>(r));
            } else {
                if (g_nlisteners == sizeof g_listeners / sizeof g_listeners[0])
                    fail(EINVAL, "exec stage: too many seccomp listeners");
                g_listeners[g_nlisteners++] = static_cast<int>(r);
            }
        }
    }
    sys(__NR_close, fd);
}

// An unsigned number, decimal or (hex) hexadecimal, the whole string.
bool parse_u64(const char *s, unsigned long &out, bool hex = false) {
    if (!*s) return false;
    unsigned long v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = static_cast<unsigned>(*s - '0');
        else if (hex && *s >= 'a' && *s <= 'f')
            d = static_cast<unsigned>(*s - 'a' + 10);
        else
            return false;
        if (v > (~0ul - d) / (hex ? 16 : 10)) return false;
        v = v * (hex ? 16 : 10) + d;
    }
    out = v;
    return true;
}

void prctl_or_fail(long option, long arg, const char *what) {
    long r = sys(__NR_prctl, option, arg);
    if (r < 0) fail(-r, what);
}

void set_dumpable_off() {
    prctl_or_fail(PR_SET_DUMPABLE, 0, "prctl PR_SET_DUMPABLE 0");
    if (sys(__NR_prctl, PR_GET_DUMPABLE) != 0)
        fail(EPERM, "prctl PR_SET_DUMPABLE 0: still dumpable");
}

void capset(unsigned long eff, unsigned long perm, unsigned long inh, const char *what) {
    __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {
        {static_cast<unsigned>(eff), static_cast<unsigned>(perm), static_cast<unsigned>(inh)},
        {static_cast<unsigned>(eff >> 32), static_cast<unsigned>(perm >> 32),
         static_cast<unsigned>(inh >> 32)}};
    long r = sys(__NR_capset, reinterpret_cast<long>(&hdr), reinterpret_cast<long>(data));
    if (r < 0) fail(-r, what);
}

// Execs the first of argv's files that can be, as the init's use does.
[[noreturn]] void exec_files(char **files, int count, char **args, char **envp, const char *prog,
                             const char *dirs) {
    long last = ENOENT;
    for (int i = 0; i < count; i++) {
        long r = sys(__NR_execve, reinterpret_cast<long>(files[i]), reinterpret_cast<long>(args),
                     reinterpret_cast<long>(envp));
        if (!*dirs) fail(-r, "exec ", prog);
        if (r != -ENOENT && r != -ENOTDIR) last = -r;
    }
    fail(last, "exec ", prog, ": executable file not found in $PATH (", dirs, ")");
}

unsigned g_groups[65536];
unsigned long g_cpus[8192 / 64];

// process.execCPUAffinity's final set (or every CPU), once in the cgroup:
// "-", or hexadecimal 64-bit words, comma-separated, CPU 0 first.
void set_affinity(const char *arg) {
    if (same(arg, "-")) return;
    unsigned long words = 0;
    for (const char *p = arg; *p;) {
        char word[17];
        unsigned k = 0;
        while (*p && *p != ',' && k < 16)
            word[k++] = *p++;
        word[k] = 0;
        if ((*p && *p != ',') || words == sizeof g_cpus / sizeof g_cpus[0] ||
            !parse_u64(word, g_cpus[words], true))
            fail(EINVAL, "exec stage: bad CPU affinity");
        words++;
        if (*p) p++;
    }
    long r = sys(__NR_sched_setaffinity, 0, static_cast<long>(words * sizeof g_cpus[0]),
                 reinterpret_cast<long>(g_cpus));
    if (r < 0) fail(-r, "process.execCPUAffinity: sched_setaffinity");
}

// The process's identity (runtime/process/process_setup.cpp apply_identity),
// read from argv once, by join_main before its fork; the groups go to
// g_groups.
struct Identity {
    unsigned long uid, gid, eff, perm, inh, amb, ngroups;
};
Identity parse_identity(char **argv) {
    Identity id{};
    if (!parse_u64(argv[kJUid], id.uid) || !parse_u64(argv[kJGid], id.gid) ||
        !parse_u64(argv[kJEffective], id.eff, true) ||
        !parse_u64(argv[kJPermitted], id.perm, true) ||
        !parse_u64(argv[kJInheritable], id.inh, true) || !parse_u64(argv[kJAmbient], id.amb, true))
        fail(EINVAL, "exec stage: bad identity");
    for (const char *g = argv[kJGroups]; *g;) {
        unsigned long v = 0;
        for (; *g >= '0' && *g <= '9'; g++)
            v = v * 10 + static_cast<unsigned long>(*g - '0');
        if ((*g && *g != ',') || v > 0xffffffffUL || id.ngroups == 65536)
            fail(EINVAL, "exec stage: bad additionalGids");
        g_groups[id.ngroups++] = static_cast<unsigned>(v);
        if (*g) g++;
    }
    return id;
}

// The process, forked by join_main into the container's PID namespace: the
// rest of runtime/lifecycle/exec.cpp exec_child, in its order.
[[noreturn]] void join_child(char **argv, char **envp, int filters, int count, const Identity &id) {
    // Inherited from the stage; a process the container can see must not be
    // dumpable (CVE-2016-9962).
    if (sys(__NR_prctl, PR_GET_DUMPABLE) != 0)
        fail(EPERM, "exec: the process would be dumpable while the container can see it");
    // Dies with the runtime until its exec (unless detached); the runtime
    // may be gone already, which its end of the sync socket tells.
    prctl_or_fail(PR_SET_PDEATHSIG, 9 /* SIGKILL */, "prctl PR_SET_PDEATHSIG 9");
    struct {
        int fd;
        short events, revents;
    } hup = {g_sync, 0x2000 /* POLLRDHUP */, 0};
    long ts[2] = {0, 0};
    long r = sys(__NR_ppoll, reinterpret_cast<long>(&hup), 1, reinterpret_cast<long>(ts), 0, 8);
    if (r < 0) fail(-r, "exec: poll the sync socket");
    if (hup.revents & (0x2000 | 0x10 | 0x8)) fail(0, "exec: the runtime is gone");
    // The crash tests' fault point (runtime/fault.hpp): here the process is
    // first in the container's sight.
    if (same(argv[kJFault], "kill")) {
        sys(__NR_kill, sys(__NR_getpid), 9);
        sys_exit(137);
    }
    if (same(argv[kJFault], "delay")) {
        long t[2] = {0, 300 * 1000 * 1000};
        sys(__NR_nanosleep, reinterpret_cast<long>(t), 0);
    }
    if (!same(argv[kJNproc], "-")) {
        // RLIMIT_NPROC, set here: in a user namespace a fork checks it
        // against the container's root, whatever its capabilities there.
        unsigned long lim[2];
        const char *s = argv[kJNproc];
        const char *colon = s;
        while (*colon && *colon != ':')
            colon++;
        char soft[24];
        unsigned long k = 0;
        for (; s + k < colon && k < sizeof soft - 1; k++)
            soft[k] = s[k];
        soft[k] = 0;
        if (!*colon || !parse_u64(soft, lim[0]) || !parse_u64(colon + 1, lim[1]))
            fail(EINVAL, "exec stage: bad RLIMIT_NPROC");
        r = sys(__NR_prlimit64, 0, 6 /* RLIMIT_NPROC */, reinterpret_cast<long>(lim), 0);
        if (r < 0) fail(-r, "process.rlimits: set RLIMIT_NPROC to ", soft, "/", colon + 1);
    }
    if ((r = sys(__NR_setsid)) < 0) fail(-r, "setsid");
    int tty;
    if (!parse_int(argv[kJTerminal], tty)) fail(EINVAL, "exec stage: bad terminal fd");
    if (tty >= 0) {
        for (int i = 0; i < 3; i++)
            if (tty != i && (r = sys(__NR_dup3, tty, i, 0)) < 0) fail(-r, "dup2 the pty peer");
        if (tty > 2) sys(__NR_close, tty);
        if ((r = sys(__NR_ioctl, 0, 0x540E /* TIOCSCTTY */, 0)) < 0) fail(-r, "TIOCSCTTY");
    }
    bool early = !same(argv[kJFiltersEarly], "0");
    // As in the init: the filter before the identity without no_new_privs
    // (it needs CAP_SYS_ADMIN then), else last. Where join_main loaded it
    // already ("2"), its listeners are passed now, after the hello.
    if (filters >= 0 && early) load_filters(filters);
    for (int i = 0; i < g_nlisteners; i++)
        pass_listener(g_listeners[i]);

    // The identity (the stage has dropped the bounding set).
    prctl_or_fail(PR_SET_KEEPCAPS, 1, "prctl PR_SET_KEEPCAPS");
    r = sys(__NR_setgroups, static_cast<long>(id.ngroups), reinterpret_cast<long>(g_groups));
    // Rootless with a self-mapping: setgroups is denied in the namespace;
    // with no additionalGids asked for there is nothing to apply.
    if (r < 0 && (r != -EPERM || id.ngroups != 0 || !same(argv[kJGroupsMay], "1")))
        fail(-r, "process.user.additionalGids: setgroups");
    if ((r = sys(__NR_setresgid, static_cast<long>(id.gid), static_cast<long>(id.gid),
                 static_cast<long>(id.gid))) < 0)
        fail(-r, "process.user.gid: setresgid ", argv[kJGid]);
    if ((r = sys(__NR_setresuid, static_cast<long>(id.uid), static_cast<long>(id.uid),
                 static_cast<long>(id.uid))) < 0)
        fail(-r, "process.user.uid: setresuid ", argv[kJUid]);
    // The change of credentials set dumpable from fs.suid_dumpable, which
    // may be 1: not dumpable again until the exec.
    prctl_or_fail(PR_SET_DUMPABLE, 0, "prctl PR_SET_DUMPABLE 0");
    prctl_or_fail(PR_SET_KEEPCAPS, 0, "prctl PR_SET_KEEPCAPS");
    capset(id.eff, id.perm, id.inh, "process.capabilities: capset");
    // Ambient: start empty, raise exactly what was asked (CVE-2022-29162);
    // EPERM: not allowed here (a securebit), left out as runc does.
    r = sys(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
    if (r < 0 && r != -EINVAL) fail(-r, "process.capabilities: clear ambient capabilities");
    for (long c = 0; c < 64; c++)
        if ((id.amb >> c) & 1) {
            r = sys(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c);
            if (r < 0 && r != -EPERM) fail(-r, "process.capabilities: raise an ambient capability");
        }
    if (same(argv[kJNoNewPrivs], "1"))
        prctl_or_fail(PR_SET_NO_NEW_PRIVS, 1, "process.noNewPrivileges");
    // The identity change cleared it.
    prctl_or_fail(PR_SET_PDEATHSIG, 9, "prctl PR_SET_PDEATHSIG 9");
    if (*argv[kJCwd]) {
        // Where root could not enter (runtime/process/process_setup.cpp
        // apply_cwd_umask), and still inside the container's root
        // (CVE-2024-21626).
        if ((r = sys(__NR_chdir, reinterpret_cast<long>(argv[kJCwd]))) < 0)
            fail(-r, "process.cwd: chdir ", argv[kJCwd]);
        static char cwd[4096];
        if ((r = sys(__NR_getcwd, reinterpret_cast<long>(cwd), sizeof cwd)) < 0)
            fail(-r, "process.cwd: getcwd in ", argv[kJCwd]);
        if (cwd[0] != '/') fail(0, "process.cwd: ", argv[kJCwd], " is outside the container");
    }
    if (filters >= 0 && !early) load_filters(filters);
    if (same(argv[kJDetach], "1")) prctl_or_fail(PR_SET_PDEATHSIG, 0, "prctl PR_SET_PDEATHSIG 0");
    // A good exec closes it: the runtime reads EOF.
    if (long e = sys(__NR_fcntl, g_sync, F_SETFD, FD_CLOEXEC); e < 0)
        fail(-e, "exec stage: fcntl FD_CLOEXEC");
    char **files = argv + kJFirstFile;
    exec_files(files, count, files + count, envp, argv[kJProg], argv[kJPathDirs]);
}

// exec's use: run by the intermediate (runtime/lifecycle/exec.cpp) as root,
// in every namespace of the container but out of its sight (its PID
// namespace is for its children).
[[noreturn]] void join_main(int argc, char **argv, char **envp) {
    int filters, count;
    if (argc <= kJFirstFile || !parse_int(argv[kJSync], g_sync) || g_sync < 0 ||
        !parse_int(argv[kJFilters], filters) || !parse_int(argv[kJCount], count) || count < 1 ||
        count > argc - kJFirstFile - 1) {
        g_sync = -1;
        const char msg[] = "oci-run-exec-stage: run by oci-run only\n";
        (void)sys_write(2, msg, sizeof msg - 1);
        sys_exit(127);
    }
    // The exec made this process dumpable again: not for long, and the
    // process the container sees inherits this.
    set_dumpable_off();
    static const char name[] = "oci-run-stage";
    sys(__NR_prctl, PR_SET_NAME, reinterpret_cast<long>(name));
    prctl_or_fail(PR_SET_PDEATHSIG, 9, "prctl PR_SET_PDEATHSIG 9");
    // What the process may hold: the bounding set, then the capabilities
    // cut down to its own plus what its identity change needs.
    unsigned long bounding, limit;
    if (!parse_u64(argv[kJBounding], bounding, true) || !parse_u64(argv[kJLimit], limit, true))
        fail(EINVAL, "exec stage: bad capability sets");
    for (long c = 0; c < 64; c++)
        if (!((bounding >> c) & 1)) {
            long r = sys(__NR_prctl, PR_CAPBSET_DROP, c);
            if (r == -EINVAL) break; // past the kernel's last capability
            if (r < 0) fail(-r, "drop a capability from the bounding set");
        }
    capset(limit, limit, 0, "capset (limit)");
    // Running: the runtime (which waited for this exec) moves this process
    // into what is left of the container's cgroup (the intermediate was
    // born in or moved itself into the rest), then says proceed: the
    // process is born there.
    memset(&g_packet, 0, sizeof g_packet);
    if (send_packet(kReady, 0) != static_cast<long>(sizeof g_packet)) sys_exit(1);
    long got = sys_read(g_sync, &g_packet, sizeof g_packet);
    if (got != static_cast<long>(sizeof g_packet) || g_packet.type != kProceed)
        fail(got < 0 ? -got : 0, "sync: the runtime did not say proceed");
    set_affinity(argv[kJAffinity]);
    const Identity id = parse_identity(argv);
    // Where a container process may hold CAP_SYS_PTRACE in this user
    // namespace ("2": no user namespace of its own), the filters that go in
    // before the identity are loaded here, out of the container's sight,
    // and CAP_SYS_ADMIN, which only that load needed, is dropped before the
    // fork: the process the container sees never holds it unfiltered (such
    // a process can attach to it, ptrace passing over its not being
    // dumpable, and once made a mount with it).
    if (filters >= 0 && same(argv[kJFiltersEarly], "2")) {
        load_filters(filters, true);
        filters = -1;
        constexpr unsigned long admin = 1ul << CAP_SYS_ADMIN;
        if (!((id.eff | id.perm) & admin))
            capset(limit & ~admin, limit & ~admin, 0, "capset (limit)");
    }
    // The process waits on `release` until the runtime has its PID: nothing
    // it says (a notify fd, an error) may come before the hello.
    int release[2];
    long r = sys(__NR_pipe2, reinterpret_cast<long>(release), O_CLOEXEC);
    if (r < 0) fail(-r, "exec: pipe");
    long pid = sys(__NR_clone, CLONE_PARENT | 17 /* SIGCHLD */, 0, 0, 0, 0);
    if (pid < 0) fail(-pid, "exec: clone");
    if (pid == 0) {
        sys(__NR_close, release[1]);
        char b;
        if (sys_read(release[0], &b, 1) != 1) sys_exit(1);
        sys(__NR_close, release[0]);
        join_child(argv, envp, filters, count, id);
    }
    sys(__NR_close, release[0]);
    // The crash tests' delay (kJFault) holds the hello too: the process is
    // in the container's sight from its clone, and an attack test needs the
    // time between the two.
    if (same(argv[kJFault], "delay")) {
        long t[2] = {0, 300 * 1000 * 1000};
        sys(__NR_nanosleep, reinterpret_cast<long>(t), 0);
    }
    memset(&g_packet, 0, sizeof g_packet);
    r = send_packet(kHello, static_cast<int>(pid));
    if (r != static_cast<long>(sizeof g_packet)) sys_exit(1);
    if (sys_write(release[1], "g", 1) != 1) fail(EPIPE, "exec: release the process");
    sys_exit(0);
}

} // namespace

extern "C" [[noreturn]] void stage_main(long *sp) {
    int argc = static_cast<int>(sp[0]);
    char **argv = reinterpret_cast<char **>(sp + 1);
    char **envp = argv + argc + 1;
    if (argc > 0 && same(argv[0], kJoinName)) join_main(argc, argv, envp);
    int fifo_r, fifo_w, filters, count;
    if (argc <= kFirstFile || !same(argv[0], kName) || !parse_int(argv[kResult], g_result) ||
        !parse_int(argv[kFifoRead], fifo_r) || !parse_int(argv[kFifoWrite], fifo_w) ||
        !parse_int(argv[kFilters], filters) || !parse_int(argv[kCount], count) || count < 1 ||
        count > argc - kFirstFile - 1) {
        const char msg[] = "oci-run-exec-stage: run by oci-run only\n";
        (void)sys_write(2, msg, sizeof msg - 1);
        sys_exit(127);
    }
    // As the init was: no process in the container without CAP_SYS_PTRACE
    // can open /proc/PID/exe or ptrace this one.
    long r = sys(__NR_prctl, PR_SET_DUMPABLE, 0);
    if (r < 0) fail(-r, "prctl PR_SET_DUMPABLE 0");
    if (sys(__NR_prctl, PR_GET_DUMPABLE) != 0)
        fail(EPERM, "prctl PR_SET_DUMPABLE 0: still dumpable");
    // What ps shows while the container is created (the exec of a memfd
    // would show "memfd:oci-run-e").
    static const char name[] = "oci-run-stage";
    sys(__NR_prctl, PR_SET_NAME, reinterpret_cast<long>(name));

    // Wait for `start`.
    long flags = sys(__NR_fcntl, fifo_r, F_GETFL);
    if (flags >= 0) sys(__NR_fcntl, fifo_r, F_SETFL, flags & ~O_NONBLOCK);
    char c;
    long n;
    while ((n = sys_read(fifo_r, &c, 1)) == -EINTR) {
    }
    if (n != 1) fail(n < 0 ? -n : 0, "wait for start");
    sys(__NR_close, fifo_r);
    sys(__NR_close, fifo_w);

    if (filters >= 0) load_filters(filters);
    // A good exec closes it: `start` reads EOF.
    if (long e = sys(__NR_fcntl, g_result, F_SETFD, FD_CLOEXEC); e < 0)
        fail(-e, "exec stage: fcntl FD_CLOEXEC");

    char **files = argv + kFirstFile;
    exec_files(files, count, files + count, envp, argv[kProg], argv[kPathDirs]);
}

// The entry point: the kernel's initial stack (argc, argv, envp) to stage_main.
#if defined(__x86_64__)
asm(".globl _start\n_start:\n\txor %rbp, %rbp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall "
    "stage_main\n\thlt\n");
#elif defined(__aarch64__)
asm(".globl _start\n_start:\n\tmov x29, #0\n\tmov x0, sp\n\tbl stage_main\n");
#endif

// What the compiler may call for copies and clears, without a C library.
extern "C" void *memset(void *d, int v, unsigned long n) {
    auto *p = static_cast<unsigned char *>(d);
    while (n--)
        *p++ = static_cast<unsigned char>(v);
    return d;
}
extern "C" void *memcpy(void *d, const void *s, unsigned long n) {
    auto *p = static_cast<unsigned char *>(d);
    const auto *q = static_cast<const unsigned char *>(s);
    while (n--)
        *p++ = *q++;
    return d;
}
