// The clone(2)/setns(2) flag of each OCI namespace type.
#pragma once

#include "oci/error.hpp"
#include "oci/fd.hpp"
#include "oci/spec.hpp"

#include <sched.h>

#include <string>

struct stat;

namespace ocirun {

// Whether the namespace `fd` belongs to the user namespace `target` (its
// fstat) or to one below it, where the root of `target` holds capabilities
// over it.
bool owned_within(int fd, const struct stat &target);

// linux.namespaces[].path opened for setns(2): looked at through O_PATH
// first, so that a path to something else (a FIFO that would block, a
// device whose open acts, such as a watchdog) is refused without being
// opened; a namespace file (nsfs) of type `flag` is then opened for reading
// through that descriptor. Errors name `field` and the path.
Result<Fd> open_namespace_path(const std::string &path, int flag, const std::string &field);

inline int clone_flag(oci::NsType t) {
    switch (t) {
    case oci::NsType::pid:
        return CLONE_NEWPID;
    case oci::NsType::network:
        return CLONE_NEWNET;
    case oci::NsType::mount:
        return CLONE_NEWNS;
    case oci::NsType::ipc:
        return CLONE_NEWIPC;
    case oci::NsType::uts:
        return CLONE_NEWUTS;
    case oci::NsType::user:
        return CLONE_NEWUSER;
    case oci::NsType::cgroup:
        return CLONE_NEWCGROUP;
    case oci::NsType::time:
        return CLONE_NEWTIME;
    }
    return 0;
}

// The name of a CLONE_NEW* flag for errors ("mount", "user").
inline const char *ns_flag_name(int flag) {
    switch (flag) {
    case CLONE_NEWPID:
        return "pid";
    case CLONE_NEWNET:
        return "network";
    case CLONE_NEWNS:
        return "mount";
    case CLONE_NEWIPC:
        return "ipc";
    case CLONE_NEWUTS:
        return "uts";
    case CLONE_NEWUSER:
        return "user";
    case CLONE_NEWCGROUP:
        return "cgroup";
    case CLONE_NEWTIME:
        return "time";
    }
    return "unknown";
}

// linux.timeOffsets as /proc/PID/timens_offsets takes them, one
// "clock secs nanosecs" line each ("" when there are none).
inline std::string time_offsets_text(const oci::Spec &spec) {
    std::string out;
    for (const auto &[clock, off] : spec.linux_->time_offsets)
        out += clock + " " + std::to_string(off.secs) + " " + std::to_string(off.nanosecs) + "\n";
    return out;
}

} // namespace ocirun
