#include "runtime/process/caps.hpp"

#include "oci/names.hpp"
#include "oci/text.hpp"
#include "runtime/log.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ocirun {

namespace {

int last_cap() {
    static int last = -1;
    if (last >= 0) return last;
    last = 40;
    // (read(2) into a buffer here: stdio would allocate a FILE and a page)
    int fd = ::open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return last;
    char buf[16];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    while (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n > 0)
        if (auto v = number<int>(std::string_view(buf, static_cast<size_t>(n)))) last = *v;
    return last;
}

uint64_t mask_of(const std::vector<std::string> &names) {
    uint64_t m = 0;
    for (const auto &n : names)
        if (auto c = oci::capability_from_name(n); c && *c <= last_cap()) m |= uint64_t(1) << *c;
    return m;
}

} // namespace

CapMasks capability_masks(const oci::Capabilities &caps) {
    CapMasks m;
    m.bounding = mask_of(caps.bounding);
    m.effective = mask_of(caps.effective);
    m.permitted = mask_of(caps.permitted);
    m.inheritable = mask_of(caps.inheritable);
    m.ambient = mask_of(caps.ambient) & m.permitted & m.inheritable;
    return m;
}

Status drop_bounding(const oci::Capabilities &caps) {
    uint64_t keep = mask_of(caps.bounding);
    for (int c = 0; c <= last_cap(); c++) {
        if (keep & (uint64_t(1) << c)) continue;
        if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
            return fail_errno("drop capability " + std::to_string(c) + " from the bounding set");
    }
    return {};
}

Status limit_capabilities(const oci::Capabilities &caps, uint64_t extra) {
    uint64_t keep = mask_of(caps.permitted) | mask_of(caps.effective) | extra;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {};
    data[0].effective = data[0].permitted = static_cast<uint32_t>(keep);
    data[1].effective = data[1].permitted = static_cast<uint32_t>(keep >> 32);
    if (::syscall(SYS_capset, &hdr, data) < 0) return fail_errno("capset (limit)");
    return {};
}

Status apply_capabilities(const oci::Capabilities &caps) {
    CapMasks m = capability_masks(caps);
    uint64_t eff = m.effective, perm = m.permitted, inh = m.inheritable;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {};
    data[0].effective = static_cast<uint32_t>(eff);
    data[1].effective = static_cast<uint32_t>(eff >> 32);
    data[0].permitted = static_cast<uint32_t>(perm);
    data[1].permitted = static_cast<uint32_t>(perm >> 32);
    data[0].inheritable = static_cast<uint32_t>(inh);
    data[1].inheritable = static_cast<uint32_t>(inh >> 32);
    if (::syscall(SYS_capset, &hdr, data) < 0) return fail_errno("capset");
    // Ambient: start empty, raise exactly what was asked (CVE-2022-29162).
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return fail_errno("clear ambient capabilities");
    // Each one the kernel allows (permitted and inheritable, the rest were
    // named at debug by capability_notes); EPERM: not allowed here (a
    // securebit), left out as runc does.
    for (const auto &n : caps.ambient) {
        auto c = oci::capability_from_name(n);
        if (!c || !(m.ambient & uint64_t(1) << *c)) continue;
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, *c, 0, 0) < 0 && errno != EPERM)
            return fail_errno("raise ambient capability " + n);
    }
    return {};
}

void capability_notes(const oci::Capabilities &caps, const std::string &where) {
    const std::pair<const char *, const std::vector<std::string> *> sets[] = {
        {"bounding", &caps.bounding},
        {"effective", &caps.effective},
        {"inheritable", &caps.inheritable},
        {"permitted", &caps.permitted},
        {"ambient", &caps.ambient}};
    for (const auto &[name, list] : sets)
        for (size_t i = 0; i < list->size(); i++) {
            auto c = oci::capability_from_name((*list)[i]);
            if (!c || *c > last_cap())
                log::warning(where + "." + name + "[" + std::to_string(i) +
                             "]: unknown capability \"" + (*list)[i] + "\", ignored");
        }
    uint64_t perm = mask_of(caps.permitted), inh = mask_of(caps.inheritable);
    for (const auto &n : caps.ambient)
        if (auto c = oci::capability_from_name(n); c && *c <= last_cap()) {
            uint64_t bit = uint64_t(1) << *c;
            if (!(perm & bit) || !(inh & bit))
                log::debug(where + ".ambient: " + n +
                           " is not also permitted and inheritable: left out");
        }
}

} // namespace ocirun
