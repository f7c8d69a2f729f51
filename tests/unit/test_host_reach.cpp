// What mounts reach, compared by region (runtime/mount_table.hpp,
// runtime/host_reach.hpp), and the one computation of a bind's final
// attributes (attr_plan) that the checks and the applier share.
#include "runtime/host_reach.hpp"
#include "runtime/mount_options.hpp"
#include "runtime/mount_table.hpp"
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
    unit::expect_eq(line({"mounts[1] (source /srv, destination /x, options rbind,ro)", "",
                          at("/srv"), false}),
                    "");
    unit::expect_eq(line({"mounts[1] (source /srv, destination /x, options rbind)", "",
                          at("/srv"), true}),
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
                    "rbind,ro) contains the runtime's state directory (the container could change "
                    "the records that delete and kill act on)");
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
}
