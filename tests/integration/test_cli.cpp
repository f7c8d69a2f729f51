// The CLI surface: global flags, help, spec, features, and the one-line
// errors for bad invocations. Runs the real binary.
#include "oci/json.hpp"
#include "oci/spec_io.hpp"
#include "support/bundle.hpp"
#include "support/elf.hpp"
#include "support/harness.hpp"
#include "support/process.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

using test::count_lines;
using test::oci;

Test(cli, version_lists_spec_and_libraries) {
    auto o = oci({"--version"});
    cr_assert_eq(o.status, 0);
    cr_assert(o.out.find("oci-run version ") == 0, "%s", o.out.c_str());
    cr_assert(o.out.find("spec: 1.3.0") != std::string::npos);
    cr_assert(o.out.find("libseccomp: 2.") != std::string::npos);
    cr_assert(o.out.find("yajl: 2.") != std::string::npos);
    cr_assert(o.out.find("commit: ") != std::string::npos);
}

Test(cli, help_lists_every_runc_command) {
    auto o = oci({"--help"});
    cr_assert_eq(o.status, 0);
    for (const char *c :
         {"create", "start", "run", "state", "kill", "delete", "list", "exec", "ps", "pause",
          "resume", "events", "update", "features", "spec", "checkpoint", "restore"})
        cr_assert(o.out.find(std::string("  ") + c + " ") != std::string::npos, "missing %s", c);
}

Test(cli, every_command_has_help) {
    for (const char *c :
         {"create", "start", "run", "state", "kill", "delete", "list", "exec", "ps", "pause",
          "resume", "events", "update", "features", "spec", "checkpoint", "restore"}) {
        auto o = oci({c, "--help"});
        cr_assert_eq(o.status, 0, "%s --help exited %d", c, o.status);
        cr_assert(o.out.find(std::string("Usage: oci-run ") + c) == 0, "%s", o.out.c_str());
    }
}

Test(cli, unknown_command_is_one_line_error) {
    auto o = oci({"frobnicate"});
    cr_assert_eq(o.status, 1);
    cr_assert_eq(count_lines(o.err), 1u, "%s", o.err.c_str());
    cr_assert(o.err.find("unknown command \"frobnicate\"") != std::string::npos);
}

Test(cli, unknown_global_option) {
    auto o = oci({"--bogus", "list"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("unknown option --bogus") != std::string::npos, "%s", o.err.c_str());
}

Test(cli, bad_log_format) {
    auto o = oci({"--log-format", "xml", "list"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("--log-format") != std::string::npos, "%s", o.err.c_str());
}

Test(cli, bad_rootless_value) {
    auto o = oci({"--rootless", "maybe", "list"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("--rootless") != std::string::npos, "%s", o.err.c_str());
}

Test(cli, checkpoint_and_restore_say_criu_unavailable) {
    for (const char *c : {"checkpoint", "restore"}) {
        auto o = oci({c, "x"});
        cr_assert_eq(o.status, 1);
        cr_assert(o.err.find("CRIU support is not available") != std::string::npos, "%s",
                  o.err.c_str());
    }
}

Test(cli, json_log_lines_as_runc_writes_them) {
    std::string dir = test::make_temp_dir("log");
    std::string log = dir + "/log.json";
    auto o = oci({"--log", log, "--log-format", "json", "checkpoint", "x"});
    cr_assert_eq(o.status, 1);
    std::string line = test::read_file(log);
    auto doc = ocirun::json::Document::parse(line);
    cr_assert(doc.has_value(), "log line is not JSON: %s", line.c_str());
    yajl_val root = doc->root();
    yajl_val level = ocirun::json::member(root, "level");
    yajl_val msg = ocirun::json::member(root, "msg");
    yajl_val time = ocirun::json::member(root, "time");
    cr_assert(level && YAJL_IS_STRING(level) && std::string(level->u.string) == "error");
    cr_assert(msg && YAJL_IS_STRING(msg) &&
              std::string(msg->u.string).find("CRIU") != std::string::npos);
    cr_assert(time && YAJL_IS_STRING(time) && std::string(time->u.string).size() >= 20);
    test::rm_rf(dir);
}

Test(spec, writes_default_config_that_parses_back) {
    std::string dir = test::make_temp_dir("spec");
    auto o = oci({"spec", "--bundle", dir});
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    auto spec = ocirun::oci::parse_spec(test::read_file(dir + "/config.json"));
    cr_assert(spec.has_value(), "%s", spec ? "" : spec.error().text().c_str());
    cr_assert(ocirun::oci::validate_spec(*spec).has_value());
    cr_assert_eq(spec->process->args.size(), 1u);
    cr_assert_str_eq(spec->process->args[0].c_str(), "sh");
    cr_assert(spec->root->readonly);
    cr_assert(spec->linux_->find_namespace(ocirun::oci::NsType::pid));
    cr_assert(!spec->linux_->masked_paths.empty());
    test::rm_rf(dir);
}

Test(spec, refuses_to_overwrite) {
    std::string dir = test::make_temp_dir("spec");
    test::write_file(dir + "/config.json", "{}");
    auto o = oci({"spec", "-b", dir});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("exists") != std::string::npos, "%s", o.err.c_str());
    std::string kept = test::read_file(dir + "/config.json");
    test::rm_rf(dir);
    cr_assert_str_eq(kept.c_str(), "{}");
}

Test(spec, rootless_maps_the_caller) {
    std::string dir = test::make_temp_dir("spec");
    auto o = oci({"spec", "--rootless", "--bundle", dir});
    cr_assert_eq(o.status, 0);
    auto spec = ocirun::oci::parse_spec(test::read_file(dir + "/config.json"));
    cr_assert(spec.has_value());
    cr_assert(spec->linux_->find_namespace(ocirun::oci::NsType::user));
    cr_assert_null(spec->linux_->find_namespace(ocirun::oci::NsType::network));
    cr_assert_eq(spec->linux_->uid_mappings.at(0).host_id, geteuid());
    test::rm_rf(dir);
}

Test(spec, missing_bundle_dir) {
    auto o = oci({"spec", "--bundle", "/nonexistent/oci-run-test"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("/nonexistent/oci-run-test/config.json") != std::string::npos, "%s",
              o.err.c_str());
    cr_assert(o.err.find("No such file or directory") != std::string::npos);
}

Test(spec, extra_argument_refused) {
    auto o = oci({"spec", "extra"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("unexpected argument \"extra\"") != std::string::npos, "%s",
              o.err.c_str());
}

Test(features, is_valid_json_with_spec_range) {
    auto o = oci({"features"});
    cr_assert_eq(o.status, 0);
    auto doc = ocirun::json::Document::parse(o.out);
    cr_assert(doc.has_value(), "%s", o.out.c_str());
    yajl_val max = ocirun::json::member(doc->root(), "ociVersionMax");
    cr_assert(max && std::string(max->u.string) == "1.3.0");
    yajl_val lx = ocirun::json::member(doc->root(), "linux");
    cr_assert(lx && YAJL_IS_OBJECT(lx));
    yajl_val sc = ocirun::json::member(lx, "seccomp");
    cr_assert(sc && YAJL_IS_OBJECT(sc));
}

Test(bundle, maker_builds_a_busybox_rootfs) {
    test::Bundle b = test::make_bundle("maker", {"echo", "hi there"});
    struct stat st;
    cr_assert_eq(stat((b.rootfs + "/bin/busybox").c_str(), &st), 0);
    cr_assert_eq(lstat((b.rootfs + "/bin/sh").c_str(), &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    cr_assert_eq(b.spec.process->args.size(), 2u);
    cr_assert_str_eq(b.spec.process->args[1].c_str(), "hi there");
    cr_assert(!b.spec.process->terminal);
    b.remove();
}

Test(cli, systemd_cgroup_is_a_clear_error_without_systemd) {
    if (test::exists("/run/systemd/system"))
        cr_skip_test("systemd is running here; this checks the host without it");
    std::string root = test::make_root("systemd");
    auto o = oci({"--root", root, "--systemd-cgroup", "create", "--bundle", "/nonexistent", "x"});
    cr_assert_eq(o.status, 1);
    cr_assert(o.err.find("--systemd-cgroup: systemd is not running") != std::string::npos, "%s",
              o.err.c_str());
    cr_assert(!test::exists(root + "/x"));
    test::rm_rf(root);
}

// The static oci-run links no iostreams: their locale machinery's static
// constructors ran at every start, each in another 64 KB of text (a page
// fault and its fault-around), and were a third of the binary. One
// std::istringstream was enough to bring them all back (bench/HISTORY.md).
// A dynamically linked build (the sanitized one) has
// libstdc++ outside the binary, and a stripped one no symbol table to read.
Test(cli, static_binary_links_no_iostreams) {
    std::string elf = test::read_file(test::oci_run_path());
    if (test::elf_has_interpreter(elf))
        cr_skip_test("%s is linked dynamically: libstdc++ is not in it", test::oci_run_path().c_str());
    auto locale = test::elf_defined_symbols(elf, "_ZNSt6locale");
    if (!locale) cr_skip_test("%s has no symbol table (stripped)", test::oci_run_path().c_str());
    cr_assert(locale->empty(), "%s links std::locale (%zu symbols, e.g. %s): an iostream is back",
              test::oci_run_path().c_str(), locale->size(), locale->front().c_str());
}
