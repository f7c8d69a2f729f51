// The OCI state document, the per-container record and write_file_atomic.
#include "oci/state.hpp"
#include "runtime/lifecycle/record.hpp"

#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ocirun::oci;
using ocirun::ContainerRecord;
using ocirun::parse_record;
using ocirun::write_record;
using namespace unit;

namespace {

State sample(ContainerStatus status, int pid) {
    State st;
    st.oci_version = "1.2.1";
    st.id = "ctr-1";
    st.status = status;
    st.pid = pid;
    st.bundle = "/var/lib/bundles/ctr-1";
    return st;
}

State parse_ok(const std::string &text) {
    auto r = parse_state(text);
    cr_assert(r.has_value(), "parse_state failed: %s\non: %s", r ? "" : r.error().text().c_str(),
              text.c_str());
    return std::move(*r);
}

std::string parse_err(const std::string &text) {
    auto r = parse_state(text);
    cr_assert(!r.has_value(), "parse_state accepted: %s", text.c_str());
    return r.error().text();
}

void expect_round_trip(ContainerStatus status, const char *name) {
    State st = sample(status, 4242);
    std::string text = write_state(st);
    cr_assert(text.find(std::string("\"status\":\"") + name + "\"") != std::string::npos,
              "status %s not written: %s", name, text.c_str());
    State back = parse_ok(text);
    cr_assert_eq(back.status, status);
    cr_assert_str_eq(status_name(back.status), name);
    expect_eq(back.oci_version, "1.2.1");
    expect_eq(back.id, "ctr-1");
    cr_assert_eq(back.pid, 4242);
    expect_eq(back.bundle, "/var/lib/bundles/ctr-1");
    cr_assert(back.annotations.empty());
    expect_eq(write_state(back), text);
}

std::vector<std::string> list_dir(const std::string &dir) {
    std::vector<std::string> names;
    DIR *d = ::opendir(dir.c_str());
    cr_assert(d != nullptr, "opendir %s: %s", dir.c_str(), std::strerror(errno));
    while (struct dirent *e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    return names;
}

} // namespace

// ---------------------------------------------------------------------------
// write_state / parse_state

Test(state, round_trip_creating) {
    expect_round_trip(ContainerStatus::creating, "creating");
}
Test(state, round_trip_created) {
    expect_round_trip(ContainerStatus::created, "created");
}
Test(state, round_trip_running) {
    expect_round_trip(ContainerStatus::running, "running");
}
Test(state, round_trip_stopped) {
    expect_round_trip(ContainerStatus::stopped, "stopped");
}
Test(state, round_trip_paused) {
    expect_round_trip(ContainerStatus::paused, "paused");
}

Test(state, exact_compact_document) {
    State st = sample(ContainerStatus::running, 17);
    expect_eq(write_state(st), R"({"ociVersion":"1.2.1","id":"ctr-1","status":"running","pid":17,)"
                               R"("bundle":"/var/lib/bundles/ctr-1"})");
}

Test(state, pid_omitted_when_zero) {
    State st = sample(ContainerStatus::stopped, 0);
    std::string text = write_state(st);
    cr_assert(text.find("pid") == std::string::npos, "pid written: %s", text.c_str());
    State back = parse_ok(text);
    cr_assert_eq(back.pid, 0);
    cr_assert_eq(back.status, ContainerStatus::stopped);
}

Test(state, annotations_kept) {
    State st = sample(ContainerStatus::created, 99);
    st.annotations = {{"org.opencontainers.image.os", "linux"}, {"x", "\"quoted\"\n"}};
    State back = parse_ok(write_state(st, true));
    cr_assert_eq(back.annotations.size(), 2u);
    expect_eq(back.annotations.at("org.opencontainers.image.os"), "linux");
    expect_eq(back.annotations.at("x"), "\"quoted\"\n");
}

Test(state, pretty_parses_back) {
    State st = sample(ContainerStatus::paused, 1);
    std::string pretty = write_state(st, true);
    cr_assert(pretty.find('\n') != std::string::npos);
    expect_eq(write_state(parse_ok(pretty)), write_state(st));
}

Test(state, parse_unknown_status) {
    expect_eq(parse_err(R"({"ociVersion":"1.2.1","id":"a","status":"sleeping","bundle":"/b"})"),
              "status: unknown status \"sleeping\"");
}

Test(state, parse_status_wrong_type) {
    expect_eq(parse_err(R"({"ociVersion":"1.2.1","id":"a","status":1,"bundle":"/b"})"),
              "status: expected a string, got a number");
}

Test(state, parse_missing_id) {
    expect_eq(parse_err(R"({"ociVersion":"1.2.1","status":"created","bundle":"/b"})"),
              "id: required field is missing");
}

Test(state, parse_missing_bundle) {
    expect_eq(parse_err(R"({"ociVersion":"1.2.1","id":"a","status":"created"})"),
              "bundle: required field is missing");
}

Test(state, parse_negative_pid) {
    expect_eq(
        parse_err(R"({"ociVersion":"1.2.1","id":"a","status":"running","pid":-1,"bundle":"/b"})"),
        "pid: -1 is out of range [0, 2147483647]");
}

Test(state, parse_not_object) {
    expect_eq(parse_err("[1]"), "expected a JSON object at the top level");
}

Test(state, parse_syntax_error) {
    std::string e = parse_err("{\"id\": ");
    cr_assert(e.rfind("invalid JSON: line 1, column ", 0) == 0, "got: %s", e.c_str());
}

Test(state, parse_annotation_wrong_type) {
    expect_eq(parse_err(R"({"ociVersion":"1.2.1","id":"a","status":"created","bundle":"/b",)"
                        R"("annotations":{"k":true}})"),
              "annotations.k: expected a string, got a boolean");
}

// ---------------------------------------------------------------------------
// ContainerRecord

Test(state, record_round_trip) {
    ContainerRecord rec;
    rec.state = sample(ContainerStatus::created, 31337);
    rec.state.annotations = {{"a", "b"}};
    rec.init_start_time = 18446744073709551615ull;
    rec.created = "2024-05-01T12:34:56.789Z";
    rec.rootfs = "/var/lib/bundles/ctr-1/rootfs";
    rec.owner = 4294967295u;
    rec.started = true;
    rec.has_hooks = true;
    rec.cgroup_dirs = {"/sys/fs/cgroup/pids/oci-run/ctr-1", "/sys/fs/cgroup/unified/oci-run/ctr-1"};
    rec.release_fd = 6;
    rec.release_pipe = 44470171;
    rec.result_fd = 9;
    rec.result_pipe = 18446744073709551615ull;
    std::string text = write_record(rec);
    auto r = parse_record(text);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    const ContainerRecord &b = *r;
    cr_assert_eq(b.state.status, ContainerStatus::created);
    cr_assert_eq(b.state.pid, 31337);
    expect_eq(b.state.id, "ctr-1");
    expect_eq(b.state.bundle, "/var/lib/bundles/ctr-1");
    expect_eq(b.state.annotations.at("a"), "b");
    cr_assert_eq(b.init_start_time, UINT64_MAX);
    expect_eq(b.created, "2024-05-01T12:34:56.789Z");
    expect_eq(b.rootfs, "/var/lib/bundles/ctr-1/rootfs");
    cr_assert_eq(b.owner, UINT32_MAX);
    cr_assert(b.started);
    cr_assert(b.has_hooks);
    cr_assert_eq(b.cgroup_dirs, rec.cgroup_dirs);
    cr_assert_eq(b.release_fd, 6u);
    cr_assert_eq(b.release_pipe, 44470171u);
    cr_assert_eq(b.result_fd, 9u);
    cr_assert_eq(b.result_pipe, UINT64_MAX);
    expect_eq(write_record(b), text);
}

// The runtime's own facts of a sandboxed container: the policy's
// filesystem rules as the init found them, with their other ways, the
// placeholders it made, the configured cgroupsPath, the trace flag.
Test(state, record_keeps_the_sandbox_facts) {
    ContainerRecord rec;
    rec.state = sample(ContainerStatus::created, 7);
    rec.sandboxed = rec.trace = true;
    rec.cgroup_dirs = {"/sys/fs/cgroup/pods/p1/ctr-1"};
    rec.cgroups_path = "/pods/p1/ctr-1";
    rec.init_pidns = 4026532001;
    rec.fs_rules = {{"deny", "/root/.ssh", "/data/ssh", false, {}},
                    {"deny-write",
                     "/etc",
                     "/etc",
                     false,
                     {{"/mnt/rootfs/etc", "the mount at /mnt/rootfs shows it"},
                      {"", "cannot tell: more than 200000 entries"}}},
                    {"deny", "/nothere", "/nothere", true, {}}};
    rec.placeholders = {{"/srv/rootfs/nothere", 2049, 1234567}};
    std::string text = write_record(rec);
    auto r = parse_record(text);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    cr_assert(r->sandboxed && r->trace);
    expect_eq(r->cgroups_path, "/pods/p1/ctr-1");
    cr_assert(r->cgroups_path_recorded);
    cr_assert_eq(r->init_pidns, 4026532001u);
    cr_assert_eq(r->fs_rules.size(), 3u);
    expect_eq(r->fs_rules[0].resolved, "/data/ssh");
    cr_assert_eq(r->fs_rules[1].ways.size(), 2u);
    expect_eq(r->fs_rules[1].ways[0].path, "/mnt/rootfs/etc");
    expect_eq(r->fs_rules[1].ways[1].path, "");
    cr_assert(r->fs_rules[2].made && !r->fs_rules[0].made);
    cr_assert_eq(r->placeholders.size(), 1u);
    cr_assert_eq(r->placeholders[0].dev, 2049u);
    cr_assert_eq(r->placeholders[0].ino, 1234567u);
    expect_eq(write_record(*r), text);
}

Test(state, record_defaults_round_trip) {
    ContainerRecord rec;
    rec.state = sample(ContainerStatus::stopped, 0);
    auto r = parse_record(write_record(rec));
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    cr_assert_eq(r->state.pid, 0);
    cr_assert_eq(r->init_start_time, 0u);
    cr_assert_eq(r->owner, 0u);
    cr_assert(!r->started);
    cr_assert(!r->has_hooks);
    cr_assert(r->created.empty());
}

Test(state, record_is_a_valid_state) {
    // The record is a superset of the OCI state: parse_state reads it.
    ContainerRecord rec;
    rec.state = sample(ContainerStatus::running, 5);
    rec.owner = 1000;
    State st = parse_ok(write_record(rec));
    cr_assert_eq(st.status, ContainerStatus::running);
    cr_assert_eq(st.pid, 5);
}

Test(state, record_bad_owner) {
    auto r = parse_record(R"({"ociVersion":"1.2.1","id":"a","status":"created","bundle":"/b",)"
                          R"("owner":4294967296})");
    cr_assert(!r.has_value());
    expect_eq(r.error().text(), "owner: 4294967296 is out of range [0, 4294967295]");
}

Test(state, record_unknown_status) {
    auto r = parse_record(R"({"ociVersion":"1.2.1","id":"a","status":"zombie","bundle":"/b"})");
    cr_assert(!r.has_value());
    expect_eq(r.error().text(), "status: unknown status \"zombie\"");
}

// ---------------------------------------------------------------------------
// write_file_atomic

Test(state, atomic_write_creates_file) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/state.json";
    auto r = write_file_atomic(path, "hello\n");
    std::string content = r ? must_read(path) : "";
    struct stat st {};
    int rc = ::stat(path.c_str(), &st);
    rm_rf(dir);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    expect_eq(content, "hello\n");
    cr_assert_eq(rc, 0);
    cr_assert_eq(st.st_mode & 07777, 0600u);
}

Test(state, atomic_write_mode) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/f";
    mode_t old = ::umask(0);
    auto r = write_file_atomic(path, "x", 0644);
    ::umask(old);
    struct stat st {};
    int rc = ::stat(path.c_str(), &st);
    rm_rf(dir);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    cr_assert_eq(rc, 0);
    cr_assert_eq(st.st_mode & 07777, 0644u);
}

Test(state, atomic_write_replaces_existing) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/state.json";
    auto r1 = write_file_atomic(path, "a much longer first version of the file\n");
    auto r2 = write_file_atomic(path, "v2");
    std::string content = must_read(path);
    rm_rf(dir);
    cr_assert(r1.has_value() && r2.has_value());
    expect_eq(content, "v2");
}

Test(state, atomic_write_empty_content) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/empty";
    auto r = write_file_atomic(path, "");
    std::string content = r ? must_read(path) : "x";
    rm_rf(dir);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    cr_assert(content.empty());
}

Test(state, atomic_write_leaves_no_temp_files) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/state.json";
    bool ok = true;
    for (int i = 0; i < 20; i++)
        ok = ok && write_file_atomic(path, "round " + std::to_string(i)).has_value();
    std::vector<std::string> names = list_dir(dir);
    std::string content = must_read(path);
    rm_rf(dir);
    cr_assert(ok);
    cr_assert_eq(names.size(), 1u, "directory holds %zu entries, first: %s", names.size(),
                 names.empty() ? "" : names[0].c_str());
    expect_eq(names[0], "state.json");
    expect_eq(content, "round 19");
}

Test(state, atomic_write_missing_directory) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/missing/state.json";
    auto r = write_file_atomic(path, "x");
    std::vector<std::string> names = list_dir(dir);
    rm_rf(dir);
    cr_assert(!r.has_value());
    cr_assert_eq(r.error().code, ENOENT);
    std::string e = r.error().text();
    cr_assert(e.find(dir + "/missing/") != std::string::npos, "got: %s", e.c_str());
    cr_assert(e.find("No such file or directory") != std::string::npos, "got: %s", e.c_str());
    cr_assert(names.empty());
}

Test(state, atomic_write_target_is_directory) {
    // rename over a non-empty directory fails; the temp file is cleaned up.
    std::string dir = make_tmpdir();
    std::string path = dir + "/target";
    cr_assert_eq(::mkdir(path.c_str(), 0700), 0);
    cr_assert_eq(::mkdir((path + "/sub").c_str(), 0700), 0);
    auto r = write_file_atomic(path, "x");
    std::vector<std::string> names = list_dir(dir);
    rm_rf(dir);
    cr_assert(!r.has_value());
    cr_assert_neq(r.error().code, 0);
    cr_assert(r.error().msg.rfind("rename ", 0) == 0, "got: %s", r.error().text().c_str());
    cr_assert_eq(names.size(), 1u, "temp file left behind");
}

// stage_file: written beside the target, in place only on commit.

Test(state, staged_file_is_in_place_only_after_commit) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    bool old_ok = write_file_atomic(path, "old").has_value();
    auto staged = stage_file(path, "new");
    std::string before_commit = must_read(path);
    size_t entries_staged = list_dir(dir).size();
    auto c = staged ? staged->commit() : ocirun::Status{};
    std::string after_commit = must_read(path);
    std::vector<std::string> names = list_dir(dir);
    rm_rf(dir);
    cr_assert(old_ok);
    cr_assert(staged.has_value(), "%s", staged ? "" : staged.error().text().c_str());
    cr_assert(c.has_value());
    expect_eq(before_commit, "old");
    cr_assert_eq(entries_staged, 2u, "the staged content is not on disk beside the target");
    expect_eq(after_commit, "new");
    cr_assert_eq(names.size(), 1u, "temp file left behind");
}

Test(state, staged_file_dropped_without_commit_leaves_the_target) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    bool old_ok = write_file_atomic(path, "old").has_value();
    bool staged_ok = stage_file(path, "new").has_value(); // dropped at once
    std::string content = must_read(path);
    std::vector<std::string> names = list_dir(dir);
    rm_rf(dir);
    cr_assert(old_ok && staged_ok);
    expect_eq(content, "old");
    cr_assert_eq(names.size(), 1u, "temp file left behind");
}

// Timestamps: calendar arithmetic (no time zone database), checked against
// fixed dates and against gmtime_r over 200 years.
Test(state, rfc3339_timestamps) {
    expect_eq(rfc3339({0, 0}), "1970-01-01T00:00:00.000000000Z");
    expect_eq(rfc3339({951782400, 5}), "2000-02-29T00:00:00.000000005Z");
    expect_eq(rfc3339({1798761599, 999999999}), "2026-12-31T23:59:59.999999999Z");
    for (time_t t = 0; t < 200L * 366 * 86400; t += 86400 * 37 + 3607) {
        struct tm tm;
        gmtime_r(&t, &tm);
        char want[64];
        std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.000000042Z",
                      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                      tm.tm_sec);
        expect_eq(rfc3339({t, 42}), want);
    }
}
