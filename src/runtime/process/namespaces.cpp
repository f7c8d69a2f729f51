#include "runtime/process/namespaces.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace ocirun {

bool owned_within(int fd, const struct stat &target) {
    int cur = ::ioctl(fd, NS_GET_USERNS);
    for (int depth = 0; cur >= 0 && depth < 33; depth++) {
        struct stat st;
        bool match =
            ::fstat(cur, &st) == 0 && st.st_ino == target.st_ino && st.st_dev == target.st_dev;
        if (match) {
            ::close(cur);
            return true;
        }
        int up = ::ioctl(cur, NS_GET_PARENT);
        ::close(cur);
        cur = up;
    }
    if (cur >= 0) ::close(cur);
    return false;
}

Result<Fd> open_namespace_path(const std::string &path, int flag, const std::string &field) {
    const std::string what = field + ": " + path;
    Fd at(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (at.get() < 0) return fail_errno(what + ": open");
    struct statfs fs;
    if (::fstatfs(at.get(), &fs) < 0) return fail_errno(what + ": fstatfs");
    if (fs.f_type != NSFS_MAGIC)
        return fail(what + ": not a namespace (a file of /proc/PID/ns or a bind mount of one)");
    Fd fd(::open(("/proc/self/fd/" + std::to_string(at.get())).c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return fail_errno(what + ": open");
    int type = ::ioctl(fd.get(), NS_GET_NSTYPE);
    if (type < 0) return fail_errno(what + ": NS_GET_NSTYPE");
    if (type != flag)
        return fail(what + ": a " + ns_flag_name(type) + " namespace, not a " + ns_flag_name(flag) +
                    " one");
    return fd;
}

} // namespace ocirun
