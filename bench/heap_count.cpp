// LD_PRELOAD library for the start-up benchmark: counts the bytes a process
// asks of malloc, calloc, realloc and the aligned allocators, and at exit
// appends "PID BYTES CALLS" to $OCI_RUN_BENCH_HEAP_LOG. A process image
// replaced by exec or left by _exit reports nothing (its copy of the counters
// goes with it); the runtime's own `create` process exits normally.
//
// Where the bytes go: with $OCI_RUN_BENCH_HEAP_SITES set to a file, each call
// also appends "PID BYTES RETURN-ADDRESSES..." to it (glibc's backtrace), and
// the process's /proc/self/maps is copied to FILE.maps at start;
// bench/heap_sites.py sums them per calling function.
#include <execinfo.h>
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
int g_sites = -1;            // $OCI_RUN_BENCH_HEAP_SITES, when set
thread_local bool g_tracing; // backtrace() may itself allocate (its first call)

void site(size_t n) {
    if (g_sites < 0 || g_tracing) return;
    g_tracing = true;
    void *frames[16];
    int depth = ::backtrace(frames, 16);
    char line[512];
    int len = std::snprintf(line, sizeof line, "%d %zu", static_cast<int>(::getpid()), n);
    for (int i = 2; i < depth && len < static_cast<int>(sizeof line) - 24; i++) // (not ours)
        len += std::snprintf(line + len, sizeof line - static_cast<size_t>(len), " %p", frames[i]);
    line[len++] = '\n';
    (void)!::write(g_sites, line, static_cast<size_t>(len));
    g_tracing = false;
}

void count(size_t n) {
    if (g_tracing) return; // the tracer's own (backtrace loading its unwinder)
    g_bytes += n;
    g_calls++;
    site(n);
}

__attribute__((constructor)) void open_sites() {
    const char *path = std::getenv("OCI_RUN_BENCH_HEAP_SITES");
    if (!path) return;
    char maps[4096]; // (not a std::string: nothing here is counted)
    std::snprintf(maps, sizeof maps, "%s.maps", path);
    int in = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int out = ::open(maps, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char buf[8192];
    ssize_t n;
    while (in >= 0 && out >= 0 && (n = ::read(in, buf, sizeof buf)) > 0)
        (void)!::write(out, buf, static_cast<size_t>(n));
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    g_sites = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
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
