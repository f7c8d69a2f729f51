// Bad invocations of every command: missing and extra arguments, unknown
// flags, flags without or with malformed values, bad global options. Each is
// a row of a table run against the real binary; each must end in exit 1 with
// exactly one "oci-run: ..." line on stderr (nothing on stdout) and leave
// nothing behind: no state under --root, no cgroup, no process, no mount, no
// file in /tmp. runc exits 1 on usage errors too (after printing its usage
// text); oci-run prints one line that points at COMMAND --help instead.
#include "support/bundle.hpp"
#include "support/container_env.hpp"
#include "support/harness.hpp"
#include "support/host_snapshot.hpp"
#include "support/process.hpp"

#include <criterion/criterion.h>

#include <unistd.h>

#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::count_lines;

namespace {

// A row: oci-run's arguments, with {root}, {id} and {bundle} filled in, and
// a piece of the one-line error it must print.
struct Case {
    std::vector<std::string> args;
    std::string needle;
};

struct Place {
    std::string root, id, bundle;
};

std::string fill(std::string s, const Place &p) {
    for (const auto &[key, value] : {std::pair<std::string, std::string>{"{root}", p.root},
                                     {"{id}", p.id},
                                     {"{bundle}", p.bundle}}) {
        for (size_t at; (at = s.find(key)) != std::string::npos;)
            s.replace(at, key.size(), value);
    }
    return s;
}

std::string joined(const std::vector<std::string> &args) {
    std::string s;
    for (const auto &a : args)
        s += (s.empty() ? "" : " ") + (a.empty() ? std::string("''") : a);
    return s;
}

// Runs one row; "" when it behaved, else what went wrong.
std::string check(const Case &c, const Place &p, const std::vector<std::string> &keep = {},
                  pid_t keep_pid = -1) {
    std::vector<std::string> args;
    for (const auto &a : c.args)
        args.push_back(fill(a, p));
    std::string needle = fill(c.needle, p);
    test::HostSnapshot before = test::snapshot_host();
    // Bounded: a command that wrongly went ahead may wait (events, a create
    // whose init holds its stdio).
    auto o = test::oci_files(args, -1, 10000);
    std::string what;
    if (o.status != 1) what += "exit status " + std::to_string(o.status) + "; ";
    if (count_lines(o.err) != 1 || o.err.rfind("oci-run: ", 0) != 0)
        what += "stderr is not one \"oci-run: \" line; ";
    if (!contains(o.err, needle)) what += "\"" + needle + "\" not in stderr; ";
    if (!o.out.empty()) what += "stdout not empty: " + o.out.substr(0, 80) + "; ";
    std::string left = test::left_behind(before, p.root, p.id, keep, keep_pid);
    if (!left.empty()) what += "left: " + left;
    if (what.empty()) return "";
    return "oci-run " + joined(args) + "\n    " + what + "\n    stderr: " + o.err;
}

std::string check_all(const std::vector<Case> &cases, const Place &p,
                      const std::vector<std::string> &keep = {}, pid_t keep_pid = -1) {
    std::string failures;
    for (const auto &c : cases)
        failures += check(c, p, keep, keep_pid);
    return failures;
}

Place make_place(const char *tag) {
    test::private_mount_namespace();
    test::become_subreaper();
    Place p;
    test::Bundle b = test::make_bundle(tag, {"true"});
    p.bundle = test::track_dir(b.dir);
    // A linux.resources file with a bad field, for update --resources.
    test::write_file(p.bundle + "/bad-resources.json", "{\"memory\": {\"limit\": \"abc\"}}\n");
    p.root = test::track_dir(test::make_root(tag));
    p.id = test::unique_id(tag);
    test::track(p.root, p.id);
    return p;
}

const std::string R = "{root}";

} // namespace

TestSuite(bad_cli, .fini = cleanup_all, .timeout = 120);

// Every command, with no container: each row is refused before anything is
// looked up or made (the bundle is a good one, so a row that wrongly went
// ahead would create a container and be caught by the leftover check).
Test(bad_cli, every_command_refuses_bad_usage) {
    Place p = make_place("usage");
    const std::vector<Case> cases = {
        // create
        {{"--root", R, "create", "--bundle", "{bundle}"}, "create: missing container ID"},
        {{"--root", R, "create", "--bundle", "{bundle}", "{id}", "extra"},
         "create: unexpected argument \"extra\""},
        {{"--root", R, "create", "--bogus", "--bundle", "{bundle}", "{id}"},
         "create: unknown option --bogus"},
        {{"--root", R, "create", "-x", "--bundle", "{bundle}", "{id}"},
         "create: unknown option -x"},
        {{"--root", R, "create", "{id}", "--bundle"}, "create: option --bundle needs a value"},
        {{"--root", R, "create", "--preserve-fds", "x", "--bundle", "{bundle}", "{id}"},
         "--preserve-fds: expected 0..1000, got \"x\""},
        {{"--root", R, "create", "--preserve-fds", "", "--bundle", "{bundle}", "{id}"},
         "--preserve-fds: expected 0..1000, got \"\""},
        {{"--root", R, "create", "--preserve-fds", "1001", "--bundle", "{bundle}", "{id}"},
         "--preserve-fds: expected 0..1000"},
        {{"--root", R, "create", "--preserve-fds", "-1", "--bundle", "{bundle}", "{id}"},
         "--preserve-fds: expected 0..1000"},
        {{"--root", R, "create", "--bundle", "{bundle}", "../{id}"}, "invalid container ID"},
        {{"--root", R, "create", "--bundle", "{bundle}", ""}, "missing container ID"},
        {{"--root", R, "create", "--bundle", "/nonexistent/oci-run-test-b", "{id}"},
         "/nonexistent/oci-run-test-b"},
        {{"--root", R, "--systemd-cgroup", "create", "--bundle", "{bundle}", "{id}"},
         "create: --systemd-cgroup"},
        // run
        {{"--root", R, "run", "--bundle", "{bundle}"}, "run: missing container ID"},
        {{"--root", R, "run", "--bundle", "{bundle}", "{id}", "extra"},
         "run: unexpected argument \"extra\""},
        {{"--root", R, "run", "--detach", "--keep", "--bundle", "{bundle}", "{id}"},
         "--keep and --detach cannot be used together"},
        {{"--root", R, "run", "--bogus", "--bundle", "{bundle}", "{id}"},
         "run: unknown option --bogus"},
        {{"--root", R, "run", "--bundle", "{bundle}", "--pid-file"},
         "run: option --pid-file needs a value"},
        // start, state, pause, resume, delete: one ID
        {{"--root", R, "start"}, "start: missing container ID"},
        {{"--root", R, "start", "{id}", "extra"}, "start: unexpected argument \"extra\""},
        {{"--root", R, "start", "--bogus", "{id}"}, "start: unknown option --bogus"},
        {{"--root", R, "start", "{id}"}, "container \"{id}\" does not exist"},
        {{"--root", R, "state"}, "state: missing container ID"},
        {{"--root", R, "state", "{id}", "extra"}, "state: unexpected argument \"extra\""},
        {{"--root", R, "state", "-a", "{id}"}, "state: unknown option -a"},
        {{"--root", R, "state", "{id}"}, "container \"{id}\" does not exist"},
        {{"--root", R, "state", "a/b"}, "invalid container ID"},
        {{"--root", R, "pause"}, "pause: missing container ID"},
        {{"--root", R, "pause", "{id}", "extra"}, "pause: unexpected argument \"extra\""},
        {{"--root", R, "pause", "{id}"}, "container \"{id}\" does not exist"},
        {{"--root", R, "resume"}, "resume: missing container ID"},
        {{"--root", R, "resume", "--all", "{id}"}, "resume: unknown option --all"},
        {{"--root", R, "delete"}, "delete: missing container ID"},
        {{"--root", R, "delete", "--force"}, "delete: missing container ID"},
        {{"--root", R, "delete", "{id}", "extra"}, "delete: unexpected argument \"extra\""},
        {{"--root", R, "delete", "--bogus", "{id}"}, "delete: unknown option --bogus"},
        {{"--root", R, "delete", "{id}"}, "container \"{id}\" does not exist"},
        // kill
        {{"--root", R, "kill"}, "kill: missing container ID"},
        {{"--root", R, "kill", "--all"}, "kill: missing container ID"},
        {{"--root", R, "kill", "{id}", "KILL", "extra"}, "kill: unexpected argument \"extra\""},
        {{"--root", R, "kill", "{id}", "NOTASIGNAL"}, "kill: unknown signal \"NOTASIGNAL\""},
        {{"--root", R, "kill", "{id}", "0"}, "kill: unknown signal \"0\""},
        {{"--root", R, "kill", "{id}", "99"}, "kill: unknown signal \"99\""},
        {{"--root", R, "kill", "{id}", "SIGRTMAX+1"}, "kill: unknown signal \"SIGRTMAX+1\""},
        {{"--root", R, "kill", "{id}", ""}, "kill: unknown signal \"\""},
        {{"--root", R, "kill", "-bogus", "{id}"}, "kill: unknown option -bogus"},
        {{"--root", R, "kill", "{id}"}, "container \"{id}\" does not exist"},
        // list
        {{"--root", R, "list", "extra"}, "list: unexpected argument \"extra\""},
        {{"--root", R, "list", "--format"}, "list: option --format needs a value"},
        {{"--root", R, "list", "-f"}, "list: option -f needs a value"},
        {{"--root", R, "list", "--format", "xml"}, "list: --format: expected table or json"},
        {{"--root", R, "list", "--format", ""}, "list: --format: expected table or json"},
        {{"--root", R, "list", "--bogus"}, "list: unknown option --bogus"},
        // ps
        {{"--root", R, "ps"}, "ps: missing container ID"},
        {{"--root", R, "ps", "--format", "bad", "{id}"}, "ps: --format: expected table or json"},
        {{"--root", R, "ps", "{id}", "--format"}, "container \"{id}\" does not exist"},
        {{"--root", R, "ps", "--format"}, "ps: option --format needs a value"},
        {{"--root", R, "ps", "{id}"}, "container \"{id}\" does not exist"},
        // events
        {{"--root", R, "events"}, "events: missing container ID"},
        {{"--root", R, "events", "{id}", "extra"}, "events: unexpected argument \"extra\""},
        {{"--root", R, "events", "--interval", "-1", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "abc", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "50ms", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "5h", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "nan", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "1e300", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval", "0x10", "{id}"}, "events: --interval"},
        {{"--root", R, "events", "--interval"}, "events: option --interval needs a value"},
        {{"--root", R, "events", "--stats", "{id}"}, "container \"{id}\" does not exist"},
        // update
        {{"--root", R, "update"}, "update: missing container ID"},
        {{"--root", R, "update", "{id}", "extra"}, "update: unexpected argument \"extra\""},
        {{"--root", R, "update", "--memory", "abc", "{id}"}, "update: --memory: expected bytes"},
        {{"--root", R, "update", "--memory", "-2", "{id}"}, "update: --memory: expected bytes"},
        {{"--root", R, "update", "--memory", "1q", "{id}"}, "update: --memory: expected bytes"},
        {{"--root", R, "update", "--memory", "-1k", "{id}"}, "update: --memory: expected bytes"},
        {{"--root", R, "update", "--memory", "99999999999t", "{id}"},
         "update: --memory: expected bytes"},
        {{"--root", R, "update", "--pids-limit", "abc", "{id}"}, "update: --pids-limit"},
        {{"--root", R, "update", "--pids-limit", "", "{id}"}, "update: --pids-limit"},
        {{"--root", R, "update", "--cpu-share", "-5", "{id}"}, "update: --cpu-share"},
        {{"--root", R, "update", "--cpu-quota", "1.5", "{id}"}, "update: --cpu-quota"},
        {{"--root", R, "update", "--blkio-weight", "5", "{id}"}, "update: --blkio-weight"},
        {{"--root", R, "update", "--l3-cache-schema", "L3:0=f", "{id}"}, "Intel RDT"},
        {{"--root", R, "update", "--resources", "/nonexistent/oci-run-test-r.json", "{id}"},
         "/nonexistent/oci-run-test-r.json: No such file or directory"},
        {{"--root", R, "update", "--resources", "{bundle}/bad-resources.json", "{id}"},
         "memory.limit"},
        {{"--root", R, "update", "--memory"}, "update: option --memory needs a value"},
        {{"--root", R, "update", "--memory", "1m", "{id}"}, "container \"{id}\" does not exist"},
        // exec
        {{"--root", R, "exec"}, "exec: missing container ID"},
        {{"--root", R, "exec", "{id}"}, "exec: missing the command to run"},
        {{"--root", R, "exec", "--process", "{bundle}/config.json", "{id}", "true"},
         "exec: give either --process FILE or a command"},
        {{"--root", R, "exec", "--user", "x:y:z", "{id}", "true"}, "exec: --user: expected"},
        {{"--root", R, "exec", "--user", "0:1:2", "{id}", "true"}, "exec: --user: expected"},
        {{"--root", R, "exec", "--user", "-1", "{id}", "true"}, "exec: --user: expected"},
        {{"--root", R, "exec", "--user", "", "{id}", "true"}, "exec: --user: expected"},
        {{"--root", R, "exec", "--user", "4294967296", "{id}", "true"}, "exec: --user: expected"},
        {{"--root", R, "exec", "--preserve-fds", "x", "{id}", "true"}, "exec: --preserve-fds"},
        {{"--root", R, "exec", "--additional-gids", "g", "{id}", "true"},
         "exec: --additional-gids"},
        {{"--root", R, "exec", "--bogus", "{id}", "true"}, "exec: unknown option --bogus"},
        {{"--root", R, "exec", "--cwd"}, "exec: option --cwd needs a value"},
        {{"--root", R, "exec", "{id}", "true"}, "container \"{id}\" does not exist"},
        // spec
        {{"--root", R, "spec", "extra"}, "spec: unexpected argument \"extra\""},
        {{"--root", R, "spec", "--bundle"}, "spec: option --bundle needs a value"},
        {{"--root", R, "spec", "--bundle", "/nonexistent/oci-run-test-s"},
         "/nonexistent/oci-run-test-s/config.json: No such file or directory"},
        {{"--root", R, "spec", "--bundle", "{bundle}"}, "{bundle}/config.json exists"},
        {{"--root", R, "spec", "--rootless=yes"}, "spec: "},
        // features
        {{"--root", R, "features", "extra"}, "features: unexpected argument \"extra\""},
        {{"--root", R, "features", "--bogus"}, "features: unknown option --bogus"},
        // report
        {{"--root", R, "report"}, "report: missing container ID"},
        {{"--root", R, "report", "{id}", "extra"}, "report: unexpected argument \"extra\""},
        {{"--root", R, "report", "--format", "xml", "{id}"}, "report: --format"},
        {{"--root", R, "report", "--bundle", "/nonexistent/oci-run-test-b"},
         "/nonexistent/oci-run-test-b"},
        {{"--root", R, "report", "{id}"}, "container \"{id}\" does not exist"},
        // checkpoint, restore: not available, whatever the arguments
        {{"--root", R, "checkpoint", "{id}"}, "checkpoint: CRIU support is not available"},
        {{"--root", R, "checkpoint"}, "checkpoint: CRIU support is not available"},
        {{"--root", R, "restore", "--bogus", "{id}"}, "restore: CRIU support is not available"},
        // global options and the command itself
        {{"--root", R}, "missing command"},
        {{"--root", R, "frobnicate"}, "unknown command \"frobnicate\""},
        {{"--root", R, "help", "frobnicate"}, "unknown command \"frobnicate\""},
        {{"--root", R, "--bogus", "list"}, "unknown option --bogus"},
        {{"--root"}, "option --root needs a value"},
        {{"--root", "", "list"}, "--root: empty path"},
        {{"--root", R, "--log-format", "xml", "list"}, "--log-format: expected text or json"},
        {{"--root", R, "list", "--log-format", "json"}, "list: unknown option --log-format"},
        {{"--root", R, "--log-format"}, "option --log-format needs a value"},
        {{"--root", R, "--rootless", "maybe", "list"}, "--rootless: expected true, false or auto"},
        {{"--root", R, "--cgroup-manager", "none", "list"},
         "--cgroup-manager: expected cgroupfs, systemd or disabled, got \"none\""},
        {{"--root", R, "--cgroup-manager"}, "option --cgroup-manager needs a value"},
        {{"--root", R, "--cgroup-manager", "disabled", "--systemd-cgroup", "list"},
         "--cgroup-manager disabled: no cgroup, but systemd's was asked for"},
        {{"--root", R, "--log", "/nonexistent/oci-run-test-l/log", "list"},
         "--log: open /nonexistent/oci-run-test-l/log: No such file or directory"},
    };
    std::string failures = check_all(cases, p);
    cleanup_all();
    cr_assert(failures.empty(), "%zu rows; these misbehaved:\n%s", cases.size(), failures.c_str());
}

// The same kind of mistakes aimed at a container that exists (created, its
// init waiting): each is refused before it touches the container, which is
// still "created" with the same init afterwards, and then starts and runs.
Test(bad_cli, bad_usage_leaves_an_existing_container_untouched) {
    Place p = make_place("live");
    auto c = test::oci_files({"--root", p.root, "create", "--bundle", p.bundle, p.id});
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto st = test::state_of(p.root, p.id);
    cr_assert_str_eq(st.status.c_str(), "created");
    std::string config_before = test::read_file(p.root + "/" + p.id + "/config.json");
    cr_assert(!config_before.empty());
    const std::vector<Case> cases = {
        {{"--root", R, "kill", "{id}", "NOTASIGNAL"}, "kill: unknown signal"},
        {{"--root", R, "kill", "{id}", "-9"}, "kill: unknown option -9"},
        {{"--root", R, "kill", "{id}", "KILL", "extra"}, "kill: unexpected argument"},
        {{"--root", R, "delete", "{id}", "--bogus"}, "delete: unknown option --bogus"},
        {{"--root", R, "delete", "{id}", "extra"}, "delete: unexpected argument"},
        {{"--root", R, "start", "{id}", "extra"}, "start: unexpected argument"},
        {{"--root", R, "pause", "{id}", "extra"}, "pause: unexpected argument"},
        {{"--root", R, "update", "--memory", "abc", "{id}"}, "update: --memory"},
        {{"--root", R, "update", "--pids-limit", "x", "{id}"}, "update: --pids-limit"},
        {{"--root", R, "update", "--resources", "{bundle}/bad-resources.json", "{id}"},
         "memory.limit"},
        {{"--root", R, "exec", "--user", "x:y:z", "{id}", "true"}, "exec: --user"},
        {{"--root", R, "exec", "{id}"}, "exec: missing the command"},
        {{"--root", R, "events", "--interval", "-1", "{id}"}, "events: --interval"},
        {{"--root", R, "ps", "--format", "bad", "{id}"}, "ps: --format"},
        // What ps itself refuses: its first line in ours, not its usage text.
        {{"--root", R, "ps", "{id}", "--bogus"}, "ps: ps --bogus failed: "},
        {{"--root", R, "ps", "{id}", "-o"}, "ps: ps -o failed: "},
        {{"--root", R, "report", "--format", "xml", "{id}"}, "report: --format"},
        // The ID is taken: refused, and the existing container is not harmed.
        {{"--root", R, "create", "--bundle", "{bundle}", "{id}"}, "already exists"},
        {{"--root", R, "run", "--bundle", "{bundle}", "{id}"}, "already exists"},
    };
    std::string failures = check_all(cases, p, {p.id}, static_cast<pid_t>(st.pid));
    auto after = test::state_of(p.root, p.id);
    std::string config_after = test::read_file(p.root + "/" + p.id + "/config.json");
    auto start = test::oci_files({"--root", p.root, "start", p.id});
    std::string final_status = test::wait_status(p.root, p.id, "stopped");
    auto del = test::oci_files({"--root", p.root, "delete", p.id});
    cleanup_all();
    cr_assert(failures.empty(), "these misbehaved:\n%s", failures.c_str());
    cr_assert_str_eq(after.status.c_str(), "created");
    cr_assert_eq(after.pid, st.pid);
    cr_assert(config_after == config_before, "the container's config.json changed");
    cr_assert_eq(start.status, 0, "start: %s", start.err.c_str());
    cr_assert_str_eq(final_status.c_str(), "stopped");
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
}

// A relative --root is taken from the current directory once, at start (as
// runc uses it relative): the container made through it is found through the
// absolute path, and removed the same way.
Test(bad_cli, relative_root_is_taken_from_the_current_directory) {
    Place p = make_place("relroot");
    std::string parent = p.root.substr(0, p.root.rfind('/'));
    std::string rel = p.root.substr(p.root.rfind('/') + 1);
    cr_assert_eq(chdir(parent.c_str()), 0);
    auto before = test::snapshot_host();
    auto c = test::oci_files({"--root", rel, "create", "--bundle", p.bundle, p.id});
    auto st = test::state_of(p.root, p.id);
    auto del = test::oci_files({"--root", p.root, "delete", "--force", p.id});
    std::string left = test::left_behind(before, p.root, p.id);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create with --root %s: %s", rel.c_str(), c.err.c_str());
    cr_assert_str_eq(st.status.c_str(), "created");
    cr_assert_eq(del.status, 0, "%s", del.err.c_str());
    cr_assert(left.empty(), "left behind:\n%s", left.c_str());
}
