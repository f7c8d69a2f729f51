// Decide, then do: the container's filesystem as an ordered list of
// operations, planned from config.json and a few facts about the host before
// anything is created (so a bad mount is refused up front), printed with
// --debug, unit-tested without root, and carried out by the init
// (runtime/filesystem/rootfs.hpp), the only code that makes these system calls.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "runtime/filesystem/mount_options.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace ocirun {

enum class MountOpKind {
    isolate,          // make / rslave, bind the rootfs onto itself (pivot_root needs a mount)
    mount,            // a config.json mount: bind or a filesystem
    device,           // a device node: mknod, or the host's node bound in a user namespace
    dev_link,         // /dev/fd, /dev/stdin, ... symlinks
    dev_check,        // a default device in a /dev bound from elsewhere: that device, or absent
    pivot,            // pivot_root into the rootfs (or MS_MOVE + chroot)
    mask,             // a maskedPaths entry: empty read-only tmpfs or /dev/null
    readonly,         // a readonlyPaths entry: recursive read-only bind of itself
    deny,             // dev.ocirun.deny: like a mask; a missing path gets a placeholder
    deny_write,       // dev.ocirun.deny-write: like readonly; a missing path gets a placeholder
    pin,              // dev.ocirun.deny-rename: the directory bound onto itself
    dev_readonly,     // "ro" of a mount on /dev, after its nodes, links, submounts and console
    root_readonly,    // root.readonly
    root_propagation, // linux.rootfsPropagation
    chroot,           // no mount namespace of the container's own: chroot into the rootfs, alone
    // The identity setup, after the filesystem (set by the init in this order):
    hostname,    // sethostname(source)
    domainname,  // setdomainname(source)
    sysctl,      // write source to /proc/<dest> of a private procfs (dest: "sys/net/...")
    personality, // personality(persona)
};

// The operations the init applies after the filesystem (the identity part).
inline bool identity_op(MountOpKind k) {
    return k == MountOpKind::hostname || k == MountOpKind::domainname || k == MountOpKind::sysctl ||
           k == MountOpKind::personality;
}

const char *mount_op_name(MountOpKind k);

// One hierarchy of the container's cgroup, for the cgroup mount inside it.
struct CgroupView {
    int version = 1;
    std::string name;    // the directory under /sys/fs/cgroup ("cpu,cpuacct", "unified")
    std::string options; // v1 mount options ("cpu,cpuacct", "none,name=systemd")
    std::string dir;     // the container's cgroup directory on the host
    std::string mount;   // where its hierarchy is mounted on the host (dir is below it)
};

// What a cgroup mount shows: only the container's own cgroup, never the
// host's tree. Pure v2: cgroup2 in a cgroup namespace (its root is the
// container's cgroup), else a bind of the container's directory. v1 and
// hybrid: a tmpfs with one directory per hierarchy (CgroupPart). A container
// without a cgroup (rootless, no limits) gets the host's hierarchy read-only.
enum class CgroupShow { host_tree, cgroup2, bind_dir, per_hierarchy };

// One directory of the per_hierarchy tmpfs: in a cgroup namespace, that
// hierarchy mounted (its root the container's cgroup), else (or v1 in a user
// namespace, where v1 cannot be mounted) a bind of the container's directory;
// joined controllers also get runc's symlinks ("cpu" -> "cpu,cpuacct").
struct CgroupPart {
    CgroupView view;
    bool mount_fs = false; // mounted as a filesystem, else `view.dir` bound
    std::vector<std::string> aliases;
};

// (Fields are grouped by size: a plan holds one per step, 30 to 40 of them.)
struct MountOp {
    MountOpKind kind;
    // A cgroup mount (type "cgroup" or "cgroup2"): what it shows.
    CgroupShow cgroup_show = CgroupShow::host_tree;
    std::string what; // names the config.json field in errors: "mounts[3] /proc"
    std::string dest; // container path
    // mount
    size_t index = 0; // in config.json's mounts
    std::string source, type;
    MountOptions options;
    std::string option_list; // as config.json gives them, comma-separated ("none")
    bool bind = false;
    // An idmapped bind (options.idmap) is mapped as config.json's
    // mounts[index] says, or else as the container's user namespace: the
    // runtime makes that namespace (make_idmap_namespaces).
    int idmap_tree_fd = -1; // the detached, idmapped copy of the source the init attaches
    // A bind's source, opened once by the runtime (O_PATH, symlinks followed)
    // before anything is checked: the checks look at this object, and the
    // init refuses a mount that turns out to be any other (a swap since).
    int source_fd = -1;
    // A bind's source under the rootfs (`source` is the rootfs-relative path,
    // from "/"): resolved by the init at its turn, inside the root, after the
    // mounts before it (runc's order: ["bind", host dir -> /mnt] then
    // ["bind", <rootfs>/mnt/sub -> /other] binds the host dir's sub).
    bool source_in_rootfs = false;
    // A bind of a file (its destination is made a file), known once the
    // source is opened (open_bind_sources); a source in the rootfs is looked
    // at when its turn comes (it may be what an earlier mount put there).
    bool bind_file = false;
    // A sysfs mount in a user namespace that does not own the network
    // namespace (where the kernel refuses sysfs): the host's /sys bound
    // read-only instead (as runc).
    bool sysfs_from_host = false;
    // A sysfs or mqueue mount outside a network or IPC namespace of the
    // container's own making: the superblock is one the host's mounts may
    // show, so what it reaches is checked once mounted.
    bool shared_superblock = false;
    // device: in a user namespace (no mknod), the host's node bound
    bool bind_host_node = false;
    std::vector<CgroupPart> cgroup_parts; // per_hierarchy (cgroup_show)
    // device
    mode_t node_type = 0;
    unsigned major = 0, minor = 0;
    mode_t mode = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    // dev_link (/dev/ptmx is planned only over a devpts mount on /dev/pts)
    const char *link_to = nullptr;
    // personality
    unsigned long persona = 0;
};

struct SandboxPolicy;

// The container's mount namespace: a new one (the filesystem is built in it),
// or, with no mount entry in linux.namespaces, the runtime's (inherited), or
// one joined by path. In the last two the namespace is someone else's: no
// mount is made in it, and the process is chrooted into the rootfs.
enum class MountNs { own, inherited, joined };
MountNs mount_ns_of(const oci::Linux &lx);

struct MountFacts {
    bool in_userns = false; // devices are bound from the host, not made
    bool no_pivot = false;
    const SandboxPolicy *policy = nullptr; // dev.ocirun.* paths, or none
    bool joined_userns = false;            // a user namespace joined by path: an idmap without
                                           // mappings uses it (its mappings are not in config.json)
    MountNs mount_ns = MountNs::own;
    // The container's cgroup, one view per hierarchy (empty: it has none),
    // and whether the init is in a cgroup namespace of its own.
    std::vector<CgroupView> cgroups;
    bool cgroupns = false;
    // In a user namespace: whether it owns the network namespace (a new one,
    // or one joined that it owns); sysfs can be mounted only then.
    bool userns_owns_netns = false;
};

// The plan: the filesystem, then the identity (hostname, domainname,
// sysctls, personality); errors name the field: an unknown option on a bind mount, an
// idmapped mount that is not a bind or has no mapping to use, tmpcopyup on
// something other than a tmpfs, a device outside /dev, a bind without a
// source. In a mount namespace not the container's own, everything that
// would mount in it is refused, naming the field (as runc refuses masks
// there).
Result<std::vector<MountOp>> plan_mounts(const oci::Spec &spec, const MountFacts &facts);

// The plan of a container without a mount namespace of its own (one chroot).
bool shares_mount_ns(const std::vector<MountOp> &plan);

// The plan binds /dev from elsewhere (nothing is made in it).
bool dev_bound(const std::vector<MountOp> &plan);

// One line per operation, for --debug.
std::string describe_plan(const std::vector<MountOp> &plan);

// For each idmapped mount of the plan: a user namespace with its mapping (a
// child in a new user namespace, its maps written, the child reaped) and, in
// the runtime's own namespaces (where it has the privilege to), a detached
// copy of the source with that idmapping and the mount's flags; the init
// only attaches it. Runtime side, before the init.
// `spec` is the configuration the plan was made from (its mappings);
// `joined_userns`: the fd of a user namespace joined by path, the idmapping
// of idmap mounts without mappings of their own (-1 when none).
Status make_idmap_namespaces(std::vector<MountOp> &plan, const oci::Spec &spec,
                             int joined_userns = -1);

// Whether the runtime passes `op`'s source to an init in a user namespace
// (Msg::bind_source): a bind of a host path, which the container's root may
// not be allowed to reach (a 0700 directory of the host's root). The
// runtime opens it through /proc/<init>/root, so the object is a mount of
// the init's namespace, whose flags the kernel locked; the init binds it
// from that fd.
bool passes_source(const MountOp &op);

// Each bind's source_fd (runtime side, before the checks); an error names the
// mount and the source. A source under `rootfs` is left to the init
// (source_in_rootfs), which resolves it in the root when its turn comes.
Status open_bind_sources(std::vector<MountOp> &plan, const std::string &rootfs);

// Close what make_idmap_namespaces and open_bind_sources opened.
void close_plan_fds(std::vector<MountOp> &plan);

} // namespace ocirun
