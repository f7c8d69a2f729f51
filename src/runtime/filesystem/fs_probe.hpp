// What `report` and `start` measure of the sandbox policy's filesystem
// rules: from inside the container's user and mount namespaces (a child of
// the runtime that joins those, not the PID namespace, so nothing in the
// container sees it), each rule's object tried through every way the record
// knows: the path it resolved to, and each other way the init found
// (runtime/filesystem/fs_policy.hpp). deny holds where a way shows the runtime's mask
// (an empty read-only tmpfs mount, or the null device) or nothing; deny-
// write where writing is refused with EROFS; deny-rename (and a
// placeholder's parents) where the path and every ancestor are mount points.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/record.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

struct WayTried {
    std::string path, how;
    bool reached = false;
    std::string seen; // what the try found ("writable", "masked", "not there")
};

struct RuleTried {
    const FsRuleRecord *rule = nullptr;
    std::vector<WayTried> ways;
    bool enforced() const;
    // "at /data/ssh; reachable at /mnt/x (how): writable"
    std::string detail() const;
};

// `nested`: the policy's masks moved the init into a nested user namespace.
Result<std::vector<RuleTried>> probe_fs_rules(pid_t init, const oci::Linux &lx, bool nested,
                                              const std::vector<FsRuleRecord> &rules);

} // namespace ocirun
