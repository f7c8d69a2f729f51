// The mount plan without root: the order of operations and the refusals.
#include "oci/spec_io.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "unit_support.hpp"

#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>

using namespace ocirun;

namespace {

oci::Spec base_spec() {
    return oci::default_spec(false, 0, 0);
}

oci::Mount mnt(const std::string &dest, const std::string &type, const std::string &source,
               std::vector<std::string> options) {
    oci::Mount m;
    m.destination = dest;
    m.type = type;
    m.source = source;
    m.options = std::move(options);
    return m;
}

std::vector<MountOp> plan(const oci::Spec &s, MountFacts f = {}) {
    auto p = plan_mounts(s, f);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return *p;
}

std::string plan_error(const oci::Spec &s) {
    auto p = plan_mounts(s, {});
    cr_assert(!p.has_value(), "planned without error");
    return p.error().text();
}

size_t index_of(const std::vector<MountOp> &p, MountOpKind k, const std::string &dest = "") {
    for (size_t i = 0; i < p.size(); i++)
        if (p[i].kind == k && (dest.empty() || p[i].dest == dest)) return i;
    cr_assert_fail("no %s %s in the plan", mount_op_name(k), dest.c_str());
    return 0;
}

} // namespace

Test(mount_plan, order_of_the_default_configuration) {
    oci::Spec s = base_spec();
    s.root->readonly = true;
    s.linux_->rootfs_propagation = "rslave";
    auto p = plan(s);
    cr_assert_eq(p.front().kind, MountOpKind::isolate);
    size_t pivot = index_of(p, MountOpKind::pivot);
    cr_assert_eq(std::count_if(p.begin(), p.end(),
                               [](const MountOp &o) { return o.kind == MountOpKind::pivot; }),
                 1);
    size_t proc = index_of(p, MountOpKind::mount, "/proc");
    size_t sys = index_of(p, MountOpKind::mount, "/sys");
    size_t dev = index_of(p, MountOpKind::mount, "/dev");
    size_t null = index_of(p, MountOpKind::device, "/dev/null");
    size_t ptmx = index_of(p, MountOpKind::dev_link, "/dev/ptmx");
    size_t mask = index_of(p, MountOpKind::mask);
    size_t ro = index_of(p, MountOpKind::readonly);
    size_t root_ro = index_of(p, MountOpKind::root_readonly);
    size_t prop = index_of(p, MountOpKind::root_propagation);
    // Devices after every mount (the configuration may put its own /dev),
    // links after devices, the pivot after both.
    for (size_t i = 0; i < p.size(); i++)
        if (p[i].kind == MountOpKind::mount) cr_assert_lt(i, null);
    cr_assert(dev < null && null < ptmx && ptmx < pivot);
    // Masks after /proc and /sys exist and after the pivot; read-only paths
    // after every mask; then the root; propagation last.
    cr_assert(proc < pivot && sys < pivot && pivot < mask);
    for (size_t i = 0; i < p.size(); i++) {
        if (p[i].kind == MountOpKind::mask) cr_assert_lt(i, ro);
        if (p[i].kind == MountOpKind::readonly) cr_assert_lt(i, root_ro);
    }
    // Propagation last of the filesystem; the identity after it.
    for (size_t i = prop + 1; i < p.size(); i++)
        cr_assert(identity_op(p[i].kind), "%zu: %s", i, p[i].what.c_str());
    cr_assert(!identity_op(p[prop].kind));
}

// Hostname, domainname, each sysctl (its /proc path, its value) and the
// personality are operations of the plan, after the filesystem, in that
// order; --debug prints them.
Test(mount_plan, identity_after_the_filesystem) {
    oci::Spec s = base_spec();
    s.hostname = "box";
    s.domainname = "example.org";
    s.linux_->sysctl = {{"net.ipv4.ip_forward", "1"}, {"kernel.msgmax", "8192"}};
    s.linux_->personality = oci::Personality{"LINUX32", {}};
    auto p = plan(s);
    size_t n = p.size();
    cr_assert_geq(n, 5u);
    cr_assert_eq(p[n - 5].kind, MountOpKind::hostname);
    unit::expect_eq(p[n - 5].source, "box");
    cr_assert_eq(p[n - 4].kind, MountOpKind::domainname);
    unit::expect_eq(p[n - 4].source, "example.org");
    cr_assert_eq(p[n - 3].kind, MountOpKind::sysctl);
    cr_assert_eq(p[n - 2].kind, MountOpKind::sysctl);
    // StringMap order: kernel.msgmax first.
    unit::expect_eq(p[n - 3].dest, "sys/kernel/msgmax");
    unit::expect_eq(p[n - 2].dest, "sys/net/ipv4/ip_forward");
    unit::expect_eq(p[n - 2].source, "1");
    cr_assert_eq(p[n - 1].kind, MountOpKind::personality);
    cr_assert_eq(p[n - 1].persona, 0x0008ul); // PER_LINUX32
    std::string text = describe_plan(p);
    cr_assert(text.find("sysctl linux.sysctl.net.ipv4.ip_forward = 1 "
                        "(/proc/sys/net/ipv4/ip_forward)") != std::string::npos,
              "%s", text.c_str());
}

Test(mount_plan, configuration_mounts_keep_their_order_and_options) {
    oci::Spec s = base_spec();
    s.mounts.push_back(mnt("/data", "tmpfs", "tmpfs", {"nosuid", "size=1m", "rro"}));
    s.mounts.push_back(mnt("/src", "", "/host/src", {"rbind", "ro"}));
    auto p = plan(s);
    size_t a = index_of(p, MountOpKind::mount, "/data"),
           b = index_of(p, MountOpKind::mount, "/src");
    cr_assert_lt(a, b);
    cr_assert_eq(p[a].options.data, "size=1m");
    cr_assert(p[a].options.rec_set != 0);
    cr_assert(p[b].bind && p[b].options.recursive);
    unit::expect_eq(p[b].type, "bind");
    unit::expect_eq(p[b].what, "mounts[" + std::to_string(s.mounts.size() - 1) + "] /src");
}

Test(mount_plan, devices_from_the_configuration) {
    oci::Spec s = base_spec();
    oci::Device d;
    d.path = "/dev/fuse";
    d.type = "c";
    d.major = 10;
    d.minor = 229;
    d.file_mode = 0600;
    s.linux_->devices.push_back(d);
    auto p = plan(s);
    const MountOp &o = p[index_of(p, MountOpKind::device, "/dev/fuse")];
    cr_assert_eq(o.node_type, static_cast<mode_t>(S_IFCHR));
    cr_assert_eq(o.major, 10u);
    cr_assert_eq(o.minor, 229u);
    cr_assert_eq(o.mode, 0600u);
}

Test(mount_plan, refusals_name_the_field) {
    oci::Spec a = base_spec();
    a.mounts.push_back(mnt("/x", "bind", "", {"bind"}));
    cr_assert(plan_error(a).find("/x: bind mount without a source") != std::string::npos);
    oci::Spec b = base_spec();
    b.mounts.push_back(mnt("/x", "bind", "/src", {"bind", "sizzle"}));
    cr_assert(plan_error(b).find("unknown mount option \"sizzle\"") != std::string::npos);
    oci::Spec c = base_spec();
    c.mounts.push_back(mnt("/x", "bind", "/src", {"bind", "idmap"}));
    cr_assert(plan_error(c).find("idmap without uidMappings needs the container's user "
                                 "namespace mappings") != std::string::npos);
    oci::Spec c2 = base_spec();
    c2.mounts.push_back(mnt("/x", "tmpfs", "tmpfs", {"idmap"}));
    cr_assert(plan_error(c2).find("idmapped mounts must be bind mounts") != std::string::npos);
    oci::Spec d = base_spec();
    d.mounts.push_back(mnt("/x", "proc", "proc", {"tmpcopyup"}));
    cr_assert(plan_error(d).find("tmpcopyup needs a tmpfs mount") != std::string::npos);
    oci::Spec e = base_spec();
    oci::Device dev;
    dev.path = "/dev/../etc/passwd";
    dev.type = "c";
    e.linux_->devices.push_back(dev);
    cr_assert(plan_error(e).find("linux.devices[0] /dev/../etc/passwd: not a path under /dev") !=
              std::string::npos);
    oci::Spec f = base_spec();
    dev.path = "/etc/x";
    f.linux_->devices = {dev};
    cr_assert(plan_error(f).find("not a path under /dev") != std::string::npos);
}

Test(mount_plan, description_for_debug) {
    oci::Spec s = base_spec();
    MountFacts f;
    f.no_pivot = true;
    std::string d = describe_plan(plan(s, f));
    cr_assert(d.rfind("0 isolate rootfs\n1 mount mounts[0] /proc (proc from proc)\n", 0) == 0, "%s",
              d.c_str());
    cr_assert(d.find(" pivot MS_MOVE + chroot\n") != std::string::npos, "%s", d.c_str());
}

// "ro" on the /dev tmpfs is a dev-readonly step at the end (after the
// policy's steps, before the root's), the /dev mount itself writable until
// then; a masked path listed twice is one step; key=value data on a bind
// is passed on.
Test(mount_plan, read_only_dev_duplicate_masks_and_bind_data) {
    oci::Spec s = base_spec();
    for (auto &m : s.mounts)
        if (m.destination == "/dev") m.options.push_back("ro");
    s.root->readonly = true;
    s.linux_->masked_paths.push_back(s.linux_->masked_paths.front());
    s.mounts.push_back(mnt("/x", "bind", "/src", {"bind", "mode=755", "size=1k"}));
    auto p = plan(s);
    size_t dev = index_of(p, MountOpKind::mount, "/dev");
    size_t dev_ro = index_of(p, MountOpKind::dev_readonly, "/dev");
    cr_assert(!(p[dev].options.flags & MS_RDONLY), "the /dev mount is made read-only at once");
    cr_assert(index_of(p, MountOpKind::pivot) < dev_ro);
    cr_assert_eq(dev_ro + 1, index_of(p, MountOpKind::root_readonly));
    const std::string first = s.linux_->masked_paths.front();
    cr_assert_eq(std::count_if(p.begin(), p.end(),
                               [&](const MountOp &o) {
                                   return o.kind == MountOpKind::mask && o.dest == first;
                               }),
                 1);
    unit::expect_eq(p[index_of(p, MountOpKind::mount, "/x")].options.data, "mode=755,size=1k");
    // Without "ro", no such step.
    auto q = plan(base_spec());
    cr_assert(std::none_of(q.begin(), q.end(),
                           [](const MountOp &o) { return o.kind == MountOpKind::dev_readonly; }));
}

// In a mount namespace not the container's own (none in linux.namespaces,
// or one joined by path) the plan is one chroot; what would mount is refused
// with its field named.
Test(mount_plan, shared_mount_namespace_is_one_chroot) {
    oci::Spec s = base_spec();
    s.mounts.clear();
    s.linux_->masked_paths.clear();
    s.linux_->readonly_paths.clear();
    s.root->readonly = false;
    for (MountNs ns : {MountNs::inherited, MountNs::joined}) {
        MountFacts f;
        f.mount_ns = ns;
        auto p = plan(s, f);
        cr_assert_eq(p[0].kind, MountOpKind::chroot);
        for (size_t i = 1; i < p.size(); i++)
            cr_assert(identity_op(p[i].kind), "%s", p[i].what.c_str());
        cr_assert(shares_mount_ns(p));
        oci::Spec with = s;
        with.linux_->masked_paths = {"/proc/kcore"};
        auto r = plan_mounts(with, f);
        cr_assert(!r.has_value());
        cr_assert(r.error().text().find("linux.maskedPaths needs a mount namespace") !=
                      std::string::npos,
                  "%s", r.error().text().c_str());
    }
    cr_assert(!shares_mount_ns(plan(base_spec())));
    auto none = base_spec();
    cr_assert_eq(mount_ns_of(*none.linux_), MountNs::own);
    std::erase_if(none.linux_->namespaces,
                  [](const auto &n) { return n.type == oci::NsType::mount; });
    cr_assert_eq(mount_ns_of(*none.linux_), MountNs::inherited);
}

// In a user namespace the plan binds the host's device nodes (no mknod
// there); outside it makes them: the plan says which, not the applier.
Test(mount_plan, devices_bound_in_a_user_namespace) {
    for (bool userns : {false, true}) {
        MountFacts f;
        f.in_userns = userns;
        auto p = plan(base_spec(), f);
        size_t devices = 0;
        for (const auto &o : p)
            if (o.kind == MountOpKind::device) {
                devices++;
                cr_assert_eq(o.bind_host_node, userns, "%s", o.what.c_str());
            }
        cr_assert_geq(devices, 6u);
    }
}

namespace {

const MountOp &cgroup_mount(const std::vector<MountOp> &p) {
    return p[index_of(p, MountOpKind::mount, "/sys/fs/cgroup")];
}

CgroupView view(int version, const std::string &name, const std::string &options) {
    return {version, name, options, "/sys/fs/cgroup/" + name + "/oci-run/c1",
            "/sys/fs/cgroup/" + name};
}

} // namespace

// What the cgroup mount shows is the plan's: the host's tree read-only for a
// container without a cgroup; on pure v2 cgroup2 in a cgroup namespace, else
// the container's directory bound; on v1 and hybrid a tmpfs with a part per
// hierarchy, mounted in a cgroup namespace except v1 in a user namespace
// (which cannot mount it), and runc's aliases of joined controllers.
Test(mount_plan, cgroup_mount_matrix) {
    oci::Spec s = base_spec();
    MountFacts f;
    cr_assert_eq(cgroup_mount(plan(s, f)).cgroup_show, CgroupShow::host_tree);

    f.cgroups = {view(2, "cgroup", "")};
    cr_assert_eq(cgroup_mount(plan(s, f)).cgroup_show, CgroupShow::bind_dir);
    cr_assert_eq(cgroup_mount(plan(s, f)).cgroup_parts.at(0).view.dir,
                 "/sys/fs/cgroup/cgroup/oci-run/c1");
    f.cgroupns = true;
    cr_assert_eq(cgroup_mount(plan(s, f)).cgroup_show, CgroupShow::cgroup2);

    f.cgroups = {view(1, "cpu,cpuacct", "cpu,cpuacct"), view(1, "pids", "pids"),
                 view(2, "unified", "")};
    for (bool userns : {false, true})
        for (bool cgroupns : {false, true}) {
            f.in_userns = userns;
            f.cgroupns = cgroupns;
            auto p = plan(s, f);
            const MountOp &c = cgroup_mount(p);
            cr_assert_eq(c.cgroup_show, CgroupShow::per_hierarchy);
            cr_assert_eq(c.cgroup_parts.size(), 3u);
            for (const CgroupPart &part : c.cgroup_parts) {
                bool mounted = cgroupns && (part.view.version == 2 || !userns);
                cr_assert_eq(part.mount_fs, mounted, "%s userns %d cgroupns %d",
                             part.view.name.c_str(), userns, cgroupns);
            }
            cr_assert_eq(c.cgroup_parts[0].aliases, (std::vector<std::string>{"cpu", "cpuacct"}));
            cr_assert(c.cgroup_parts[1].aliases.empty());
            std::string d = describe_plan(p);
            cr_assert(d.find("a tmpfs with its directory in each hierarchy [cpu,cpuacct ") !=
                          std::string::npos,
                      "%s", d.c_str());
        }
}

// sysfs needs a user namespace that owns the network namespace; otherwise
// the plan binds the host's /sys read-only (decided here, not on EPERM).
Test(mount_plan, sysfs_from_the_host_without_the_network_namespace) {
    oci::Spec s = base_spec();
    for (bool userns : {false, true})
        for (bool owns : {false, true}) {
            MountFacts f;
            f.in_userns = userns;
            f.userns_owns_netns = owns;
            auto p = plan(s, f);
            const MountOp &sys = p[index_of(p, MountOpKind::mount, "/sys")];
            cr_assert_eq(sys.sysfs_from_host, userns && !owns, "userns %d owns %d", userns, owns);
            cr_assert_eq(describe_plan(p).find("the host's /sys read-only (no netns") !=
                             std::string::npos,
                         userns && !owns);
        }
}

// /dev/ptmx is linked to pts/ptmx over a devpts on /dev/pts only; a /dev
// bound from elsewhere is used as it is: no node, no link made in it (they
// would change the directory bound, the host's /dev), and a device asked
// for there is refused.
Test(mount_plan, dev_nodes_and_links_only_in_a_dev_of_its_own) {
    oci::Spec s = base_spec();
    index_of(plan(s), MountOpKind::dev_link, "/dev/ptmx");
    oci::Spec no_pts = s;
    std::erase_if(no_pts.mounts, [](const oci::Mount &m) { return m.type == "devpts"; });
    for (const MountOp &o : plan(no_pts))
        cr_assert(o.dest != "/dev/ptmx", "%s", o.what.c_str());
    index_of(plan(no_pts), MountOpKind::dev_link, "/dev/fd");

    oci::Spec bound = s;
    // Any spelling of /dev.
    bound.mounts.push_back(mnt("//dev/./", "bind", "/dev", {"rbind"}));
    auto p = plan(bound);
    for (const MountOp &o : p)
        cr_assert(o.kind != MountOpKind::device && o.kind != MountOpKind::dev_link, "%s",
                  o.what.c_str());
    index_of(p, MountOpKind::pivot);
    index_of(p, MountOpKind::mask);
    oci::Device dev;
    dev.path = "/dev/fuse";
    dev.type = "c";
    dev.major = 10;
    dev.minor = 229;
    bound.linux_->devices = {dev};
    cr_assert(plan_error(bound).find("linux.devices[0] /dev/fuse: /dev is a bind mount") !=
              std::string::npos);
}

// Whether a bind's destination is a file or a directory is known once its
// source is opened (the object the checks see), in the plan.
Test(mount_plan, bind_of_a_file_is_planned_as_one) {
    oci::Spec s = base_spec();
    s.mounts.push_back(mnt("/etc/hostname", "bind", "/etc/hostname", {"bind"}));
    s.mounts.push_back(mnt("/mnt", "bind", "/etc", {"bind"}));
    auto p = plan(s);
    cr_assert(open_bind_sources(p, "/nonexistent-rootfs").has_value());
    cr_assert(p[index_of(p, MountOpKind::mount, "/etc/hostname")].bind_file);
    cr_assert(!p[index_of(p, MountOpKind::mount, "/mnt")].bind_file);
    cr_assert(describe_plan(p).find("/etc/hostname (bind from /etc/hostname) (a file)") !=
              std::string::npos);
    close_plan_fds(p);
}
