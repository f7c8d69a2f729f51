// The container's filesystem, built by the init inside its new mount
// namespace: mounts from config.json resolved inside the rootfs (never
// following a symlink out of it), default devices, pivot_root, masked and
// read-only paths, a read-only root.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/root_sys.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct RootfsContext {
    std::string rootfs; // absolute host path
    bool no_pivot = false;
    int rootfs_fd = -1; // the rootfs the runtime checked: what is bound must be it
    const std::vector<ReachGuard> *guards = nullptr; // what no mount may reach
    const LinkedFiles *linked = nullptr; // other names of the guards' files (or none to look for)
    // In a user namespace: the sources of the binds passes_source() names,
    // in plan order, opened by the runtime in this mount namespace.
    std::vector<int> passed_sources;
    bool passes_sources = false; // the runtime passes them (a privileged runtime)
    // Filled with each overlay's layers as mounted, for the sandbox rules.
    std::vector<OverlayLayer> *layers = nullptr;
};

// The plan (runtime/filesystem/mount_plan.hpp) up to the pivot: mounts, devices, /dev
// links under ctx.rootfs.
// `sys`: the calls that isolate the rootfs (the mounts themselves are made
// directly).
Status prepare_rootfs(const std::vector<MountOp> &plan, const RootfsContext &ctx,
                      RootSys &sys = real_root_sys());
// pivot_root into ctx.rootfs (MS_MOVE + chroot with no_pivot); in a mount
// namespace not the container's own, chroot into it (it must be the object
// ctx.rootfs_fd is).
// `sys`: the calls it makes (runtime/filesystem/root_sys.hpp).
Status enter_rootfs(const std::vector<MountOp> &plan, const RootfsContext &ctx,
                    RootSys &sys = real_root_sys());
// After pivot_root: bind the pty `peer` onto /dev/console, through fds only
// (a node or a file there is covered; anything else is replaced, or refused
// in a /dev bound from elsewhere, `dev_bound`; a symlinked /dev is refused:
// CVE-2025-52565).
Status bind_console(int peer, bool dev_bound);

struct FsPlan;
// The plan after the pivot: masked paths, read-only paths, the sandbox
// policy's rules on the objects `fs` resolved (runtime/filesystem/fs_policy.hpp; null
// without a policy), read-only root, propagation.
// `sys`: the calls on the root itself (read-only, propagation).
Status finish_rootfs(const std::vector<MountOp> &plan, const FsPlan *fs,
                     RootSys &sys = real_root_sys());

} // namespace ocirun
