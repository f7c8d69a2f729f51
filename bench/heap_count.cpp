// LD_PRELOAD library for the start-up benchmark: counts the bytes a process
// asks of malloc, calloc, realloc and the aligned allocators, and at exit
// appends "PID BYTES CALLS" to $OCI_RUN_BENCH_HEAP_LOG. A process image
// replaced by exec or left by _exit reports nothing (its copy of the counters
// goes with it); the runtime's own `create` process exits normally.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
}

namespace {
size_t g_bytes = 0, g_calls = 0;

void count(size_t n) {
    g_bytes += n;
    g_calls++;
}

__attribute__((destructor)) void report() {
    const char *path = std::getenv("OCI_RUN_BENCH_HEAP_LOG");
    if (!path) return;
    int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char line[96];
    int n = std::snprintf(line, sizeof line, "%d %zu %zu\n", static_cast<int>(::getpid()), g_bytes,
                          g_calls);
    if (n > 0) (void)!::write(fd, line, static_cast<size_t>(n));
    ::close(fd);
}
} // namespace

extern "C" {
void *malloc(size_t n) {
    count(n);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    count(a * b);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    count(n);
    return __libc_realloc(p, n);
}
void *memalign(size_t align, size_t n) {
    count(n);
    return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n) {
    count(n);
    return __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n) {
    count(n);
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
}
