// What mounts reach, compared by region (runtime/filesystem/mount_table.hpp,
// runtime/filesystem/host_reach.hpp), and the one computation of a bind's final
// attributes (attr_plan) that the checks and the applier share.
#include "runtime/filesystem/fs_policy.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_options.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/filesystem/tree_walk.hpp"
#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <sys/mount.h>

using namespace ocirun;

namespace {

FsRegion at(const char *path, unsigned minor = 1) {
    return {254, minor, path};
}

bool readonly_after(std::vector<std::string> opts, bool source_ro, bool top) {
    MountAttrPlan p = attr_plan(parse_mount_options(opts));
    return attrs_after(p, source_ro ? MOUNT_ATTR_RDONLY : 0, top) & MOUNT_ATTR_RDONLY;
}

} // namespace

Test(host_reach, mountinfo_lines_and_escapes) {
    auto m = parse_mountinfo(
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "40 22 0:35 /a\\040b /mnt/with\\040space ro,nosuid master:3 - tmpfs tmp\\134fs rw\n"
        "bad line\n");
    cr_assert_eq(m.size(), 2u);
    cr_assert_eq(m[1].id, 40);
    cr_assert_eq(m[1].parent, 22);
    cr_assert_eq(m[1].minor, 35u);
    unit::expect_eq(m[1].root, "/a b");
    unit::expect_eq(m[1].point, "/mnt/with space");
    unit::expect_eq(m[1].fstype, "tmpfs");
    unit::expect_eq(m[1].source, "tmp\\fs");
    cr_assert(m[1].readonly && !m[0].readonly);
    auto below = mounts_below(m, "/mnt");
    cr_assert(below.size() == 1 && below[0]->id == 40);
}

// The same directory through any mount is the same region; a sibling whose
// name starts the same is not inside; another superblock never overlaps.
Test(host_reach, regions_overlap_by_object) {
    cr_assert(overlap(at("/srv/repo/.git"), at("/srv/repo/.git")) == Overlap::same);
    cr_assert(overlap(at("/srv"), at("/srv/repo/.git")) == Overlap::contains);
    cr_assert(overlap(at("/"), at("/srv")) == Overlap::contains);
    cr_assert(overlap(at("/srv/repo/.git/hooks"), at("/srv/repo/.git")) == Overlap::inside);
    cr_assert(overlap(at("/srv/repo/.gitignore"), at("/srv/repo/.git")) == Overlap::none);
    cr_assert(overlap(at("/srv", 2), at("/srv/repo", 1)) == Overlap::none);
}

Test(host_reach, guards_refuse_with_one_line) {
    std::vector<ReachGuard> guards = {
        {"--root /run/oci-run", "the runtime's state directory", at("/run/oci-run"), true},
        {"annotations[dev.ocirun.protected]: /srv/repo/.git", "the protected path",
         at("/srv/repo/.git"), false}};
    auto line = [&](Reach r) {
        auto st = check_reach({r}, guards);
        return st ? std::string() : st.error().text();
    };
    // A read-only mount may show a protected path, but not the state.
    unit::expect_eq(
        line({"mounts[1] (source /srv, destination /x, options rbind,ro)", "", at("/srv"), false}),
        "");
    unit::expect_eq(
        line({"mounts[1] (source /srv, destination /x, options rbind)", "", at("/srv"), true}),
        "annotations[dev.ocirun.protected]: /srv/repo/.git: mounts[1] (source /srv, "
        "destination /x, options rbind) is writable and contains the protected path");
    unit::expect_eq(line({"mounts[2] (source /srv/b, destination /b, options rbind,ro)",
                          " through its submount /srv/b/git", at("/srv/repo/.git/x"), true}),
                    "annotations[dev.ocirun.protected]: /srv/repo/.git: mounts[2] (source /srv/b, "
                    "destination /b, options rbind,ro) through its submount /srv/b/git is "
                    "writable and is inside the protected path");
    unit::expect_eq(line({"mounts[0] (source /run, destination /run, options rbind,ro)", "",
                          at("/run"), false}),
                    "--root /run/oci-run: mounts[0] (source /run, destination /run, options "
                    "rbind,ro) contains the runtime's state directory (a sandbox policy's "
                    "container may not read the records)");
    unit::expect_eq(
        line({"mounts[0] (source /run, destination /run, options rbind)", "", at("/run"), true}),
        "--root /run/oci-run: mounts[0] (source /run, destination /run, options "
        "rbind) is writable and contains the runtime's state directory (the container "
        "could change the records that delete and kill act on)");
}

// The order the applier sets them in: the top mount as a remount, then the
// tree. rrw after ro leaves everything writable (the checks once counted
// that mount read-only); plain ro reaches the top mount only.
Test(host_reach, final_attributes_follow_the_order_of_application) {
    cr_assert(!readonly_after({"rbind", "ro", "rrw"}, false, true));
    cr_assert(!readonly_after({"rbind", "ro", "rrw"}, false, false));
    cr_assert(readonly_after({"rbind", "ro"}, false, true));
    cr_assert(!readonly_after({"rbind", "ro"}, false, false));
    cr_assert(readonly_after({"rbind", "rro"}, false, false));
    cr_assert(readonly_after({"rbind", "rro", "rw"}, false, true));
    // No flag given: the source's state stays; a remount with flags sets
    // read-only exactly as given.
    cr_assert(readonly_after({"bind", "rw"}, true, true));
    cr_assert(!readonly_after({"bind", "nosuid"}, true, true));
    cr_assert(readonly_after({"bind"}, true, true));
    // Clearing nosuid, nodev, noexec or nosymfollow is a remount, which sets
    // read-only as given (as runc 1.2's cleared flags).
    cr_assert(!readonly_after({"bind", "dev"}, true, true));
    cr_assert(readonly_after({"bind", "suid", "ro"}, false, true));
}

// ---- mount_ways: the other ways to a rule's object -----------------------

namespace {

FsRule rule(MountOpKind kind, const char *path, FsRegion region) {
    FsRule r;
    r.kind = kind;
    r.what = std::string("annotations[...] ") + path;
    r.path = r.resolved = path;
    r.region = std::move(region);
    return r;
}

std::string ways_of(const char *mountinfo, const std::vector<FsRule> &rules) {
    std::string out;
    for (const auto &w : mount_ways(parse_mountinfo(mountinfo), rules))
        out += std::to_string(w.rule) + " " + w.path + "\n";
    return out;
}

// The container's view: the rootfs (from /b/rootfs on 254:1) at /, a host
// directory /srv/data bound at /data and again at /alias (read-only), the
// rootfs itself bound again at /mnt/rootfs, a tmpfs over /mnt/rootfs/tmp.
constexpr const char *kTable = "10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                               "11 10 254:1 /srv/data /data rw - ext4 /dev/vda rw\n"
                               "12 10 254:1 /srv/data /alias ro - ext4 /dev/vda rw\n"
                               "13 10 254:1 /b/rootfs /mnt/rootfs rw - ext4 /dev/vda rw\n"
                               "14 13 0:40 / /mnt/rootfs/tmp rw - tmpfs tmpfs rw\n"
                               "15 10 254:1 /srv/data/sub /part rw - ext4 /dev/vda rw\n";

} // namespace

// A second mount of the rootfs shows a denied path; a read-only second mount
// of a bound directory shows it to deny but not to deny-write; a mount of a
// part of the object is a way; a path under another mount is hidden; the
// rule's own path is never a way.
Test(host_reach, mount_ways_by_region) {
    std::vector<FsRule> rules = {
        rule(MountOpKind::deny, "/secrets", at("/b/rootfs/secrets")),
        rule(MountOpKind::deny_write, "/data", at("/srv/data")),
        rule(MountOpKind::deny, "/data", at("/srv/data")),
        rule(MountOpKind::deny, "/tmp/x", at("/b/rootfs/tmp/x")),
        rule(MountOpKind::pin, "/secrets", at("/b/rootfs/secrets")),
    };
    unit::expect_eq(ways_of(kTable, rules), "0 /mnt/rootfs/secrets\n"
                                            "1 /part\n"
                                            "2 /alias\n"
                                            "2 /part\n");
}

// The object's own region, and a mount below the rule's path (a part of it):
// mounts elsewhere that show that part are ways too.
Test(host_reach, mount_ways_through_what_is_mounted_below) {
    FsRule r = rule(MountOpKind::deny_write, "/work", at("/b/rootfs/work"));
    r.below.push_back({254, 1, "/srv/cache"});
    unit::expect_eq(ways_of("10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                            "11 10 254:1 /srv/cache /work/cache rw - ext4 /dev/vda rw\n"
                            "12 10 254:1 /srv /host-srv rw - ext4 /dev/vda rw\n",
                            {r}),
                    "0 /host-srv/cache\n");
}

// Hidden is a matter of which mount is on top: /alias/sub was mounted first
// and /alias over it (on the rootfs, not on /alias/sub), so /alias shows the
// data directory's sub/secret, and the way is found there.
Test(host_reach, mount_ways_know_which_mount_is_on_top) {
    FsRule r = rule(MountOpKind::deny, "/data/sub/secret", at("/srv/data/sub/secret"));
    std::string ways = ways_of("10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                               "11 10 254:1 /srv/data /data rw - ext4 /dev/vda rw\n"
                               "12 10 0:40 / /alias/sub rw - tmpfs tmpfs rw\n"
                               "13 10 254:1 /srv/data /alias rw - ext4 /dev/vda rw\n",
                               {r});
    unit::expect_eq(ways, "0 /alias/sub/secret\n");
    // A mount on /alias/sub mounted on top of /alias hides it again.
    ways = ways_of("10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                   "11 10 254:1 /srv/data /data rw - ext4 /dev/vda rw\n"
                   "13 10 254:1 /srv/data /alias rw - ext4 /dev/vda rw\n"
                   "14 13 0:40 / /alias/sub rw - tmpfs tmpfs rw\n",
                   {r});
    unit::expect_eq(ways, "");
}

// ---- an overlay's layers -------------------------------------------------

// Every directory an overlay's data names, in order: lowerdir split at its
// colons ("\:" kept in a name), the layers added one at a time (lowerdir+,
// datadir+) as given; only upperdir and workdir are written to. Replaced in
// that order by the paths the init opened, the rest of the data kept.
Test(host_reach, overlay_layers_in_order_and_replaced) {
    const std::string data = "lowerdir=/a:/b\\:c,upperdir=/u,index=off,workdir=/w,"
                             "lowerdir+=/d,datadir+=/e";
    std::string seen;
    for (const auto &d : overlay_dirs(data))
        seen += d.key + " " + d.path + (d.writable ? " w" : "") + "\n";
    unit::expect_eq(seen, "lowerdir /a\nlowerdir /b:c\nupperdir /u w\nworkdir /w w\n"
                          "lowerdir+ /d\ndatadir+ /e\n");
    unit::expect_eq(overlay_data_at(data, {"/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6"}),
                    "lowerdir=/p/1:/p/2,upperdir=/p/3,index=off,workdir=/p/4,lowerdir+=/p/5,"
                    "datadir+=/p/6");
    // Data-only layers after "::" (kernel 6.5) keep their separators.
    const std::string data_only = "lowerdir=/l1:/l2::/d1::/d2";
    seen.clear();
    for (const auto &d : overlay_dirs(data_only))
        seen += d.path + "\n";
    unit::expect_eq(seen, "/l1\n/l2\n/d1\n/d2\n");
    unit::expect_eq(overlay_data_at(data_only, {"/p/1", "/p/2", "/p/3", "/p/4"}),
                    "lowerdir=/p/1:/p/2::/p/3::/p/4");
}

// A layer is another way to what a rule names: a lower layer shows a denied
// directory (or a part of it, or a directory holding it) at the overlay's
// mount point; an upper layer only is a way for deny-write; an overlay
// inside the rule's own path is covered by it.
Test(host_reach, mount_ways_through_overlay_layers) {
    std::vector<FsRule> rules = {
        rule(MountOpKind::deny, "/secrets", at("/b/rootfs/secrets")),
        rule(MountOpKind::deny_write, "/data", at("/srv/data")),
    };
    auto layer = [](const char *point, const char *dir, bool writable) {
        return OverlayLayer{point, std::string("mounts[1] (its dir ") + dir + ")", at(dir),
                            writable};
    };
    auto ways = [&](std::vector<OverlayLayer> layers) {
        std::string out;
        for (const auto &w : mount_ways(parse_mountinfo("10 1 254:1 /b/rootfs / rw - ext4 "
                                                        "/dev/vda rw\n"
                                                        "11 10 254:1 /srv/data /data rw - ext4 "
                                                        "/dev/vda rw\n"),
                                        rules, layers))
            out += std::to_string(w.rule) + " " + w.path + ": " + w.how + "\n";
        return out;
    };
    unit::expect_eq(ways({layer("/ov", "/b/rootfs/secrets", false)}),
                    "0 /ov: the overlay at /ov shows it: mounts[1] (its dir /b/rootfs/secrets)\n");
    unit::expect_eq(ways({layer("/ov", "/b/rootfs", false)}),
                    "0 /ov/secrets: the overlay at /ov shows it: mounts[1] (its dir /b/rootfs)\n");
    unit::expect_eq(ways({layer("/ov", "/b/rootfs/secrets/ssh", false)}),
                    "0 /ov: the overlay at /ov shows it: mounts[1] (its dir "
                    "/b/rootfs/secrets/ssh)\n");
    unit::expect_eq(ways({layer("/ov", "/srv/data", false)}), "");
    unit::expect_eq(ways({layer("/ov", "/srv/data", true)}),
                    "1 /ov: the overlay at /ov shows it: mounts[1] (its dir /srv/data)\n");
    unit::expect_eq(ways({layer("/secrets/ov", "/b/rootfs/secrets", false)}), "");
}

// An object on an overlay is held by the overlay's layers: another mount
// that shows a layer's copy of it is another way to it (the rootfs showing
// the lower layer, a bind of the upper layer); where the overlay hides its
// own lower layer (an overlay over its directory), that copy is no way.
Test(host_reach, mount_ways_through_an_overlays_layers_copies) {
    FsRule deny = rule(MountOpKind::deny, "/data/secret", {0, 50, "/secret"});
    FsRule ro = rule(MountOpKind::deny_write, "/data/f", {0, 50, "/f"});
    std::vector<OverlayLayer> layers = {
        {"/data", "mounts[1] (its lowerdir /b/rootfs/srv/data)", at("/b/rootfs/srv/data"), false},
        {"/data", "mounts[1] (its upperdir /ovw/up)", at("/ovw/up"), true},
    };
    std::string out;
    for (const auto &w : mount_ways(parse_mountinfo("10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                                                    "11 10 0:50 / /data rw - overlay overlay rw\n"
                                                    "12 10 254:1 /ovw/up /mnt/up rw - ext4 "
                                                    "/dev/vda rw\n"),
                                    {deny, ro}, layers))
        out += std::to_string(w.rule) + " " + w.path + "\n";
    unit::expect_eq(out, "0 /srv/data/secret\n0 /mnt/up/secret\n1 /srv/data/f\n1 /mnt/up/f\n");
    // The overlay over its own directory: the rootfs's copy is under it.
    layers[0] = {"/data", "mounts[1] (its lowerdir /b/rootfs/data)", at("/b/rootfs/data"), false};
    out.clear();
    for (const auto &w : mount_ways(parse_mountinfo("10 1 254:1 /b/rootfs / rw - ext4 /dev/vda rw\n"
                                                    "11 10 0:50 / /data rw - overlay overlay rw\n"),
                                    {deny}, layers))
        out += std::to_string(w.rule) + " " + w.path + "\n";
    unit::expect_eq(out, "");
}

// The bounded walk (runtime/filesystem/tree_walk.hpp) over a directory others
// write to (the state directory, a repository): an entry gone between
// readdir and its stat has no name left to find and does not cut the search
// short; one that cannot be read does.
Test(host_reach, walk_skips_entries_removed_meanwhile) {
    char tmpl[] = "/tmp/oci-run-unit-walk-XXXXXX";
    cr_assert_not_null(::mkdtemp(tmpl));
    std::string dir = tmpl;
    for (int i = 0; i < 20; i++)
        ::close(::open((dir + "/f" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0600));
    ::mkdir((dir + "/sub").c_str(), 0700);
    // The first entry visited removes every other (readdir has them already).
    auto remove_others = [&](const struct stat &, const std::string &path) {
        for (int i = 0; i < 20; i++)
            if (path != dir + "/f" + std::to_string(i))
                ::unlink((dir + "/f" + std::to_string(i)).c_str());
        if (path != dir + "/sub") ::rmdir((dir + "/sub").c_str());
    };
    int top = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t budget = 1000;
    bool incomplete = false;
    int visited = 0;
    bool whole = walk_tree(
        top, dir, budget, incomplete,
        [&](const struct stat &st, const std::string &path) {
            if (visited++ == 0) remove_others(st, path);
        },
        [](const std::string &, const struct stat &) { return true; });
    ::close(top);
    for (int i = 0; i < 20; i++)
        ::unlink((dir + "/f" + std::to_string(i)).c_str());
    ::rmdir((dir + "/sub").c_str());
    ::rmdir(dir.c_str());
    cr_assert(whole);
    cr_assert_not(incomplete, "an entry removed during the walk cut the search short");
    cr_assert_eq(visited, 1, "visited %d", visited);
}
