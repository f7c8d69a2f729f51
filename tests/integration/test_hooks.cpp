// OCI hooks on real containers: each kind runs at its point of the lifecycle,
// in the namespace the runtime-spec names, with the state on stdin; failures
// and timeouts are handled as the spec's Lifecycle section says.
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

using ocirun::oci::Hook;
using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::oci;
using test::read_file;
using test::state_of;
using test::wait_status;

namespace {

// A directory the hooks write to (bind-mounted into the container at /hooklog)
// and a hook script that records its name, stdin, net namespace, argv and env.
struct HookLog {
    std::string dir;
    std::string script; // host path
    std::string lines(const char *file) const { return read_file(dir + "/" + file); }
};

const char *kScript = R"(#!/bin/sh
log=%s
echo "$1" >> $log/order
cat > $log/$1.json
readlink /proc/self/ns/net > $log/$1.net
echo "$*|$FOO|$PATH" > $log/$1.env
)";

std::string script_for(const std::string &logdir) {
    char buf[512];
    std::snprintf(buf, sizeof buf, kScript, logdir.c_str());
    return buf;
}

HookLog hook_log(Env &e) {
    HookLog h;
    h.dir = test::track_dir(test::make_temp_dir("hooklog"));
    ::chmod(h.dir.c_str(), 0777);
    h.script = h.dir + "/hook.sh";
    test::write_file(h.script, script_for(h.dir));
    ::chmod(h.script.c_str(), 0755);
    // startContainer resolves its path inside the container.
    test::write_file(e.b.rootfs + "/hook.sh", script_for("/hooklog"));
    ::chmod((e.b.rootfs + "/hook.sh").c_str(), 0755);
    ocirun::oci::Mount m;
    m.destination = "/hooklog";
    m.type = "bind";
    m.source = h.dir;
    m.options = {"rbind"};
    e.b.spec.mounts.push_back(m);
    return h;
}

Hook hook(const std::string &path, const char *name, std::vector<std::string> env = {}) {
    Hook h;
    h.path = path;
    h.args = {"hook-" + std::string(name), name};
    h.env = std::move(env);
    return h;
}

Hook shell_hook(const std::string &cmd, std::optional<int32_t> timeout = {}) {
    Hook h;
    h.path = "/bin/sh";
    h.args = {"sh", "-c", cmd};
    h.timeout = timeout;
    return h;
}

ocirun::oci::Hooks &hooks_of(Env &e) {
    if (!e.b.spec.hooks) e.b.spec.hooks.emplace();
    return *e.b.spec.hooks;
}

// This process's namespace of type `name`, as readlink shows it (+ "\n").
std::string own_ns(const char *name) {
    char buf[128];
    ssize_t n = ::readlink((std::string("/proc/self/ns/") + name).c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) + "\n" : "";
}

} // namespace

TestSuite(hooks, .fini = cleanup_all, .timeout = 60);

Test(hooks, each_kind_runs_at_its_point_with_the_state_on_stdin) {
    Env e = make_env("hooks", {"sh", "-c", "echo main >> /hooklog/order; sleep 30"});
    HookLog h = hook_log(e);
    auto &hk = hooks_of(e);
    hk.prestart = {hook(h.script, "prestart", {"FOO=bar", "PATH=/usr/bin:/bin"})};
    hk.create_runtime = {hook(h.script, "createRuntime")};
    hk.create_container = {hook(h.script, "createContainer")};
    hk.start_container = {hook("/hook.sh", "startContainer")};
    hk.poststart = {hook(h.script, "poststart")};
    hk.poststop = {hook(h.script, "poststop")};
    e.b.save();

    auto c = create(e);
    std::string after_create = h.lines("order");
    long pid = state_of(e.root, e.id).pid;
    auto s = oci({"--root", e.root, "start", e.id});
    std::string after_start = h.lines("order");
    auto k = oci({"--root", e.root, "kill", e.id, "KILL"});
    std::string stopped = wait_status(e.root, e.id, "stopped");
    auto d = oci({"--root", e.root, "delete", e.id});
    std::string after_delete = h.lines("order");
    std::string host_net = own_ns("net");
    std::map<std::string, std::string> seen; // "<kind>.<json|net|env>" -> content
    for (const char *kind : {"prestart", "createRuntime", "createContainer", "startContainer",
                             "poststart", "poststop"})
        for (const char *ext : {".json", ".net", ".env"})
            seen[kind + std::string(ext)] = h.lines((kind + std::string(ext)).c_str());
    cleanup_all();

    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_str_eq(after_create.c_str(), "prestart\ncreateRuntime\ncreateContainer\n");
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    // poststart runs once the process is exec'd, beside it: "main" may come
    // before or after it, but startContainer always precedes both.
    cr_assert(after_start.rfind("prestart\ncreateRuntime\ncreateContainer\nstartContainer\n", 0) ==
                  0,
              "%s", after_start.c_str());
    cr_assert(contains(after_start, "poststart\n"), "%s", after_start.c_str());
    cr_assert_eq(k.status, 0, "%s", k.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(after_delete.size() > after_start.size() &&
                  after_delete.substr(after_delete.size() - 9) == "poststop\n",
              "%s", after_delete.c_str());

    std::string pid_field = "\"pid\":" + std::to_string(pid) + ",";
    struct Want {
        const char *kind, *status;
        bool in_container;
    } wants[] = {{"prestart", "creating", false},       {"createRuntime", "creating", false},
                 {"createContainer", "creating", true}, {"startContainer", "created", true},
                 {"poststart", "running", false},       {"poststop", "stopped", false}};
    for (const Want &w : wants) {
        std::string json = seen[std::string(w.kind) + ".json"];
        cr_assert(contains(json, "\"id\":\"" + e.id + "\""), "%s: %s", w.kind, json.c_str());
        cr_assert(contains(json, "\"status\":\"" + std::string(w.status) + "\""), "%s: %s", w.kind,
                  json.c_str());
        cr_assert(contains(json, pid_field), "%s: %s (want %s)", w.kind, json.c_str(),
                  pid_field.c_str());
        cr_assert(contains(json, "\"bundle\":\"" + e.b.dir + "\""), "%s: %s", w.kind, json.c_str());
        std::string net = seen[std::string(w.kind) + ".net"];
        if (w.in_container)
            cr_assert(net != host_net && !net.empty(), "%s ran in the host netns", w.kind);
        else
            cr_assert_str_eq(net.c_str(), host_net.c_str(), "%s: not in the runtime's netns",
                             w.kind);
    }
    // args and env come from the hook, nothing from the runtime's env.
    cr_assert_str_eq(seen["prestart.env"].c_str(), "prestart|bar|/usr/bin:/bin\n");
}

Test(hooks, failing_create_runtime_hook_fails_create_and_leaves_nothing) {
    Env e = make_env("hookfail", {"sleep", "30"});
    HookLog h = hook_log(e);
    auto &hk = hooks_of(e);
    hk.prestart = {hook(h.script, "prestart")};
    hk.create_runtime = {shell_hook("echo something broke >&2; exit 3")};
    hk.create_container = {hook(h.script, "createContainer")};
    hk.poststop = {hook(h.script, "poststop")};
    e.b.save();
    auto mounts = test::mount_ids();
    auto c = create(e);
    std::string order = h.lines("order");
    std::string state = h.lines("prestart.json");
    auto entries = test::dir_entries(e.root);
    std::string leaked = test::new_mounts(mounts, {e.root, e.b.dir, e.id});
    cleanup_all();
    cr_assert_neq(c.status, 0, "create succeeded");
    cr_assert(contains(c.err, "hooks.createRuntime[0] /bin/sh: exited with status 3: "
                              "something broke"),
              "%s", c.err.c_str());
    cr_assert_eq(test::count_lines(c.err), 1, "%s", c.err.c_str());
    // The container was stopped and ended with the poststop hooks.
    cr_assert_str_eq(order.c_str(), "prestart\npoststop\n");
    cr_assert(entries.empty(), "state left in --root: %s", entries[0].c_str());
    cr_assert(leaked.empty(), "%s", leaked.c_str());
    size_t at = state.find("\"pid\":");
    cr_assert(at != std::string::npos, "%s", state.c_str());
    long pid = std::strtol(state.c_str() + at + 6, nullptr, 10);
    cr_assert(test::pid_gone(pid), "init %ld still runs", pid);
}

Test(hooks, timeout_kills_the_hook_and_fails_create) {
    Env e = make_env("hooktime", {"true"});
    hooks_of(e).create_container = {shell_hook("sleep 30", 1)};
    e.b.save();
    auto c = create(e);
    auto entries = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_neq(c.status, 0, "create succeeded");
    cr_assert(contains(c.err, "hooks.createContainer[0] /bin/sh: killed after its timeout of 1 s"),
              "%s", c.err.c_str());
    cr_assert(entries.empty());
}

Test(hooks, failing_start_container_hook_fails_start_before_the_process_runs) {
    Env e = make_env("hookstart", {"sh", "-c", "echo ran > /hooklog/main"});
    HookLog h = hook_log(e);
    hooks_of(e).start_container = {shell_hook("echo no >&2; exit 1")};
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string st = wait_status(e.root, e.id, "stopped");
    bool ran = test::exists(h.dir + "/main");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 1, "start: %d %s", s.status, s.err.c_str());
    cr_assert(contains(s.err, "hooks.startContainer[0] /bin/sh: exited with status 1: no"), "%s",
              s.err.c_str());
    cr_assert_str_eq(st.c_str(), "stopped");
    cr_assert(!ran, "the process ran although startContainer failed");
}

Test(hooks, failing_poststart_hook_stops_the_container) {
    Env e = make_env("hookpost", {"sleep", "30"});
    hooks_of(e).poststart = {shell_hook("exit 4")};
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string st = wait_status(e.root, e.id, "stopped");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 1, "start: %d %s", s.status, s.err.c_str());
    cr_assert(contains(s.err, "hooks.poststart[0] /bin/sh: exited with status 4"), "%s",
              s.err.c_str());
    cr_assert_str_eq(st.c_str(), "stopped");
}

// runtime-spec Lifecycle step 13: a failing poststop hook is a warning, and
// the hooks after it still run.
Test(hooks, failing_poststop_hook_is_a_warning) {
    Env e = make_env("hookstop", {"true"});
    std::string mark = e.root + "/second-ran";
    hooks_of(e).poststop = {shell_hook("exit 5"), shell_hook("echo yes > " + mark)};
    auto o = test::run(e);
    bool second = test::exists(mark);
    ::unlink(mark.c_str());
    auto entries = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run: %d %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "hooks.poststop[0] /bin/sh: exited with status 5"), "%s",
              o.err.c_str());
    cr_assert(second, "the poststop hook after the failing one did not run");
    cr_assert(entries.empty());
}

// createContainer hooks run with the rootfs as their working directory, as
// runc (the spec is silent; hooks load ./lib and the like relative to it).
Test(hooks, create_container_hooks_run_in_the_rootfs) {
    Env e = make_env("hookcwd", {"true"});
    std::string seen = e.root + "/cwd";
    hooks_of(e).create_container = {shell_hook("pwd -P > " + seen)};
    auto o = test::run(e);
    std::string cwd = read_file(seen);
    char real[4096];
    const std::string want = (::realpath(e.b.rootfs.c_str(), real) ? real : e.b.rootfs) + "\n";
    cleanup_all();
    cr_assert_eq(o.status, 0, "run: %d %s", o.status, o.err.c_str());
    cr_assert_str_eq(cwd.c_str(), want.c_str(), "%s", cwd.c_str());
}

// A hook that never reads its stdin, with a state far larger than a pipe
// buffer: the runtime neither blocks nor dies of SIGPIPE.
Test(hooks, hook_that_ignores_a_large_state_on_stdin) {
    Env e = make_env("hookbig", {"true"});
    e.b.spec.annotations["big"] = std::string(300000, 'x');
    hooks_of(e).create_runtime = {shell_hook("exit 0")};
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run: %d %s", o.status, o.err.c_str());
}

Test(hooks, missing_hook_binary_names_the_path) {
    Env e = make_env("hookmiss", {"true"});
    hooks_of(e).prestart = {hook("/nonexistent/hook", "prestart")};
    auto o = test::run(e);
    auto entries = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "run: %d %s", o.status, o.err.c_str());
    // The exec's own error, reported back by the spawn (runtime/process/spawn.hpp).
    cr_assert(contains(o.err, "hooks.prestart[0] /nonexistent/hook: exec /nonexistent/hook: No "
                              "such file or directory"),
              "%s", o.err.c_str());
    cr_assert(entries.empty());
}

// The runtime killed in the middle of create (here while a createRuntime
// hook runs, so the init exists and the state says "creating"): the init dies
// with it (PDEATHSIG), and `delete --force` removes what is left.
Test(hooks, runtime_killed_mid_create_leaves_what_delete_force_cleans) {
    Env e = make_env("crash", {"sleep", "30"});
    HookLog h = hook_log(e);
    // The second hook holds create until the runtime is gone, then ends too
    // (at once if the runtime was gone before it started, and within 10 s
    // whatever happens: it must not outlive the test).
    hooks_of(e).create_runtime = {
        hook(h.script, "createRuntime"),
        shell_hook("i=0; while [ $PPID != 1 ] && [ $i -lt 200 ] && kill -0 $PPID; do "
                   "i=$((i + 1)); sleep 0.05; done")};
    e.b.save();
    auto mounts = test::mount_ids();
    test::Spawned c = test::spawn_oci({"--root", e.root, "create", "--bundle", e.b.dir, e.id});
    bool hooked = false;
    for (int i = 0; i < 500 && !hooked; i++) {
        hooked =
            test::exists(h.dir + "/createRuntime.json") && !h.lines("createRuntime.json").empty();
        if (!hooked) usleep(10000);
    }
    std::string state = h.lines("createRuntime.json");
    ::kill(c.pid, SIGKILL);
    int cs = test::wait_bounded(c.pid, 5000);
    size_t at = state.find("\"pid\":");
    long init = at == std::string::npos ? -1 : std::strtol(state.c_str() + at + 6, nullptr, 10);
    bool init_gone = init > 0 && test::pid_gone(init);
    auto st = state_of(e.root, e.id);
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    auto left = test::dir_entries(e.root);
    std::string leaked = test::new_mounts(mounts, {e.root, e.b.dir, e.id});
    cleanup_all();
    cr_assert(hooked, "create never reached its createRuntime hook");
    cr_assert_eq(cs, 128 + SIGKILL);
    cr_assert(init_gone, "init %ld outlived the runtime", init);
    cr_assert_str_eq(st.status.c_str(), "stopped", "state: %s %s", st.status.c_str(),
                     st.err.c_str());
    cr_assert_eq(d.status, 0, "delete --force: %s", d.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
    cr_assert(leaked.empty(), "%s", leaked.c_str());
}

// A PID namespace joined by path takes the init only: the createRuntime hook
// (run by the runtime after it spawned the init) is born in the runtime's own
// PID namespace, as runtime-spec asks of runtime-namespace hooks.
Test(hooks, runtime_hooks_stay_in_the_runtime_pid_namespace_when_one_is_joined) {
    Env holder = make_env("pidholder", {"sleep", "30"});
    auto hc = create(holder);
    cr_assert_eq(hc.status, 0, "create: %s", hc.err.c_str());
    long holder_pid = state_of(holder.root, holder.id).pid;

    Env e = make_env("pidjoin", {"true"});
    std::string out = test::track_dir(test::make_temp_dir("pidjoin-log")) + "/ns";
    for (auto &ns : e.b.spec.linux_->namespaces)
        if (ns.type == ocirun::oci::NsType::pid)
            ns.path = "/proc/" + std::to_string(holder_pid) + "/ns/pid";
    hooks_of(e).create_runtime = {shell_hook("readlink /proc/self/ns/pid > " + out)};
    e.b.save();
    auto c = create(e);
    std::string hook_ns = read_file(out);
    std::string own = own_ns("pid");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_str_eq(hook_ns.c_str(), own.c_str(), "the hook's PID namespace");
}

// run reads config.json once (create's read serves start's hooks and policy
// and delete's poststop hooks): every open of a config.json by `run`, with
// hooks and a sandbox policy, traced by strace.
Test(hooks, run_reads_the_configuration_once) {
    if (test::find_in_path("strace").empty()) cr_skip_test("no strace");
    // LeakSanitizer stops the process with ptrace at exit, which strace holds.
    if (std::getenv("ASAN_OPTIONS")) cr_skip_test("a sanitized build cannot run under strace");
    Env e = make_env("hookonce", {"true"});
    ocirun::oci::Hook t;
    t.path = "/bin/true";
    hooks_of(e).poststart.push_back(t);
    hooks_of(e).poststop.push_back(t);
    e.b.spec.annotations["dev.ocirun.network"] = "none";
    e.b.save();
    std::string log = test::track_dir(test::make_temp_dir("hookonce")) + "/trace";
    auto o = test::run({"strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log,
                        test::oci_run_path(), "--root", e.root, "run", "--bundle", e.b.dir, e.id});
    std::string trace = test::read_file(log);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    size_t opens = 0;
    std::istringstream lines(trace);
    for (std::string l; std::getline(lines, l);)
        if (contains(l, "\"config.json\"") || contains(l, "/config.json\"")) opens++;
    cr_assert_eq(opens, 1u, "%s", trace.c_str());
}
