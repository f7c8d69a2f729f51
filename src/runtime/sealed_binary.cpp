#include "sealed_binary.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

namespace ocirun {

int sealed_binary_seals() {
    return F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
}

bool running_sealed() {
    int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    int seals = ::fcntl(fd, F_GET_SEALS);
    ::close(fd);
    return seals >= 0 && (seals & sealed_binary_seals()) == sealed_binary_seals();
}

Error reexec_sealed(char *const argv[]) {
    int bin = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (bin < 0) return Error{errno, "CVE-2019-5736 protection: open /proc/self/exe"};
    struct stat st;
    if (::fstat(bin, &st) < 0) {
        int e = errno;
        ::close(bin);
        return Error{e, "CVE-2019-5736 protection: stat /proc/self/exe"};
    }
    int mem = ::memfd_create("oci-run", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (mem < 0) {
        int e = errno;
        ::close(bin);
        return Error{e, "CVE-2019-5736 protection: memfd_create"};
    }
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = ::sendfile(mem, bin, &off, static_cast<size_t>(st.st_size - off));
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            ::close(bin);
            ::close(mem);
            return Error{e, "CVE-2019-5736 protection: copy /proc/self/exe to a memfd"};
        }
    }
    ::close(bin);
    if (::fcntl(mem, F_ADD_SEALS, sealed_binary_seals()) < 0) {
        int e = errno;
        ::close(mem);
        return Error{e, "CVE-2019-5736 protection: seal the memfd copy"};
    }
    // The memfd is close-on-exec: once the new image runs, only its
    // /proc/self/exe refers to the copy.
    ::syscall(SYS_execveat, mem, "", argv, environ, AT_EMPTY_PATH);
    int e = errno;
    ::close(mem);
    return Error{e, "CVE-2019-5736 protection: execute the sealed copy"};
}

} // namespace ocirun
