// config.json parsing and validation: every class of bad input, each checked
// for the exact error text (which names the JSON path), plus load_bundle_spec.
#include "oci/spec_io.hpp"

#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ocirun::oci;
using namespace unit;

namespace {

// A minimal valid config; each part is spliced into its object (no leading comma).
std::string cfg(const std::string &proc = "", const std::string &lx = "",
                const std::string &top = "") {
    std::string s = R"({"ociVersion": "1.2.1", "root": {"path": "rootfs"}, )";
    s += R"("process": {"cwd": "/", "args": ["sh"])";
    if (!proc.empty()) s += ", " + proc;
    s += R"(}, "linux": {)" + lx + "}";
    if (!top.empty()) s += ", " + top;
    s += "}";
    return s;
}

// parse_spec must fail; the error text.
std::string parse_err(const std::string &json) {
    auto r = parse_spec(json);
    cr_assert(!r.has_value(), "parse_spec accepted: %s", json.c_str());
    return r.error().text();
}

// parse_spec must succeed and validate_spec fail; the error text.
std::string valid_err(const std::string &json) {
    auto r = parse_spec(json);
    cr_assert(r.has_value(), "parse_spec failed: %s\non: %s", r ? "" : r.error().text().c_str(),
              json.c_str());
    auto v = validate_spec(*r);
    cr_assert(!v.has_value(), "validate_spec accepted: %s", json.c_str());
    return v.error().text();
}

// parse_spec and validate_spec must both succeed.
Spec ok(const std::string &json) {
    auto r = parse_spec(json);
    cr_assert(r.has_value(), "parse_spec failed: %s\non: %s", r ? "" : r.error().text().c_str(),
              json.c_str());
    auto v = validate_spec(*r);
    cr_assert(v.has_value(), "validate_spec failed: %s\non: %s", v ? "" : v.error().text().c_str(),
              json.c_str());
    return std::move(*r);
}

// parse_spec must succeed (validation not run).
Spec parsed(const std::string &json) {
    auto r = parse_spec(json);
    cr_assert(r.has_value(), "parse_spec failed: %s\non: %s", r ? "" : r.error().text().c_str(),
              json.c_str());
    return std::move(*r);
}

#define EXPECT_PARSE_ERR(json, want)                                                               \
    do {                                                                                           \
        const std::string got_ = parse_err(json);                                                  \
        cr_assert_str_eq(got_.c_str(), want);                                                      \
    } while (0)
#define EXPECT_VALID_ERR(json, want)                                                               \
    do {                                                                                           \
        const std::string got_ = valid_err(json);                                                  \
        cr_assert_str_eq(got_.c_str(), want);                                                      \
    } while (0)

const char *kSeccompHead = R"("seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [)";

std::string seccomp_with(const std::string &syscall) {
    return std::string(kSeccompHead) + syscall + "]}";
}

} // namespace

// ---------------------------------------------------------------------------
// The base config itself is valid (every other test varies one thing).

Test(spec_parse, base_config_is_valid) {
    Spec s = ok(cfg());
    cr_assert_str_eq(s.oci_version.c_str(), "1.2.1");
    cr_assert_str_eq(s.root->path.c_str(), "rootfs");
    cr_assert_eq(s.process->args.size(), 1u);
    cr_assert(s.linux_.has_value());
}

// ---------------------------------------------------------------------------
// Malformed JSON: line and column of the error.

Test(spec_parse, syntax_lexical_error_multiline) {
    const char *doc = "{\n"
                      "  \"ociVersion\": \"1.2.1\",\n"
                      "  \"hostname\": @\n"
                      "}\n";
    EXPECT_PARSE_ERR(doc,
                     "invalid JSON: line 3, column 15: lexical error: invalid char in json text.");
}

Test(spec_parse, syntax_bad_escape_multiline) {
    const char *doc = "{\n"
                      "\t\"ociVersion\": \"1.2.1\",\n"
                      "\t\"hostname\": \"a\\qb\"\n"
                      "}\n";
    // The tab counts as one column; the offending character is the 'q' at column 17.
    std::string e = parse_err(doc);
    cr_assert_str_eq(e.c_str(), "invalid JSON: line 3, column 17: lexical error: inside a string, "
                                "'\\' occurs before a character which it may not.");
}

Test(spec_parse, syntax_premature_eof_multiline) {
    const char *doc = "{\n"
                      "  \"ociVersion\": \"1.2.1\",\n"
                      "  \"root\": {\"path\": \"rootfs\"},\n";
    EXPECT_PARSE_ERR(doc, "invalid JSON: line 4, column 1: premature EOF");
}

Test(spec_parse, syntax_empty_document) {
    EXPECT_PARSE_ERR("", "invalid JSON: line 1, column 1: premature EOF");
}

// Found by tests/fuzz/fuzz_config: yajl frees its tree recursively, so a few
// MB of "[" crashed oci-run with a stack overflow instead of an error.
Test(spec_parse, nesting_too_deep) {
    const size_t levels = 1000000;
    std::string doc = "{\"ociVersion\": \"1.2.1\",\n\"x\": " + std::string(levels, '[') +
                      std::string(levels, ']') + "}";
    EXPECT_PARSE_ERR(doc.c_str(),
                     "invalid JSON: line 2, column 517: nested deeper than 512 levels");
    // Brackets inside strings are not nesting; 512 levels are accepted.
    std::string ok =
        "{\"ociVersion\": \"1.2.1\", \"s\": \"[[[\\\"[[\", \"x\": " + std::string(511, '[') +
        std::string(511, ']') + "}";
    cr_assert(parse_spec(ok).has_value(), "%s", ok.c_str());
    // A syntax error before the bracket too deep is the error reported.
    std::string bad = "{\"ociVersion\": \"1.2.1\", \"a\": nope, \"x\": " + std::string(600, '[') +
                      std::string(600, ']') + "}";
    EXPECT_PARSE_ERR(bad.c_str(), "invalid JSON: line 1, column 30: lexical error: invalid string "
                                  "in json text.");
    // After it, the depth is (yajl never reads past the bracket too deep).
    std::string late = "{\"ociVersion\": \"1.2.1\", \"x\": " + std::string(600, '[') +
                       std::string(600, ']') + ", \"a\": nope}";
    EXPECT_PARSE_ERR(late.c_str(),
                     "invalid JSON: line 1, column 541: nested deeper than 512 levels");
}

Test(spec_parse, syntax_missing_comma_points_at_token) {
    // The offending token "y" starts at line 4, column 19.
    const char *doc = "{\n"
                      "  \"ociVersion\": \"1.2.1\",\n"
                      "  \"root\": {\"path\": \"rootfs\"},\n"
                      "  \"hostname\": \"x\" \"y\"\n"
                      "}\n";
    EXPECT_PARSE_ERR(doc, "invalid JSON: line 4, column 19: after key and value, inside map, I "
                          "expect ',' or '}'");
}

Test(spec_parse, syntax_trailing_comma_points_at_brace) {
    // The '}' after the trailing comma is at line 3, column 29.
    const char *doc = "{\n"
                      "  \"ociVersion\": \"1.2.1\",\n"
                      "  \"root\": {\"path\": \"rootfs\",}\n"
                      "}\n";
    EXPECT_PARSE_ERR(doc, "invalid JSON: line 3, column 29: invalid object key (must be a string)");
}

Test(spec_parse, syntax_trailing_garbage_points_at_garbage) {
    // The second document's '{' is at line 2, column 1.
    EXPECT_PARSE_ERR("{\"ociVersion\": \"1.2.1\"}\n{",
                     "invalid JSON: line 2, column 1: trailing garbage");
}

Test(spec_parse, syntax_reports_line_of_error_not_of_start) {
    const char *doc = "{\n\n\n\n\n  \"ociVersion\": tru\n}";
    std::string e = parse_err(doc);
    cr_assert(e.rfind("invalid JSON: line 6, column ", 0) == 0, "got: %s", e.c_str());
}

Test(spec_parse, syntax_nul_byte) {
    std::string doc = cfg();
    doc.insert(5, 1, '\0');
    EXPECT_PARSE_ERR(doc, "invalid JSON: contains a NUL byte");
    // After a whole document: yajl, reading a terminated string, would stop
    // at the NUL and take the first document for all of it.
    std::string two = cfg() + std::string(1, '\0') + R"({"ociVersion": "1.0.0", "hostname": "x"})";
    EXPECT_PARSE_ERR(two, "invalid JSON: contains a NUL byte");
    auto viewed = parse_spec(std::string_view(two)); // the overload that copies
    cr_assert(!viewed.has_value());
    cr_assert(viewed.error().text() == "invalid JSON: contains a NUL byte", "got: %s",
              viewed.error().text().c_str());
}

Test(spec_parse, syntax_no_comments) {
    std::string e = parse_err("{/* c */ \"ociVersion\": \"1.2.1\"}");
    cr_assert(e.rfind("invalid JSON: line 1, column ", 0) == 0, "got: %s", e.c_str());
}

// ---------------------------------------------------------------------------
// Top level must be an object.

Test(spec_parse, top_level_array) {
    EXPECT_PARSE_ERR("[]", "expected a JSON object at the top level");
}

Test(spec_parse, top_level_string) {
    EXPECT_PARSE_ERR("\"config\"", "expected a JSON object at the top level");
}

Test(spec_parse, top_level_number) {
    EXPECT_PARSE_ERR("42", "expected a JSON object at the top level");
}

Test(spec_parse, top_level_null) {
    EXPECT_PARSE_ERR("null", "expected a JSON object at the top level");
}

// ---------------------------------------------------------------------------
// Wrong types, at several depths.

Test(spec_parse, type_oci_version_number) {
    EXPECT_PARSE_ERR(R"({"ociVersion": 1})", "ociVersion: expected a string, got a number");
}

Test(spec_parse, type_process_string) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "process": "sh"})",
                     "process: expected an object, got a string");
}

Test(spec_parse, type_root_array) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "root": ["rootfs"]})",
                     "root: expected an object, got an array");
}

Test(spec_parse, type_root_readonly_number) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r", "readonly": 1}})",
                     "root.readonly: expected a boolean, got a number");
}

Test(spec_parse, type_terminal_string) {
    EXPECT_PARSE_ERR(cfg(R"("terminal": "true")"),
                     "process.terminal: expected a boolean, got a string");
}

Test(spec_parse, type_args_string) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "process": {"cwd": "/", "args": "sh"}})",
                     "process.args: expected an array, got a string");
}

Test(spec_parse, type_args_element_number) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "process": {"cwd": "/", "args": ["sh", 1]}})",
                     "process.args[1]: expected a string, got a number");
}

Test(spec_parse, type_args_element_null) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "process": {"cwd": "/", "args": [null]}})",
                     "process.args[0]: expected a string, got null");
}

Test(spec_parse, type_user_string) {
    EXPECT_PARSE_ERR(cfg(R"("user": "root")"), "process.user: expected an object, got a string");
}

Test(spec_parse, type_uid_string) {
    EXPECT_PARSE_ERR(cfg(R"("user": {"uid": "0"})"),
                     "process.user.uid: expected an integer, got a string");
}

Test(spec_parse, type_additional_gids_element_bool) {
    EXPECT_PARSE_ERR(cfg(R"("user": {"additionalGids": [1, true]})"),
                     "process.user.additionalGids[1]: expected an integer, got a boolean");
}

Test(spec_parse, type_capabilities_bounding_string) {
    EXPECT_PARSE_ERR(cfg(R"("capabilities": {"bounding": "CAP_KILL"})"),
                     "process.capabilities.bounding: expected an array, got a string");
}

Test(spec_parse, type_env_entry_without_equals) {
    EXPECT_PARSE_ERR(cfg(R"("env": ["A=1", "FOO"])"),
                     "process.env[1]: expected KEY=VALUE, got \"FOO\"");
}

Test(spec_parse, type_mounts_object) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": {})"), "mounts: expected an array, got an object");
}

Test(spec_parse, type_mount_element_string) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": [{"destination": "/a"}, "/b"])"),
                     "mounts[1]: expected an object, got a string");
}

Test(spec_parse, type_mount_option_bool) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": [{"destination": "/a", "options": ["ro", true]}])"),
                     "mounts[0].options[1]: expected a string, got a boolean");
}

Test(spec_parse, type_annotation_value_number) {
    EXPECT_PARSE_ERR(cfg("", "", R"("annotations": {"a": "x", "b": 1})"),
                     "annotations.b: expected a string, got a number");
}

Test(spec_parse, type_hooks_prestart_object) {
    EXPECT_PARSE_ERR(cfg("", "", R"("hooks": {"prestart": {"path": "/bin/true"}})"),
                     "hooks.prestart: expected an array, got an object");
}

Test(spec_parse, type_linux_array) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "linux": []})",
                     "linux: expected an object, got an array");
}

Test(spec_parse, type_namespace_element_string) {
    EXPECT_PARSE_ERR(cfg("", R"("namespaces": [{"type": "pid"}, "mount"])"),
                     "linux.namespaces[1]: expected an object, got a string");
}

Test(spec_parse, type_sysctl_array) {
    EXPECT_PARSE_ERR(cfg("", R"("sysctl": ["net.ipv4.ip_forward=1"])"),
                     "linux.sysctl: expected an object, got an array");
}

Test(spec_parse, type_memory_limit_string) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"memory": {"limit": "1G"}})"),
                     "linux.resources.memory.limit: expected an integer, got a string");
}

Test(spec_parse, type_memory_bool_number) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"memory": {"disableOOMKiller": 1}})"),
                     "linux.resources.memory.disableOOMKiller: expected a boolean, got a number");
}

Test(spec_parse, type_device_rule_allow_string) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"devices": [{"allow": "true"}]})"),
                     "linux.resources.devices[0].allow: expected a boolean, got a string");
}

Test(spec_parse, type_unified_value_number) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"unified": {"memory.high": 5}})"),
                     "linux.resources.unified.memory.high: expected a string, got a number");
}

Test(spec_parse, type_seccomp_arg_value_string) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                   "args": [{"index": 0, "value": "1", "op": "SCMP_CMP_EQ"}]})")),
                     "linux.seccomp.syscalls[0].args[0].value: expected an integer, got a string");
}

Test(spec_parse, type_time_offset_string) {
    EXPECT_PARSE_ERR(cfg("", R"("timeOffsets": {"monotonic": "5s"})"),
                     "linux.timeOffsets.monotonic: expected an object, got a string");
}

Test(spec_parse, type_rdma_entry_array) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"rdma": {"mlx5_0": []}})"),
                     "linux.resources.rdma.mlx5_0: expected an object, got an array");
}

// ---------------------------------------------------------------------------
// Missing required fields.

Test(spec_parse, missing_oci_version) {
    EXPECT_PARSE_ERR(R"({"root": {"path": "rootfs"}})", "ociVersion: required field is missing");
}

Test(spec_parse, missing_root_path) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "root": {"readonly": true}})",
                     "root.path: required field is missing");
}

Test(spec_parse, missing_process_cwd) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "process": {"args": ["sh"]}})",
                     "process.cwd: required field is missing");
}

Test(spec_parse, missing_mount_destination) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": [{"destination": "/a"}, {"type": "tmpfs"}])"),
                     "mounts[1].destination: required field is missing");
}

Test(spec_parse, empty_mount_destination) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": [{"destination": ""}])"),
                     "mounts[0].destination: must not be empty");
}

Test(spec_parse, missing_namespace_type) {
    EXPECT_PARSE_ERR(cfg("", R"("namespaces": [{"type": "pid"}, {"path": "/proc/1/ns/net"}])"),
                     "linux.namespaces[1].type: required field is missing");
}

Test(spec_parse, missing_hook_path) {
    EXPECT_PARSE_ERR(
        cfg("", "", R"("hooks": {"poststop": [{"path": "/bin/true"}, {"args": ["x"]}]})"),
        "hooks.poststop[1].path: required field is missing");
}

Test(spec_parse, missing_idmapping_container_id) {
    EXPECT_PARSE_ERR(cfg("", R"("uidMappings": [{"hostID": 1000, "size": 1}])"),
                     "linux.uidMappings[0].containerID: required field is missing");
}

Test(spec_parse, missing_idmapping_host_id) {
    EXPECT_PARSE_ERR(cfg("", R"("gidMappings": [{"containerID": 0, "size": 1}])"),
                     "linux.gidMappings[0].hostID: required field is missing");
}

Test(spec_parse, missing_idmapping_size_in_mount) {
    EXPECT_PARSE_ERR(cfg("", "", R"("mounts": [{"destination": "/a",
                                     "uidMappings": [{"containerID": 0, "hostID": 1000}]}])"),
                     "mounts[0].uidMappings[0].size: required field is missing");
}

Test(spec_parse, missing_rlimit_type) {
    EXPECT_PARSE_ERR(cfg(R"("rlimits": [{"hard": 1, "soft": 1}])"),
                     "process.rlimits[0].type: required field is missing");
}

Test(spec_parse, missing_rlimit_hard) {
    EXPECT_PARSE_ERR(cfg(R"("rlimits": [{"type": "RLIMIT_NOFILE", "soft": 1}])"),
                     "process.rlimits[0].hard: required field is missing");
}

Test(spec_parse, missing_rlimit_soft) {
    EXPECT_PARSE_ERR(cfg(R"("rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1}])"),
                     "process.rlimits[0].soft: required field is missing");
}

Test(spec_parse, missing_seccomp_default_action) {
    EXPECT_PARSE_ERR(cfg("", R"("seccomp": {"architectures": ["SCMP_ARCH_X86_64"]})"),
                     "linux.seccomp.defaultAction: required field is missing");
}

Test(spec_parse, empty_seccomp_default_action) {
    EXPECT_PARSE_ERR(cfg("", R"("seccomp": {"defaultAction": ""})"),
                     "linux.seccomp.defaultAction: must not be empty");
}

Test(spec_parse, missing_syscall_names) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"action": "SCMP_ACT_ERRNO"})")),
                     "linux.seccomp.syscalls[0].names: required field is missing");
}

Test(spec_parse, empty_syscall_names) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": [], "action": "SCMP_ACT_ERRNO"})")),
                     "linux.seccomp.syscalls[0].names: must not be empty");
}

Test(spec_parse, missing_syscall_action) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"]}, {"names": ["write"]})")),
                     "linux.seccomp.syscalls[0].action: required field is missing");
}

Test(spec_parse, missing_seccomp_arg_index) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                   "args": [{"value": 1, "op": "SCMP_CMP_EQ"}]})")),
                     "linux.seccomp.syscalls[0].args[0].index: required field is missing");
}

Test(spec_parse, missing_seccomp_arg_value) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                   "args": [{"index": 0, "op": "SCMP_CMP_EQ"}]})")),
                     "linux.seccomp.syscalls[0].args[0].value: required field is missing");
}

Test(spec_parse, missing_seccomp_arg_op) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ALLOW"},
                               {"names": ["write"], "action": "SCMP_ACT_ERRNO",
                                "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"},
                                         {"index": 1, "value": 2}]})")),
                     "linux.seccomp.syscalls[1].args[1].op: required field is missing");
}

Test(spec_parse, missing_device_path) {
    EXPECT_PARSE_ERR(cfg("", R"("devices": [{"type": "c", "major": 1, "minor": 3}])"),
                     "linux.devices[0].path: required field is missing");
}

Test(spec_parse, missing_device_type) {
    EXPECT_PARSE_ERR(cfg("", R"("devices": [{"path": "/dev/null", "major": 1, "minor": 3}])"),
                     "linux.devices[0].type: required field is missing");
}

Test(spec_parse, missing_device_major_for_char) {
    EXPECT_PARSE_ERR(cfg("", R"("devices": [{"path": "/dev/null", "type": "c", "minor": 3}])"),
                     "linux.devices[0].major: required field is missing");
}

Test(spec_parse, fifo_device_needs_no_numbers) {
    Spec s = ok(cfg("", R"("devices": [{"path": "/dev/fifo", "type": "p"}])"));
    cr_assert_eq(s.linux_->devices.size(), 1u);
    cr_assert_str_eq(s.linux_->devices[0].type.c_str(), "p");
}

Test(spec_parse, missing_device_rule_allow) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"devices": [{"access": "rwm"}]})"),
                     "linux.resources.devices[0].allow: required field is missing");
}

Test(spec_parse, missing_console_size_width) {
    EXPECT_PARSE_ERR(cfg(R"("terminal": true, "consoleSize": {"height": 24})"),
                     "process.consoleSize.width: required field is missing");
}

Test(spec_parse, missing_scheduler_policy) {
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"nice": 1})"),
                     "process.scheduler.policy: required field is missing");
}

// sched_setattr(2)'s rules across the fields (as runc's validator), named
// before anything is created rather than a bare EINVAL from the kernel.
Test(spec_parse, scheduler_fields_the_policy_does_not_take) {
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_OTHER", "priority": 5})"),
                     "process.scheduler.priority: only SCHED_FIFO and SCHED_RR have a priority, "
                     "not SCHED_OTHER");
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_FIFO"})"),
                     "process.scheduler.priority: must be 1 to 99 for SCHED_FIFO");
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_ISO"})"),
                     "process.scheduler.policy: SCHED_ISO is not a Linux scheduling policy");
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_BATCH", "runtime": 5})"),
                     "process.scheduler: runtime, deadline and period are for SCHED_DEADLINE only");
    ok(cfg(R"("scheduler": {"policy": "SCHED_RR", "priority": 99})"));
    ok(cfg(R"("scheduler": {"policy": "SCHED_DEADLINE", "runtime": 1000000,
                            "deadline": 2000000, "period": 3000000})"));
}

// runtime-spec 1.3 linux.memoryPolicy: set_mempolicy(2)'s rules across
// mode, nodes and flags, named before anything is created (runc refuses
// the same).
Test(spec_parse, memory_policy_rules) {
    struct {
        const char *policy, *want;
    } bad[] = {
        {R"({"mode": "MPOL_FOO"})",
         "linux.memoryPolicy.mode: unknown memory policy mode \"MPOL_FOO\""},
        {R"({"nodes": "0"})", "linux.memoryPolicy.mode: required field is missing"},
        {R"({"mode": "MPOL_BIND"})", "linux.memoryPolicy.nodes: MPOL_BIND needs at least one node"},
        {R"({"mode": "MPOL_INTERLEAVE", "nodes": "1-0"})",
         "linux.memoryPolicy.nodes: \"1-0\" is not a list of nodes (\"0-3,7\")"},
        {R"({"mode": "MPOL_BIND", "nodes": "4096"})",
         "linux.memoryPolicy.nodes: node 4096 is above 4095"},
        {R"({"mode": "MPOL_DEFAULT", "nodes": "0-7"})",
         "linux.memoryPolicy.nodes: MPOL_DEFAULT takes no nodes"},
        {R"({"mode": "MPOL_LOCAL", "flags": ["MPOL_F_STATIC_NODES"]})",
         "linux.memoryPolicy.flags: MPOL_LOCAL takes no node flags"},
        {R"({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES",
             "MPOL_F_RELATIVE_NODES"]})",
         "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each "
         "other"},
        {R"({"mode": "MPOL_INTERLEAVE", "nodes": "0", "flags": ["MPOL_F_NUMA_BALANCING"]})",
         "linux.memoryPolicy.flags: MPOL_F_NUMA_BALANCING is for MPOL_BIND and "
         "MPOL_PREFERRED_MANY, not MPOL_INTERLEAVE"},
        {R"({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_FOO"]})",
         "linux.memoryPolicy.flags[0]: unknown memory policy flag \"MPOL_F_FOO\""},
    };
    for (const auto &b : bad)
        EXPECT_PARSE_ERR(cfg("", std::string(R"("memoryPolicy": )") + b.policy), b.want);
    ok(cfg("", R"("memoryPolicy": {"mode": "MPOL_PREFERRED"})"));
    ok(cfg("", R"("memoryPolicy": {"mode": "MPOL_BIND", "nodes": "0",
                                   "flags": ["MPOL_F_NUMA_BALANCING", "MPOL_F_STATIC_NODES"]})"));
}

// runtime-spec 1.2.1 process.execCPUAffinity: "0-3,7" lists.
Test(spec_parse, exec_cpu_affinity_lists) {
    for (const char *bad : {"x", "1-", "-1", "3-1", "1,", ",1", "1,,2", "8192", "0-99999", " 1"}) {
        const std::string want = std::string("process.execCPUAffinity.final: \"") + bad +
                                 "\" is not a list of CPUs (\"0-3,7\")";
        EXPECT_PARSE_ERR(cfg(std::string(R"("execCPUAffinity": {"final": ")") + bad + "\"}"),
                         want.c_str());
    }
    EXPECT_PARSE_ERR(cfg(R"("execCPUAffinity": {"initial": "0-a"})"),
                     "process.execCPUAffinity.initial: \"0-a\" is not a list of CPUs (\"0-3,7\")");
    auto cpus = parse_cpu_list("0-3,7,9-9");
    cr_assert(cpus.has_value());
    cr_assert_eq(cpus->size(), 6u);
    cr_assert_eq((*cpus)[4], 7u);
    cr_assert_eq((*cpus)[5], 9u);
    cr_assert(parse_cpu_list("")->empty());
}

// What sched_setaffinity and set_mempolicy are given: bit n for each n.
Test(spec_parse, bit_mask_of_a_cpu_list) {
    std::vector<unsigned long> m = bit_mask(*parse_cpu_list("0,63-64,130"));
    cr_assert_eq(m.size(), 3u);
    cr_assert_eq(m[0], 1ul | 1ul << 63);
    cr_assert_eq(m[1], 1ul);
    cr_assert_eq(m[2], 1ul << 2);
    cr_assert(bit_mask({}).empty());
}

Test(spec_parse, missing_io_priority_class) {
    EXPECT_PARSE_ERR(cfg(R"("ioPriority": {"priority": 1})"),
                     "process.ioPriority.class: required field is missing");
}

// runtime-spec 1.3 made pids.limit OPTIONAL (unset: the runtime writes
// nothing).
Test(spec_parse, pids_limit_is_optional) {
    Spec s = ok(cfg("", R"("resources": {"pids": {}})"));
    cr_assert(s.linux_->resources->pids.has_value());
    cr_assert(!s.linux_->resources->pids->limit.has_value());
}

Test(spec_parse, missing_hugepage_page_size) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"hugepageLimits": [{"limit": 1}]})"),
                     "linux.resources.hugepageLimits[0].pageSize: required field is missing");
}

Test(spec_parse, missing_throttle_rate) {
    EXPECT_PARSE_ERR(
        cfg("",
            R"("resources": {"blockIO": {"throttleWriteIOPSDevice": [{"major": 8, "minor": 0}]}})"),
        "linux.resources.blockIO.throttleWriteIOPSDevice[0].rate: required field is missing");
}

Test(spec_parse, missing_personality_domain) {
    EXPECT_PARSE_ERR(cfg("", R"("personality": {})"),
                     "linux.personality.domain: required field is missing");
}

Test(spec_parse, missing_network_priority_name) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"network": {"priorities": [{"priority": 1}]}})"),
                     "linux.resources.network.priorities[0].name: required field is missing");
}

// ---------------------------------------------------------------------------
// Numbers: ranges and integer-ness.

Test(spec_parse, range_uid_above_u32) {
    EXPECT_PARSE_ERR(cfg(R"("user": {"uid": 4294967296})"),
                     "process.user.uid: 4294967296 is out of range [0, 4294967295]");
}

Test(spec_parse, range_uid_u32_max_accepted) {
    Spec s = parsed(cfg(R"("user": {"uid": 4294967295, "gid": 4294967295})"));
    cr_assert_eq(s.process->user.uid, UINT32_MAX);
    cr_assert_eq(s.process->user.gid, UINT32_MAX);
}

Test(spec_parse, range_uid_negative) {
    EXPECT_PARSE_ERR(cfg(R"("user": {"uid": -1})"),
                     "process.user.uid: -1 is out of range [0, 4294967295]");
}

Test(spec_parse, range_oom_score_adj_high) {
    EXPECT_PARSE_ERR(cfg(R"("oomScoreAdj": 1001)"),
                     "process.oomScoreAdj: 1001 is out of range [-1000, 1000]");
}

Test(spec_parse, range_oom_score_adj_low) {
    EXPECT_PARSE_ERR(cfg(R"("oomScoreAdj": -1001)"),
                     "process.oomScoreAdj: -1001 is out of range [-1000, 1000]");
}

Test(spec_parse, range_oom_score_adj_bounds_accepted) {
    cr_assert_eq(*parsed(cfg(R"("oomScoreAdj": -1000)")).process->oom_score_adj, -1000);
    cr_assert_eq(*parsed(cfg(R"("oomScoreAdj": 1000)")).process->oom_score_adj, 1000);
}

Test(spec_parse, range_umask_01000) {
    // 01000 octal = 512: one bit beyond 0777.
    EXPECT_PARSE_ERR(cfg(R"("user": {"umask": 512})"),
                     "process.user.umask: 512 is out of range [0, 511]");
}

Test(spec_parse, range_umask_0777_accepted) {
    Spec s = parsed(cfg(R"("user": {"umask": 511})"));
    cr_assert(s.process->user.umask.has_value());
    cr_assert_eq(*s.process->user.umask, 0777u);
}

Test(spec_parse, range_time_offset_nanosecs) {
    EXPECT_PARSE_ERR(
        cfg("", R"("timeOffsets": {"boottime": {"secs": 1, "nanosecs": 1000000000}})"),
        "linux.timeOffsets.boottime.nanosecs: 1000000000 is out of range [0, 999999999]");
}

Test(spec_parse, range_time_offset_nanosecs_exponent) {
    EXPECT_PARSE_ERR(cfg("", R"("timeOffsets": {"boottime": {"nanosecs": 1e9}})"),
                     "linux.timeOffsets.boottime.nanosecs: expected an integer, got 1e9");
}

Test(spec_parse, range_seccomp_arg_index) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                   "args": [{"index": 6, "value": 1, "op": "SCMP_CMP_EQ"}]})")),
                     "linux.seccomp.syscalls[0].args[0].index: 6 is out of range [0, 5]");
}

Test(spec_parse, range_seccomp_errno_ret) {
    EXPECT_PARSE_ERR(
        cfg("", R"("seccomp": {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 4096})"),
        "linux.seccomp.defaultErrnoRet: 4096 is out of range [0, 4095]");
}

Test(spec_parse, range_io_priority) {
    EXPECT_PARSE_ERR(cfg(R"("ioPriority": {"class": "IOPRIO_CLASS_BE", "priority": 8})"),
                     "process.ioPriority.priority: 8 is out of range [0, 7]");
}

Test(spec_parse, range_swappiness) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"memory": {"swappiness": 101}})"),
                     "linux.resources.memory.swappiness: 101 is out of range [0, 100]");
}

Test(spec_parse, range_memory_limit_below_minus_one) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"memory": {"limit": -2}})"),
                     "linux.resources.memory.limit: -2 is out of range [-1, 9223372036854775807]");
}

Test(spec_parse, range_scheduler_nice) {
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_OTHER", "nice": 20})"),
                     "process.scheduler.nice: 20 is out of range [-20, 19]");
}

Test(spec_parse, range_console_size) {
    EXPECT_PARSE_ERR(cfg(R"("terminal": true, "consoleSize": {"height": 24, "width": 65536})"),
                     "process.consoleSize.width: 65536 is out of range [0, 65535]");
}

Test(spec_parse, range_hook_timeout_zero) {
    EXPECT_PARSE_ERR(cfg("", "", R"("hooks": {"prestart": [{"path": "/bin/true", "timeout": 0}]})"),
                     "hooks.prestart[0].timeout: 0 is out of range [1, 2147483647]");
}

Test(spec_parse, range_device_file_mode) {
    EXPECT_PARSE_ERR(cfg("", R"("devices": [{"path": "/dev/x", "type": "c", "major": 1,
                                             "minor": 3, "fileMode": 65536}])"),
                     "linux.devices[0].fileMode: 65536 is out of range [0, 65535]");
}

// Podman sends the file-type bits with the permissions (S_IFCHR|0666).
Test(spec_parse, device_file_mode_keeps_the_permission_bits) {
    auto s = ocirun::oci::parse_spec(cfg("", R"("devices": [{"path": "/dev/x", "type": "c",
                                         "major": 1, "minor": 3, "fileMode": 8630}])"));
    cr_assert(s.has_value(), "%s", s ? "" : s.error().text().c_str());
    cr_assert_eq(*s->linux_->devices[0].file_mode, 0666u);
}

Test(spec_parse, range_idmapping_size_zero) {
    EXPECT_PARSE_ERR(cfg("", R"("uidMappings": [{"containerID": 0, "hostID": 1000, "size": 0}])"),
                     "linux.uidMappings[0].size: must be greater than 0");
}

Test(spec_parse, range_idmapping_overflow) {
    EXPECT_PARSE_ERR(
        cfg("", R"("uidMappings": [{"containerID": 0, "hostID": 4294967295, "size": 2}])"),
        "linux.uidMappings[0].size: range overflows 32-bit ids");
}

Test(spec_parse, float_where_integer) {
    EXPECT_PARSE_ERR(cfg(R"("user": {"uid": 1.5})"),
                     "process.user.uid: expected an integer, got 1.5");
}

Test(spec_parse, float_whole_number_is_not_integer) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"pids": {"limit": 5.0}})"),
                     "linux.resources.pids.limit: expected an integer, got 5.0");
}

Test(spec_parse, rlimit_soft_above_hard) {
    EXPECT_PARSE_ERR(cfg(R"("rlimits": [{"type": "RLIMIT_NOFILE", "hard": 10, "soft": 11}])"),
                     "process.rlimits[0].soft: is greater than hard");
}

Test(spec_parse, rlimit_u64_max_exact) {
    Spec s = ok(cfg(R"("rlimits": [{"type": "RLIMIT_CORE", "hard": 18446744073709551615,
                                      "soft": 18446744073709551614}])"));
    cr_assert_eq(s.process->rlimits.size(), 1u);
    cr_assert_eq(s.process->rlimits[0].hard, UINT64_MAX);
    cr_assert_eq(s.process->rlimits[0].soft, UINT64_MAX - 1);
}

Test(spec_parse, rlimit_above_u64_max) {
    EXPECT_PARSE_ERR(
        cfg(R"("rlimits": [{"type": "RLIMIT_CORE", "hard": 18446744073709551616, "soft": 0}])"),
        "process.rlimits[0].hard: 18446744073709551616 is out of range [0, "
        "18446744073709551615]");
}

Test(spec_parse, int64_min_accepted) {
    Spec s = parsed(cfg("", R"("resources": {"cpu": {"realtimeRuntime": -9223372036854775808}})"));
    cr_assert_eq(*s.linux_->resources->cpu->realtime_runtime, INT64_MIN);
}

Test(spec_parse, int64_overflow_rejected) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"cpu": {"quota": 9223372036854775808}})"),
                     "linux.resources.cpu.quota: 9223372036854775808 is out of range [-1, "
                     "9223372036854775807]");
}

// ---------------------------------------------------------------------------
// Unknown enumeration values.

Test(spec_parse, enum_namespace) {
    EXPECT_PARSE_ERR(
        cfg("", R"("namespaces": [{"type": "pid"}, {"type": "mount"}, {"type": "pidd"}])"),
        "linux.namespaces[2].type: unknown namespace \"pidd\"");
}

// runtime-spec config.md "capabilities": an unknown name MUST be logged and
// SHOULD NOT fail the container; the parser keeps it (the runtime warns and
// grants nothing for it).
Test(spec_parse, unknown_capability_names_are_kept) {
    Spec s = parsed(cfg(R"("capabilities": {"bounding": ["CAP_KILL", "CAP_FOO"],
                                             "ambient": ["cap_kill"]})"));
    cr_assert_eq(s.process->capabilities->bounding.size(), 2u);
    cr_assert_str_eq(s.process->capabilities->bounding[1].c_str(), "CAP_FOO");
    cr_assert_str_eq(s.process->capabilities->ambient[0].c_str(), "cap_kill");
}

Test(spec_parse, enum_rlimit) {
    EXPECT_PARSE_ERR(cfg(R"("rlimits": [{"type": "RLIMIT_FOO", "hard": 1, "soft": 1}])"),
                     "process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
}

Test(spec_parse, enum_seccomp_default_action) {
    EXPECT_PARSE_ERR(cfg("", R"("seccomp": {"defaultAction": "SCMP_ACT_NOPE"})"),
                     "linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_NOPE\"");
}

Test(spec_parse, enum_seccomp_syscall_action) {
    EXPECT_PARSE_ERR(cfg("", seccomp_with(R"({"names": ["read"], "action": "ALLOW"})")),
                     "linux.seccomp.syscalls[0].action: unknown seccomp action \"ALLOW\"");
}

Test(spec_parse, enum_seccomp_operator) {
    EXPECT_PARSE_ERR(
        cfg("", seccomp_with(R"({"names": ["read"], "action": "SCMP_ACT_ERRNO",
                                   "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_FOO"}]})")),
        "linux.seccomp.syscalls[0].args[0].op: unknown seccomp operator \"SCMP_CMP_FOO\"");
}

Test(spec_parse, enum_seccomp_arch) {
    EXPECT_PARSE_ERR(
        cfg("", R"("seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
                                  "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_Z80"]})"),
        "linux.seccomp.architectures[1]: unknown seccomp architecture \"SCMP_ARCH_Z80\"");
}

Test(spec_parse, enum_seccomp_flag) {
    EXPECT_PARSE_ERR(cfg("", R"("seccomp": {"defaultAction": "SCMP_ACT_ALLOW",
                                  "flags": ["SECCOMP_FILTER_FLAG_BOGUS"]})"),
                     "linux.seccomp.flags[0]: unknown seccomp flag \"SECCOMP_FILTER_FLAG_BOGUS\"");
}

Test(spec_parse, enum_rootfs_propagation) {
    EXPECT_PARSE_ERR(cfg("", R"("rootfsPropagation": "rprivat")"),
                     "linux.rootfsPropagation: unknown rootfs propagation \"rprivat\"");
}

Test(spec_parse, enum_device_type) {
    EXPECT_PARSE_ERR(
        cfg("", R"("devices": [{"path": "/dev/x", "type": "x", "major": 1, "minor": 1}])"),
        "linux.devices[0].type: unknown device type \"x\"");
}

Test(spec_parse, enum_device_rule_type) {
    EXPECT_PARSE_ERR(cfg("", R"("resources": {"devices": [{"allow": true, "type": "u"}]})"),
                     "linux.resources.devices[0].type: unknown device type \"u\"");
}

Test(spec_parse, enum_device_rule_access) {
    EXPECT_PARSE_ERR(
        cfg("", R"("resources": {"devices": [{"allow": true, "access": "rwx"}]})"),
        "linux.resources.devices[0].access: must be a combination of r, w, m, got \"rwx\"");
}

Test(spec_parse, enum_personality_domain) {
    EXPECT_PARSE_ERR(cfg("", R"("personality": {"domain": "LINUX64"})"),
                     "linux.personality.domain: unknown personality domain \"LINUX64\"");
}

Test(spec_parse, enum_time_offsets_clock) {
    EXPECT_PARSE_ERR(
        cfg("", R"("timeOffsets": {"monotonic": {"secs": 1}, "realtime": {"secs": 1}})"),
        "linux.timeOffsets.realtime: unknown clock \"realtime\" (expected monotonic or "
        "boottime)");
}

Test(spec_parse, enum_scheduler_policy) {
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_FAST"})"),
                     "process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"");
}

Test(spec_parse, enum_scheduler_flag) {
    EXPECT_PARSE_ERR(cfg(R"("scheduler": {"policy": "SCHED_OTHER", "flags": ["SCHED_FLAG_X"]})"),
                     "process.scheduler.flags[0]: unknown scheduler flag \"SCHED_FLAG_X\"");
}

Test(spec_parse, enum_io_priority_class) {
    EXPECT_PARSE_ERR(cfg(R"("ioPriority": {"class": "IOPRIO_CLASS_NONE", "priority": 1})"),
                     "process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_NONE\"");
}

Test(spec_parse, enum_valid_values_accepted) {
    Spec s =
        parsed(cfg(R"("scheduler": {"policy": "SCHED_DEADLINE", "flags": ["SCHED_FLAG_RECLAIM"]},
                           "ioPriority": {"class": "IOPRIO_CLASS_IDLE", "priority": 7})",
                   R"("rootfsPropagation": "rslave", "personality": {"domain": "LINUX32"})"));
    cr_assert_str_eq(s.process->scheduler->policy.c_str(), "SCHED_DEADLINE");
    cr_assert_str_eq(s.process->io_priority->klass.c_str(), "IOPRIO_CLASS_IDLE");
    cr_assert_eq(s.process->io_priority->priority, 7);
    cr_assert_str_eq(s.linux_->rootfs_propagation.c_str(), "rslave");
    cr_assert_str_eq(s.linux_->personality->domain.c_str(), "LINUX32");
}

// ---------------------------------------------------------------------------
// Unknown keys are ignored; null means unset; duplicate keys: the last wins.

Test(spec_parse, unknown_keys_top_level_ignored) {
    Spec s = ok(cfg("", "", R"("vendorExtension": {"deep": [1, {"x": null}]}, "zzz": 3)"));
    cr_assert_str_eq(s.oci_version.c_str(), "1.2.1");
}

Test(spec_parse, unknown_keys_nested_ignored) {
    Spec s = ok(cfg(R"("user": {"uid": 5, "nickname": "bob"}, "bogus": true)",
                    R"("namespaces": [{"type": "pid", "flavour": 1}],
                       "resources": {"memory": {"limit": 1024, "weird": "x"}, "future": {}})",
                    R"("mounts": [{"destination": "/a", "extra": [1]}])"));
    cr_assert_eq(s.process->user.uid, 5u);
    cr_assert_eq(s.linux_->namespaces.size(), 1u);
    cr_assert_eq(*s.linux_->resources->memory->limit, 1024);
    cr_assert_str_eq(s.mounts[0].destination.c_str(), "/a");
}

Test(spec_parse, null_process_is_unset) {
    Spec s =
        parsed(R"({"ociVersion": "1.2.1", "process": null, "root": {"path": "r"}, "linux": {}})");
    cr_assert(!s.process.has_value());
    EXPECT_VALID_ERR(
        R"({"ociVersion": "1.2.1", "process": null, "root": {"path": "r"}, "linux": {}})",
        "process: required field is missing");
}

Test(spec_parse, null_required_field_is_missing) {
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.2.1", "root": {"path": null}})",
                     "root.path: required field is missing");
}

Test(spec_parse, null_scalars_are_unset) {
    Spec s =
        ok(cfg(R"("terminal": null, "user": {"uid": null, "umask": null}, "oomScoreAdj": null)",
               R"("resources": {"memory": {"limit": null, "swappiness": null}}, "seccomp": null)",
               R"("hostname": null, "mounts": null, "hooks": null)"));
    cr_assert(!s.process->terminal);
    cr_assert_eq(s.process->user.uid, 0u);
    cr_assert(!s.process->user.umask.has_value());
    cr_assert(!s.process->oom_score_adj.has_value());
    cr_assert(s.linux_->resources->memory.has_value());
    cr_assert(!s.linux_->resources->memory->limit.has_value());
    cr_assert(!s.linux_->resources->memory->swappiness.has_value());
    cr_assert(!s.linux_->seccomp.has_value());
    cr_assert(s.hostname.empty());
    cr_assert(s.mounts.empty());
    cr_assert(!s.hooks.has_value());
}

Test(spec_parse, zero_is_not_unset) {
    Spec s =
        parsed(cfg(R"("user": {"umask": 0}, "oomScoreAdj": 0)",
                   R"("resources": {"memory": {"swappiness": 0, "disableOOMKiller": false}})"));
    cr_assert(s.process->user.umask.has_value());
    cr_assert_eq(*s.process->user.umask, 0u);
    cr_assert(s.process->oom_score_adj.has_value());
    cr_assert(s.linux_->resources->memory->swappiness.has_value());
    cr_assert(s.linux_->resources->memory->disable_oom_killer.has_value());
    cr_assert(!*s.linux_->resources->memory->disable_oom_killer);
}

// A key named twice in one object is refused with its path: a reader taking
// the first value and one taking the last would disagree.
Test(spec_parse, duplicate_key_is_refused_with_its_path) {
    EXPECT_PARSE_ERR(
        R"({"ociVersion": "1.0.0", "hostname": "a", "hostname": "b", "ociVersion": "1.2.0"})",
        "hostname: duplicate key: the object names it twice");
    EXPECT_PARSE_ERR(
        R"({"ociVersion": "1.0.0", "annotations": {"dev.ocirun.network": "full",
                        "x": "1", "dev.ocirun.network": "none"}})",
        "annotations[\"dev.ocirun.network\"]: duplicate key: the object names it twice");
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.0.0", "process": {"env": [], "args": ["a"],
                        "cwd": "/", "user": {"uid": 0, "uid": 1, "gid": 0}}})",
                     "process.user.uid: duplicate key: the object names it twice");
    EXPECT_PARSE_ERR(R"({"ociVersion": "1.0.0", "mounts": [{"destination": "/a"},
                        {"destination": "/b", "type": "tmpfs", "destination": "/c"}]})",
                     "mounts[1].destination: duplicate key: the object names it twice");
}

// A large object is checked another way (sorted, not compared in pairs):
// the key reported is still the first, in document order, named twice.
Test(spec_parse, duplicate_key_in_a_large_object_is_the_first_in_document_order) {
    std::string a = R"({"ociVersion": "1.0.0", "annotations": {"a": "0", "z": "1")";
    for (int i = 0; i < 100; i++)
        a += ", \"k" + std::to_string(i) + "\": \"v\"";
    std::string tail = R"(, "z": "2", "a": "3", "k5": "4"}})";
    EXPECT_PARSE_ERR(a + tail, "annotations.z: duplicate key: the object names it twice");
    EXPECT_PARSE_ERR(a + R"(, "k99": "x", "k0": "y"}})",
                     "annotations.k99: duplicate key: the object names it twice");
    a += "}}";
    cr_assert(parse_spec(a).has_value());
}

// ---------------------------------------------------------------------------
// validate_spec: cross-field checks.

Test(spec_validate, duplicate_namespace) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "pid"}, {"type": "pid"}])"),
                     "linux.namespaces[1].type: duplicate namespace \"pid\"");
}

Test(spec_validate, duplicate_namespace_later) {
    std::string e = valid_err(cfg(
        "",
        R"("namespaces": [{"type": "network"}, {"type": "ipc"}, {"type": "network", "path": "/proc/1/ns/net"}])"));
    cr_assert_str_eq(e.c_str(), "linux.namespaces[2].type: duplicate namespace \"network\"");
}

Test(spec_validate, duplicate_rlimit) {
    EXPECT_VALID_ERR(cfg(R"("rlimits": [{"type": "RLIMIT_NOFILE", "hard": 2, "soft": 1},
                                       {"type": "RLIMIT_CORE", "hard": 0, "soft": 0},
                                       {"type": "RLIMIT_NOFILE", "hard": 3, "soft": 3}])"),
                     "process.rlimits[2].type: duplicate rlimit \"RLIMIT_NOFILE\"");
}

Test(spec_validate, relative_cwd) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "tmp", "args": ["sh"]}, "linux": {}})",
                     "process.cwd: must be an absolute path, got \"tmp\"");
}

Test(spec_validate, empty_cwd) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "", "args": ["sh"]}, "linux": {}})",
                     "process.cwd: must be an absolute path, got \"\"");
}

// config.md: a relative destination MAY be given (deprecated) and MUST then
// be read as relative to "/".
Test(spec_validate, relative_mount_destination) {
    Spec s = ok(cfg("", "", R"("mounts": [{"destination": "/proc"}, {"destination": "dev/x"}])"));
    unit::expect_eq(s.mounts[1].destination, "/dev/x");
}

Test(spec_validate, relative_masked_path) {
    EXPECT_VALID_ERR(cfg("", R"("maskedPaths": ["/proc/kcore", "proc/keys"])"),
                     "linux.maskedPaths[1]: must be an absolute path, got \"proc/keys\"");
}

Test(spec_validate, relative_readonly_path) {
    EXPECT_VALID_ERR(cfg("", R"("readonlyPaths": ["proc/sys"])"),
                     "linux.readonlyPaths[0]: must be an absolute path, got \"proc/sys\"");
}

Test(spec_validate, relative_hook_path) {
    EXPECT_VALID_ERR(cfg("", "", R"("hooks": {"prestart": [{"path": "/bin/true"}],
                                             "createRuntime": [{"path": "/bin/a"}, {"path": "bin/b"}]})"),
                     "hooks.createRuntime[1].path: must be an absolute path, got \"bin/b\"");
}

Test(spec_validate, relative_poststop_hook_path) {
    EXPECT_VALID_ERR(cfg("", "", R"("hooks": {"poststop": [{"path": "true"}]})"),
                     "hooks.poststop[0].path: must be an absolute path, got \"true\"");
}

Test(spec_validate, relative_namespace_path) {
    EXPECT_VALID_ERR(
        cfg("", R"("namespaces": [{"type": "pid"}, {"type": "network", "path": "proc/1/ns/net"}])"),
        "linux.namespaces[1].path: must be an absolute path, got \"proc/1/ns/net\"");
}

Test(spec_validate, relative_device_path) {
    EXPECT_VALID_ERR(
        cfg("", R"("devices": [{"path": "dev/fuse", "type": "c", "major": 10, "minor": 229}])"),
        "linux.devices[0].path: must be an absolute path, got \"dev/fuse\"");
}

Test(spec_validate, relative_seccomp_listener_path) {
    EXPECT_VALID_ERR(
        cfg("", R"("seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "sock"})"),
        "linux.seccomp.listenerPath: must be an absolute path");
}

Test(spec_validate, uid_mappings_without_user_ns) {
    EXPECT_VALID_ERR(cfg("", R"("uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
                                "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}])"),
                     "linux.uidMappings: set without a user namespace in linux.namespaces");
}

Test(spec_validate, gid_mappings_only_without_user_ns) {
    EXPECT_VALID_ERR(cfg("", R"("gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}])"),
                     "linux.gidMappings: set without a user namespace in linux.namespaces");
}

Test(spec_validate, new_user_ns_without_mappings) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "user"}])"),
                     "linux.uidMappings: required when a new user namespace is requested");
}

Test(spec_validate, new_user_ns_without_gid_mappings) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "user"}],
                                "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}])"),
                     "linux.gidMappings: required when a new user namespace is requested");
}

Test(spec_validate, joined_user_ns_with_mappings) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "user", "path": "/proc/1/ns/user"}],
                                "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
                                "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}])"),
                     "linux.uidMappings: set for a user namespace that is joined by path");
}

Test(spec_validate, joined_user_ns_without_mappings_ok) {
    Spec s = ok(cfg("", R"("namespaces": [{"type": "user", "path": "/proc/1/ns/user"}])"));
    cr_assert_str_eq(s.linux_->namespaces[0].path.c_str(), "/proc/1/ns/user");
}

Test(spec_validate, user_ns_with_mappings_ok) {
    Spec s = ok(cfg("", R"("namespaces": [{"type": "user"}],
                           "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
                           "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}])"));
    cr_assert_eq(s.linux_->uid_mappings[0].host_id, 100000u);
    cr_assert_eq(s.linux_->gid_mappings[0].size, 65536u);
}

Test(spec_validate, overlapping_uid_mappings) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "user"}],
                                "uidMappings": [{"containerID": 0, "hostID": 1000, "size": 10},
                                                {"containerID": 5, "hostID": 2000, "size": 10}],
                                "gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}])"),
                     "linux.uidMappings[1].containerID: overlaps linux.uidMappings[0]");
}

Test(spec_validate, mount_mappings_must_pair) {
    EXPECT_VALID_ERR(cfg("", "", R"("mounts": [{"destination": "/a",
                                  "uidMappings": [{"containerID": 0, "hostID": 1, "size": 1}]}])"),
                     "mounts[0]: uidMappings and gidMappings must be set together");
}

Test(spec_validate, time_offsets_without_time_ns) {
    EXPECT_VALID_ERR(cfg("", R"("timeOffsets": {"monotonic": {"secs": 10}})"),
                     "linux.timeOffsets: set without a time namespace in linux.namespaces");
}

Test(spec_validate, time_offsets_with_joined_time_ns) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "time", "path": "/proc/1/ns/time"}],
                                "timeOffsets": {"monotonic": {"secs": 10}})"),
                     "linux.timeOffsets: set for a time namespace that is joined by path");
}

Test(spec_validate, time_offsets_with_time_ns_ok) {
    Spec s = ok(cfg("", R"("namespaces": [{"type": "time"}],
                           "timeOffsets": {"monotonic": {"secs": -10, "nanosecs": 5}})"));
    cr_assert_eq(s.linux_->time_offsets.at("monotonic").secs, -10);
    cr_assert_eq(s.linux_->time_offsets.at("monotonic").nanosecs, 5u);
}

Test(spec_validate, hostname_without_uts_ns) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "mount"}])", R"("hostname": "box")"),
                     "hostname: set without a UTS namespace in linux.namespaces");
}

Test(spec_validate, domainname_without_uts_ns) {
    EXPECT_VALID_ERR(cfg("", "", R"("domainname": "example.org")"),
                     "domainname: set without a UTS namespace in linux.namespaces");
}

Test(spec_validate, hostname_with_uts_ns_ok) {
    Spec s = ok(cfg("", R"("namespaces": [{"type": "uts"}])", R"("hostname": "box")"));
    cr_assert_str_eq(s.hostname.c_str(), "box");
}

Test(spec_validate, empty_args) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "/", "args": []}, "linux": {}})",
                     "process.args: must contain at least the program to run");
}

Test(spec_validate, missing_args) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "/"}, "linux": {}})",
                     "process.args: must contain at least the program to run");
}

Test(spec_validate, empty_program) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "/", "args": ["", "x"]}, "linux": {}})",
                     "process.args[0]: must not be empty");
}

Test(spec_validate, missing_root) {
    EXPECT_VALID_ERR(
        R"({"ociVersion": "1.2.1", "process": {"cwd": "/", "args": ["sh"]}, "linux": {}})",
        "root: required field is missing");
}

Test(spec_validate, empty_root_path) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": ""},
                         "process": {"cwd": "/", "args": ["sh"]}, "linux": {}})",
                     "root.path: must not be empty");
}

Test(spec_validate, missing_process) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"}, "linux": {}})",
                     "process: required field is missing");
}

Test(spec_validate, missing_linux) {
    EXPECT_VALID_ERR(R"({"ociVersion": "1.2.1", "root": {"path": "r"},
                         "process": {"cwd": "/", "args": ["sh"]}})",
                     "linux: required field is missing (this is a Linux runtime)");
}

Test(spec_validate, unsupported_oci_version) {
    std::string doc = cfg();
    doc.replace(doc.find("1.2.1"), 5, "2.0.0");
    EXPECT_VALID_ERR(doc, "ociVersion: unsupported version \"2.0.0\" (this runtime implements 1.x, "
                          "up to 1.3.0)");
}

Test(spec_validate, older_oci_version_ok) {
    std::string doc = cfg();
    doc.replace(doc.find("1.2.1"), 5, "1.0.2");
    Spec s = ok(doc);
    cr_assert_str_eq(s.oci_version.c_str(), "1.0.2");
}

// As runc: an ambient capability not also permitted and inheritable is left
// out when the process starts (logged at debug), not refused (buildah's and
// `runc spec`'s configurations have them).
Test(spec_validate, ambient_cap_not_permitted_or_inheritable_is_accepted) {
    ok(cfg(R"("capabilities": {"permitted": ["CAP_KILL"], "inheritable": ["CAP_KILL"],
                                "ambient": ["CAP_KILL", "CAP_NET_RAW"]})"));
    ok(cfg(R"("capabilities": {"permitted": ["CAP_KILL"], "ambient": ["CAP_KILL"]})"));
}

Test(spec_validate, ambient_cap_ok) {
    Spec s = ok(cfg(R"("capabilities": {"permitted": ["CAP_KILL"], "inheritable": ["CAP_KILL"],
                                         "ambient": ["CAP_KILL"]})"));
    cr_assert_eq(s.process->capabilities->ambient.size(), 1u);
}

Test(spec_validate, console_size_without_terminal) {
    EXPECT_VALID_ERR(cfg(R"("consoleSize": {"height": 24, "width": 80})"),
                     "process.consoleSize: set without process.terminal");
}

Test(spec_validate, cpu_period_out_of_range) {
    EXPECT_VALID_ERR(cfg("", R"("resources": {"cpu": {"period": 999}})"),
                     "linux.resources.cpu.period: must be between 1000 and 1000000");
}

Test(spec_validate, sysctl_not_namespaced) {
    EXPECT_VALID_ERR(cfg("", R"("namespaces": [{"type": "network"}, {"type": "ipc"}],
                                "sysctl": {"vm.swappiness": "10"})"),
                     "linux.sysctl.vm.swappiness: not namespaced: refusing to change it for the "
                     "whole host");
}

Test(spec_validate, sysctl_net_without_netns) {
    EXPECT_VALID_ERR(cfg("", R"("sysctl": {"net.ipv4.ip_forward": "1"})"),
                     "linux.sysctl.net.ipv4.ip_forward: requires a network namespace");
}

Test(spec_validate, sysctl_net_with_netns_ok) {
    Spec s = ok(
        cfg("", R"("namespaces": [{"type": "network"}], "sysctl": {"net.ipv4.ip_forward": "1"})"));
    cr_assert_str_eq(s.linux_->sysctl.at("net.ipv4.ip_forward").c_str(), "1");
}

Test(spec_validate, sysctl_ipc_without_ipcns) {
    EXPECT_VALID_ERR(cfg("", R"("sysctl": {"kernel.shmmax": "1"})"),
                     "linux.sysctl.kernel.shmmax: requires a new IPC namespace");
}

Test(spec_validate, sysctl_hostname_refused) {
    EXPECT_VALID_ERR(
        cfg("", R"("namespaces": [{"type": "uts"}], "sysctl": {"kernel.hostname": "x"})"),
        "linux.sysctl.kernel.hostname: set hostname/domainname in config.json instead");
}

// ---------------------------------------------------------------------------
// load_bundle_spec.

namespace {

std::string load_err(const std::string &bundle) {
    auto r = load_bundle_spec(bundle);
    cr_assert(!r.has_value(), "load_bundle_spec(%s) succeeded", bundle.c_str());
    return r.error().text();
}

} // namespace

Test(spec_load, valid_bundle) {
    std::string dir = make_tmpdir();
    write_file(dir + "/config.json", cfg("", "", R"("hostname": "")"));
    auto r = load_bundle_spec(dir);
    rm_rf(dir);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    cr_assert_str_eq(r->process->cwd.c_str(), "/");
}

Test(spec_load, missing_bundle_dir) {
    std::string dir = make_tmpdir();
    std::string bundle = dir + "/nope";
    auto r = load_bundle_spec(bundle);
    rm_rf(dir);
    cr_assert(!r.has_value());
    cr_assert_eq(r.error().code, ENOENT);
    std::string e = r.error().text();
    expect_eq(e, "bundle " + bundle + ": No such file or directory");
}

Test(spec_load, missing_config_file) {
    std::string dir = make_tmpdir();
    std::string e = load_err(dir);
    rm_rf(dir);
    cr_assert(e.rfind("config.json: ", 0) == 0, "got: %s", e.c_str());
    cr_assert(e.find(dir + "/config.json") != std::string::npos, "got: %s", e.c_str());
    cr_assert(e.find("No such file or directory") != std::string::npos, "got: %s", e.c_str());
}

Test(spec_load, fifo_does_not_hang, .timeout = 10) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    cr_assert_eq(::mkfifo(path.c_str(), 0600), 0, "mkfifo: %s", std::strerror(errno));
    std::string e = load_err(dir);
    rm_rf(dir);
    expect_eq(e, "config.json: " + path + " is not a regular file");
}

Test(spec_load, config_is_directory) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    cr_assert_eq(::mkdir(path.c_str(), 0700), 0);
    std::string e = load_err(dir);
    rm_rf(dir);
    expect_eq(e, "config.json: " + path + " is not a regular file");
}

Test(spec_load, config_too_large) {
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    cr_assert(fd >= 0);
    int rc = ::ftruncate(fd, static_cast<off_t>(kMaxConfigSize + 1));
    ::close(fd);
    cr_assert_eq(rc, 0);
    std::string e = load_err(dir);
    rm_rf(dir);
    expect_eq(e, "config.json: " + path + " is larger than 16 MiB");
}

Test(spec_load, config_at_size_limit_is_read) {
    // Exactly kMaxConfigSize bytes is not refused for size; the zeros then fail to parse.
    std::string dir = make_tmpdir();
    std::string path = dir + "/config.json";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    cr_assert(fd >= 0);
    int rc = ::ftruncate(fd, static_cast<off_t>(kMaxConfigSize));
    ::close(fd);
    cr_assert_eq(rc, 0);
    std::string e = load_err(dir);
    rm_rf(dir);
    cr_assert_str_eq(e.c_str(), "config.json: invalid JSON: contains a NUL byte");
}

Test(spec_load, parse_error_prefixed) {
    std::string dir = make_tmpdir();
    write_file(dir + "/config.json", cfg(R"("user": {"uid": -1})"));
    std::string e = load_err(dir);
    rm_rf(dir);
    cr_assert_str_eq(e.c_str(),
                     "config.json: process.user.uid: -1 is out of range [0, 4294967295]");
}

Test(spec_load, validate_error_prefixed) {
    std::string dir = make_tmpdir();
    write_file(dir + "/config.json",
               cfg("", R"("namespaces": [{"type": "pid"}, {"type": "pid"}])"));
    std::string e = load_err(dir);
    rm_rf(dir);
    cr_assert_str_eq(e.c_str(),
                     "config.json: linux.namespaces[1].type: duplicate namespace \"pid\"");
}

Test(spec_load, syntax_error_prefixed) {
    std::string dir = make_tmpdir();
    write_file(dir + "/config.json", "{\n  \"ociVersion\": \"a\\q\"\n}\n");
    std::string e = load_err(dir);
    rm_rf(dir);
    cr_assert_str_eq(
        e.c_str(),
        "config.json: invalid JSON: line 2, column 20: lexical error: inside a string, '\\' "
        "occurs before a character which it may not.");
}

// Without openat2 (answered ENOSYS here by a seccomp filter in a child, as
// on a kernel before 5.6 or under valgrind) config.json is still read, and a
// symlinked one is refused rather than followed.
Test(spec_parse, config_without_openat2_refuses_symlinks) {
    std::string dir = unit::make_tmpdir();
    std::string text = ocirun::oci::write_spec(ocirun::oci::default_spec(false, 0, 0), false);
    {
        int fd = ::open((dir + "/real.json").c_str(), O_WRONLY | O_CREAT, 0600);
        cr_assert((size_t)::write(fd, text.data(), text.size()) == text.size());
        ::close(fd);
    }
    pid_t child = ::fork();
    if (child == 0) {
        scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
        if (!f || seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) < 0 ||
            seccomp_load(f) < 0)
            ::_exit(10);
        if (::symlink("real.json", (dir + "/config.json").c_str()) < 0) ::_exit(11);
        auto linked = ocirun::oci::load_bundle_spec(dir);
        if (linked || linked.error().text().find("is not a regular file") == std::string::npos)
            ::_exit(12);
        if (::rename((dir + "/real.json").c_str(), (dir + "/config.json").c_str()) < 0) ::_exit(13);
        auto plain = ocirun::oci::load_bundle_spec(dir);
        ::_exit(plain ? 0 : 14);
    }
    int st = 0;
    ::waitpid(child, &st, 0);
    unit::rm_rf(dir);
    cr_assert(WIFEXITED(st), "child killed");
    cr_assert_eq(WEXITSTATUS(st), 0, "step %d failed", WEXITSTATUS(st));
}
