// Mount types and options, checked from inside the container through its
// own /proc/self/mountinfo.
#include "support/console.hpp"
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using ocirun::oci::Mount;
using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::read_file;

namespace {

struct MountLine {
    std::string opts;  // per-mount options
    std::string extra; // optional fields (shared:N, master:N)
    std::string type;
    std::string super; // filesystem options
    bool found = false;
};

// The last (topmost) mountinfo line for `point`.
MountLine find_mount(const std::string &mountinfo, const std::string &point) {
    MountLine m;
    std::istringstream in(mountinfo);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::vector<std::string> w;
        std::string x;
        while (f >> x)
            w.push_back(x);
        if (w.size() < 10 || w[4] != point) continue;
        size_t dash = 6;
        while (dash < w.size() && w[dash] != "-")
            dash++;
        if (dash + 3 >= w.size()) continue;
        m = MountLine{};
        m.found = true;
        m.opts = "," + w[5] + ",";
        for (size_t i = 6; i < dash; i++)
            m.extra += w[i] + " ";
        m.type = w[dash + 1];
        m.super = "," + w[dash + 3] + ",";
    }
    return m;
}

// Run `cat /proc/self/mountinfo` in a container with `extra` mounts.
std::string mountinfo_with(const char *tag, std::vector<Mount> extra, bool writable = false) {
    Env e = make_env(tag, {"cat", "/proc/self/mountinfo"});
    e.b.spec.root->readonly = !writable;
    for (auto &m : extra)
        e.b.spec.mounts.push_back(m);
    auto o = test::run(e);
    cr_assert_eq(o.status, 0, "run: %s", o.err.c_str());
    return o.out;
}

} // namespace

TestSuite(mounts, .fini = cleanup_all, .timeout = 60);

Test(mounts, tmpfs_options) {
    std::string mi = mountinfo_with(
        "mttmpfs", {test::mount_entry("/data", "tmpfs", "tmpfs",
                                      {"nosuid", "nodev", "noexec", "size=1m", "mode=0750", "uid=5",
                                       "gid=6", "nr_inodes=100"})});
    cleanup_all();
    MountLine m = find_mount(mi, "/data");
    cr_assert(m.found, "%s", mi.c_str());
    cr_assert_str_eq(m.type.c_str(), "tmpfs");
    for (const char *o : {",nosuid,", ",nodev,", ",noexec,"})
        cr_assert(contains(m.opts, o), "%s missing in %s", o, m.opts.c_str());
    for (const char *o : {",size=1024k,", ",nr_inodes=100,", ",mode=750,", ",uid=5,", ",gid=6,"})
        cr_assert(contains(m.super, o), "%s missing in %s", o, m.super.c_str());
}

Test(mounts, read_only_bind_and_recursive_read_only) {
    Env f = make_env("mtrro2", {"cat", "/proc/self/mountinfo"});
    f.b.spec.root->readonly = false;
    std::string outer = f.b.rootfs + "/outer";
    ::mkdir(outer.c_str(), 0755);
    f.b.spec.mounts.push_back(test::mount_entry("/outer", "tmpfs", "tmpfs", {}));
    f.b.spec.mounts.push_back(test::mount_entry("/outer/inner", "tmpfs", "tmpfs", {}));
    f.b.spec.mounts.push_back(test::mount_entry("/ro", "bind", outer, {"rbind", "ro"}));
    f.b.spec.mounts.push_back(test::mount_entry("/rro", "bind", outer, {"rbind", "rro"}));
    auto o = test::run(f);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    MountLine ro = find_mount(o.out, "/ro"), ro_in = find_mount(o.out, "/ro/inner");
    MountLine rro = find_mount(o.out, "/rro"), rro_in = find_mount(o.out, "/rro/inner");
    cr_assert(ro.found && ro_in.found && rro.found && rro_in.found, "%s", o.out.c_str());
    cr_assert(contains(ro.opts, ",ro,"), "%s", ro.opts.c_str());
    cr_assert(contains(ro_in.opts, ",rw,"), "ro is not recursive: %s", ro_in.opts.c_str());
    cr_assert(contains(rro.opts, ",ro,"), "%s", rro.opts.c_str());
    cr_assert(contains(rro_in.opts, ",ro,"), "rro did not reach the submount: %s",
              rro_in.opts.c_str());
}

Test(mounts, atime_symfollow_and_propagation_flags) {
    std::string mi = mountinfo_with(
        "mtflags", {test::mount_entry("/a", "tmpfs", "tmpfs", {"noatime", "nodiratime"}),
                    test::mount_entry("/b", "tmpfs", "tmpfs", {"strictatime"}),
                    test::mount_entry("/c", "tmpfs", "tmpfs", {"nosymfollow"}),
                    test::mount_entry("/d", "tmpfs", "tmpfs", {"shared"}),
                    test::mount_entry("/e", "tmpfs", "tmpfs", {"rnoexec", "rnosuid"})});
    cleanup_all();
    MountLine a = find_mount(mi, "/a"), b = find_mount(mi, "/b"), c = find_mount(mi, "/c"),
              d = find_mount(mi, "/d"), e = find_mount(mi, "/e");
    cr_assert(contains(a.opts, ",noatime,") && contains(a.opts, ",nodiratime,"), "%s",
              a.opts.c_str());
    cr_assert(!contains(b.opts, "relatime") && !contains(b.opts, "noatime"), "%s", b.opts.c_str());
    cr_assert(contains(c.opts, ",nosymfollow,"), "%s", c.opts.c_str());
    cr_assert(contains(d.extra, "shared:"), "%s", d.extra.c_str());
    cr_assert(contains(e.opts, ",noexec,") && contains(e.opts, ",nosuid,"), "%s", e.opts.c_str());
}

Test(mounts, default_kernel_filesystems) {
    std::string mi = mountinfo_with("mtdefault", {});
    cleanup_all();
    struct Want {
        const char *point, *type, *opt, *super;
    } wants[] = {
        {"/proc", "proc", ",rw,", nullptr},
        {"/dev", "tmpfs", ",nosuid,", ",mode=755,"},
        {"/dev/pts", "devpts", ",noexec,", ",ptmxmode=666,"},
        {"/dev/shm", "tmpfs", ",nodev,", ",size=65536k,"},
        {"/dev/mqueue", "mqueue", ",nosuid,", nullptr},
        {"/sys", "sysfs", ",ro,", nullptr},
    };
    for (const auto &w : wants) {
        MountLine m = find_mount(mi, w.point);
        cr_assert(m.found, "%s not mounted:\n%s", w.point, mi.c_str());
        cr_assert_str_eq(m.type.c_str(), w.type, "%s", w.point);
        cr_assert(contains(m.opts, w.opt), "%s: %s", w.point, m.opts.c_str());
        if (w.super) cr_assert(contains(m.super, w.super), "%s: %s", w.point, m.super.c_str());
    }
}

Test(mounts, overlay_with_data_options) {
    std::string base = test::track_dir(test::make_temp_dir("mtovl"));
    for (const char *d : {"/lower", "/upper", "/work"})
        ::mkdir((base + d).c_str(), 0755);
    test::write_file(base + "/lower/from-lower", "lower\n");
    Env e = make_env("mtovl", {"sh", "-c",
                               "cat /ovl/from-lower; echo up > /ovl/new; grep ' /ovl ' "
                               "/proc/self/mountinfo"});
    e.b.spec.mounts.push_back(
        test::mount_entry("/ovl", "overlay", "overlay",
                          {"lowerdir=" + base + "/lower", "upperdir=" + base + "/upper",
                           "workdir=" + base + "/work"}));
    auto o = test::run(e);
    std::string upper = read_file(base + "/upper/new");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "lower\n") && contains(o.out, " - overlay "), "%s", o.out.c_str());
    cr_assert_str_eq(upper.c_str(), "up\n");
}

// Data-only lower layers ("::", kernel 6.5) mount as given: each layer is
// opened and checked, and the separators kept (they were read as an empty
// layer's name, and refused).
Test(mounts, overlay_with_data_only_layers) {
    std::string base = test::track_dir(test::make_temp_dir("mtovd"));
    for (const char *d : {"/lower", "/data"})
        ::mkdir((base + d).c_str(), 0755);
    test::write_file(base + "/lower/from-lower", "lower\n");
    Env e = make_env("mtovd", {"cat", "/ovl/from-lower"});
    e.b.spec.mounts.push_back(test::mount_entry(
        "/ovl", "overlay", "overlay",
        {"lowerdir=" + base + "/lower::" + base + "/data", "metacopy=on", "redirect_dir=follow"}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "lower\n");
}

Test(mounts, tmpcopyup_keeps_what_the_directory_held) {
    Env e = make_env("mtcopyup", {"sh", "-c",
                                  "grep -c root /etc/passwd; echo x > /etc/new; "
                                  "grep ' /etc ' /proc/self/mountinfo"});
    e.b.spec.mounts.push_back(
        test::mount_entry("/etc", "tmpfs", "tmpfs", {"tmpcopyup", "mode=755"}));
    auto o = test::run(e);
    bool leaked = test::exists(e.b.rootfs + "/etc/new");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, " - tmpfs "), "%s", o.out.c_str());
    cr_assert(o.out.rfind("1\n", 0) == 0, "/etc/passwd was not copied up: %s", o.out.c_str());
    cr_assert(!leaked, "a write went through to the rootfs");
}

// tmpcopyup copies whole or fails, naming the file and the errno: a file
// larger than the tmpfs (sendfile answers ENOSPC part-way), and an owner the
// copy cannot keep (in a user namespace that maps ids 0-999 only, the
// host's root shows as the unmapped overflow id). Nothing is left behind.
Test(mounts, tmpcopyup_fails_rather_than_copy_part_of_a_file_or_lose_its_owner) {
    Env big = make_env("mtcopyfull", {"true"});
    ::mkdir((big.b.rootfs + "/data").c_str(), 0755);
    test::write_file(big.b.rootfs + "/data/big", std::string(1 << 20, 'x'));
    big.b.spec.mounts.push_back(
        test::mount_entry("/data", "tmpfs", "tmpfs", {"tmpcopyup", "size=64k"}));
    auto full = test::run(big);
    auto full_left = test::dir_entries(big.root);

    Env owner = make_env("mtcopyown", {"true"});
    ::mkdir((owner.b.rootfs + "/data").c_str(), 0755);
    test::write_file(owner.b.rootfs + "/data/hosts-root", "x\n");
    test::use_user_namespace(owner);
    owner.b.spec.linux_->uid_mappings = {{0, 100000, 1000}};
    owner.b.spec.linux_->gid_mappings = {{0, 100000, 1000}};
    owner.b.spec.mounts.push_back(test::mount_entry("/data", "tmpfs", "tmpfs", {"tmpcopyup"}));
    auto lost = test::run(owner);
    auto lost_left = test::dir_entries(owner.root);
    cleanup_all();
    cr_assert_eq(full.status, 1, "%s", full.err.c_str());
    cr_assert_eq(test::count_lines(full.err), 1u, "%s", full.err.c_str());
    cr_assert(contains(full.err, "tmpcopyup: copy big: No space left on device"), "%s",
              full.err.c_str());
    cr_assert(full_left.empty());
    cr_assert_eq(lost.status, 1, "%s", lost.err.c_str());
    cr_assert_eq(test::count_lines(lost.err), 1u, "%s", lost.err.c_str());
    cr_assert(contains(lost.err, "tmpcopyup: chown hosts-root to 65534:65534: Invalid argument"),
              "%s", lost.err.c_str());
    cr_assert(lost_left.empty());
}

Test(mounts, bind_of_a_file) {
    std::string dir = test::track_dir(test::make_temp_dir("mtfile"));
    test::write_file(dir + "/f", "bound file\n");
    Env e = make_env("mtfile", {"cat", "/etc/bound"});
    e.b.spec.mounts.push_back(test::mount_entry("/etc/bound", "bind", dir + "/f", {"bind", "ro"}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "bound file\n");
}

Test(mounts, unknown_bind_option_and_idmap_are_clear_errors) {
    std::string dir = test::track_dir(test::make_temp_dir("mtbad"));
    Env e = make_env("mtbad", {"true"});
    e.b.spec.mounts.push_back(test::mount_entry("/x", "bind", dir, {"bind", "readonly-please"}));
    auto o = test::run(e);
    Env f = make_env("mtidmap", {"true"});
    f.b.spec.mounts.push_back(test::mount_entry("/x", "bind", dir, {"bind", "idmap"}));
    auto i = test::run(f);
    cleanup_all();
    cr_assert_eq(o.status, 1);
    cr_assert(contains(o.err, "unknown mount option \"readonly-please\""), "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u);
    cr_assert_eq(i.status, 1);
    cr_assert(contains(i.err, "idmap without uidMappings needs the container's user namespace"),
              "%s", i.err.c_str());
}

// An idmapped bind (the container's mapping, 0 -> 100000): a host file owned
// by uid 0 shows as owned by the container's root and is writable by it;
// the same directory bound without idmap shows the overflow id.
Test(mounts, idmapped_bind_maps_owners) {
    std::string dir = test::track_dir(test::make_temp_dir("mtidm"));
    ::chmod(dir.c_str(), 0755);
    test::write_file(dir + "/f", "data\n");
    ::chmod((dir + "/f").c_str(), 0644);
    Env e = make_env("mtidm",
                     {"sh", "-c", "stat -c '%u %g' /m/f /n/f; echo more >> /m/f && echo written"});
    test::use_user_namespace(e);
    e.b.spec.root->readonly = false;
    ::mkdir((e.b.rootfs + "/m").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/n").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/m", "bind", dir, {"bind", "idmap"}));
    e.b.spec.mounts.push_back(test::mount_entry("/n", "bind", dir, {"bind"}));
    auto o = test::run(e);
    std::string content = read_file(dir + "/f");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "0 0\n65534 65534\nwritten\n");
    cr_assert_str_eq(content.c_str(), "data\nmore\n");
}

// A mount's own uidMappings and gidMappings (no user namespace for the
// container): the runtime makes a namespace with that mapping for the mount,
// read from config.json's mounts[i] when it makes it. On-disk owner 0 shows
// as 1000 through the idmapped bind, as 0 through the plain one.
Test(mounts, idmapped_bind_with_its_own_mapping) {
    std::string dir = test::track_dir(test::make_temp_dir("mtido"));
    ::chmod(dir.c_str(), 0755);
    test::write_file(dir + "/f", "data\n");
    ::chmod((dir + "/f").c_str(), 0644);
    Env e = make_env("mtido", {"sh", "-c", "stat -c '%u %g' /m/f /n/f"});
    e.b.spec.root->readonly = false;
    ::mkdir((e.b.rootfs + "/m").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/n").c_str(), 0755);
    auto m = test::mount_entry("/m", "bind", dir, {"bind", "idmap"});
    m.uid_mappings = {{0, 1000, 1}};
    m.gid_mappings = {{0, 2000, 1}};
    e.b.spec.mounts.push_back(m);
    e.b.spec.mounts.push_back(test::mount_entry("/n", "bind", dir, {"bind"}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "1000 2000\n0 0\n");
}

// linux.devices: made with mknod as root (mode, owner), bound from the host
// in a user namespace; and the /dev links every container gets.
Test(mounts, configured_devices_and_dev_links) {
    ocirun::oci::Device d;
    d.path = "/dev/mydev";
    d.type = "c";
    d.major = 1;
    d.minor = 5; // zero
    d.file_mode = 0640;
    d.uid = 0;
    d.gid = 8;
    Env e = make_env("mtdev", {"sh", "-c",
                               "stat -c '%t:%T %a %u %g' /dev/mydev; head -c 3 /dev/mydev | wc -c; "
                               "for l in fd stdin stdout stderr ptmx core; do readlink /dev/$l; "
                               "done"});
    e.b.spec.linux_->devices.push_back(d);
    auto o = test::run(e);
    // In a user namespace the host's node is bound (there is no /dev/mydev
    // on the host, so use one that exists).
    ocirun::oci::Device u = d;
    u.path = "/dev/zero";
    Env f = make_env("mtdevu", {"sh", "-c", "stat -c '%t:%T' /dev/zero"});
    auto &lx = *f.b.spec.linux_;
    lx.devices.push_back(u);
    test::use_user_namespace(f);
    auto ou = test::run(f);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "1:5 640 0 8\n3\n/proc/self/fd\n/proc/self/fd/0\n"
                                    "/proc/self/fd/1\n/proc/self/fd/2\npts/ptmx\n/proc/kcore\n");
    cr_assert_eq(ou.status, 0, "%s", ou.err.c_str());
    cr_assert_str_eq(ou.out.c_str(), "1:5\n");
}

// A proc mount anywhere but /proc is refused with one line, by field, and
// leaves nothing: a second procfs shows /proc/sys writable, which
// readonlyPaths covers on /proc (a container without a user namespace
// wrote the host's kernel.core_pattern through /mnt/proc/sys).
Test(mounts, a_second_proc_mount_is_refused) {
    // (what it writes is what is there: a regression changes nothing)
    Env e = make_env("mtproc2", {"sh", "-c",
                                 "p=$(cat /mnt/proc/sys/kernel/core_pattern) && "
                                 "echo \"$p\" > /mnt/proc/sys/kernel/core_pattern && echo WROTE"});
    ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/mnt/proc").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/mnt/proc", "proc", "proc", {}));
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(!contains(o.out, "WROTE"));
    cr_assert(contains(o.err, "mounts[") &&
                  contains(o.err, "/mnt/proc: a proc mount other than /proc would show what "
                                  "maskedPaths and readonlyPaths hide there"),
              "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u, "%s", o.err.c_str());
    cr_assert(left.empty());
}

// In a user namespace a device is the host's node bound, and only if it is
// the device the entry names: /dev/fuse (10:229) listed as 1:3, or
// /dev/stdin (a link to whatever the runtime's fd 0 is) as 1:3, is refused
// with one line, and nothing is left (the device asked for was once not
// compared, and /dev/fuse was bound as "1:3").
Test(mounts, a_bound_device_is_the_one_asked_for) {
    std::string failures;
    for (const char *path : {"/dev/fuse", "/dev/stdin"}) {
        ocirun::oci::Device d;
        d.path = path;
        d.type = "c";
        d.major = 1;
        d.minor = 3;
        d.file_mode = 0666;
        Env e = make_env("mtdevlie", {"sh", "-c", std::string("stat -c '%t:%T' ") + path});
        e.b.spec.linux_->devices.push_back(d);
        test::use_user_namespace(e);
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        std::string want = std::string("the host's ") + path + " is not the device asked for";
        if (o.status != 1 || test::count_lines(o.err) != 1 || !contains(o.err, want) ||
            !left.empty())
            failures += std::string(path) + ": " + std::to_string(o.status) + " " + o.out + o.err;
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// A create that fails in the middle of the rootfs (a bind source that does
// not exist) leaves nothing: no state, no host mount, no cgroup, no process.
Test(mounts, failed_create_leaves_nothing) {
    Env e = make_env("mtfail", {"sleep", "30"});
    e.b.spec.mounts.push_back(test::mount_entry("/x", "bind", "/nonexistent/source", {"bind"}));
    e.b.save();
    auto mounts = test::mount_ids();
    auto c = test::create(e);
    auto left = test::dir_entries(e.root);
    std::string leaked = test::new_mounts(mounts, {e.root, e.b.dir, e.id});
    std::string cgroups;
    for (const char *h : {"pids", "memory", "cpu", "unified", "freezer"}) {
        std::string p = std::string("/sys/fs/cgroup/") + h + "/oci-run/" + e.id;
        if (test::exists(p)) cgroups += p + " ";
    }
    cleanup_all();
    cr_assert_eq(c.status, 1, "create: %s", c.err.c_str());
    cr_assert(contains(c.err, "/nonexistent/source"), "%s", c.err.c_str());
    cr_assert_eq(test::count_lines(c.err), 1u);
    cr_assert(left.empty(), "state left: %s", left.empty() ? "" : left[0].c_str());
    cr_assert(leaked.empty(), "%s", leaked.c_str());
    cr_assert(cgroups.empty(), "cgroups left: %s", cgroups.c_str());
}

Test(mounts, sync_lazytime_and_propagation_kinds) {
    std::string mi = mountinfo_with(
        "mtsync", {test::mount_entry("/s", "tmpfs", "tmpfs", {"sync", "dirsync"}),
                   test::mount_entry("/l", "tmpfs", "tmpfs", {"lazytime", "relatime"}),
                   test::mount_entry("/u", "tmpfs", "tmpfs", {"unbindable"}),
                   test::mount_entry("/p", "tmpfs", "tmpfs", {"private"}),
                   test::mount_entry("/r", "tmpfs", "tmpfs", {"ro", "nodev"})});
    cleanup_all();
    MountLine s = find_mount(mi, "/s"), l = find_mount(mi, "/l"), u = find_mount(mi, "/u"),
              p = find_mount(mi, "/p"), r = find_mount(mi, "/r");
    cr_assert(contains(s.super, ",sync,") && contains(s.super, ",dirsync,"), "%s", s.super.c_str());
    cr_assert(contains(l.super, ",lazytime,") && contains(l.opts, ",relatime,"), "%s %s",
              l.super.c_str(), l.opts.c_str());
    cr_assert(contains(u.extra, "unbindable"), "%s", u.extra.c_str());
    cr_assert(!contains(p.extra, "shared:") && !contains(p.extra, "master:"), "%s",
              p.extra.c_str());
    cr_assert(contains(r.opts, ",ro,") && contains(r.opts, ",nodev,"), "%s", r.opts.c_str());
}

namespace {

// A tmpfs of ours on a fresh directory with `options`, unmounted (and the
// directory removed) by the destructor.
struct HostTmpfs {
    std::string dir;
    explicit HostTmpfs(const char *tag, const char *options) {
        dir = test::make_temp_dir(tag);
        auto r = test::run(
            std::vector<std::string>{"mount", "-t", "tmpfs", "-o", options, "tmpfs", dir});
        cr_assert_eq(r.status, 0, "mount %s: %s", dir.c_str(), r.err.c_str());
    }
    ~HostTmpfs() {
        test::run(std::vector<std::string>{"umount", dir});
        ::rmdir(dir.c_str());
    }
};

} // namespace

// config.md mounts: options a bind does not know are filesystem data, which
// runc passes on (the kernel ignores it for a bind): ["bind", "mode=755",
// "size=1k"] works; a bare unknown word is still refused (most likely a
// flag misspelt). A relative destination is relative to "/" (MAY, for old
// tools). A path listed twice in maskedPaths is masked once.
Test(mounts, runc_bind_data_relative_destination_and_one_mask_per_path) {
    std::string dir = test::track_dir(test::make_temp_dir("mtdata"));
    test::write_file(dir + "/seen", "yes\n");
    Env e = make_env("mtdata", {"sh", "-c", "cat /x/seen; cat /proc/self/mountinfo"});
    e.b.spec.mounts.push_back(
        test::mount_entry("/x", "bind", dir, {"bind", "mode=755", "size=1k"}));
    e.b.spec.mounts.push_back(test::mount_entry("rel", "tmpfs", "tmpfs", {}));
    e.b.spec.linux_->masked_paths.push_back("/proc/timer_list");
    e.b.spec.linux_->masked_paths.push_back("/proc/timer_list");
    auto o = test::run(e);
    Env f = make_env("mtdata2", {"true"});
    f.b.spec.mounts.push_back(test::mount_entry("/x", "bind", dir, {"bind", "noexce"}));
    auto bad = test::run(f);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "yes\n"), "%s", o.out.c_str());
    cr_assert(find_mount(o.out, "/rel").found, "%s", o.out.c_str());
    size_t masks = 0;
    std::istringstream in(o.out);
    std::string line;
    while (std::getline(in, line))
        if (contains(line, " /proc/timer_list ")) masks++;
    cr_assert_eq(masks, 1u, "%s", o.out.c_str());
    cr_assert_eq(bad.status, 1);
    cr_assert(contains(bad.err, "mounts[") && contains(bad.err, "unknown mount option \"noexce\""),
              "%s", bad.err.c_str());
}

// runc: a maskedPaths or readonlyPaths entry that is a symlink in the
// rootfs applies to what it names, followed inside the rootfs (an absolute
// target and a relative one): the directory named is read-only, the file
// named is masked (applied to the link itself, both stayed as they were).
Test(mounts, runc_masked_and_read_only_paths_follow_symlinks_in_the_rootfs) {
    Env e = make_env("mtmasksym", {"sh", "-c",
                                   "echo x > /rodata/f && echo WROTE; cat /msdata/secret; "
                                   "cat /etc/msfile; echo end"});
    e.b.spec.root->readonly = false;
    for (const char *d : {"/rodata", "/msdata"})
        ::mkdir((e.b.rootfs + d).c_str(), 0755);
    test::write_file(e.b.rootfs + "/rodata/f", "original\n");
    test::write_file(e.b.rootfs + "/msdata/secret", "SECRET-DIR\n");
    test::write_file(e.b.rootfs + "/etc/msfile", "SECRET-FILE\n");
    ::symlink("/rodata", (e.b.rootfs + "/ro_alias").c_str());
    ::symlink("msdata", (e.b.rootfs + "/ms_alias").c_str());
    ::symlink("../../etc/msfile", (e.b.rootfs + "/etc/ms_file_alias").c_str());
    e.b.spec.linux_->readonly_paths.push_back("/ro_alias");
    e.b.spec.linux_->masked_paths.push_back("/ms_alias");
    e.b.spec.linux_->masked_paths.push_back("/etc/ms_file_alias");
    auto o = test::run(e);
    std::string f = read_file(e.b.rootfs + "/rodata/f");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(!contains(o.out, "WROTE") && contains(o.err, "Read-only file system"), "%s\n%s",
              o.out.c_str(), o.err.c_str());
    cr_assert(!contains(o.out, "SECRET"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "end"), "%s", o.out.c_str());
    cr_assert_str_eq(f.c_str(), "original\n");
}

// runc: a tmpfs without mode= takes the mode of the directory it covers; one
// on a directory the runtime makes has tmpfs's 1777.
Test(mounts, runc_tmpfs_takes_the_mode_of_its_mount_point) {
    Env e = make_env("mtmode", {"sh", "-c", "stat -c '%a %n' /tm /tnew"});
    cr_assert(::mkdir((e.b.rootfs + "/tm").c_str(), 0711) == 0);
    ::chmod((e.b.rootfs + "/tm").c_str(), 0711);
    e.b.spec.mounts.push_back(test::mount_entry("/tm", "tmpfs", "tmpfs", {"nosuid"}));
    e.b.spec.mounts.push_back(test::mount_entry("/tnew", "tmpfs", "tmpfs", {}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "711 /tm\n"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "1777 /tnew\n"), "%s", o.out.c_str());
}

// runc (securejoin's MkdirAll in the root): a destination through a dangling
// symlink is made where the symlink leads, inside the rootfs, never outside
// it (an absolute target and a relative one climbing past the root).
Test(mounts, runc_destination_through_a_dangling_symlink_is_made_in_the_rootfs) {
    Env e = make_env("mtdang", {"sh", "-c", "cat /proc/self/mountinfo"});
    std::string outside = "/oci-run-test-dangling-" + std::to_string(::getpid());
    cr_assert(::symlink((outside + "/deep").c_str(), (e.b.rootfs + "/y").c_str()) == 0);
    cr_assert(::symlink(("../../.." + outside + "-rel").c_str(), (e.b.rootfs + "/w").c_str()) == 0);
    e.b.spec.mounts.push_back(test::mount_entry("/y/z", "tmpfs", "tmpfs", {}));
    e.b.spec.mounts.push_back(test::mount_entry("/w/v", "tmpfs", "tmpfs", {}));
    auto o = test::run(e);
    bool made = test::exists(e.b.rootfs + outside + "/deep/z") &&
                test::exists(e.b.rootfs + outside + "-rel/v");
    bool escaped = test::exists(outside) || test::exists(outside + "-rel");
    cleanup_all();
    ::rmdir((outside + "/deep/z").c_str());
    cr_assert(!escaped, "a directory was made outside the rootfs");
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(made, "the symlinks' targets were not made in the rootfs");
    cr_assert(find_mount(o.out, outside + "/deep/z").found, "%s", o.out.c_str());
    cr_assert(find_mount(o.out, outside + "-rel/v").found, "%s", o.out.c_str());
}

// runc's finalizeRootfs: "ro" on a /dev tmpfs is applied after its device
// nodes, links, submounts and console are made; the submounts keep their
// own flags.
Test(mounts, runc_read_only_dev_after_its_submounts) {
    Env e = make_env("mtdevro",
                     {"sh", "-c",
                      "cat /proc/self/mountinfo; touch /dev/zz 2>&1; touch /dev/shm/ok && echo "
                      "shm-ok; echo x > /dev/null && echo null-ok; ls /dev/pts/ptmx"});
    for (auto &m : e.b.spec.mounts)
        if (m.destination == "/dev") m.options.push_back("ro");
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    MountLine dev = find_mount(o.out, "/dev"), shm = find_mount(o.out, "/dev/shm");
    cr_assert(contains(dev.opts, ",ro,"), "%s", o.out.c_str());
    cr_assert(contains(shm.opts, ",rw,"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "Read-only file system"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "shm-ok\n") && contains(o.out, "null-ok\n"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "/dev/pts/ptmx"), "%s", o.out.c_str());
}

// runc's recursive atime options ratime, rnostrictatime and rrelatime (the
// atime field is one of three values; clearing one leaves relatime), and a
// bind's "suid", "dev" and "exec" clearing what the source has; in a user
// namespace the source's flags are locked by the kernel and stay (as runc
// keeps them), and the container still starts.
Test(mounts, runc_bind_clears_flags_and_recursive_atime) {
    test::Output o, ou;
    {
        HostTmpfs noatime("mtna", "noatime"), strict("mtst", "strictatime,nosuid,nodev,noexec");
        Env e = make_env("mtflags", {"cat", "/proc/self/mountinfo"});
        e.b.spec.mounts.push_back(
            test::mount_entry("/na", "bind", noatime.dir, {"rbind", "ratime"}));
        e.b.spec.mounts.push_back(
            test::mount_entry("/nr", "bind", noatime.dir, {"rbind", "rrelatime"}));
        e.b.spec.mounts.push_back(test::mount_entry(
            "/ns", "bind", strict.dir, {"rbind", "rnostrictatime", "suid", "dev", "exec"}));
        o = test::run(e);
        Env u = make_env("mtflagsu", {"cat", "/proc/self/mountinfo"});
        test::use_user_namespace(u);
        cr_assert(::mkdir((u.b.rootfs + "/ns").c_str(), 0755) == 0);
        u.b.spec.mounts.push_back(
            test::mount_entry("/ns", "bind", strict.dir, {"rbind", "suid", "dev", "exec"}));
        ou = test::run(u);
        cleanup_all();
    } // the host's tmpfs mounts are gone before any assertion
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    MountLine na = find_mount(o.out, "/na"), nr = find_mount(o.out, "/nr"),
              ns = find_mount(o.out, "/ns");
    cr_assert(contains(na.opts, ",relatime,"), "ratime: %s", na.opts.c_str());
    cr_assert(contains(nr.opts, ",relatime,"), "rrelatime: %s", nr.opts.c_str());
    cr_assert(contains(ns.opts, ",relatime,"), "rnostrictatime: %s", ns.opts.c_str());
    for (const char *flag : {",nosuid,", ",nodev,", ",noexec,"})
        cr_assert(!contains(ns.opts, flag), "%s still on: %s", flag, ns.opts.c_str());
    cr_assert_eq(ou.status, 0, "user namespace: %s", ou.err.c_str());
    MountLine locked = find_mount(ou.out, "/ns");
    for (const char *flag : {",nosuid,", ",nodev,", ",noexec,"})
        cr_assert(contains(locked.opts, flag), "%s (locked) was lost: %s", flag,
                  locked.opts.c_str());
}

// An idmap bind in a container that joins a user namespace by path (a pod
// member): with no mappings of its own it is mapped through that namespace
// (its mappings are not in config.json), so a host file of uid 0 is the
// container's root's (issue 21).
Test(mounts, idmapped_bind_in_a_joined_user_namespace) {
    std::string dir = test::track_dir(test::make_temp_dir("mtidj"));
    ::chmod(dir.c_str(), 0755);
    test::write_file(dir + "/f", "data\n");
    Env a = make_env("mtidjh", {"sleep", "30"});
    test::use_user_namespace(a);
    a.b.save();
    auto ca = test::create(a);
    std::string userns = "/proc/" + std::to_string(test::state_of(a.root, a.id).pid) + "/ns/user";
    Env b = make_env("mtidj", {"sh", "-c", "stat -c '%u %g' /m/f /n/f; id -u"});
    b.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::user, userns});
    ::mkdir((b.b.rootfs + "/m").c_str(), 0755);
    ::mkdir((b.b.rootfs + "/n").c_str(), 0755);
    b.b.spec.mounts.push_back(test::mount_entry("/m", "bind", dir, {"bind", "idmap"}));
    b.b.spec.mounts.push_back(test::mount_entry("/n", "bind", dir, {"bind"}));
    b.b.save();
    ::chmod(b.b.dir.c_str(), 0755);
    auto o = test::run(b);
    cleanup_all();
    cr_assert_eq(ca.status, 0, "create the holder: %s", ca.err.c_str());
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "0 0\n65534 65534\n0\n");
}

// runc's mount order: a bind source under the rootfs is resolved when its
// turn comes, after the mounts before it (["bind", host dir -> /mnt] then
// ["bind", <rootfs>/mnt/sub -> /other] binds the host dir's sub), and inside
// the root: a symlink in the rootfs to /etc is the rootfs's /etc, never the
// host's.
Test(mounts, runc_bind_sources_in_the_rootfs_follow_the_mount_order) {
    std::string host = test::track_dir(test::make_temp_dir("mtorder"));
    ::mkdir((host + "/sub").c_str(), 0755);
    test::write_file(host + "/sub/f", "from the host\n");
    Env e = make_env("mtorder", {"sh", "-c",
                                 "cat /other/f; test -e /e/os-release && echo HOST; "
                                 "test -e /e/passwd && echo ROOTFS"});
    ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/other").c_str(), 0755);
    cr_assert(::symlink("/etc", (e.b.rootfs + "/esc").c_str()) == 0);
    e.b.spec.mounts.push_back(test::mount_entry("/mnt", "bind", host, {"bind"}));
    e.b.spec.mounts.push_back(
        test::mount_entry("/other", "bind", e.b.rootfs + "/mnt/sub", {"bind"}));
    e.b.spec.mounts.push_back(test::mount_entry("/e", "bind", e.b.rootfs + "/esc", {"bind"}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "from the host\nROOTFS\n");
}

// runc: propagation options apply to an idmapped bind too ("shared" shows
// as a peer group in mountinfo), not only to plain binds.
Test(mounts, idmapped_bind_takes_its_propagation) {
    std::string dir = test::track_dir(test::make_temp_dir("mtidsh"));
    ::chmod(dir.c_str(), 0755);
    Env e = make_env("mtidsh", {"cat", "/proc/self/mountinfo"});
    test::use_user_namespace(e);
    ::mkdir((e.b.rootfs + "/m").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/m", "bind", dir, {"bind", "idmap", "shared"}));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    MountLine m = find_mount(o.out, "/m");
    cr_assert(m.found, "%s", o.out.c_str());
    cr_assert(contains(m.extra, "shared:"), "no peer group: %s", m.extra.c_str());
}

// An idmapped bind is a copy the runtime makes, and the kernel locks none of
// its flags in the container's user namespace: a host read-only mount bound
// with idmap into a user namespace whose process holds CAP_SYS_ADMIN could
// be remounted writable there (found while testing issue 21; the plain bind
// of it stays locked). Refused, naming the mount, nothing written; without
// CAP_SYS_ADMIN it runs and stays read-only; with a sandbox policy (whose
// nested namespace locks every mount) it runs and stays read-only too.
Test(mounts, idmapped_copy_of_a_read_only_host_mount_stays_read_only) {
    // Not tracked: cleanup_all between the cases would remove them.
    std::string src = test::make_temp_dir("mtidro");
    std::string ro = test::make_temp_dir("mtidro2");
    ::chmod(src.c_str(), 0755);
    ::chmod(ro.c_str(), 0755);
    test::write_file(src + "/f", "data\n");
    auto bind = test::run(std::vector<std::string>{"mount", "--bind", src, ro});
    auto rdonly = test::run(std::vector<std::string>{"mount", "-o", "remount,bind,ro", ro});
    struct Case {
        const char *tag;
        bool admin, policy;
    } cases[] = {{"mtidroa", true, false}, {"mtidrob", false, false}, {"mtidroc", true, true}};
    std::vector<test::Output> out;
    std::vector<bool> left;
    for (const auto &k : cases) {
        Env e = make_env(k.tag, {"sh", "-c",
                                 "mount -o remount,bind,rw /m 2>/dev/null && echo REMOUNTED; "
                                 "echo x >> /m/f 2>/dev/null && echo WROTE; cat /m/f"});
        test::use_user_namespace(e);
        ::mkdir((e.b.rootfs + "/m").c_str(), 0755);
        e.b.spec.mounts.push_back(test::mount_entry("/m", "bind", ro, {"bind", "idmap"}));
        if (k.admin) test::add_capabilities(e, {"CAP_SYS_ADMIN"});
        if (k.policy) e.b.spec.annotations["dev.ocirun.deny-rename"] = "/etc";
        out.push_back(test::run(e));
        left.push_back(test::exists(e.root + "/" + e.id));
        cleanup_all();
    }
    test::run(std::vector<std::string>{"umount", ro});
    std::string content = read_file(src + "/f");
    test::rm_rf(ro);
    test::rm_rf(src);
    cr_assert_eq(bind.status, 0, "%s", bind.err.c_str());
    cr_assert_eq(rdonly.status, 0, "%s", rdonly.err.c_str());
    cr_assert_neq(out[0].status, 0, "ran: %s", out[0].out.c_str());
    cr_assert(contains(out[0].err, "/m: idmap: the source " + ro + " is ro on the host"), "%s",
              out[0].err.c_str());
    cr_assert_eq(test::count_lines(out[0].err), 1u, "%s", out[0].err.c_str());
    cr_assert(!left[0], "the refused container left its state");
    for (size_t i : {1u, 2u}) {
        cr_assert_eq(out[i].status, 0, "%s: %s", cases[i].tag, out[i].err.c_str());
        cr_assert_str_eq(out[i].out.c_str(), "data\n", "%s", cases[i].tag);
    }
    cr_assert_str_eq(content.c_str(), "data\n");
}

// runc opens bind sources before the container's user namespace: a source
// under a directory only the host's root may enter (0700) still binds in a
// user namespace (the runtime opens it, in the init's mount namespace, and
// passes it), and what the host made read-only stays locked there: a root
// with CAP_SYS_ADMIN in that namespace cannot remount it writable.
Test(mounts, bind_sources_only_the_hosts_root_reaches_in_a_user_namespace) {
    std::string top = test::make_temp_dir("mtpriv"); // 0700, the host root's
    std::string inner = top + "/inner", ro = top + "/ro";
    ::mkdir(inner.c_str(), 0755);
    ::mkdir(ro.c_str(), 0755);
    test::write_file(inner + "/f", "hidden\n");
    auto bind = test::run(std::vector<std::string>{"mount", "--bind", inner, ro});
    auto rdonly = test::run(std::vector<std::string>{"mount", "-o", "remount,bind,ro", ro});
    Env e = make_env("mtpriv", {"sh", "-c",
                                "cat /x/f; mount -o remount,bind,rw /r 2>/dev/null && echo "
                                "REMOUNTED; echo y >> /r/f 2>/dev/null && echo WROTE; true"});
    test::use_user_namespace(e);
    test::add_capabilities(e, {"CAP_SYS_ADMIN"});
    ::mkdir((e.b.rootfs + "/x").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/r").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/x", "bind", inner, {"bind"}));
    e.b.spec.mounts.push_back(test::mount_entry("/r", "bind", ro, {"bind"}));
    auto o = test::run(e);
    cleanup_all();
    test::run(std::vector<std::string>{"umount", ro});
    std::string content = read_file(inner + "/f");
    if (!test::contains(read_file("/proc/self/mountinfo"), " " + ro + " ")) test::rm_rf(top);
    cr_assert_eq(bind.status, 0, "%s", bind.err.c_str());
    cr_assert_eq(rdonly.status, 0, "%s", rdonly.err.c_str());
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "hidden\n");
    cr_assert_str_eq(content.c_str(), "hidden\n");
}

namespace {

// `dev` bound on /dev in place of the configuration's tmpfs, under its
// devpts and the rest (as a client's -v /dev:/dev).
void bind_dev(Env &e, const std::string &dev) {
    for (auto &m : e.b.spec.mounts)
        if (m.destination == "/dev") m = test::mount_entry("/dev", "bind", dev, {"rbind"});
}

} // namespace

// A /dev bound from elsewhere (a privileged client's -v /dev:/dev) is used
// as it is, as runc does: no node made in it, no link, no mode changed, and
// a terminal's /dev/console bound over the node there, not replacing it.
// The directory bound is the host's: before, oci-run remade its nodes
// (files in a user namespace), replaced its ptmx with a link and added
// nodes.
Test(mounts, runc_dev_bound_from_the_host_is_left_as_it_is) {
    std::string dev = test::track_dir(test::make_temp_dir("fakedev"));
    cr_assert(!dev.empty());
    cr_assert_eq(chmod(dev.c_str(), 0755), 0); // a user namespace's root looks in it
    cr_assert_eq(mknod((dev + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    cr_assert_eq(mknod((dev + "/ptmx").c_str(), S_IFCHR | 0640, makedev(5, 2)), 0);
    cr_assert_eq(mknod((dev + "/console").c_str(), S_IFCHR | 0600, makedev(5, 1)), 0);
    cr_assert_eq(chmod((dev + "/null").c_str(), 0666), 0);
    cr_assert_eq(chmod((dev + "/ptmx").c_str(), 0640), 0);
    cr_assert_eq(mkdir((dev + "/pts").c_str(), 0755), 0);
    std::vector<std::string> seen;
    for (bool userns : {false, true}) {
        Env e =
            make_env(userns ? "mtdevbu" : "mtdevb",
                     {"sh", "-c", "ls /dev | tr '\\n' ' '; echo x > /dev/null && echo null-ok"});
        bind_dev(e, dev);
        if (userns) test::use_user_namespace(e);
        auto o = test::run(e);
        seen.push_back(std::to_string(o.status) + " " + o.out + o.err);
    }
    // With a terminal: /dev/console is the pty, bound over the node.
    Env t = make_env("mtdevbt", {"sh", "-c", "tty; stat -c %t:%T /dev/console; echo done"});
    bind_dev(t, dev);
    t.b.spec.process->terminal = true;
    t.b.save();
    test::ConsoleCreate cr = test::create_with_console_socket(t.root, t.b.dir, t.id);
    int master = cr.master, create_status = cr.status;
    std::string create_err = cr.err;
    auto st = test::oci({"--root", t.root, "start", t.id});
    std::string tty = master >= 0 ? test::read_until(master, "done") : "";
    if (master >= 0) close(master);
    std::vector<std::string> after = test::dir_entries(dev);
    std::sort(after.begin(), after.end());
    struct stat null {
    }, ptmx{}, console{};
    lstat((dev + "/null").c_str(), &null);
    lstat((dev + "/ptmx").c_str(), &ptmx);
    lstat((dev + "/console").c_str(), &console);
    cleanup_all();
    for (const auto &s : seen) {
        cr_assert(s.rfind("0 console mqueue null ptmx pts shm null-ok\n", 0) == 0, "%s", s.c_str());
    }
    cr_assert_eq(create_status, 0, "create: %s", create_err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(contains(tty, "/dev/console") || contains(tty, "/dev/pts/"), "%s", tty.c_str());
    cr_assert(contains(tty, "88:"), "/dev/console is not the pty: %s", tty.c_str());
    // (The mount points of the configuration's /dev/shm and /dev/mqueue are
    // made, as runc makes them.)
    cr_assert_eq(after,
                 (std::vector<std::string>{"console", "mqueue", "null", "ptmx", "pts", "shm"}));
    cr_assert(S_ISCHR(null.st_mode) && null.st_rdev == makedev(1, 3), "null: %o", null.st_mode);
    cr_assert(S_ISCHR(ptmx.st_mode) && (ptmx.st_mode & 07777) == 0640,
              "ptmx is no longer the node as it was: %o", ptmx.st_mode);
    cr_assert(S_ISCHR(console.st_mode) && console.st_rdev == makedev(5, 1), "console: %o",
              console.st_mode);
}
