// oci-run-exec-stage: the last step of a container's init. The init execs
// this program from a sealed view (runtime/lifecycle/exec_stage.hpp) once it has set
// everything up and reported ready; it waits for `start`, loads the seccomp
// filters that go in last, and execs the container's process. Arguments:
// runtime/lifecycle/exec_stage_protocol.hpp.
//
// No C library: it is built static and freestanding, so that exec'ing it
// costs a handful of pages, not a dynamic loader's (measured: ~0.2 ms
// against ~1.2 ms for a static glibc program on the benchmark machine).
// Messages mirror runtime/process/process_setup.cpp exec_process, which the init
// uses when it execs the process itself.
#include "runtime/lifecycle/exec_stage_protocol.hpp"

#include <asm/fcntl.h>
#include <asm/unistd.h>
#include <linux/errno.h>
#include <linux/filter.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>

namespace {

using namespace ocirun::exec_stage;

#if defined(__x86_64__)
long sys(long n, long a = 0, long b = 0, long c = 0) {
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
long sys(long n, long a = 0, long b = 0, long c = 0) {
    register long x8 asm("x8") = n;
    register long x0 asm("x0") = a;
    register long x1 asm("x1") = b;
    register long x2 asm("x2") = c;
    asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
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

int g_result = -1;

[[noreturn]] void fail(long err, const char *a, const char *b = "", const char *c = "",
                       const char *d = "", const char *e = "") {
    Line l;
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

// Each filter in turn, as the init would have loaded it.
void load_filters(int fd) {
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
    }
    sys(__NR_close, fd);
}

} // namespace

extern "C" [[noreturn]] void stage_main(long *sp) {
    int argc = static_cast<int>(sp[0]);
    char **argv = reinterpret_cast<char **>(sp + 1);
    char **envp = argv + argc + 1;
    int fifo_r, fifo_w, filters, count;
    if (argc <= kFirstFile || !same(argv[0], kName) || !parse_int(argv[kResult], g_result) ||
        !parse_int(argv[kFifoRead], fifo_r) || !parse_int(argv[kFifoWrite], fifo_w) ||
        !parse_int(argv[kFilters], filters) || !parse_int(argv[kCount], count) || count < 1 ||
        count > argc - kFirstFile - 1) {
        const char msg[] = "oci-run-exec-stage: run by oci-run's container init only\n";
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

    char **files = argv + kFirstFile, **args = files + count;
    const char *prog = argv[kProg], *dirs = argv[kPathDirs];
    long last = ENOENT;
    for (int i = 0; i < count; i++) {
        long r = sys(__NR_execve, reinterpret_cast<long>(files[i]), reinterpret_cast<long>(args),
                     reinterpret_cast<long>(envp));
        if (!*dirs) fail(-r, "exec ", prog);
        if (r != -ENOENT && r != -ENOTDIR) last = -r;
    }
    fail(last, "exec ", prog, ": executable file not found in $PATH (", dirs, ")");
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
