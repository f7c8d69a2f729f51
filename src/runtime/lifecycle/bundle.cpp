#include "runtime/lifecycle/bundle.hpp"

#include "oci/spec_io.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace ocirun {

Status write_default_spec(const std::string &bundle, bool rootless) {
    std::string path = bundle + "/config.json";
    oci::Spec spec = oci::default_spec(rootless, geteuid(), getegid());
    // As runc: a cgroup namespace only on a pure cgroup v2 host (on v1 and
    // hybrid ones a namespace of its own shows the container little it can
    // use, and clients built for runc's default do not expect it).
    struct statfs fs;
    if (::statfs("/sys/fs/cgroup", &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC)
        std::erase_if(spec.linux_->namespaces,
                      [](const oci::Namespace &n) { return n.type == oci::NsType::cgroup; });
    std::string text = oci::write_spec(spec);
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
