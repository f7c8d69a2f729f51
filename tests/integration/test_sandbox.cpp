// The sandbox policy from annotations (dev.ocirun.*), on real containers:
// what the process sees of denied, read-only and pinned paths, the protected
// host paths a writable mount may not reach, and errors for bad values.
#include "support/console.hpp"
#include "support/container_env.hpp"
#include "support/host_snapshot.hpp"

#include <criterion/criterion.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::read_file;

namespace {

Env sandbox_env(const char *tag, const std::string &script) {
    Env e = make_env(tag, {"sh", "-c", script});
    e.b.spec.root->readonly = false;
    return e;
}

} // namespace

TestSuite(sandbox, .fini = cleanup_all, .timeout = 60);

// dev.ocirun.deny: a directory is empty and read-only, a file reads empty,
// a missing path is an empty read-only placeholder; the content never shows.
Test(sandbox, deny_hides_directories_files_and_missing_paths) {
    Env e = sandbox_env("sbdeny", "ls -A /secrets; cat /etc/token; echo x > /etc/token; "
                                  "touch /secrets/new; test -d /nothere && echo placeholder; "
                                  "touch /nothere/f; echo end");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
    test::write_file(e.b.rootfs + "/etc/token", "TOPSECRET\n");
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets:/etc/token:/nothere";
    auto o = test::run(e);
    std::string token = read_file(e.b.rootfs + "/etc/token");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(!contains(o.out, "TOPSECRET") && !contains(o.out, "key"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "placeholder\n") && contains(o.out, "end"), "%s", o.out.c_str());
    cr_assert(contains(o.err, "/secrets/new: Read-only file system"), "%s", o.err.c_str());
    cr_assert(contains(o.err, "/nothere/f: Read-only file system"), "%s", o.err.c_str());
    cr_assert_str_eq(token.c_str(), "TOPSECRET\n", "the denied file itself was changed");
}

Test(sandbox, deny_write_keeps_content_readable_and_read_only) {
    Env e = sandbox_env("sbro", "cat /data/f; echo y > /data/f; touch /data/sub/g; "
                                "test -d /gone && touch /gone/x; echo end");
    ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/data/sub").c_str(), 0755);
    test::write_file(e.b.rootfs + "/data/f", "readable\n");
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/data:/gone";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "readable\n") && contains(o.out, "end"), "%s", o.out.c_str());
    cr_assert(contains(o.err, "/data/f: Read-only file system"), "%s", o.err.c_str());
    cr_assert(contains(o.err, "/data/sub/g: Read-only file system"), "%s", o.err.c_str());
    cr_assert(contains(o.err, "/gone/x: Read-only file system"), "%s", o.err.c_str());
}

Test(sandbox, deny_rename_pins_a_directory_whose_content_stays_writable) {
    Env e = sandbox_env("sbpin", "mv /work /elsewhere; rmdir /work; touch /work/inside && "
                                 "echo inside-ok; ls -d /work");
    ::mkdir((e.b.rootfs + "/work").c_str(), 0755);
    e.b.spec.annotations["dev.ocirun.deny-rename"] = "/work";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.err, "can't rename '/work': Device or resource busy"), "%s",
              o.err.c_str());
    cr_assert(contains(o.err, "'/work': Device or resource busy"), "%s", o.err.c_str());
    cr_assert(contains(o.out, "inside-ok\n/work\n"), "%s", o.out.c_str());
}

// dev.ocirun.protected: a writable mount equal to, containing, inside, or
// reaching through a symlink a protected host path refuses the create with
// one line; a read-only one passes.
Test(sandbox, protected_paths_against_writable_mounts) {
    std::string host = test::track_dir(test::make_temp_dir("sbprot"));
    std::string prot = host + "/repo/.git";
    ::mkdir((host + "/repo").c_str(), 0755);
    ::mkdir(prot.c_str(), 0755);
    ::mkdir((prot + "/hooks").c_str(), 0755);
    ::symlink(prot.c_str(), (host + "/link").c_str());
    struct Case {
        const char *name;
        std::string source;
        std::vector<std::string> options;
        const char *reason; // nullptr: must pass
    } cases[] = {
        {"equal", prot, {"rbind"}, "is the protected path"},
        {"ancestor", host + "/repo", {"rbind"}, "contains the protected path"},
        {"descendant", prot + "/hooks", {"rbind"}, "is inside the protected path"},
        {"symlink", host + "/link", {"rbind"}, "is the protected path"},
        {"read-only", host + "/repo", {"rbind", "ro"}, nullptr},
    };
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbprot", {"true"});
        e.b.spec.annotations["dev.ocirun.protected"] = prot;
        e.b.spec.mounts.push_back(test::mount_entry("/repo", "bind", c.source, c.options));
        ::mkdir((e.b.rootfs + "/repo").c_str(), 0755);
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (c.reason) {
            if (o.status != 1 || !contains(o.err, c.reason) || !contains(o.err, prot) ||
                !contains(o.err, "mounts[") || test::count_lines(o.err) != 1 || !left.empty())
                failures += std::string(c.name) + ": " + std::to_string(o.status) + " " + o.err;
        } else if (o.status != 0) {
            failures += std::string(c.name) + ": " + o.err;
        }
    }
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// Attack: a file inside a protected path with another name (a hard link)
// outside it, on the same filesystem: a writable bind of the other name's
// directory reaches the protected file, and the container changed it. Such
// a bind is refused with one line naming both names and the mount; read-only
// it passes, and a file whose links are all inside the protected path
// passes; the protected file is as it was. The same with the other name in
// the rootfs, read-only, shown by a writable bind whose source is in the
// rootfs: the init resolves that source (after the earlier mounts), which
// the runtime never opened, and searches what it mounted.
Test(sandbox, attack_a_hard_link_out_of_a_protected_path) {
    // (Tracked once the cases are done: each one's cleanup_all removes what is.)
    std::string host = test::make_temp_dir("sbprotln");
    std::string prot = host + "/repo/.git", out = host + "/scratch";
    for (const auto &d : {host + "/repo", prot, prot + "/objects", out})
        ::mkdir(d.c_str(), 0755);
    test::write_file(prot + "/objects/pack", "ORIGINAL\n");
    test::write_file(prot + "/config", "CONFIG\n");
    ::link((prot + "/config").c_str(), (prot + "/config.bak").c_str()); // (both inside)
    ::link((prot + "/objects/pack").c_str(), (out + "/pack").c_str());
    enum class Source { host, rootfs };
    struct Case {
        const char *name;
        std::vector<std::string> options;
        bool refused;
        std::string protect;
        Source source = Source::host;
        bool userns = false;
    } cases[] = {{"writable", {"rbind"}, true, prot},
                 // One protected path inside another: each name is counted
                 // once (it was twice, which hid the link outside).
                 {"overlapping protected paths", {"rbind"}, true, host + "/repo:" + prot},
                 {"read-only", {"rbind", "ro"}, false, prot},
                 {"source in the read-only rootfs", {"rbind"}, true, prot, Source::rootfs},
                 {"source in the read-only rootfs, in a user namespace",
                  {"rbind"},
                  true,
                  prot,
                  Source::rootfs,
                  true}};
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbprotln", {"sh", "-c", "echo CHANGED > /scratch/pack"});
        e.b.spec.annotations["dev.ocirun.protected"] = c.protect;
        std::string source = out, other_name = out + "/pack";
        if (c.source == Source::rootfs) {
            ::mkdir((e.b.rootfs + "/linked").c_str(), 0755);
            ::link((prot + "/objects/pack").c_str(), (e.b.rootfs + "/linked/pack").c_str());
            source = e.b.rootfs + "/linked";
            other_name = "/scratch/pack";
        }
        if (c.source != Source::host) e.b.spec.root->readonly = true;
        if (c.userns) test::use_user_namespace(e);
        e.b.spec.mounts.push_back(test::mount_entry("/scratch", "bind", source, c.options));
        ::mkdir((e.b.rootfs + "/scratch").c_str(), 0755);
        e.b.save();
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (c.refused) {
            if (o.status != 1 || test::count_lines(o.err) != 1 ||
                !contains(o.err, "annotations[dev.ocirun.protected]: " + host + "/repo") ||
                !contains(o.err, prot + "/objects/pack") || !contains(o.err, other_name) ||
                !contains(o.err, "mounts[") || !left.empty())
                failures += std::string(c.name) + ": not refused: " + std::to_string(o.status) +
                            " " + o.err + "\n";
        } else if (o.status == 0 || !contains(o.err, "Read-only file system")) {
            failures += std::string(c.name) + ": " + std::to_string(o.status) + " " + o.err + "\n";
        }
        cleanup_all();
    }
    std::string now = test::read_file(prot + "/objects/pack");
    test::track_dir(host);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_str_eq(now.c_str(), "ORIGINAL\n", "the protected file was changed");
}

// Attack: the other name of a protected file on another filesystem (a
// tmpfs), bound read-only below a rootfs directory, which a later bind of
// that directory (its source in the rootfs, resolved by the init) copies
// writable with rrw. The init searches each writable mount of what it
// bound, not only the top one's filesystem: refused in one line naming
// both names; the protected file is as it was.
Test(sandbox, attack_a_hard_link_in_a_submount_made_writable) {
    test::private_mount_namespace();
    std::string host = test::track_dir(test::make_temp_dir("sbprotsub"));
    ::mkdir((host + "/t").c_str(), 0755);
    cr_assert_eq(::mount("tmpfs", (host + "/t").c_str(), "tmpfs", 0, "mode=755"), 0);
    std::string prot = host + "/t/prot", other = host + "/t/other";
    ::mkdir(prot.c_str(), 0755);
    ::mkdir(other.c_str(), 0755);
    test::write_file(prot + "/key", "ORIGINAL\n");
    ::link((prot + "/key").c_str(), (other + "/key").c_str());
    Env e = make_env("sbprotsub", {"sh", "-c", "echo CHANGED > /b/x/key"});
    e.b.spec.annotations["dev.ocirun.protected"] = prot;
    for (const char *d : {"/a", "/a/x", "/b"})
        ::mkdir((e.b.rootfs + d).c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/a/x", "bind", other, {"rbind", "ro"}));
    e.b.spec.mounts.push_back(test::mount_entry("/b", "bind", e.b.rootfs + "/a", {"rbind", "rrw"}));
    e.b.save();
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    std::string now = test::read_file(prot + "/key");
    ::umount2((host + "/t").c_str(), MNT_DETACH); // (so that the directory goes)
    cleanup_all();
    cr_assert(o.status == 1 && test::count_lines(o.err) == 1, "%d %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "annotations[dev.ocirun.protected]: " + prot) &&
                  contains(o.err, prot + "/key has another name") && contains(o.err, "/x/key"),
              "%s", o.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
    cr_assert_str_eq(now.c_str(), "ORIGINAL\n", "the protected file was changed");
}

// What is checked is what is mounted, by object: a writable submount under
// an rbind,ro parent, an overlay's upperdir, rro cleared again by rrw (the
// applier's order), a second mount of the protected directory on the host
// (no symlink to follow), a protected path that does not exist yet (a
// writable parent would let the container make it), and a host mount below
// the protected path (another filesystem, which was not compared) are each
// refused with one line; nothing is left.
Test(sandbox, protected_holds_for_what_is_mounted) {
    test::private_mount_namespace();
    std::string host = test::track_dir(test::make_temp_dir("sbprot2"));
    for (const char *d : {"/repo", "/repo/sub", "/alias", "/lower", "/plain"})
        ::mkdir((host + d).c_str(), 0755);
    // A writable filesystem mounted below the repository, holding .git.
    cr_assert_eq(::mount("tmpfs", (host + "/repo/sub").c_str(), "tmpfs", 0, "mode=755"), 0);
    ::mkdir((host + "/repo/sub/.git").c_str(), 0755);
    ::mkdir((host + "/repo/sub/.git/work").c_str(), 0755);
    ::mkdir((host + "/repo/sub/.git/upper").c_str(), 0755);
    // The same .git at another host path, without a symlink.
    cr_assert_eq(::mount((host + "/repo/sub/.git").c_str(), (host + "/alias").c_str(), nullptr,
                         MS_BIND, nullptr),
                 0);
    std::string prot = host + "/repo/sub/.git";
    auto bind = [](const std::string &src, std::vector<std::string> opts) {
        return test::mount_entry("/mnt", "bind", src, std::move(opts));
    };
    struct Case {
        const char *name;
        std::string protect;
        ocirun::oci::Mount mount;
        std::string reason;
    } cases[] = {
        {"submount under rbind,ro", prot, bind(host + "/repo", {"rbind", "ro"}),
         "through its submount "},
        {"rro then rrw", prot, bind(host + "/repo/sub", {"rbind", "rro", "rrw"}),
         "is writable and contains the protected path"},
        {"ro then rrw", prot, bind(host + "/repo/sub", {"rbind", "ro", "rrw"}),
         "is writable and contains the protected path"},
        {"second mount on the host", prot, bind(host + "/alias", {"rbind"}),
         "is writable and is the protected path"},
        {"overlay upperdir", prot,
         test::mount_entry("/mnt", "overlay", "overlay",
                           {"lowerdir=" + host + "/lower", "upperdir=" + prot + "/upper",
                            "workdir=" + prot + "/work"}),
         "(its upperdir "},
        {"not there yet", host + "/plain/.git", bind(host + "/plain", {"rbind"}),
         "is writable and contains the protected path"},
        {"a host mount below the protected path", host + "/repo",
         bind(host + "/repo/sub", {"rbind"}),
         "is writable and is the protected path (the host's mount at " + host + "/repo/sub in it)"},
    };
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbprot2", {"true"});
        e.b.spec.annotations["dev.ocirun.protected"] = c.protect;
        e.b.spec.mounts.push_back(c.mount);
        ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (o.status != 1 || !contains(o.err, c.reason) || !contains(o.err, c.protect) ||
            test::count_lines(o.err) != 1 || !left.empty())
            failures += std::string(c.name) + ": " + std::to_string(o.status) + " " + o.err + "\n";
    }
    ::umount2((host + "/alias").c_str(), MNT_DETACH);
    ::umount2((host + "/repo/sub").c_str(), MNT_DETACH);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
}

namespace {

// The block device holding `path` and its filesystem's type, from the
// mountinfo line of its device numbers: {"", ""} where it is not a device
// node of that number (a virtual filesystem, a device not under /dev).
std::pair<std::string, std::string> device_of(const std::string &path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return {};
    std::string want = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    std::istringstream in(read_file("/proc/self/mountinfo"));
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string id, parent, numbers, field;
        f >> id >> parent >> numbers;
        if (numbers != want) continue;
        while (f >> field && field != "-") {
        }
        std::string type, source;
        f >> type >> source;
        struct stat dev;
        if (::stat(source.c_str(), &dev) == 0 && S_ISBLK(dev.st_mode) && dev.st_rdev == st.st_dev)
            return {source, type};
    }
    return {};
}

} // namespace

// A filesystem mounted from a block device (the host's own disk, say) is
// the host's files again: what it reaches is checked as a bind's is. With
// a protected path on that disk, and with no policy at all (the state
// directory given with --root is always protected), a writable mount of it
// is refused with one line; the host's file is untouched; nothing is left.
Test(sandbox, a_filesystem_from_a_device_is_checked_as_a_bind) {
    test::private_mount_namespace();
    std::string failures;
    for (bool policy : {true, false}) {
        std::string host = test::track_dir(test::make_temp_dir("sbdev"));
        auto [device, type] = device_of(host);
        if (device.empty()) cr_skip_test("%s is not on a block device's filesystem", host.c_str());
        std::string prot = host + "/repo/.git";
        ::mkdir((host + "/repo").c_str(), 0755);
        ::mkdir(prot.c_str(), 0755);
        test::write_file(prot + "/config", "host\n");
        Env e = make_env("sbdev", {"sh", "-c", "echo x > /hostfs" + prot + "/config; echo WROTE"});
        ::mkdir((e.b.rootfs + "/hostfs").c_str(), 0755);
        e.b.spec.mounts.push_back(test::mount_entry("/hostfs", type, device, {"rw"}));
        // The state directory on a tmpfs of its own, so that the protected
        // path is the one the disk reaches.
        if (policy) {
            e.b.spec.annotations["dev.ocirun.protected"] = prot;
            cr_assert_eq(::mount("tmpfs", e.root.c_str(), "tmpfs", 0, "mode=700"), 0);
        }
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        const std::string &named = policy ? prot : e.root;
        std::string what = policy ? "protected: " : "no policy: ";
        if (read_file(prot + "/config") != "host\n") failures += what + "the host's file changed\n";
        if (o.status != 1 || contains(o.out, "WROTE") || test::count_lines(o.err) != 1 ||
            !contains(o.err, "mounts[") || !contains(o.err, named) || !left.empty())
            failures += what + std::to_string(o.status) + " " + o.out + o.err + "\n";
        // The tmpfs off first: the state directory is removed below it.
        if (policy) ::umount2(e.root.c_str(), MNT_DETACH);
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// The filesystem rules hold only while the host's disks stay closed: a
// container that may open a block device reads the raw bytes of every file
// the rules hide (here a denied file, found on the loop device under its
// bind; it was, through the host's node bound in, with no device rule or
// with a rule allowing it, and through a linux.devices node with its rule,
// as `podman --device` makes). Such a configuration is refused with one
// line naming the field, nothing left; with the default rules (every
// device denied first) the bound node does not open, and the run passes.
Test(sandbox, attack_block_devices_stay_closed_under_filesystem_rules) {
    test::LoopDisk disk = test::make_loop_disk("sbblk");
    const std::string &mnt = disk.mnt, &marker = disk.marker;
    std::string failures = disk.failure;
    struct Case {
        const char *name, *refusal;
    } cases[] = {{"no rule", "linux.resources.devices has no rule"},
                 {"allowed", "linux.resources.devices[1] allows b "},
                 {"node", "linux.devices[0] (/dev/blk, block device "},
                 {"default", nullptr}};
    bool mounted = failures.empty();
    for (const auto &c : cases) {
        if (!mounted) break;
        Env e = make_env("sbblk", {"sh", "-c",
                                   "n=$(grep -a -c " + marker +
                                       " /dev/blk 2>/dev/null); echo count=${n:-none}"});
        ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
        e.b.spec.mounts.push_back(test::mount_entry("/data", "bind", mnt, {"rbind", "ro"}));
        e.b.spec.annotations["dev.ocirun.deny"] = "/data/secret";
        auto &rules = e.b.spec.linux_->resources->devices;
        std::string what = c.name;
        auto allow_it = test::device_rule(true, "b", major(disk.rdev), minor(disk.rdev), "r");
        if (what == "node") {
            ocirun::oci::Device d;
            d.path = "/dev/blk";
            d.type = "b";
            d.major = major(disk.rdev);
            d.minor = minor(disk.rdev);
            e.b.spec.linux_->devices.push_back(d);
            rules.push_back(allow_it);
        } else {
            e.b.spec.mounts.push_back(test::mount_entry("/dev/blk", "bind", disk.loop, {"bind"}));
        }
        if (what == "no rule") rules.clear();
        if (what == "allowed") rules = {test::device_rule(false, "a", {}, {}, "rwm"), allow_it};
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        std::string all = o.out + o.err;
        bool read = contains(o.out, "count=") && !contains(o.out, "count=0") &&
                    !contains(o.out, "count=none");
        if (read) failures += what + ": the denied file was read from the device: " + all + "\n";
        if (c.refusal && (o.status != 1 || test::count_lines(o.err) != 1 ||
                          !contains(o.err, c.refusal) || !left.empty()))
            failures += what + ": not refused: " + std::to_string(o.status) + " " + all + "\n";
        if (!c.refusal && (o.status != 0 || !contains(o.out, "count=")))
            failures += what + ": " + std::to_string(o.status) + " " + all + "\n";
        cleanup_all();
    }
    disk.remove();
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// sysfs and mqueue in the host's network and IPC namespaces are the host's
// own /sys and /dev/mqueue (one superblock per namespace): mounted writable
// again elsewhere they are checked as mounted, and a protected /sys or
// /dev/mqueue refuses them with one line (sysfs once wrote the host's
// /sys). In the container's own namespaces they are new, and pass.
Test(sandbox, sysfs_and_mqueue_of_the_hosts_namespaces_are_checked) {
    // This host's mqueue, mounted where the test can protect it (a host
    // may have none mounted).
    test::private_mount_namespace();
    std::string mq = test::track_dir(test::make_temp_dir("sbmq"));
    cr_assert_eq(::mount("mqueue", mq.c_str(), "mqueue", 0, nullptr), 0);
    struct Case {
        const char *name, *type;
        std::string protect;
        ocirun::oci::NsType ns;
    } cases[] = {{"sysfs", "sysfs", "/sys", ocirun::oci::NsType::network},
                 {"mqueue", "mqueue", mq, ocirun::oci::NsType::ipc}};
    std::string failures;
    for (const auto &c : cases)
        for (bool own_ns : {false, true}) {
            Env e = make_env("sbsysfs", {"true"});
            ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
            ::mkdir((e.b.rootfs + "/mnt/x").c_str(), 0755);
            e.b.spec.mounts.push_back(test::mount_entry("/mnt/x", c.type, c.type, {"rw"}));
            e.b.spec.annotations["dev.ocirun.protected"] = c.protect;
            auto &ns = e.b.spec.linux_->namespaces;
            if (!own_ns) std::erase_if(ns, [&](const auto &n) { return n.type == c.ns; });
            auto o = test::run(e);
            auto left = test::dir_entries(e.root);
            std::string what = std::string(c.name) + (own_ns ? " (own namespace): " : ": ");
            if (own_ns && o.status != 0) failures += what + o.err + "\n";
            if (!own_ns &&
                (o.status != 1 || test::count_lines(o.err) != 1 || !contains(o.err, "mounts[") ||
                 !contains(o.err, c.protect) || !left.empty()))
                failures += what + std::to_string(o.status) + " " + o.err + "\n";
        }
    ::umount2(mq.c_str(), MNT_DETACH);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// An idmapped bind gets every option the checks counted: rro makes it read-
// only, so it may show a protected path, and a write there fails (the
// idmapped copy once got only the top mount's flags, and was writable).
Test(sandbox, idmapped_bind_is_as_read_only_as_checked) {
    std::string host = test::track_dir(test::make_temp_dir("sbidm"));
    ::chmod(host.c_str(), 0755);
    ::mkdir((host + "/.git").c_str(), 0777);
    test::write_file(host + "/.git/config", "original\n");
    ::chmod((host + "/.git/config").c_str(), 0666);
    Env e = sandbox_env("sbidm", "echo changed > /m/.git/config && echo WROTE; echo end");
    test::use_user_namespace(e);
    ::mkdir((e.b.rootfs + "/m").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/m", "bind", host, {"rbind", "idmap", "rro"}));
    e.b.spec.annotations["dev.ocirun.protected"] = host + "/.git";
    auto o = test::run(e);
    std::string config = read_file(host + "/.git/config");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(!contains(o.out, "WROTE") && contains(o.err, "Read-only file system"), "%s\n%s",
              o.out.c_str(), o.err.c_str());
    cr_assert_str_eq(config.c_str(), "original\n", "the protected file was written");
}

// A symlink source swapped between a plain directory and the protected one
// while containers start (40 runs): the runtime opens the source once and
// the init checks again what it mounted when that is another object, so no
// run gets the protected directory writable; each mounts the plain one or
// fails with one line.
Test(sandbox, protected_source_swapped_during_setup) {
    std::string host = test::track_dir(test::make_temp_dir("sbprotrace"));
    std::string safe = host + "/safe", prot = host + "/prot", link = host + "/link";
    ::mkdir(safe.c_str(), 0755);
    ::mkdir(prot.c_str(), 0755);
    ::symlink(safe.c_str(), link.c_str());
    Env e = make_env("sbprotrace", {"sh", "-c", "touch /mnt/written"});
    e.b.spec.annotations["dev.ocirun.protected"] = prot;
    e.b.spec.mounts.push_back(test::mount_entry("/mnt", "bind", link, {"rbind"}));
    ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
    e.b.save();
    std::atomic<bool> stop{false};
    std::thread racer([&] {
        std::string a = host + "/to-safe", b = host + "/to-prot";
        ::symlink(safe.c_str(), a.c_str());
        ::symlink(prot.c_str(), b.c_str());
        while (!stop) {
            ::rename(b.c_str(), link.c_str()); // the protected one in
            ::symlink(prot.c_str(), b.c_str());
            ::rename(a.c_str(), link.c_str()); // and the plain one back
            ::symlink(safe.c_str(), a.c_str());
        }
    });
    std::string bad;
    int ran = 0, refused = 0;
    for (int i = 0; i < 40; i++) {
        std::string id = test::unique_id("sbprotrace");
        test::track(e.root, id);
        auto o = test::oci({"--root", e.root, "run", "--bundle", e.b.dir, id});
        if (o.status == 0)
            ran++;
        else if (test::count_lines(o.err) == 1 && contains(o.err, prot))
            refused++;
        else
            bad += "run " + std::to_string(i) + ": " + std::to_string(o.status) + " " + o.err;
    }
    stop = true;
    racer.join();
    bool written = test::exists(prot + "/written");
    cleanup_all();
    cr_assert(!written, "a container wrote into the protected directory");
    cr_assert(bad.empty(), "%s", bad.c_str());
    cr_assert_gt(ran + refused, 0);
}

Test(sandbox, bad_annotations_name_the_key) {
    struct Case {
        const char *key, *value, *message;
    } cases[] = {
        {"dev.ocirun.deny", "relative/path",
         "annotations[dev.ocirun.deny]: \"relative/path\" "
         "is not an absolute path"},
        {"dev.ocirun.deny-write", "/a/../b", "must not contain \"..\""},
        {"dev.ocirun.deny", "/a::/b", "empty path"},
        {"dev.ocirun.enforcement", "sometimes", "expected strict or report"},
        {"dev.ocirun.bogus", "1", "annotations[dev.ocirun.bogus]: unknown sandbox policy key"},
        {"dev.ocirun.network", "sometimes", "expected none, local, https or full"},
        {"dev.ocirun.domains", "a.*.com", "annotations[dev.ocirun.domains]: \"a.*.com\""},
        {"dev.ocirun.local-ports", "80:x",
         "annotations[dev.ocirun.local-ports]: \"x\" is not a port"},
        {"dev.ocirun.publish", "1:2:3:4", "annotations[dev.ocirun.publish]: \"1:2:3:4\""},
        {"dev.ocirun.network-mode", "loud", "expected enforce or observe"},
    };
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbbad", {"true"});
        e.b.spec.annotations[c.key] = c.value;
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (o.status != 1 || !contains(o.err, c.message) || test::count_lines(o.err) != 1 ||
            !left.empty())
            failures += std::string(c.key) + "=" + c.value + ": " + o.err;
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// strict (the default) refuses what it cannot enforce, naming it (here a
// loopback-only network without a network namespace of its own); report
// runs and says what is not enforced.
Test(sandbox, strict_refuses_what_it_cannot_enforce_report_runs) {
    Env e = make_env("sbstrict", {"true"});
    e.b.spec.annotations["dev.ocirun.network"] = "none";
    std::erase_if(e.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::network; });
    auto strict = test::run(e);
    auto left = test::dir_entries(e.root);
    e.b.spec.annotations["dev.ocirun.enforcement"] = "report";
    auto report = test::run(e);
    cleanup_all();
    cr_assert_eq(strict.status, 1);
    cr_assert(contains(strict.err, "(dev.ocirun.enforcement=strict): cannot enforce: "
                                   "dev.ocirun.network=none needs a network namespace other than "
                                   "the host's"),
              "%s", strict.err.c_str());
    cr_assert_eq(test::count_lines(strict.err), 1u);
    cr_assert(left.empty());
    cr_assert_eq(report.status, 0, "%s", report.err.c_str());
    cr_assert(contains(report.err, "not enforced: dev.ocirun.network=none"), "%s",
              report.err.c_str());
}

// The masks hold against a process that is uid 0 with CAP_SYS_ADMIN (and
// more) in the container's user namespace: umount, umount -l, mount --move,
// remount rw, a new user+mount namespace, /proc/self/root and /proc/1/root
// paths all fail, and the denied content is never read.
Test(sandbox, masks_hold_against_an_admin_in_the_user_namespace) {
    Env e = sandbox_env(
        "sblock",
        "cat /secrets/key; umount /secrets && echo UMOUNTED; umount -l /secrets && echo "
        "LAZY; mount --move /secrets /mnt2 && echo MOVED; mount -o remount,rw /data && echo "
        "REMOUNTED; echo w > /data/f && echo WROTE; unshare -Urm sh -c 'umount -l /secrets; "
        "cat /secrets/key' && echo NESTED; mount -t tmpfs none /secrets && echo MOUNTED_OVER; "
        "cat /proc/self/root/secrets/key; cat "
        "/proc/1/root/secrets/key; ls -A /secrets; echo end");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/mnt2").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
    test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
    test::use_user_namespace(e);
    test::add_capabilities(e, {"CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE",
                               "CAP_SYS_CHROOT", "CAP_CHOWN"});
    e.b.spec.process->no_new_privileges = false;
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/data";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::string all = o.out + o.err;
    cr_assert(!contains(all, "TOPSECRET"), "the denied content was read:\n%s", all.c_str());
    for (const char *escaped :
         {"UMOUNTED", "LAZY", "MOVED", "REMOUNTED", "WROTE", "NESTED", "MOUNTED_OVER"})
        cr_assert(!contains(o.out, escaped), "%s:\n%s", escaped, all.c_str());
    cr_assert(contains(o.out, "end"), "%s", all.c_str());
}

// A file with more than one name cannot be denied: the other names would
// still read it.
Test(sandbox, deny_of_a_hard_linked_file_is_refused) {
    Env e = sandbox_env("sblink", "cat /etc/alias");
    test::write_file(e.b.rootfs + "/etc/token", "TOPSECRET\n");
    ::link((e.b.rootfs + "/etc/token").c_str(), (e.b.rootfs + "/etc/alias").c_str());
    e.b.spec.annotations["dev.ocirun.deny"] = "/etc/token";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 1, "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(!contains(o.out, "TOPSECRET"));
    cr_assert(contains(o.err, "annotations[dev.ocirun.deny] /etc/token is also reachable at "
                              "/etc/alias: a hard link of /etc/token"),
              "%s", o.err.c_str());
}

// Any sandbox policy adds the sandbox-guard seccomp profile, for the
// container's process and for processes exec'd into it: from a process with
// CAP_SYS_ADMIN in its user namespace, every listed call answers EPERM
// (clone3 ENOSYS).
Test(sandbox, policy_adds_the_sandbox_guard_for_init_and_exec) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    Env e = make_env("sbguard", {"sh", "-c", "/syscall-probe; sleep 30"});
    e.b.spec.root->readonly = false;
    test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
    ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
    test::use_user_namespace(e);
    test::add_capabilities(e, {"CAP_SYS_ADMIN"});
    e.b.spec.annotations["dev.ocirun.protected"] = "/nonexistent/protected";
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    // The second exec loads the guard the first compiled and kept.
    std::string kept = e.root + "/" + e.id + "/guard.bpf";
    auto ino = [&] {
        struct stat st {};
        return ::stat(kept.c_str(), &st) == 0 ? st.st_ino : 0;
    };
    auto x = test::oci({"--root", e.root, "exec", e.id, "/syscall-probe"});
    ino_t first = ino();
    auto x2 = test::oci({"--root", e.root, "exec", e.id, "/syscall-probe"});
    ino_t second = ino();
    usleep(300000);
    std::string init_out = read_file(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_eq(x2.status, 0, "second exec: %s", x2.err.c_str());
    cr_assert_neq(first, 0u, "no %s after the first exec", kept.c_str());
    cr_assert_eq(second, first, "the second exec compiled the guard again");
    for (const std::string *out : {&init_out, &x.out, &x2.out}) {
        std::istringstream in(*out);
        std::string line, leaked;
        int n = 0;
        while (std::getline(in, line)) {
            auto eq = line.find('=');
            if (eq == std::string::npos) continue;
            n++;
            int err = std::atoi(line.c_str() + eq + 1);
            if (err != (line.rfind("clone3=", 0) == 0 ? ENOSYS : EPERM)) leaked += line + " ";
        }
        cr_assert_geq(n, 30, "%s", out->c_str());
        cr_assert(leaked.empty(), "not blocked: %s", leaked.c_str());
    }
}

// The guard at the i386 entry point (int $0x80 from the x86-64 process):
// its program for x86 answers there as the x86-64 one does here. As root in
// the container with every capability, with and without a user namespace,
// each call answers EPERM, where unguarded unshare(0) would succeed and the
// rest fail otherwise (EFAULT, EBADF, EINVAL).
Test(sandbox, the_guard_holds_at_the_i386_entry_point) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    // i386 numbers: mount, ptrace, chroot, umount2, swapon, reboot, pivot_root,
    // add_key, keyctl, unshare, perf_event_open, setns, bpf, userfaultfd,
    // open_tree, move_mount, fsopen.
    const std::vector<std::string> nrs = {"21",  "26",  "61",  "52",  "87",  "88",
                                          "217", "286", "288", "310", "336", "346",
                                          "357", "374", "428", "429", "430"};
    const std::string eperm = test::i386_answer(std::to_string(EPERM));
    std::string leaked;
    for (bool userns : {false, true}) {
        Env e = make_env(userns ? "sb386u" : "sb386", {"/syscall-probe", "nr32"});
        e.b.spec.process->args.insert(e.b.spec.process->args.end(), nrs.begin(), nrs.end());
        e.b.spec.root->readonly = false;
        test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
        ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
        if (userns) test::use_user_namespace(e);
        test::add_all_capabilities(e);
        e.b.spec.annotations["dev.ocirun.protected"] = "/nonexistent/protected";
        auto o = test::run(e);
        cleanup_all();
        cr_assert_eq(o.status, 0, "%s: %s", userns ? "userns" : "no userns", o.err.c_str());
        for (const auto &nr : nrs)
            if (!contains(o.out, nr + "=" + eperm + "\n"))
                leaked += std::string(userns ? "userns " : "") + nr + " ";
        if (!leaked.empty()) leaked += "(" + o.out + ") ";
    }
    cr_assert(leaked.empty(), "not EPERM at the i386 entry point: %s", leaked.c_str());
}

// TIOCSTI and TIOCLINUX into the caller's terminal: oci-run runs on a pty
// (its controlling terminal), the container's process holds CAP_SYS_ADMIN in
// the host's user namespace and has terminal false, so its stdio is that
// pty. The guard answers EPERM (also with bits above the 32 the kernel reads
// set), nothing pushed reaches the terminal (the line discipline would echo
// it), and the process leads a session of its own. For run and for exec.
Test(sandbox, terminal_input_injection_is_refused_for_run_and_exec) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    auto prepare = [&](const char *tag, std::vector<std::string> args) {
        Env e = make_env(tag, args);
        test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
        ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
        test::add_capabilities(e, {"CAP_SYS_ADMIN"});
        e.b.spec.annotations["dev.ocirun.protected"] = "/nonexistent/protected";
        e.b.save();
        return e;
    };
    auto on_pty = [](const std::vector<std::string> &args) {
        test::PtyChild p = test::spawn_oci_on_pty(args);
        std::string seen = test::read_until(p.master, "session=", 5000);
        seen += test::read_until(p.master, "\n", 1000);
        int status = test::wait_bounded(p.pid, 5000);
        seen += test::read_until(p.master, "INJECTED", 300);
        ::close(p.master);
        return std::make_pair(status, seen);
    };
    Env r = prepare("sbtty", {"/syscall-probe", "tty"});
    auto [run_status, run_seen] = on_pty({"--root", r.root, "run", "--bundle", r.b.dir, r.id});
    Env x = prepare("sbttyx", {"sleep", "30"});
    auto c = test::create(x);
    auto s = test::oci({"--root", x.root, "start", x.id});
    auto [exec_status, exec_seen] =
        on_pty({"--root", x.root, "exec", x.id, "/syscall-probe", "tty"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    for (const auto &[what, status, seen] :
         {std::tuple{"run", run_status, run_seen}, std::tuple{"exec", exec_status, exec_seen}}) {
        cr_assert_eq(status, 0, "%s: %d: %s", what, status, seen.c_str());
        for (const char *line : {"tiocsti=1", "tiocsti_high=1", "tioclinux=1", "session=own"})
            cr_assert(contains(seen, line), "%s: no %s in:\n%s", what, line, seen.c_str());
        // Echoed as pushed: once, or both pushes interleaved.
        cr_assert(!contains(seen, "INJECTED") && !contains(seen, "IINNJJ"),
                  "%s: input reached the terminal:\n%s", what, seen.c_str());
    }
}

// `report` measures the running container from outside: every row of a
// policy'd container is enforced, and what it measured is what the process
// itself sees in its /proc/self/status.
Test(sandbox, report_rows_are_measured_and_match_the_container) {
    Env e = sandbox_env("sbreport", "grep -E '^(NoNewPrivs|CapBnd|Seccomp):' /proc/self/status; "
                                    "sleep 30");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/data";
    auto &r = e.b.spec.linux_->resources;
    if (!r) r.emplace();
    r->pids.emplace().limit = 64;
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    usleep(300000);
    auto table = test::oci({"--root", e.root, "report", e.id});
    auto js = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    std::string seen = read_file(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_eq(js.status, 0, "%s", js.err.c_str());
    for (const char *dim :
         {"user namespace", "pid namespace", "mount isolation", "deny /secrets", "deny-write /data",
          "pids limit", "seccomp", "no_new_privs", "capabilities"})
        cr_assert(
            contains(js.out, std::string("{\"dimension\":\"") + dim + "\",\"state\":\"enforced\""),
            "%s not enforced in %s", dim, js.out.c_str());
    cr_assert(!contains(js.out, "\"degraded\""), "%s", js.out.c_str());
    cr_assert(contains(js.out, "\"source\":\"measured\""), "%s", js.out.c_str());
    // What the process sees, as the report measured it.
    auto field = [&](const char *key) {
        size_t at = seen.find(std::string(key) + ":");
        if (at == std::string::npos) return std::string();
        size_t v = seen.find_first_not_of(" \t", at + std::strlen(key) + 1);
        return seen.substr(v, seen.find('\n', v) - v);
    };
    cr_assert(contains(js.out, "\"detail\":\"NoNewPrivs " + field("NoNewPrivs") + "\""), "%s\n%s",
              seen.c_str(), js.out.c_str());
    cr_assert(contains(js.out, "\"detail\":\"CapBnd " + field("CapBnd") + "\""), "%s\n%s",
              seen.c_str(), js.out.c_str());
    cr_assert(contains(js.out, "Seccomp " + field("Seccomp") + ","), "%s\n%s", seen.c_str(),
              js.out.c_str());
    cr_assert(contains(js.out, "pids.max 64"), "%s", js.out.c_str());
    cr_assert(contains(table.out, "DIMENSION") && contains(table.out, "deny /secrets"), "%s",
              table.out.c_str());
}

// dev.ocirun.trace: the process runs under strace from the host; the log is
// in the container's state directory, named in the state's annotations, and
// goes with the container.
Test(sandbox, trace_logs_the_process_under_strace) {
    if (::access("/usr/bin/strace", X_OK) != 0) cr_skip_test("needs strace");
    Env e = make_env("sbtrace", {"sh", "-c", "cat /etc/passwd > /dev/null"});
    e.b.spec.annotations["dev.ocirun.trace"] = "true";
    e.b.save();
    auto c = test::create(e);
    auto st = test::oci({"--root", e.root, "state", e.id});
    auto s = test::oci({"--root", e.root, "start", e.id});
    std::string stopped = test::wait_status(e.root, e.id, "stopped");
    std::string log_path = e.root + "/" + e.id + "/trace.log";
    std::string log = test::read_output(log_path, "+++ exited");
    auto d = test::oci({"--root", e.root, "delete", e.id});
    bool left = test::exists(log_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(contains(st.out, "\"dev.ocirun.trace-log\": \"" + log_path + "\""), "%s",
              st.out.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    // busybox runs cat inside the shell: the shell's exec and the open show.
    cr_assert(contains(log, "execve(") &&
                  contains(log, "[\"sh\", \"-c\", \"cat /etc/passwd > /dev/null\"]"),
              "%s", log.c_str());
    cr_assert(contains(log, "\"/etc/passwd\""), "%s", log.c_str());
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(!left);
}

// The trace log is capped at 8 MiB: a process that makes strace write more
// (a 4,000-byte path looked up 4,000 times: about 16 MB of log) runs to its
// end, and the log stops at the cap (it once grew without bound, 45 MB in
// 8 s, on the host's /run). strace runs as nobody with CAP_SYS_PTRACE alone
// (it ran as the host's root with every capability), in the helpers'
// cgroup under the container's (it ran outside, charged to no limit).
Test(sandbox, trace_log_is_capped_and_strace_unprivileged) {
    if (::access("/usr/bin/strace", X_OK) != 0) cr_skip_test("needs strace");
    Env e = make_env("sbtracecap",
                     {"sh", "-c",
                      "p=$(printf '%02000d' 0 | sed 's|0|/a|g'); i=0; "
                      "while [ $i -lt 4000 ]; do [ -e $p ]; i=$((i+1)); done; echo done"});
    e.b.spec.annotations["dev.ocirun.trace"] = "true";
    e.b.save();
    auto c = test::create(e);
    long init = test::state_of(e.root, e.id).pid;
    auto s = test::oci({"--root", e.root, "start", e.id});
    // strace, while it traces: nobody, with CAP_SYS_PTRACE alone.
    std::string init_status = read_file("/proc/" + std::to_string(init) + "/status");
    size_t at = init_status.find("TracerPid:");
    long tracer = at == std::string::npos ? 0 : std::atol(init_status.c_str() + at + 10);
    std::string tracer_status = read_file("/proc/" + std::to_string(tracer) + "/status");
    std::string cgroups =
        test::helper_cgroup_mismatch(read_file("/proc/" + std::to_string(tracer) + "/cgroup"),
                                     read_file("/proc/" + std::to_string(init) + "/cgroup"));
    std::string stopped = test::wait_status(e.root, e.id, "stopped", 60000);
    std::string out = read_file(c.out_path);
    struct stat st {};
    ::stat((e.root + "/" + e.id + "/trace.log").c_str(), &st);
    auto state = test::state_of(e.root, e.id);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    cr_assert_str_eq(out.c_str(), "done\n");
    cr_assert_eq(state.exit, 0);
    cr_assert(st.st_size > (7L << 20) && st.st_size <= (8L << 20), "trace.log: %ld bytes",
              static_cast<long>(st.st_size));
    cr_assert(contains(tracer_status, "Name:\tstrace") &&
                  contains(tracer_status, "Uid:\t65534\t65534\t65534\t65534") &&
                  contains(tracer_status, "CapEff:\t0000000000080000"),
              "the tracer (%ld): %s", tracer, tracer_status.c_str());
    cr_assert(cgroups.empty(), "the tracer's cgroups: %s", cgroups.c_str());
}

// dev.ocirun.trace-log is the runtime's own record of where strace writes;
// from a bundle (or `podman --annotation`) it is refused, naming the key,
// before anything is made: a "|command" value never runs on the host and a
// path (here a symlink to a host file) is never opened or truncated.
Test(sandbox, trace_log_from_the_bundle_is_refused) {
    std::string host = test::track_dir(test::make_temp_dir("sbtracelog"));
    std::string marker = host + "/ran", canary = host + "/canary";
    test::write_file(canary, "host\n");
    ::symlink(canary.c_str(), (host + "/link").c_str());
    struct Case {
        const char *name;
        std::string value;
        bool trace;
    } cases[] = {{"pipe", "|touch " + marker, true},
                 {"symlink to a host file", host + "/link", true},
                 {"without trace", "|touch " + marker, false}};
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbtracelog", {"true"});
        if (c.trace) e.b.spec.annotations["dev.ocirun.trace"] = "true";
        e.b.spec.annotations["dev.ocirun.trace-log"] = c.value;
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (o.status != 1 || test::count_lines(o.err) != 1 ||
            !contains(o.err, "annotations[dev.ocirun.trace-log]: set by the runtime") ||
            !left.empty())
            failures +=
                std::string(c.name) + ": status " + std::to_string(o.status) + ": " + o.err + "\n";
    }
    bool ran = test::exists(marker);
    std::string seen = read_file(canary);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert(!ran, "the annotation's command ran on the host");
    cr_assert_str_eq(seen.c_str(), "host\n", "the host file was written");
}

// A policy in the host's PID namespace: a host process running as root with
// no capabilities (started here) shows its root, the host's, at
// /proc/PID/root, and the container's root (no user namespace: the policy
// has no masks) may open it. Such a policy is refused before anything is
// made, in strict and report mode, and when the host's namespace is joined
// by path.
Test(sandbox, policy_in_the_hosts_pid_namespace_is_refused) {
    std::string host = test::track_dir(test::make_temp_dir("sbpidns"));
    test::write_file(host + "/canary", "host\n");
    test::Spawned victim =
        test::spawn_files({"setpriv", "--inh-caps=-all", "--bounding-set=-all", "sleep", "30"});
    std::string read_host =
        "cat /proc/" + std::to_string(victim.pid) + "/root" + host + "/canary; echo end";
    struct Case {
        const char *name, *enforcement;
        bool join_host;
    } cases[] = {{"strict", "strict", false},
                 {"report", "report", false},
                 {"joined by path", "strict", true}};
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("sbpidns", {"sh", "-c", read_host});
        auto &ns = e.b.spec.linux_->namespaces;
        std::erase_if(ns, [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
        if (c.join_host) ns.push_back({ocirun::oci::NsType::pid, "/proc/self/ns/pid"});
        e.b.spec.annotations["dev.ocirun.protected"] = "/nonexistent/protected";
        e.b.spec.annotations["dev.ocirun.enforcement"] = c.enforcement;
        auto o = test::run(e);
        auto left = test::dir_entries(e.root);
        if (o.status != 1 || test::count_lines(o.err) != 1 ||
            !contains(o.err, "a sandbox policy (dev.ocirun.*) needs a PID namespace other than "
                             "the host's") ||
            contains(o.out, "host") || !left.empty())
            failures +=
                std::string(c.name) + ": " + std::to_string(o.status) + " " + o.out + o.err + "\n";
    }
    // The same container without a policy reaches the host file: the attack
    // is real, not a test that cannot fail.
    Env plain = make_env("sbpidns", {"sh", "-c", read_host});
    std::erase_if(plain.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    auto reached = test::run(plain);
    ::kill(victim.pid, SIGKILL);
    test::wait_bounded(victim.pid, 2000);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert(contains(reached.out, "host\nend"), "without a policy: %s %s", reached.out.c_str(),
              reached.err.c_str());
}

// report --bundle before create: what the bundle asks for, declared.
Test(sandbox, report_of_a_bundle_before_create) {
    Env e = make_env("sbrepb", {"true"});
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.save();
    auto o = test::oci({"report", "--bundle", e.b.dir, "--format", "json"});
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "{\"dimension\":\"deny /secrets\",\"state\":\"enforced\""), "%s",
              o.out.c_str());
    cr_assert(contains(o.out, "\"detail\":\"sandbox-guard\""), "%s", o.out.c_str());
    cr_assert(!contains(o.out, "\"measured\""), "%s", o.out.c_str());
}

// Renaming the parent of a pinned directory would carry it elsewhere: the
// ancestors are pinned too.
Test(sandbox, renaming_a_pinned_directorys_parent_fails) {
    Env e = sandbox_env("sbpinparent", "mv /proj /moved && echo MOVED; mv /proj/work /proj/w2 "
                                       "&& echo RENAMED; ls -d /proj/work; echo end");
    ::mkdir((e.b.rootfs + "/proj").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/proj/work").c_str(), 0755);
    e.b.spec.annotations["dev.ocirun.deny-rename"] = "/proj/work";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(!contains(o.out, "MOVED") && !contains(o.out, "RENAMED"), "%s\n%s", o.out.c_str(),
              o.err.c_str());
    cr_assert(contains(o.out, "/proj/work\nend"), "%s", o.out.c_str());
}

// deny-write over a bind whose source is also bound writable elsewhere is
// refused: writing through that alias would change the read-only files.
Test(sandbox, deny_write_with_a_writable_alias_is_refused) {
    std::string host = test::track_dir(test::make_temp_dir("sbalias"));
    Env e = make_env("sbalias", {"true"});
    ocirun::oci::Mount a = test::mount_entry("/data", "bind", host, {"rbind"}),
                       b = test::mount_entry("/alias", "bind", host, {"rbind"});
    e.b.spec.mounts.push_back(a);
    e.b.spec.mounts.push_back(b);
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/data";
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    // The alias read-only too: fine.
    Env f = make_env("sbalias2", {"true"});
    f.b.spec.mounts.push_back(a);
    f.b.spec.mounts.push_back(test::mount_entry("/alias", "bind", host, {"rbind", "ro"}));
    f.b.spec.annotations["dev.ocirun.deny-write"] = "/data";
    auto ok = test::run(f);
    cleanup_all();
    cr_assert_eq(o.status, 1, "%s", o.err.c_str());
    cr_assert(contains(o.err, "annotations[dev.ocirun.deny-write] /data is also reachable at "
                              "/alias: the mount at /alias"),
              "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u, "%s", o.err.c_str());
    cr_assert(left.empty());
    cr_assert_eq(ok.status, 0, "%s", ok.err.c_str());
}

// dev.ocirun.network=none: a namespace of its own with lo up, and no IP
// socket at all (AF_UNIX only: even loopback TCP is refused);
// dev.ocirun.network=local without ports: loopback works (a server inside
// answers on 127.0.0.1), anything else unreachable. The report measures
// both.
Test(sandbox, network_none_is_loopback_only) {
    const char *script = "nc -l -p 8080 -e echo inside & sleep 0.2; "
                         "nc 127.0.0.1 8080 < /dev/null; nc -w 1 10.0.0.1 80 < /dev/null "
                         "2>&1; sleep 30";
    std::string outs[2], reps[2];
    const char *needs[2] = {"none", "local"};
    for (int i = 0; i < 2; i++) {
        Env e = make_env(i ? "sbnetl" : "sbnet", {"sh", "-c", script});
        e.b.spec.annotations["dev.ocirun.network"] = needs[i];
        e.b.save();
        auto c = test::create(e);
        cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
        auto s = test::oci({"--root", e.root, "start", e.id});
        usleep(700000);
        reps[i] = test::oci({"--root", e.root, "report", "--format", "json", e.id}).out;
        outs[i] = read_file(c.out_path);
        cleanup_all();
    }
    // In the host's network namespace, refused.
    Env f = make_env("sbnet2", {"true"});
    f.b.spec.annotations["dev.ocirun.network"] = "none";
    std::erase_if(f.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::network; });
    auto refused = test::run(f);
    // none leaves no room for a way out.
    Env g = make_env("sbnet3", {"true"});
    g.b.spec.annotations["dev.ocirun.network"] = "none";
    g.b.spec.annotations["dev.ocirun.local-ports"] = "8080";
    auto local = test::run(g);
    cleanup_all();
    cr_assert(!contains(outs[0], "inside\n") &&
                  contains(outs[0], "socket: Address family not supported by protocol"),
              "none: %s", outs[0].c_str());
    cr_assert(contains(outs[1], "inside\n"), "loopback did not work: %s", outs[1].c_str());
    cr_assert(contains(outs[1], "unreachable"), "%s", outs[1].c_str());
    for (int i = 0; i < 2; i++) {
        std::string dim =
            std::string("{\"dimension\":\"network ") + needs[i] + "\",\"state\":\"enforced\"";
        cr_assert(contains(reps[i], dim), "%s", reps[i].c_str());
        cr_assert(contains(reps[i], ", interfaces lo\"}"), "%s", reps[i].c_str());
        cr_assert(contains(reps[i], std::string("{\"dimension\":\"socket families\",\"state\":"
                                                "\"enforced\"")),
                  "%s", reps[i].c_str());
    }
    cr_assert(contains(reps[0], "allowed AF_UNIX\""), "%s", reps[0].c_str());
    cr_assert(contains(reps[1], "allowed AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE "
                                "only)\""),
              "%s", reps[1].c_str());
    cr_assert_eq(refused.status, 1);
    cr_assert(contains(refused.err, "needs a network namespace other than the host's"), "%s",
              refused.err.c_str());
    cr_assert_eq(local.status, 1);
    cr_assert(contains(local.err, "annotations[dev.ocirun.local-ports]: dev.ocirun.network=none "
                                  "allows loopback only"),
              "%s", local.err.c_str());
}

// A process exec'd into a sandboxed container lands in the same locked
// namespaces: the mask holds for it too.
Test(sandbox, exec_into_a_sandboxed_container_keeps_the_masks) {
    Env e = sandbox_env("sbexec", "sleep 30");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto x = test::oci({"--root", e.root, "exec", e.id, "sh", "-c",
                        "cat /secrets/key; umount /secrets && echo UMOUNTED; "
                        "readlink /proc/self/ns/user"});
    char host_ns[128] = "";
    ssize_t n = ::readlink("/proc/self/ns/user", host_ns, sizeof host_ns - 1);
    if (n > 0) host_ns[n] = '\0';
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert(!contains(x.out + x.err, "TOPSECRET") && !contains(x.out, "UMOUNTED"), "%s\n%s",
              x.out.c_str(), x.err.c_str());
    // The nested user namespace, not the host's.
    cr_assert(contains(x.out, "user:[") && !contains(x.out, host_ns), "%s (host %s)", x.out.c_str(),
              host_ns);
}

// ---- rules that hold for the object -------------------------------------------

namespace {

// The four attackers every filesystem attack is run as: the container's root
// with the default capabilities or with every capability it may be given
// (CAP_SYS_ADMIN, CAP_DAC_OVERRIDE...), without or with a user namespace.
struct Attacker {
    const char *name;
    bool userns, all_caps;
};
constexpr Attacker kAttackers[] = {{"root", false, false},
                                   {"root, every capability", false, true},
                                   {"root in a user namespace", true, false},
                                   {"root in a user namespace, every capability", true, true}};

// A directory of the rootfs the container's root may write in: with a user
// namespace its files belong to the mapped root (use_user_namespace maps 0
// to host 100000).
void writable_by_root(const Env &e, const std::string &path, const Attacker &a) {
    std::string p = e.b.rootfs + path;
    if (a.userns) (void)!::chown(p.c_str(), 100000, 100000);
}

void become(Env &e, const Attacker &a) {
    if (a.userns) test::use_user_namespace(e);
    if (a.all_caps) {
        test::add_capabilities(e, {"CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH",
                                   "CAP_SYS_PTRACE", "CAP_FOWNER", "CAP_LINUX_IMMUTABLE"});
        e.b.spec.process->no_new_privileges = false;
    }
}

} // namespace

// A deny or deny-write path that is a symlink in the rootfs (absolute,
// relative, and dangling): the rule is on what it names. The target's
// content is never read or written, by any of the attackers, and report
// says where the rule went.
Test(sandbox, deny_and_deny_write_hold_for_what_a_symlink_names) {
    const std::string script =
        "cat /data/ssh/key /root/.ssh/key; echo x > /data/w/f && echo WROTE1; "
        "echo y > /root/rel/f && echo WROTE2; mkdir -p /data/missing/x && echo MADE; "
        "ls -A /data/ssh; echo end";
    std::string failures;
    for (const auto &a : kAttackers) {
        Env e = sandbox_env("sbsym", script);
        for (const char *d : {"/data", "/data/ssh", "/data/w", "/root"})
            ::mkdir((e.b.rootfs + d).c_str(), 0755);
        test::write_file(e.b.rootfs + "/data/ssh/key", "TOPSECRET\n");
        test::write_file(e.b.rootfs + "/data/w/f", "original\n");
        ::symlink("/data/ssh", (e.b.rootfs + "/root/.ssh").c_str());
        ::symlink("../data/w", (e.b.rootfs + "/root/rel").c_str());
        ::symlink("/data/missing", (e.b.rootfs + "/root/dangling").c_str());
        e.b.spec.annotations["dev.ocirun.deny"] = "/root/.ssh:/root/dangling";
        e.b.spec.annotations["dev.ocirun.deny-write"] = "/root/rel";
        for (const char *d : {"/data", "/data/w", "/data/w/f"})
            writable_by_root(e, d, a);
        become(e, a);
        auto o = test::run(e);
        std::string f = read_file(e.b.rootfs + "/data/w/f");
        bool placeholder_left = test::exists(e.b.rootfs + "/data/missing");
        std::string all = o.out + o.err;
        if (o.status != 0 || !contains(o.out, "end") || contains(all, "TOPSECRET") ||
            contains(o.out, "WROTE") || contains(o.out, "MADE") || f != "original\n")
            failures += std::string(a.name) + ": " + std::to_string(o.status) + "\n" + all + "\n";
        if (placeholder_left)
            failures +=
                std::string(a.name) + ": the placeholder /data/missing stayed on the host\n";
    }
    // report: where each rule went, enforced.
    Env e = sandbox_env("sbsymrep", "sleep 30");
    ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/data/ssh").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/root").c_str(), 0755);
    ::symlink("/data/ssh", (e.b.rootfs + "/root/.ssh").c_str());
    e.b.spec.annotations["dev.ocirun.deny"] = "/root/.ssh";
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"deny /root/.ssh\",\"state\":\"enforced\"") &&
                  contains(rep.out, "\"detail\":\"at /data/ssh\""),
              "%s", rep.out.c_str());
}

// Every other way to a denied or read-only object, by each attacker: the
// rootfs bound again at /mnt/rootfs, one host directory bound twice, a
// hard link of a file in a denied directory, a hard link elsewhere of a file
// under deny-write. Strict refuses each with one line naming both paths;
// nothing is left.
Test(sandbox, other_ways_to_an_object_are_refused) {
    std::string host; // made anew for each run
    struct Case {
        const char *name;
        const char *key, *rule;
        std::function<void(Env &)> setup;
        const char *way;
    } cases[] = {
        {"the rootfs bound again", "dev.ocirun.deny", "/secrets",
         [](Env &e) {
             e.b.spec.mounts.push_back(
                 test::mount_entry("/mnt/rootfs", "bind", e.b.rootfs, {"rbind"}));
         },
         "/secrets is also reachable at /mnt/rootfs/secrets: the mount at /mnt/rootfs"},
        {"a host directory bound twice (deny)", "dev.ocirun.deny", "/data",
         [&](Env &e) {
             e.b.spec.mounts.push_back(test::mount_entry("/data", "bind", host, {"rbind"}));
             e.b.spec.mounts.push_back(test::mount_entry("/alias", "bind", host, {"rbind", "ro"}));
         },
         "/data is also reachable at /alias: the mount at /alias"},
        {"a host directory bound twice (deny-write)", "dev.ocirun.deny-write", "/data",
         [&](Env &e) {
             e.b.spec.mounts.push_back(test::mount_entry("/data", "bind", host, {"rbind"}));
             e.b.spec.mounts.push_back(test::mount_entry("/alias", "bind", host, {"rbind"}));
         },
         "/data is also reachable at /alias: the mount at /alias"},
        {"a second bind that option order leaves writable", "dev.ocirun.deny-write", "/data",
         [&](Env &e) {
             e.b.spec.mounts.push_back(test::mount_entry("/data", "bind", host, {"rbind"}));
             e.b.spec.mounts.push_back(
                 test::mount_entry("/alias", "bind", host, {"rbind", "ro", "rrw"}));
         },
         "/data is also reachable at /alias: the mount at /alias"},
        {"a hard link of a denied file's", "dev.ocirun.deny", "/secrets",
         [](Env &e) {
             ::link((e.b.rootfs + "/secrets/key").c_str(), (e.b.rootfs + "/etc/key-copy").c_str());
         },
         "/secrets is also reachable at /etc/key-copy: a hard link of /secrets/key"},
        {"a hard link of a read-only file's", "dev.ocirun.deny-write", "/secrets",
         [](Env &e) {
             ::link((e.b.rootfs + "/secrets/key").c_str(), (e.b.rootfs + "/tmp/key").c_str());
         },
         "/secrets is also reachable at /tmp/key: a hard link of /secrets/key"},
        {"a hard link of a denied FIFO", "dev.ocirun.deny", "/secrets",
         [](Env &e) {
             ::mkfifo((e.b.rootfs + "/secrets/pipe").c_str(), 0666);
             ::link((e.b.rootfs + "/secrets/pipe").c_str(),
                    (e.b.rootfs + "/etc/pipe-copy").c_str());
         },
         "/secrets is also reachable at /etc/pipe-copy: a hard link of /secrets/pipe"},
    };
    std::string failures;
    for (const auto &c : cases)
        for (const auto &a : kAttackers) {
            host = test::track_dir(test::make_temp_dir("sbways"));
            test::write_file(host + "/f", "host data\n");
            Env e = sandbox_env("sbways", "cat /secrets/key /mnt/rootfs/secrets/key /etc/key-copy");
            for (const char *d : {"/secrets", "/mnt", "/mnt/rootfs", "/data", "/alias"})
                ::mkdir((e.b.rootfs + d).c_str(), 0755);
            test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
            c.setup(e);
            e.b.spec.annotations[c.key] = c.rule;
            become(e, a);
            if (a.userns) ::chmod(host.c_str(), 0777);
            auto o = test::run(e);
            auto left = test::dir_entries(e.root);
            if (o.status != 1 || test::count_lines(o.err) != 1 || !contains(o.err, c.way) ||
                contains(o.out, "TOPSECRET") || !left.empty())
                failures += std::string(c.name) + ", " + a.name + ": " + std::to_string(o.status) +
                            " " + o.out + o.err + "\n";
            cleanup_all();
        }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// An overlay whose layers are a denied or read-only directory is another
// way to it: a lower layer (in lowerdir or added with lowerdir+) shows a
// denied directory, an upper layer writes into a read-only one. Each layer
// is opened, checked and mounted through its fd; strict refuses with one
// line naming the overlay, by each attacker, and leaves nothing. A
// read-only directory as a lower layer only is allowed: the container
// reads it, and its writes go to the upper layer. A rule on the overlay
// itself holds for its layers' copies: a lower layer the rootfs shows
// elsewhere, an upper layer bound writable (both once passed unseen).
Test(sandbox, overlay_layers_are_ways_to_the_object) {
    struct Case {
        const char *name, *key, *rule;
        // The overlay's options, from the rootfs and a host directory.
        std::function<std::string(const std::string &, const std::string &)> layers;
        int status;
        const char *want; // the error's line, or what the container printed
    } cases[] = {
        {"a denied directory as a lower layer", "dev.ocirun.deny", "/secrets",
         [](const std::string &rootfs, const std::string &host) {
             return "lowerdir=" + rootfs + "/secrets:" + host + "/empty";
         },
         1, "annotations[dev.ocirun.deny] /secrets is also reachable at /ov: the overlay at /ov"},
        {"a denied directory added as a layer (lowerdir+)", "dev.ocirun.deny", "/secrets",
         [](const std::string &rootfs, const std::string &host) {
             return "lowerdir+=" + host + "/empty,lowerdir+=" + rootfs + "/secrets";
         },
         1, "annotations[dev.ocirun.deny] /secrets is also reachable at /ov: the overlay at /ov"},
        {"a read-only directory as the upper layer", "dev.ocirun.deny-write", "/data",
         [](const std::string &, const std::string &host) {
             return "lowerdir=" + host + "/low,upperdir=" + host + "/data,workdir=" + host +
                    "/work";
         },
         1,
         "annotations[dev.ocirun.deny-write] /data is also reachable at /ov: the overlay at /ov"},
        {"a read-only directory as a lower layer", "dev.ocirun.deny-write", "/data",
         [](const std::string &, const std::string &host) {
             return "lowerdir=" + host + "/data,upperdir=" + host + "/up,workdir=" + host + "/work";
         },
         0, "host data\nupper\n"},
        {"a denied file on an overlay, its lower layer shown elsewhere", "dev.ocirun.deny",
         "/ov/key",
         [](const std::string &rootfs, const std::string &host) {
             return "lowerdir=" + rootfs + "/secrets:" + host + "/empty";
         },
         1, "annotations[dev.ocirun.deny] /ov/key is also reachable at /secrets/key"},
        {"a read-only file on an overlay, its upper layer bound writable", "dev.ocirun.deny-write",
         "/ov/f",
         [](const std::string &, const std::string &host) {
             return "lowerdir=" + host + "/low,upperdir=" + host + "/data,workdir=" + host +
                    "/work";
         },
         1, "annotations[dev.ocirun.deny-write] /ov/f is also reachable at /data/f"},
    };
    std::string failures;
    for (const auto &c : cases)
        for (const auto &a : kAttackers) {
            std::string host = test::track_dir(test::make_temp_dir("sbovl"));
            for (const char *d : {"/data", "/low", "/up", "/work", "/empty"}) {
                ::mkdir((host + d).c_str(), 0777);
                ::chmod((host + d).c_str(), 0777);
            }
            test::write_file(host + "/data/f", "host data\n");
            // Reached, and f copied up, by the container's root.
            if (a.userns) {
                ::chmod(host.c_str(), 0755);
                (void)!::chown((host + "/data/f").c_str(), 100000, 100000);
            }
            Env e = sandbox_env("sbovl", "cat /ov/key /ov/f 2>/dev/null; echo upper > /ov/f; "
                                         "cat /ov/f; echo x > /data/f && echo WROTE; true");
            for (const char *d : {"/secrets", "/ov", "/data"})
                ::mkdir((e.b.rootfs + d).c_str(), 0755);
            test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
            std::vector<std::string> opts{c.layers(e.b.rootfs, host)};
            // An overlay mounted in a user namespace keeps its metadata in
            // user.* attributes.
            if (a.userns) opts.push_back("userxattr");
            e.b.spec.mounts.push_back(
                test::mount_entry("/data", "bind", host + "/data", {"rbind"}));
            e.b.spec.mounts.push_back(test::mount_entry("/ov", "overlay", "overlay", opts));
            e.b.spec.annotations[c.key] = c.rule;
            become(e, a);
            auto o = test::run(e);
            auto left = test::dir_entries(e.root);
            std::string host_f = read_file(host + "/data/f");
            std::string what = std::string(c.name) + ", " + a.name + ": ";
            if (o.status != c.status || contains(o.out, "TOPSECRET") || contains(o.out, "WROTE") ||
                host_f != "host data\n" || !left.empty())
                failures += what + std::to_string(o.status) + " " + o.out + o.err + "\n";
            else if (c.status == 1 && (test::count_lines(o.err) != 1 || !contains(o.err, c.want)))
                failures += what + o.err + "\n";
            else if (c.status == 0 && o.out != c.want)
                failures += what + o.out + o.err + "\n";
            cleanup_all();
        }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// A hard link is hidden only by a rule that hides it: a link of a denied
// file inside a deny-rename directory (pinned, still readable) is another
// way to it; and one file named twice inside overlapping rules (deny /a and
// deny-write /a/b) is counted once, so its third name elsewhere is found.
// The two rules together also run: the deny-write under the deny is
// covered by it.
Test(sandbox, hard_links_are_covered_only_by_what_hides_them) {
    std::string failures;
    {
        Env e = sandbox_env("sblinkpin", "cat /data/pub/k");
        ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
        ::mkdir((e.b.rootfs + "/data/pub").c_str(), 0755);
        test::write_file(e.b.rootfs + "/data/key", "TOPSECRET\n");
        ::link((e.b.rootfs + "/data/key").c_str(), (e.b.rootfs + "/data/pub/k").c_str());
        e.b.spec.annotations["dev.ocirun.deny"] = "/data/key";
        e.b.spec.annotations["dev.ocirun.deny-rename"] = "/data/pub";
        auto o = test::run(e);
        if (o.status != 1 || contains(o.out, "TOPSECRET") ||
            !contains(o.err, "/data/key is also reachable at /data/pub/k: a hard link"))
            failures += "deny-rename as cover: " + std::to_string(o.status) + " " + o.out + o.err;
        cleanup_all();
    }
    {
        Env e = sandbox_env("sblinkov", "cat /etc/k");
        for (const char *d : {"/a", "/a/b"})
            ::mkdir((e.b.rootfs + d).c_str(), 0755);
        test::write_file(e.b.rootfs + "/a/b/key", "TOPSECRET\n");
        ::link((e.b.rootfs + "/a/b/key").c_str(), (e.b.rootfs + "/etc/k").c_str());
        e.b.spec.annotations["dev.ocirun.deny"] = "/a";
        e.b.spec.annotations["dev.ocirun.deny-write"] = "/a/b";
        auto o = test::run(e);
        if (o.status != 1 || contains(o.out, "TOPSECRET") ||
            !contains(o.err, "/a is also reachable at /etc/k: a hard link of /a/b/key"))
            failures += "overlapping rules: " + std::to_string(o.status) + " " + o.out + o.err;
        cleanup_all();
    }
    {
        Env e = sandbox_env("sbnested", "ls -A /a; touch /a/b/x && echo WROTE; echo end");
        for (const char *d : {"/a", "/a/b"})
            ::mkdir((e.b.rootfs + d).c_str(), 0755);
        e.b.spec.annotations["dev.ocirun.deny"] = "/a";
        e.b.spec.annotations["dev.ocirun.deny-write"] = "/a/b";
        auto o = test::run(e);
        if (o.status != 0 || contains(o.out, "WROTE") || !contains(o.out, "end"))
            failures += "nested rules: " + std::to_string(o.status) + " " + o.out + o.err;
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// enforcement=report: the container runs with the other way, and report
// measures it from inside: degraded, naming where the object is reached.
Test(sandbox, report_measures_the_other_ways) {
    Env e = sandbox_env("sbwayrep", "sleep 30");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
    test::write_file(e.b.rootfs + "/secrets/key", "TOPSECRET\n");
    e.b.spec.mounts.push_back(test::mount_entry("/mnt/rootfs", "bind", e.b.rootfs, {"rbind"}));
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/etc";
    e.b.spec.annotations["dev.ocirun.enforcement"] = "report";
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    auto x = test::oci({"--root", e.root, "exec", e.id, "cat", "/mnt/rootfs/secrets/key"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(contains(c.err, "not enforced: reachable at /mnt/rootfs/secrets"), "%s",
              c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"deny /secrets\",\"state\":\"degraded\"") &&
                  contains(rep.out, "reachable at /mnt/rootfs/secrets (the mount at /mnt/rootfs") &&
                  contains(rep.out, "): readable"),
              "%s", rep.out.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"deny-write /etc\",\"state\":\"degraded\"") &&
                  contains(rep.out, "reachable at /mnt/rootfs/etc") &&
                  contains(rep.out, "writable"),
              "%s", rep.out.c_str());
    // What the report says, the container does.
    cr_assert_str_eq(x.out.c_str(), "TOPSECRET\n");
}

// enforcement=report with the host's disks open (no device rule, so the
// devices cgroup is the parent's): the container runs, and report says the
// rules on files are degraded, naming why, instead of enforced.
Test(sandbox, report_says_open_disks_degrade_the_rules_on_files) {
    Env e = sandbox_env("sbdiskrep", "sleep 30");
    ::mkdir((e.b.rootfs + "/secrets").c_str(), 0755);
    e.b.spec.annotations["dev.ocirun.deny"] = "/secrets";
    e.b.spec.annotations["dev.ocirun.enforcement"] = "report";
    e.b.spec.linux_->resources->devices.clear();
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto rep = test::oci({"--root", e.root, "report", "--format", "json", e.id});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(contains(c.err, "not enforced: the filesystem rules need the host's disks closed"),
              "%s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"deny /secrets\",\"state\":\"degraded\"") &&
                  contains(rep.out, "linux.resources.devices has no rule, so every device"),
              "%s", rep.out.c_str());
}

// A placeholder for a denied path that is not there yet: renaming its
// parent and making the path again fails (its parents are pinned), by each
// attacker; delete removes from the host what the runtime made (the parents
// it made too), and leaves what was there before.
Test(sandbox, placeholders_hold_and_go_with_the_container) {
    const std::string script =
        "mv /work /work2 && echo MOVED; mv /work/new /work/n2 && echo MOVED2; "
        "mkdir -p /work/new/secret/d && echo MADE; touch /work/new/secret/f && echo WROTE; "
        "touch /work/other && echo other-ok; echo end";
    std::string failures;
    for (const auto &a : kAttackers) {
        Env e = sandbox_env("sbplace", script);
        ::mkdir((e.b.rootfs + "/work").c_str(), 0755);
        writable_by_root(e, "/work", a);
        e.b.spec.annotations["dev.ocirun.deny"] = "/work/new/secret";
        become(e, a);
        e.b.save();
        auto c = test::create(e);
        bool made = test::exists(e.b.rootfs + "/work/new/secret");
        auto s = test::oci({"--root", e.root, "start", e.id});
        test::wait_status(e.root, e.id, "stopped");
        std::string io = c.out_path.substr(0, c.out_path.rfind('/'));
        std::string out = read_file(io + "/stdout") + read_file(io + "/stderr");
        auto d = test::oci({"--root", e.root, "delete", e.id});
        bool gone = !test::exists(e.b.rootfs + "/work/new");
        bool kept = test::exists(e.b.rootfs + "/work/other") && test::exists(e.b.rootfs + "/work");
        std::string what = std::string(a.name) + ": ";
        if (c.status != 0 || s.status != 0 || d.status != 0)
            failures += what + c.err + s.err + d.err + "\n";
        if (!made) failures += what + "no placeholder was made\n";
        if (contains(out, "MOVED") || contains(out, "MADE") || contains(out, "WROTE") ||
            !contains(out, "other-ok") || !contains(out, "end"))
            failures += what + out + "\n";
        if (!gone) failures += what + "the placeholder stayed after delete\n";
        if (!kept) failures += what + "delete removed what it did not make\n";
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}
