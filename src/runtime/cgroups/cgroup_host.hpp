// The host's cgroup hierarchies, found once from /proc/self/mountinfo and
// /proc/self/cgroup: pure v1, pure v2, or hybrid (v1 controllers plus a v2
// "unified" mount, as on this project's CI machine). Everything else in the
// cgroup code asks this map which hierarchy carries a controller.
#pragma once

#include "oci/error.hpp"
#include "runtime/filesystem/mount_table.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

struct Hierarchy {
    int version = 1;        // 1 or 2
    std::string mount;      // where it is mounted
    std::string mount_root; // the hierarchy path shown at the mount ("/" usually)
    std::vector<std::string>
        controllers; // v1: cpu, cpuacct, name=systemd...; v2: cgroup.controllers
    std::string own; // this process's cgroup in it (/proc/self/cgroup)

    bool has(std::string_view controller) const;
    // Absolute directory of hierarchy path `p` ("/a/b") under the mount.
    std::string dir_of(const std::string &p) const;
};

struct CgroupHost {
    std::vector<Hierarchy> hierarchies;

    // The v2 hierarchy, if mounted (pure v2 or hybrid).
    const Hierarchy *unified() const;
    // The hierarchy that carries `controller` (v1 first: in hybrid mode a
    // controller bound to v1 is not available in the unified hierarchy).
    const Hierarchy *for_controller(std::string_view controller) const;
    bool pure_v2() const;
};

// Parse the two files' contents. v2 controllers are not in them: the caller
// fills `controllers` of the v2 hierarchy (detect_cgroup_host reads them).
Result<CgroupHost> parse_cgroup_host(std::string_view mountinfo, std::string_view self_cgroup);
// The same from a mount table already parsed.
Result<CgroupHost> parse_cgroup_host(const std::vector<MountEntry> &mounts,
                                     std::string_view self_cgroup);

// parse_cgroup_host on this process, with the v2 controllers read from the
// hierarchy root's cgroup.controllers; `mounts`: this process's mount table,
// where the caller has read it already (create reads it once).
Result<CgroupHost> detect_cgroup_host();
Result<CgroupHost> detect_cgroup_host(const std::vector<MountEntry> &mounts);

} // namespace ocirun
