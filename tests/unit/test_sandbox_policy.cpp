// The sandbox policy parser and the protected-path check, without a container.
#include "oci/spec_io.hpp"
#include "runtime/sandbox_policy.hpp"
#include "unit_support.hpp"

using namespace ocirun;

namespace {

SandboxPolicy parse(const oci::StringMap &a) {
    auto p = parse_sandbox_policy(a);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return *p;
}

std::string error_of(const oci::StringMap &a) {
    auto p = parse_sandbox_policy(a);
    cr_assert(!p.has_value(), "parsed without error");
    return p.error().text();
}

} // namespace

Test(sandbox_policy, lists_are_normalised) {
    SandboxPolicy p = parse({{"dev.ocirun.deny", "/a//b/:/c/./d"},
                             {"dev.ocirun.deny-rename", "/w"},
                             {"dev.ocirun.enforcement", "report"},
                             {"org.other.key", "ignored"}});
    cr_assert(p.present);
    cr_assert(!p.strict);
    cr_assert_eq(p.deny.size(), 2u);
    unit::expect_eq(p.deny[0], "/a/b");
    unit::expect_eq(p.deny[1], "/c/d");
    unit::expect_eq(p.deny_rename[0], "/w");
    cr_assert(!parse({{"org.other.key", "x"}}).present);
}

Test(sandbox_policy, errors_name_the_key) {
    unit::expect_eq(error_of({{"dev.ocirun.deny", "x"}}),
                    "annotations[dev.ocirun.deny]: \"x\" is not an absolute path");
    cr_assert(error_of({{"dev.ocirun.protected", "/a/../b"}}).find("\"..\"") != std::string::npos);
    cr_assert(error_of({{"dev.ocirun.deny-write", "/"}}).find("the root itself") !=
              std::string::npos);
    unit::expect_eq(error_of({{"dev.ocirun.what", "1"}}),
                    "annotations[dev.ocirun.what]: unknown sandbox policy key");
    unit::expect_eq(error_of({{"dev.ocirun.publish", "8080:80"}}),
                    "annotations[dev.ocirun.publish]: not implemented yet");
    unit::expect_eq(error_of({{"dev.ocirun.trace", "yes"}}),
                    "annotations[dev.ocirun.trace]: expected true or false, got \"yes\"");
}

Test(sandbox_policy, protected_overlaps) {
    oci::Spec s = oci::default_spec(false, 0, 0);
    s.root->readonly = true;
    SandboxPolicy p = parse({{"dev.ocirun.protected", "/srv/repo/.git"}});
    auto with_mount = [&](const std::string &src, std::vector<std::string> opts) {
        oci::Spec t = s;
        oci::Mount m;
        m.destination = "/x";
        m.type = "bind";
        m.source = src;
        m.options = std::move(opts);
        t.mounts.push_back(m);
        return check_protected(p, t, "/rootfs");
    };
    cr_assert(!with_mount("/srv/repo/.git", {"rbind"}).has_value());
    cr_assert(!with_mount("/srv", {"rbind"}).has_value());
    cr_assert(!with_mount("/srv/repo/.git/hooks", {"bind"}).has_value());
    cr_assert(with_mount("/srv/repo/.git", {"rbind", "ro"}).has_value());
    cr_assert(with_mount("/srv/repo/.gitignore", {"rbind"}).has_value());
    cr_assert(with_mount("/srv/other", {"rbind"}).has_value());
    auto e = with_mount("/srv", {"rbind"});
    unit::expect_eq(e.error().text(),
                    "annotations[dev.ocirun.protected]: /srv/repo/.git: mounts[" +
                        std::to_string(s.mounts.size()) +
                        "] (source /srv, destination /x, options rbind) is writable and "
                        "contains the protected path");
    oci::Spec w = s;
    w.root->readonly = false;
    SandboxPolicy root = parse({{"dev.ocirun.protected", "/rootfs/etc"}});
    cr_assert(!check_protected(root, w, "/rootfs").has_value());
}

// strict against a host that lacks what the policy needs (a fake of the
// host's facts): one error listing every gap; report lets it run.
Test(sandbox_policy, strict_lists_every_gap_report_runs) {
    oci::Spec s = oci::default_spec(false, 0, 0);
    SandboxPolicy p = parse({{"dev.ocirun.deny", "/secret"}, {"dev.ocirun.trace", "true"}});
    HostFacts bare;
    auto strict = check_policy_gaps(p, s, bare);
    cr_assert(!strict.has_value());
    std::string e = strict.error().text();
    cr_assert(e.find("dev.ocirun.enforcement=strict") != std::string::npos, "%s", e.c_str());
    cr_assert(e.find("needs /usr/bin/strace") != std::string::npos, "%s", e.c_str());
    cr_assert(e.find("no mount_setattr") != std::string::npos, "%s", e.c_str());
    HostFacts full;
    full.strace = true;
    full.mount_setattr = true;
    cr_assert(check_policy_gaps(p, s, full).has_value());
    SandboxPolicy r = parse({{"dev.ocirun.deny", "/secret"},
                             {"dev.ocirun.trace", "true"},
                             {"dev.ocirun.enforcement", "report"}});
    cr_assert(check_policy_gaps(r, s, bare).has_value());
}
