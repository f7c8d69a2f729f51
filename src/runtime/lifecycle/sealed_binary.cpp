#include "runtime/lifecycle/sealed_binary.hpp"

#include "oci/fd.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/process/proc.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char **environ;

namespace ocirun {

namespace {

// Set by reexec_sealed for the overlay view only, read and removed by
// running_sealed: a memfd proves itself by its seals, an overlay file cannot.
constexpr const char *kOverlayMark = "_OCI_RUN_SEALED_VIEW";
// Set by reexec_sealed: the binary it was, where its helpers are found
// (helper_path). The sealed copy's /proc/self/exe is a memfd or a view.
constexpr const char *kBinaryMark = "_OCI_RUN_BINARY";

// The second lower layer the overlay needs (with no upper layer it wants at
// least two). Any directory works that is neither above nor below the
// binary's: only the binary's name is looked up, in the top layer. The
// runtime needs /sys/fs/cgroup anyway, and no binary lives in it.
constexpr const char *kSecondLayer = "/sys/fs/cgroup";

// overlayfs splits lowerdir on ':' and takes '\' as an escape.
std::string escape_layer(const std::string &dir) {
    std::string out;
    for (char c : dir) {
        if (c == ':' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// `path` through a private, read-only overlay (see the header), opened for
// exec; an invalid Fd when that cannot be had. `running`: path is this
// process's binary, which the file found must still be.
Fd overlay_view(const std::string &path, bool running) {
    size_t slash = path.rfind('/');
    // A replaced or deleted binary (" (deleted)") is not there to view.
    if (slash == std::string::npos || path.find(" (deleted)") != std::string::npos) return Fd();
    std::string dir = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
    auto mnt = detached_fs("overlay", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID,
                           "sealed view", {{"lowerdir", escape_layer(dir) + ":" + kSecondLayer}});
    if (!mnt) return Fd();
    Fd exe(::openat(mnt->get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st, self;
    if (!exe.valid() || ::fstat(exe.get(), &st) < 0 || !S_ISREG(st.st_mode)) return Fd();
    // The file found by path must be the one running: not one put there
    // since (an upgrade, or a writable directory).
    if (running &&
        (::stat("/proc/self/exe", &self) < 0 || st.st_size != self.st_size ||
         st.st_mtim.tv_sec != self.st_mtim.tv_sec || st.st_mtim.tv_nsec != self.st_mtim.tv_nsec))
        return Fd();
    // What a mapping of it shows in /proc/PID/map_files must be the overlay's
    // file too: kernels that map the file below would hand that out there.
    void *m = ::mmap(nullptr, 1, PROT_READ, MAP_PRIVATE, exe.get(), 0);
    if (m == MAP_FAILED) return Fd();
    char link[64];
    auto start = reinterpret_cast<uintptr_t>(m);
    std::snprintf(link, sizeof link, "/proc/self/map_files/%lx-%lx",
                  static_cast<unsigned long>(start),
                  static_cast<unsigned long>(start + static_cast<uintptr_t>(::getpagesize())));
    Fd mapped(::open(link, O_PATH | O_CLOEXEC));
    struct statfs sf;
    bool on_overlay = mapped.valid() && ::fstatfs(mapped.get(), &sf) == 0 &&
                      static_cast<unsigned long>(sf.f_type) == OVERLAYFS_SUPER_MAGIC;
    ::munmap(m, 1);
    if (!on_overlay) return Fd();
    return exe;
}

constexpr unsigned kMfdExec = 0x0010U; // MFD_EXEC (linux/memfd.h, 6.3)

// A sealed memfd copy of `path`, named `name`.
Result<Fd> memfd_copy(const std::string &path, const char *name) {
    Fd bin(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!bin.valid()) return fail_errno("CVE-2019-5736 protection: open " + path);
    struct stat st;
    if (::fstat(bin.get(), &st) < 0) return fail_errno("CVE-2019-5736 protection: stat " + path);
    // MFD_EXEC: under vm.memfd_noexec=1 (Linux 6.3+) a memfd made without it
    // cannot be executed; kernels before 6.3 do not know the flag (EINVAL).
    Fd mem(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec));
    if (!mem.valid() && errno == EINVAL)
        mem.reset(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!mem.valid()) return fail_errno("CVE-2019-5736 protection: memfd_create");
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = ::sendfile(mem.get(), bin.get(), &off, static_cast<size_t>(st.st_size - off));
        if (n <= 0)
            return fail_code(n < 0 ? errno : EIO,
                             "CVE-2019-5736 protection: copy " + path + " to a memfd");
    }
    if (::fcntl(mem.get(), F_ADD_SEALS, sealed_binary_seals()) < 0)
        return fail_errno("CVE-2019-5736 protection: seal the memfd copy");
    return mem;
}

} // namespace

int sealed_binary_seals() {
    return F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
}

Result<Fd> sealed_memfd(const char *name, std::string_view data, const std::string &what) {
    Fd mem(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!mem.valid()) return fail_errno(what + ": memfd_create");
    while (!data.empty()) {
        ssize_t n = ::write(mem.get(), data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail_code(n < 0 ? errno : EIO, what + ": write");
        data.remove_prefix(static_cast<size_t>(n));
    }
    if (::fcntl(mem.get(), F_ADD_SEALS, sealed_binary_seals()) < 0)
        return fail_errno(what + ": seal");
    if (::lseek(mem.get(), 0, SEEK_SET) < 0) return fail_errno(what + ": rewind");
    return mem;
}

// Set when this process was started through the overlay view: if it does not
// hold up, the next re-execution takes the copy, so that a view that fails
// the check cannot make the runtime re-execute itself forever.
static bool g_came_through_overlay = false;

bool running_sealed() {
    const char *mark = std::getenv(kOverlayMark);
    bool overlay = mark && std::strcmp(mark, "overlay") == 0;
    g_came_through_overlay = overlay;
    ::unsetenv(kOverlayMark);
    const char *was = std::getenv(kBinaryMark);
    std::string binary = was && *was == '/' ? was : "";
    ::unsetenv(kBinaryMark);
    Fd fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return false;
    int seals = ::fcntl(fd.get(), F_GET_SEALS);
    if (seals >= 0 && (seals & sealed_binary_seals()) == sealed_binary_seals()) {
        if (!binary.empty()) set_own_binary_path(binary);
        return true;
    }
    struct statfs sf;
    bool view = overlay && ::fstatfs(fd.get(), &sf) == 0 &&
                static_cast<unsigned long>(sf.f_type) == OVERLAYFS_SUPER_MAGIC &&
                (sf.f_flags & ST_RDONLY) != 0;
    if (view && !binary.empty()) set_own_binary_path(binary);
    return view;
}

static bool memfd_forced() {
    const char *force = std::getenv("OCI_RUN_SEAL");
    return force && std::strcmp(force, "memfd") == 0;
}

Result<Fd> memfd_copy_of(const std::string &path, const char *memfd_name) {
    return memfd_copy(path, memfd_name);
}

Result<Fd> sealed_copy_of(const std::string &path, const char *memfd_name) {
    auto copy = memfd_copy(path, memfd_name);
    if (copy || memfd_forced()) return copy;
    // Where memfds cannot be executed (vm.memfd_noexec=2 refuses MFD_EXEC),
    // the overlay view, as root.
    Fd view = overlay_view(path, false);
    if (view.valid()) return view;
    return copy;
}

Error reexec_sealed(char *const argv[]) {
    // Where this binary is (the sealed one's /proc/self/exe is not there).
    if (std::string self = own_binary_path(); !self.empty() && self[0] == '/')
        ::setenv(kBinaryMark, self.c_str(), 1);
    if (!g_came_through_overlay && !memfd_forced()) {
        Fd view = overlay_view(own_binary_path(), true);
        if (view.valid()) {
            std::vector<char *> env;
            for (char **e = environ; *e; e++)
                env.push_back(*e);
            std::string mark = std::string(kOverlayMark) + "=overlay";
            env.push_back(mark.data());
            env.push_back(nullptr);
            // Close-on-exec: once the new image runs, only its
            // /proc/self/exe refers to the view.
            ::syscall(SYS_execveat, view.get(), "", argv, env.data(), AT_EMPTY_PATH);
            // Not executable there (an exec-refusing LSM, say): the copy.
        }
    }
    auto copy = memfd_copy("/proc/self/exe", "oci-run");
    if (!copy) return std::move(copy.error());
    ::syscall(SYS_execveat, copy->get(), "", argv, environ, AT_EMPTY_PATH);
    return Error{errno, "CVE-2019-5736 protection: execute the sealed copy"};
}

} // namespace ocirun
