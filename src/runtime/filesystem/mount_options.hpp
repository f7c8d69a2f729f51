// OCI mount options -> mount(2) flags, propagation, and the data string.
#pragma once

#include "oci/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

struct MountOptions {
    unsigned long flags = 0;       // MS_* to set
    unsigned long clear = 0;       // MS_* explicitly cleared (rw, suid, dev, exec, ...)
    unsigned long propagation = 0; // MS_PRIVATE/SHARED/SLAVE/UNBINDABLE (| MS_REC)
    bool bind = false;
    bool recursive = false;       // rbind
    bool tmpcopyup = false;       // tmpfs: copy up what the destination held
    bool idmap = false;           // idmap / ridmap (idmapped mounts)
    bool idmap_recursive = false; // ridmap
    bool readonly() const;
    std::string data; // options passed to the filesystem (size=, mode=, ...): the unknown ones
    // Recursive attributes (rro, rnosuid, ...): MOUNT_ATTR_* set and cleared
    // on the mount and every submount with mount_setattr(AT_RECURSIVE).
    uint64_t rec_set = 0, rec_clear = 0;
};

// Unknown options are passed to the filesystem as data, as runc does.
MountOptions parse_mount_options(const std::vector<std::string> &options);
// Whether parse_mount_options takes `option` as one of its own (else it is
// filesystem data).
bool known_mount_option(std::string_view option);

// What a bind mount's options do to the per-mount attributes (MOUNT_ATTR_*),
// in the order the applier sets them: first the top mount, as a bind
// remount does, only when some flag is given (read-only and nosymfollow
// exactly as given; nosuid, nodev, noexec, the atime settings kept as they
// were unless given), then every mount of the tree (rro, rnosuid, ...). One
// computation for the applier (rootfs.cpp) and for every check of what a
// mount ends up as (protected paths, the state directory).
struct AttrChange {
    uint64_t set = 0, clear = 0;
    bool any() const { return set || clear; }
};
struct MountAttrPlan {
    AttrChange top, tree;
};
MountAttrPlan attr_plan(const MountOptions &o);
// The attributes a mount ends with, from `current` (what it had at the
// source): `top` for the mount itself, else a submount an rbind copied.
uint64_t attrs_after(const MountAttrPlan &p, uint64_t current, bool top);

// The option names the parser understands as flags (for `features`).
const std::vector<const char *> &known_mount_flag_names();

} // namespace ocirun
