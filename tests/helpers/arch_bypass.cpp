// A static test program for the seccomp suite: mkdir(argv[2]) through one
// system call entry point, chosen by argv[1]: "x86_64" (syscall), "x32"
// (syscall with __X32_SYSCALL_BIT) or "i386" (int $0x80). Prints
// "errno=N" or "ok"; a filter may also kill it (then it prints nothing).
#include <cerrno>
#include <cstdio>
#include <cstring>

static long call_x86_64(long nr, const char *path) {
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(path), "S"(0755L) : "rcx", "r11", "memory");
    return ret;
}

static long call_i386(long nr, const char *path) {
    long ret;
    // The i386 ABI takes 32-bit arguments: the path must sit below 4 GiB,
    // which a static non-PIE binary's data does.
    asm volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(path), "c"(0755L) : "memory");
    return ret;
}

static char path_buf[256];

int main(int argc, char **argv) {
    if (argc != 3 || std::strlen(argv[2]) >= sizeof path_buf) return 2;
    std::strcpy(path_buf, argv[2]);
    long r;
    if (std::strcmp(argv[1], "x86_64") == 0)
        r = call_x86_64(83, path_buf); // __NR_mkdir
    else if (std::strcmp(argv[1], "x32") == 0)
        r = call_x86_64(0x40000000L | 83, path_buf);
    else if (std::strcmp(argv[1], "i386") == 0)
        r = call_i386(39, path_buf); // __NR_mkdir on i386
    else
        return 2;
    if (r < 0 && r > -4096)
        std::printf("errno=%ld\n", -r);
    else
        std::printf("ok\n");
    return 0;
}
