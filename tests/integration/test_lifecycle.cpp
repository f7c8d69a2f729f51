// The container lifecycle on real namespaces, and what the container saw:
// every test runs the real oci-run binary on a busybox bundle, with its own
// --root, and removes what it made (the suite's .fini also runs after a
// failed assertion, so a failing test does not leave containers behind).
#include "oci/json.hpp"
#include "oci/spec_io.hpp"
#include "support/bundle.hpp"
#include "support/container_env.hpp"
#include "support/harness.hpp"
#include "support/process.hpp"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::create;
using test::dir_entries;
using test::Env;
using test::FileRun;
using test::make_env;
using test::oci;
using test::oci_files;
using test::pid_gone;
using test::pid_gone_now;
using test::run;
using test::spawn_oci;
using test::Spawned;
using test::state_of;
using test::StateInfo;
using test::track;
using test::track_dir;
using test::wait_bounded;
using test::wait_status;

namespace {

// "Key:\tvalue" from a /proc/PID/status text.
std::string status_field(const std::string &text, const std::string &key) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) == 0) {
            std::string v = line.substr(key.size() + 1);
            size_t a = v.find_first_not_of(" \t");
            return a == std::string::npos ? "" : v.substr(a);
        }
    }
    return "";
}

std::vector<std::string> words(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    std::string w;
    while (in >> w)
        out.push_back(w);
    return out;
}

} // namespace

TestSuite(lifecycle, .fini = cleanup_all, .timeout = 60);

// ---- run: exit status and output -------------------------------------------

Test(lifecycle, run_returns_exit_code_and_stdout) {
    Env e = make_env("exit", {"sh", "-c", "echo out-line; echo err-line >&2; exit 7"});
    auto o = run(e);
    bool left = test::exists(e.root + "/" + e.id);
    cleanup_all();
    cr_assert_eq(o.status, 7, "status %d, err: %s", o.status, o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "out-line\n");
    cr_assert(contains(o.err, "err-line"), "%s", o.err.c_str());
    cr_assert(!left, "run without --keep left its state behind");
}

Test(lifecycle, run_exit_zero) {
    Env e = make_env("exit0", {"true"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "status %d, err: %s", o.status, o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "");
}

// The init of a PID namespace ignores signals sent from inside it (even
// SIGKILL), so `sh -c 'kill -9 $$'` only dies when sh is not PID 1: this
// runs without a PID namespace.
Test(lifecycle, run_killed_by_signal_is_128_plus_sig) {
    Env e = make_env("sig", {"sh", "-c", "kill -9 $$; echo survived"});
    auto &ns = e.b.spec.linux_->namespaces;
    std::erase_if(ns, [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 137, "status %d, out: %s err: %s", o.status, o.out.c_str(),
                 o.err.c_str());
    cr_assert(!contains(o.out, "survived"));
}

// With a PID namespace the runtime's own signal (from outside) kills PID 1.
Test(lifecycle, run_init_killed_from_outside_is_128_plus_sig) {
    Env e = make_env("sigout", {"sleep", "30"});
    e.b.save();
    Spawned s = spawn_oci({"--root", e.root, "run", "--bundle", e.b.dir, e.id});
    std::string st = wait_status(e.root, e.id, "running");
    auto k = oci({"--root", e.root, "kill", e.id, "KILL"});
    int status = wait_bounded(s.pid, 5000);
    cleanup_all();
    cr_assert_str_eq(st.c_str(), "running");
    cr_assert_eq(k.status, 0, "%s", k.err.c_str());
    cr_assert_eq(status, 137, "run exited %d", status);
}

// While a foreground run waits, its container is deleted and another one is
// made under the same id. When the run's process ends, run must not delete
// the new container (a forced delete would kill it): the record no longer
// names the init this run made.
Test(lifecycle, foreground_run_leaves_a_container_made_under_its_id_since) {
    Env e = make_env("runagain", {"sleep", "30"});
    e.b.save();
    Spawned s = spawn_oci({"--root", e.root, "run", "--bundle", e.b.dir, e.id});
    std::string st = wait_status(e.root, e.id, "running");
    ::kill(s.pid, SIGSTOP);
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    Env f = make_env("runagain2", {"sleep", "30"});
    f.root = e.root;
    f.id = e.id;
    f.b.save();
    auto c = create(f);
    ::kill(s.pid, SIGCONT);
    int status = wait_bounded(s.pid, 5000);
    StateInfo after = state_of(e.root, e.id);
    std::string err = test::read_file(s.err_path);
    cleanup_all();
    cr_assert_str_eq(st.c_str(), "running");
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(status, 137, "run exited %d: %s", status, err.c_str());
    cr_assert_str_eq(after.status.c_str(), "created", "%s", after.err.c_str());
    cr_assert(contains(err, "is no longer the one this run made"), "%s", err.c_str());
}

// ---- create / start / state / kill / delete --------------------------------

Test(lifecycle, create_start_kill_delete) {
    // "ready" once the trap is set: a signal the namespace's init has no
    // handler for yet is dropped (it would then run out its sleep).
    Env e = make_env("life", {"sh", "-c", "trap 'exit 0' TERM; echo ready; sleep 30 & wait"});
    std::string pid_file = track_dir(test::make_temp_dir("pidf")) + "/pid";
    auto c = create(e, {"--pid-file", pid_file});
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    StateInfo s1 = state_of(e.root, e.id);
    std::string pid_text = test::read_file(pid_file);
    bool on_host = test::exists("/proc/" + std::to_string(s1.pid));
    auto st = oci({"--root", e.root, "start", e.id});
    std::string running = wait_status(e.root, e.id, "running", 1000);
    for (int i = 0; i < 500 && !contains(test::read_file(c.out_path), "ready"); i++)
        ::usleep(10000);
    auto k = oci({"--root", e.root, "kill", e.id});
    std::string stopped = wait_status(e.root, e.id, "stopped");
    StateInfo s3 = state_of(e.root, e.id);
    auto d = oci({"--root", e.root, "delete", e.id});
    bool dir_left = test::exists(e.root + "/" + e.id);
    StateInfo after = state_of(e.root, e.id);
    cleanup_all();

    cr_assert_eq(s1.exit, 0, "state: %s", s1.err.c_str());
    cr_assert_str_eq(s1.status.c_str(), "created");
    cr_assert_gt(s1.pid, 0);
    std::string init_pid = std::to_string(s1.pid);
    cr_assert_str_eq(pid_text.c_str(), init_pid.c_str());
    cr_assert(on_host, "init %ld not on the host", s1.pid);
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_eq(k.status, 0, "kill: %s", k.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    // runtime-spec: pid is required only while created or running.
    cr_assert(s3.pid <= 0, "a stopped container reports pid %ld", s3.pid);
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(!dir_left, "delete left %s/%s", e.root.c_str(), e.id.c_str());
    cr_assert_eq(after.exit, 1);
    cr_assert(contains(after.err, "does not exist"), "%s", after.err.c_str());
}

Test(lifecycle, start_twice_fails) {
    Env e = make_env("start2", {"sleep", "30"});
    auto c = create(e);
    auto s1 = oci({"--root", e.root, "start", e.id});
    auto s2 = oci({"--root", e.root, "start", e.id});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s1.status, 0, "start: %s", s1.err.c_str());
    cr_assert_eq(s2.status, 1);
    cr_assert(contains(s2.err, "not created"), "%s", s2.err.c_str());
}

// The init holds the pipes `start` releases it through and reads its answer
// from (start reaches them through /proc/PID/fd): the state directory keeps
// the record and config.json only, no fifo. Created until start, running
// after.
Test(lifecycle, create_leaves_only_the_record_and_config_json) {
    Env e = make_env("nofifo", {"sleep", "30"});
    auto c = create(e);
    std::vector<std::string> entries = dir_entries(e.root + "/" + e.id);
    std::sort(entries.begin(), entries.end());
    StateInfo created = state_of(e.root, e.id);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string running = wait_status(e.root, e.id, "running", 1000);
    std::vector<std::string> after = dir_entries(e.root + "/" + e.id);
    std::sort(after.begin(), after.end());
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    std::string listed;
    for (const auto &n : entries)
        listed += n + " ";
    cr_assert_str_eq(listed.c_str(), "config.json state.json ");
    cr_assert_str_eq(created.status.c_str(), "created");
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert(after == entries, "start left other files");
}

static void kill_with(const char *tag, const char *sig) {
    Env e = make_env(tag, {"sleep", "30"});
    auto c = create(e);
    long pid = state_of(e.root, e.id).pid;
    auto s = oci({"--root", e.root, "start", e.id});
    std::string running = wait_status(e.root, e.id, "running", 1000);
    auto k = oci({"--root", e.root, "kill", e.id, sig});
    std::string stopped = wait_status(e.root, e.id, "stopped");
    bool gone = pid > 0 && pid_gone(pid);
    auto k2 = oci({"--root", e.root, "kill", e.id, sig});
    auto k3 = oci({"--root", e.root, "kill", "--all", e.id, sig});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_eq(k.status, 0, "kill %s: %s", sig, k.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    cr_assert(gone, "init %ld still runs", pid);
    cr_assert_eq(k2.status, 1, "kill of a stopped container succeeded");
    // Worded as runc's, which containerd's shim matches.
    cr_assert(contains(k2.err, "container not running"), "%s", k2.err.c_str());
    // --all of a stopped container is not an error (runc; containerd's
    // `task delete --force` sends it).
    cr_assert_eq(k3.status, 0, "%s", k3.err.c_str());
}

Test(lifecycle, kill_by_name) {
    kill_with("killname", "KILL");
}
Test(lifecycle, kill_by_sig_name) {
    kill_with("killsig", "SIGKILL");
}
Test(lifecycle, kill_by_number) {
    kill_with("killnum", "9");
}

Test(lifecycle, kill_created_container) {
    Env e = make_env("killcr", {"sleep", "30"});
    auto c = create(e);
    auto k = oci({"--root", e.root, "kill", e.id, "KILL"});
    std::string stopped = wait_status(e.root, e.id, "stopped");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(k.status, 0, "%s", k.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
}

// kill --all reaches every process of the container's PID namespace: PID 1
// ignores SIGTERM, its child does not, and once the child dies PID 1's wait
// returns and the container stops. Without --all the container keeps running.
Test(lifecycle, kill_all_signals_the_pid_namespace) {
    Env e = make_env("killall", {"sh", "-c", "sleep 30 & wait; echo child-gone"});
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string running = wait_status(e.root, e.id, "running", 1000);
    auto k1 = oci({"--root", e.root, "kill", e.id, "TERM"});
    std::string after_plain = wait_status(e.root, e.id, "stopped", 300);
    auto k2 = oci({"--root", e.root, "kill", "--all", e.id, "TERM"});
    std::string after_all = wait_status(e.root, e.id, "stopped");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_eq(k1.status, 0, "kill: %s", k1.err.c_str());
    cr_assert_str_eq(after_plain.c_str(), "running", "PID 1 should ignore SIGTERM");
    cr_assert_eq(k2.status, 0, "kill --all: %s", k2.err.c_str());
    cr_assert_str_eq(after_all.c_str(), "stopped");
}

// A container that shares the host's PID namespace: kill --all signals its
// cgroup, never a walk of the PID namespace (that would reach every host
// process), and delete --force kills the container only: a host process of
// the test survives both.
Test(lifecycle, shared_pid_namespace_never_reaches_host_processes) {
    Env e = make_env("hostpid", {"sleep", "30"});
    std::erase_if(e.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    e.b.save();
    pid_t host = fork();
    if (host == 0) {
        execlp("sleep", "sleep", "30", static_cast<char *>(nullptr));
        _exit(127);
    }
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    auto k = oci({"--root", e.root, "kill", "--all", e.id, "KILL"});
    std::string after = wait_status(e.root, e.id, "stopped");
    bool alive_after_kill = kill(host, 0) == 0 && !pid_gone_now(host);
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool host_alive = kill(host, 0) == 0 && !pid_gone_now(host);
    kill(host, SIGKILL);
    waitpid(host, nullptr, 0);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_eq(k.status, 0, "kill --all: %s", k.err.c_str());
    cr_assert_str_eq(after.c_str(), "stopped");
    cr_assert(alive_after_kill, "kill --all killed a host process outside the container");
    cr_assert_eq(d.status, 0, "delete --force: %s", d.err.c_str());
    cr_assert(host_alive, "delete --force killed a host process outside the container");
}

Test(lifecycle, list_shows_id_and_status) {
    Env e = make_env("list", {"sleep", "30"});
    auto c = create(e);
    auto table = oci({"--root", e.root, "list"});
    auto js = oci({"--root", e.root, "list", "--format", "json"});
    auto quiet = oci({"--root", e.root, "list", "--quiet"});
    auto s = oci({"--root", e.root, "start", e.id});
    auto js2 = oci({"--root", e.root, "list", "-f", "json"});
    cleanup_all();
    auto empty = oci({"--root", e.root, "list", "-q"});

    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(table.status, 0, "%s", table.err.c_str());
    cr_assert(table.out.rfind("ID", 0) == 0, "%s", table.out.c_str());
    bool row = false;
    std::istringstream in(table.out);
    std::string line;
    while (std::getline(in, line)) {
        auto w = words(line);
        if (w.size() >= 3 && w[0] == e.id && w[2] == "created") row = true;
    }
    cr_assert(row, "no row for %s: %s", e.id.c_str(), table.out.c_str());

    for (const auto *o : {&js, &js2}) {
        cr_assert_eq(o->status, 0, "%s", o->err.c_str());
        auto doc = ocirun::json::Document::parse(o->out);
        cr_assert(doc.has_value(), "not JSON: %s", o->out.c_str());
        yajl_val arr = doc->root();
        cr_assert(YAJL_IS_ARRAY(arr));
        cr_assert_eq(arr->u.array.len, 1u);
        yajl_val id = ocirun::json::member(arr->u.array.values[0], "id");
        yajl_val st = ocirun::json::member(arr->u.array.values[0], "status");
        yajl_val pid = ocirun::json::member(arr->u.array.values[0], "pid");
        cr_assert(id && YAJL_IS_STRING(id));
        cr_assert_str_eq(id->u.string, e.id.c_str());
        cr_assert(st && YAJL_IS_STRING(st));
        cr_assert_str_eq(st->u.string, o == &js ? "created" : "running");
        cr_assert(pid && YAJL_IS_INTEGER(pid) && YAJL_GET_INTEGER(pid) > 0);
    }
    cr_assert_eq(s.status, 0, "%s", s.err.c_str());
    cr_assert_eq(quiet.status, 0);
    std::string only_id = e.id + "\n";
    cr_assert_str_eq(quiet.out.c_str(), only_id.c_str());
    cr_assert_eq(empty.status, 0, "%s", empty.err.c_str());
    cr_assert_str_eq(empty.out.c_str(), "");
}

Test(lifecycle, delete_running_needs_force) {
    Env e = make_env("delrun", {"sleep", "30"});
    auto c = create(e);
    long pid = state_of(e.root, e.id).pid;
    auto s = oci({"--root", e.root, "start", e.id});
    std::string running = wait_status(e.root, e.id, "running", 1000);
    auto d1 = oci({"--root", e.root, "delete", e.id});
    std::string still = state_of(e.root, e.id).status;
    auto d2 = oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = pid > 0 && pid_gone(pid);
    bool dir_left = test::exists(e.root + "/" + e.id);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_eq(d1.status, 1, "delete of a running container exited %d", d1.status);
    cr_assert(contains(d1.err, "running"), "%s", d1.err.c_str());
    cr_assert_str_eq(still.c_str(), "running");
    cr_assert_eq(d2.status, 0, "delete --force: %s", d2.err.c_str());
    cr_assert(gone, "init %ld survived delete --force", pid);
    cr_assert(!dir_left);
}

Test(lifecycle, duplicate_id_refused) {
    Env e = make_env("dup", {"sleep", "30"});
    auto c1 = create(e);
    StateInfo before = state_of(e.root, e.id);
    auto c2 = create(e);
    StateInfo after = state_of(e.root, e.id);
    cleanup_all();
    cr_assert_eq(c1.status, 0, "create: %s", c1.err.c_str());
    cr_assert_eq(c2.status, 1);
    cr_assert(contains(c2.err, "already exists"), "%s", c2.err.c_str());
    cr_assert_str_eq(after.status.c_str(), "created");
    cr_assert_eq(after.pid, before.pid);
    cr_assert_gt(after.pid, 0);
}

Test(lifecycle, invalid_ids_refused) {
    Env e = make_env("badid", {"true"});
    std::string parent_x = e.root + "/../x";
    bool x_before = test::exists(parent_x);
    std::vector<std::string> ids{"../x", ".hidden", "a/b", std::string(1025, 'a'), ""};
    std::vector<test::Output> outs;
    for (const auto &id : ids)
        outs.push_back(oci({"--root", e.root, "create", "--bundle", e.b.dir, id}));
    auto entries = dir_entries(e.root);
    bool x_after = test::exists(parent_x);
    cleanup_all();
    for (size_t i = 0; i < ids.size(); i++) {
        cr_assert_eq(outs[i].status, 1, "ID \"%s\" exited %d", ids[i].c_str(), outs[i].status);
        cr_assert(outs[i].err.rfind("oci-run: ", 0) == 0, "%s", outs[i].err.c_str());
    }
    cr_assert(entries.empty(), "root has %zu entries, first %s", entries.size(),
              entries.empty() ? "" : entries[0].c_str());
    cr_assert_eq(x_after, x_before);
}

// The longest ID a state directory can hold (NAME_MAX).
Test(lifecycle, id_of_255_chars_allowed) {
    Env e = make_env("longid", {"true"});
    std::string id(255, 'b');
    track(e.root, id);
    auto c = oci_files({"--root", e.root, "create", "--bundle", e.b.dir, id});
    std::string st = state_of(e.root, id).status;
    cleanup_all();
    cr_assert_eq(c.status, 0, "%s", c.err.c_str());
    cr_assert_str_eq(st.c_str(), "created");
}

// ---- what the container saw -------------------------------------------------

Test(lifecycle, hostname_from_spec) {
    Env e = make_env("host", {"hostname"});
    e.b.spec.hostname = "box1";
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "box1\n");
}

Test(lifecycle, capabilities_and_no_new_privs) {
    Env e = make_env("caps", {"cat", "/proc/self/status"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    // CAP_AUDIT_WRITE (29), CAP_KILL (5), CAP_NET_BIND_SERVICE (10)
    const char *mask = "0000000020000420";
    std::string nnp = status_field(o.out, "NoNewPrivs"), eff = status_field(o.out, "CapEff"),
                prm = status_field(o.out, "CapPrm"), bnd = status_field(o.out, "CapBnd"),
                inh = status_field(o.out, "CapInh"), amb = status_field(o.out, "CapAmb");
    cr_assert_str_eq(nnp.c_str(), "1");
    cr_assert_str_eq(eff.c_str(), mask);
    cr_assert_str_eq(prm.c_str(), mask);
    cr_assert_str_eq(bnd.c_str(), mask);
    cr_assert_str_eq(inh.c_str(), "0000000000000000");
    cr_assert_str_eq(amb.c_str(), "0000000000000000");
}

Test(lifecycle, default_rlimit_nofile) {
    Env e = make_env("rlim0", {"sh", "-c", "ulimit -n; ulimit -Hn"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "1024\n1024\n");
}

Test(lifecycle, rlimit_from_spec) {
    Env e = make_env("rlim", {"sh", "-c", "ulimit -n; ulimit -Hn"});
    bool found = false;
    for (auto &r : e.b.spec.process->rlimits)
        if (r.type == "RLIMIT_NOFILE") {
            r.soft = 777;
            r.hard = 888;
            found = true;
        }
    auto o = run(e);
    cleanup_all();
    cr_assert(found, "default spec has no RLIMIT_NOFILE");
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "777\n888\n");
}

Test(lifecycle, env_from_spec) {
    Env e = make_env("env", {"sh", "-c", "echo \"$FOO\""});
    e.b.spec.process->env.push_back("FOO=bar baz");
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "bar baz\n");
}

Test(lifecycle, cwd_from_spec) {
    Env e = make_env("cwd", {"pwd"});
    e.b.spec.process->cwd = "/tmp";
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "/tmp\n");
}

Test(lifecycle, user_and_additional_gids) {
    Env e = make_env("user", {"sh", "-c", "id -u; id -g; id -G"});
    e.b.spec.process->user.uid = 1000;
    e.b.spec.process->user.gid = 1000;
    e.b.spec.process->user.additional_gids = {2000, 3000};
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::istringstream in(o.out);
    std::string u, g, groups;
    std::getline(in, u);
    std::getline(in, g);
    std::getline(in, groups);
    cr_assert_str_eq(u.c_str(), "1000", "%s", o.out.c_str());
    cr_assert_str_eq(g.c_str(), "1000", "%s", o.out.c_str());
    std::set<std::string> gs;
    for (auto &w : words(groups))
        gs.insert(w);
    cr_assert(gs == (std::set<std::string>{"1000", "2000", "3000"}), "id -G: %s", groups.c_str());
}

Test(lifecycle, pid_one_in_pid_namespace) {
    Env e = make_env("pid1", {"sh", "-c", "echo $$"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "1\n");
}

Test(lifecycle, readonly_root) {
    Env e = make_env("ro", {"sh", "-c", "touch /x && echo wrote"});
    auto o = run(e);
    bool created = test::exists(e.b.rootfs + "/x");
    cleanup_all();
    cr_assert_neq(o.status, 0, "touch / succeeded on a read-only root");
    cr_assert(!contains(o.out, "wrote"));
    cr_assert(contains(o.err, "Read-only file system"), "%s", o.err.c_str());
    cr_assert(!created);
}

Test(lifecycle, writable_root) {
    Env e = make_env("rw", {"sh", "-c", "touch /x && echo wrote"});
    e.b.spec.root->readonly = false;
    auto o = run(e);
    bool created = test::exists(e.b.rootfs + "/x");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "wrote\n");
    cr_assert(created, "the write did not reach the bundle's rootfs");
}

// /proc/kcore is masked when the kernel has it; the other masked files that
// exist on this host are checked too (they are never empty unmasked).
Test(lifecycle, masked_paths_read_empty) {
    std::vector<std::string> files;
    for (const char *p : {"/proc/kcore", "/proc/timer_list", "/proc/sched_debug"})
        if (test::exists(p)) files.push_back(p);
    bool acpi = test::exists("/proc/acpi");
    std::string script;
    for (const auto &f : files)
        script += "wc -c < " + f + "; ";
    if (acpi) script += "ls -A /proc/acpi | wc -l; ";
    script += "echo end";
    Env e = make_env("mask", {"sh", "-c", script});
    auto o = run(e);
    cleanup_all();
    cr_assert(!files.empty(), "none of the masked files exists on this host");
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::vector<std::string> want(files.size() + (acpi ? 1 : 0), "0");
    want.push_back("end");
    cr_assert_eq(words(o.out), want, "%s / %s", script.c_str(), o.out.c_str());
}

Test(lifecycle, proc_sys_is_read_only) {
    // With a writable /proc/sys the open succeeds (mode 0666) and only the
    // write fails for want of CAP_SYS_ADMIN: EROFS comes from the mount.
    Env e = make_env("procsys", {"sh", "-c", "echo 1 > /proc/sys/kernel/ns_last_pid"});
    auto o = run(e);
    cleanup_all();
    cr_assert_neq(o.status, 0);
    cr_assert(contains(o.err, "Read-only file system"), "%s", o.err.c_str());
}

Test(lifecycle, network_namespace_has_only_lo) {
    Env e = make_env("net", {"ls", "/sys/class/net"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_eq(words(o.out), std::vector<std::string>{"lo"}, "%s", o.out.c_str());
}

Test(lifecycle, proc_is_mounted) {
    Env e = make_env("mnt", {"cat", "/proc/self/mountinfo"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    bool proc = false, root = false;
    std::istringstream in(o.out);
    std::string line;
    while (std::getline(in, line)) {
        auto w = words(line);
        auto sep = std::find(w.begin(), w.end(), "-");
        if (w.size() < 5 || sep == w.end() || sep + 1 == w.end()) continue;
        if (w[4] == "/proc" && sep[1] == "proc") proc = true;
        if (w[4] == "/") root = true;
    }
    cr_assert(proc, "no proc at /proc: %s", o.out.c_str());
    cr_assert(root);
}

Test(lifecycle, user_namespace_mapping) {
    Env e = make_env("userns", {"sh", "-c", "cat /proc/self/uid_map; id -u"});
    test::use_user_namespace(e);
    e.b.spec.root->readonly = false;
    e.b.save();
    // The container's root (host 100000) must be able to reach the rootfs.
    chmod(e.b.dir.c_str(), 0755);
    auto c = create(e);
    StateInfo s = state_of(e.root, e.id);
    std::string host_status = test::read_file("/proc/" + std::to_string(s.pid) + "/status");
    auto st = oci({"--root", e.root, "start", e.id});
    std::string stopped = wait_status(e.root, e.id, "stopped");
    std::string out = test::read_file(c.out_path);
    std::string err = test::read_file(c.out_path.substr(0, c.out_path.rfind('/')) + "/stderr");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_gt(s.pid, 0);
    cr_assert_eq(words(status_field(host_status, "Uid")),
                 (std::vector<std::string>{"100000", "100000", "100000", "100000"}), "Uid: %s",
                 status_field(host_status, "Uid").c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    cr_assert_eq(words(out), (std::vector<std::string>{"0", "100000", "65536", "0"}),
                 "out: %s err: %s", out.c_str(), err.c_str());
}

// A user namespace joined by path (a pod sharing its infra container's): the
// second container is in the first one's user namespace, is root there, and
// its other new namespaces belong to it (else mounting proc would fail).
Test(lifecycle, user_namespace_joined_by_path) {
    Env a = make_env("userhold", {"sleep", "30"});
    test::use_user_namespace(a);
    a.b.spec.root->readonly = false;
    a.b.save();
    chmod(a.b.dir.c_str(), 0755);
    auto ca = create(a);
    long holder = state_of(a.root, a.id).pid;
    std::string ns = "/proc/" + std::to_string(holder) + "/ns/user";
    char link[128] = "";
    ssize_t ln = readlink(ns.c_str(), link, sizeof link - 1);
    if (ln > 0) link[ln] = '\0';

    Env b = make_env("userjoin",
                     {"sh", "-c", "cat /proc/self/uid_map; id -u; readlink /proc/self/ns/user"});
    b.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::user, ns});
    b.b.save();
    chmod(b.b.dir.c_str(), 0755);
    auto o = run(b);
    cleanup_all();
    cr_assert_eq(ca.status, 0, "create A: %s", ca.err.c_str());
    cr_assert_eq(o.status, 0, "run B: %s", o.err.c_str());
    cr_assert_eq(words(o.out), (std::vector<std::string>{"0", "100000", "65536", "0", link}),
                 "out: %s (holder's %s)", o.out.c_str(), link);
}

// A user namespace joined by path together with a network namespace joined
// by path that another user namespace owns (the host's here, as a network a
// pod's parent made): the runtime joins that one before the user namespace,
// where it would hold no capability over it (issue 21; the ordering runc's
// nsexec keeps).
Test(lifecycle, network_namespace_of_another_owner_with_a_joined_user_namespace) {
    Env a = make_env("userhold2", {"sleep", "30"});
    test::use_user_namespace(a);
    a.b.save();
    chmod(a.b.dir.c_str(), 0755);
    auto ca = create(a);
    long holder = state_of(a.root, a.id).pid;
    std::string userns = "/proc/" + std::to_string(holder) + "/ns/user";
    int ready[2];
    cr_assert(::pipe(ready) == 0);
    pid_t net = ::fork();
    if (net == 0) {
        char ok = ::unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
        (void)!::write(ready[1], &ok, 1);
        ::pause();
        ::_exit(0);
    }
    char ok = 0;
    (void)!::read(ready[0], &ok, 1);
    ::close(ready[0]);
    ::close(ready[1]);
    std::string netns = "/proc/" + std::to_string(net) + "/ns/net";
    char link[128] = "";
    ssize_t ln = readlink(netns.c_str(), link, sizeof link - 1);
    if (ln > 0) link[ln] = '\0';
    Env b = make_env("netjoin", {"sh", "-c", "readlink /proc/self/ns/net; id -u"});
    b.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::user, userns});
    for (auto &n : b.b.spec.linux_->namespaces)
        if (n.type == ocirun::oci::NsType::network) n.path = netns;
    if (!b.b.spec.linux_->find_namespace(ocirun::oci::NsType::network))
        b.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::network, netns});
    b.b.save();
    chmod(b.b.dir.c_str(), 0755);
    auto o = run(b);
    ::kill(net, SIGKILL);
    ::waitpid(net, nullptr, 0);
    cleanup_all();
    cr_assert_eq(ok, 'y', "unshare a network namespace");
    cr_assert_eq(ca.status, 0, "create A: %s", ca.err.c_str());
    cr_assert_eq(o.status, 0, "run B: %s", o.err.c_str());
    cr_assert_eq(words(o.out), (std::vector<std::string>{link, "0"}), "out: %s (holder's %s)",
                 o.out.c_str(), link);
}

// A user namespace path that is not a user namespace: refused at create
// naming the entry and both types, one line, nothing left.
Test(lifecycle, user_namespace_path_of_wrong_type) {
    Env e = make_env("userbad", {"true"});
    e.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::user, "/proc/self/ns/net"});
    auto o = run(e);
    auto entries = dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "run: %d %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "linux.namespaces[") &&
                  contains(o.err, "].path: /proc/self/ns/net: a network namespace, not a user one"),
              "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u, "%s", o.err.c_str());
    cr_assert(entries.empty());
}

// linux.timeOffsets: the container's boot clock is a day ahead of the host's,
// for its init and for a process exec'd into it later; with a user
// namespace too (issue 21: the init's own /proc files are not its to write
// there, the runtime writes the offsets).
Test(lifecycle, time_namespace_offsets) {
    for (bool userns : {false, true}) {
        Env e = make_env(userns ? "timensu" : "timens",
                         {"sh", "-c", "cut -d. -f1 /proc/uptime; sleep 30"});
        if (userns) test::use_user_namespace(e);
        e.b.spec.linux_->namespaces.push_back({ocirun::oci::NsType::time, ""});
        e.b.spec.linux_->time_offsets["boottime"] = {86400, 0};
        e.b.spec.linux_->time_offsets["monotonic"] = {-5, 0};
        e.b.save();
        auto c = create(e);
        auto st = oci({"--root", e.root, "start", e.id});
        auto x = oci({"--root", e.root, "exec", e.id, "cut", "-d.", "-f1", "/proc/uptime"});
        // (The init may not have printed yet when exec is done.)
        std::string out = test::read_output(c.out_path, "\n");
        std::string host = test::read_file("/proc/uptime");
        cleanup_all();
        cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
        cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
        cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
        long host_up = std::strtol(host.c_str(), nullptr, 10);
        long init_up = std::strtol(out.c_str(), nullptr, 10);
        long exec_up = std::strtol(x.out.c_str(), nullptr, 10);
        cr_assert(init_up >= host_up + 86400 - 10 && init_up <= host_up + 86400,
                  "init uptime %ld, host %ld", init_up, host_up);
        cr_assert(exec_up >= host_up + 86400 - 10 && exec_up <= host_up + 86400,
                  "exec uptime %ld, host %ld", exec_up, host_up);
    }
}

// ---- file descriptors --------------------------------------------------------

Test(lifecycle, no_extra_fds) {
    Env e = make_env("fds", {"ls", "/proc/self/fd"});
    // A careless caller: an inheritable fd the container must not get.
    int leak = open("/dev/null", O_RDONLY);
    int leak_hi = fcntl(leak, F_DUPFD, 20);
    auto o = run(e);
    close(leak);
    close(leak_hi);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::set<std::string> fds;
    for (auto &w : words(o.out))
        fds.insert(w);
    cr_assert(fds == (std::set<std::string>{"0", "1", "2", "3"}), "fds: %s", o.out.c_str());
}

Test(lifecycle, preserve_fds_passes_fd_3) {
    Env e = make_env("pfd", {"sh", "-c", "cat <&3"});
    e.b.save();
    std::string dir = track_dir(test::make_temp_dir("pfdin"));
    test::write_file(dir + "/in", "through fd 3\n");
    int fd = open((dir + "/in").c_str(), O_RDONLY | O_CLOEXEC);
    auto with =
        oci_files({"--root", e.root, "run", "--preserve-fds", "1", "--bundle", e.b.dir, e.id}, fd);
    lseek(fd, 0, SEEK_SET);
    auto without = oci_files({"--root", e.root, "run", "--bundle", e.b.dir, e.id}, fd);
    close(fd);
    cleanup_all();
    cr_assert_eq(with.status, 0, "%s", with.err.c_str());
    cr_assert_str_eq(with.out.c_str(), "through fd 3\n");
    cr_assert_neq(without.status, 0, "fd 3 reached the container without --preserve-fds");
    cr_assert_str_eq(without.out.c_str(), "");
}

// ---- leftovers of an interrupted life ------------------------------------------

Test(lifecycle, delete_force_of_created_container) {
    Env e = make_env("delcr", {"sleep", "30"});
    auto c = create(e);
    long pid = state_of(e.root, e.id).pid;
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = pid > 0 && pid_gone(pid);
    auto entries = dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_gt(pid, 0);
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(gone, "init %ld survived", pid);
    cr_assert(entries.empty(), "root not empty: %s", entries.empty() ? "" : entries[0].c_str());
}

// Readers do not queue behind a create in progress: while its
// createRuntime hook runs (the create holds the container's lock), `state`
// and `list` answer at once with "creating".
Test(lifecycle, state_and_list_answer_during_a_create) {
    Env e = make_env("creating", {"true"});
    e.b.spec.hooks.emplace();
    e.b.spec.hooks->create_runtime.push_back({"/bin/sleep", {"sleep", "2"}, {}, {}});
    e.b.save();
    auto c = test::spawn_oci({"--root", e.root, "create", "--bundle", e.b.dir, e.id});
    std::string state_json = e.root + "/" + e.id + "/state.json";
    for (int i = 0; i < 500 && !test::exists(state_json); i++)
        ::usleep(10000);
    auto st = test::oci_files({"--root", e.root, "state", e.id}, -1, 3000);
    auto ls = test::oci_files({"--root", e.root, "list", "--format", "json"}, -1, 3000);
    int created = test::wait_bounded(c.pid, 10000);
    cr_assert_eq(st.status, 0, "state during create: %d %s", st.status, st.err.c_str());
    cr_assert(contains(st.out, "\"status\": \"creating\"") ||
                  contains(st.out, "\"status\":\"creating\""),
              "%s", st.out.c_str());
    cr_assert_eq(ls.status, 0, "list during create: %d %s", ls.status, ls.err.c_str());
    cr_assert(contains(ls.out, "creating"), "%s", ls.out.c_str());
    cr_assert_eq(created, 0, "create: %s", test::read_file(c.err_path).c_str());
    std::string status = state_of(e.root, e.id).status;
    cr_assert_str_eq(status.c_str(), "created");
}

// What a create killed before it wrote state.json leaves: a directory with
// no record. Only --force removes it.
Test(lifecycle, delete_force_without_state) {
    Env e = make_env("nostate", {"true"});
    std::string dir = e.root + "/" + e.id;
    mkdir(dir.c_str(), 0700);
    mkfifo((dir + "/exec.fifo").c_str(), 0600);
    auto st = oci({"--root", e.root, "state", e.id});
    auto d1 = oci({"--root", e.root, "delete", e.id});
    bool kept = test::exists(dir);
    auto d2 = oci({"--root", e.root, "delete", "--force", e.id});
    bool left = test::exists(dir);
    cleanup_all();
    cr_assert_eq(st.status, 1);
    cr_assert(contains(st.err, "no state"), "%s", st.err.c_str());
    cr_assert_eq(d1.status, 1);
    cr_assert(kept);
    cr_assert_eq(d2.status, 0, "%s", d2.err.c_str());
    cr_assert(!left, "delete --force left %s", dir.c_str());
}

// A program that is not there fails `create` (and so `run`), as in runc
// (Podman maps that to exit 127), and leaves nothing behind.
Test(lifecycle, exec_failure_is_reported_by_run) {
    Env e = make_env("noexec", {"no-such-command"});
    auto o = run(e);
    auto entries = dir_entries(e.root);
    Env f = make_env("noexec3", {"/no/such/file"});
    f.b.save();
    auto c = create(f);
    auto f_entries = dir_entries(f.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "status %d, err: %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "exec no-such-command: executable file not found in $PATH"), "%s",
              o.err.c_str());
    cr_assert_eq(c.status, 1);
    cr_assert(contains(c.err, "create: exec /no/such/file: No such file or directory"), "%s",
              c.err.c_str());
    cr_assert(f_entries.empty());
    cr_assert_eq(test::count_lines(o.err), 1, "%s", o.err.c_str());
    cr_assert(entries.empty());
}

// A program that is gone by `start` fails it, and the container stops.
Test(lifecycle, exec_failure_fails_start_and_stops_the_container) {
    Env e = make_env("noexec2", {"/no/such/file"});
    ::mkdir((e.b.rootfs + "/no").c_str(), 0755);
    ::mkdir((e.b.rootfs + "/no/such").c_str(), 0755);
    test::write_file(e.b.rootfs + "/no/such/file", "#!/bin/sh\n");
    ::chmod((e.b.rootfs + "/no/such/file").c_str(), 0755);
    e.b.save();
    auto c = create(e);
    ::unlink((e.b.rootfs + "/no/such/file").c_str());
    auto s = oci({"--root", e.root, "start", e.id});
    std::string st = wait_status(e.root, e.id, "stopped");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 1, "start: %d %s", s.status, s.err.c_str());
    cr_assert(contains(s.err, "start: exec /no/such/file: No such file or directory"), "%s",
              s.err.c_str());
    cr_assert_str_eq(st.c_str(), "stopped");
}

// An init that has begun to exit is stopped, as runc's state says, though
// the kernel has not made it a zombie yet: PID 1 of a namespace waits in
// its exit until every process of the namespace is reaped, and one whose
// parent is outside (this test, which does not reap it at first) keeps it
// there. Before, `state` said "running" while `exec` and `kill` found the
// init gone.
Test(lifecycle, an_exiting_init_is_stopped) {
    Env e = make_env("exiting", {"sleep", "600"});
    auto c = create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    long init = state_of(e.root, e.id).pid;
    std::string ns = "/proc/" + std::to_string(init) + "/ns/pid";
    int own = ::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    int theirs = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
    cr_assert(own >= 0 && theirs >= 0, "open pid namespaces: %s", std::strerror(errno));
    cr_assert_eq(::setns(theirs, CLONE_NEWPID), 0, "setns: %s", std::strerror(errno));
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int back = ::setns(own, CLONE_NEWPID);
    ::close(own);
    ::close(theirs);
    cr_assert_eq(back, 0, "setns back: %s", std::strerror(errno));
    cr_assert_gt(child, 0);
    // The child is a zombie of ours; the init now waits for it in its exit.
    for (int i = 0;
         i < 500 && test::read_file("/proc/" + std::to_string(child) + "/stat").find(") Z") ==
                        std::string::npos;
         i++)
        ::usleep(10000);
    ::kill(static_cast<pid_t>(init), SIGKILL);
    std::string stat;
    for (int i = 0; i < 500; i++) {
        stat = test::read_file("/proc/" + std::to_string(init) + "/stat");
        std::istringstream fields(stat.substr(stat.rfind(')') + 2));
        std::string state, skip;
        unsigned long flags = 0;
        fields >> state;
        for (int f = 4; f < 9; f++)
            fields >> skip;
        fields >> flags;
        if (flags & 0x4) break; // PF_EXITING
        ::usleep(10000);
    }
    auto st = state_of(e.root, e.id);
    auto k = oci({"--root", e.root, "kill", e.id, "TERM"});
    int reaped = ::waitpid(child, nullptr, 0);
    bool gone = pid_gone(init);
    cleanup_all();
    cr_assert_eq(reaped, child);
    cr_assert(gone, "init %ld survived", init);
    cr_assert_eq(st.exit, 0, "state: %s", st.err.c_str());
    cr_assert_str_eq(st.status.c_str(), "stopped", "init's stat: %s", stat.c_str());
    cr_assert_neq(k.status, 0);
}
