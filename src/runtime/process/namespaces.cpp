#include "runtime/process/namespaces.hpp"

#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
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

} // namespace ocirun
