#include "bundle.hpp"

#include "oci/spec_io.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace ocirun {

Status write_default_spec(const std::string &bundle, bool rootless) {
    std::string path = bundle + "/config.json";
    std::string text = oci::write_spec(oci::default_spec(rootless, geteuid(), getegid()));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        if (errno == EEXIST) return fail("spec: " + path + " exists; remove it first");
        return fail_errno("spec: create " + path);
    }
    const char *p = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            ::unlink(path.c_str());
            return fail_code(e, "spec: write " + path);
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (::close(fd) < 0) return fail_errno("spec: close " + path);
    return {};
}

} // namespace ocirun
