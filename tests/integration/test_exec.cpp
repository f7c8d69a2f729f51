// exec into a running container: its namespaces, its configuration's
// security settings with the command line's changes, and the process's exit
// status in the foreground.
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <signal.h>
#include <unistd.h>

#include <functional>
#include <sstream>
#include <string>

using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::ns_link;
using test::oci;
using test::wait_status;

namespace {

// A started container running `sleep 30`, its spec changed by `edit` first.
Env running(const char *tag, const std::function<void(Env &)> &edit = {}) {
    Env e = make_env(tag, {"sleep", "30"});
    if (edit) edit(e);
    e.b.save();
    auto c = create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto s = oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    return e;
}

} // namespace

TestSuite(exec, .fini = cleanup_all, .timeout = 60);

Test(exec, runs_with_the_containers_settings_and_returns_its_status) {
    Env e = running("exbasic");
    auto x = oci({"--root", e.root, "exec", "--env", "FOO=bar", "--cwd", "/tmp", "--user",
                  "1000:1001", "--additional-gids", "7", e.id, "sh", "-c",
                  "hostname; echo $FOO; pwd; id -u; id -g; id -G; ulimit -n; exit 5"});
    cleanup_all();
    cr_assert_eq(x.status, 5, "status %d: %s", x.status, x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "oci-run\nbar\n/tmp\n1000\n1001\n1001 7\n1024\n", "%s",
                     x.out.c_str());
}

Test(exec, joins_every_namespace_of_the_init) {
    Env e = running("exns");
    long init = test::state_of(e.root, e.id).pid;
    // Files, not pipes, for stdio: the detached process keeps them open.
    auto x = test::oci_files({"--root", e.root, "exec", "--detach", "--pid-file",
                              e.root + "/exec.pid", e.id, "sleep", "30"});
    std::string pidtext = test::read_file(e.root + "/exec.pid");
    long pid = std::strtol(pidtext.c_str(), nullptr, 10);
    std::string mismatch;
    for (const char *ns : {"pid", "net", "mnt", "ipc", "uts", "cgroup"})
        if (pid <= 0 || ns_link(pid, ns) != ns_link(init, ns) || ns_link(pid, ns).empty())
            mismatch += std::string(ns) + " ";
    std::string status = test::read_file("/proc/" + std::to_string(pid) + "/status");
    if (pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_gt(pid, 0, "pid file: %s", pidtext.c_str());
    cr_assert(mismatch.empty(), "not in the init's namespaces: %s", mismatch.c_str());
    // In the container's PID namespace it is not PID 1 and has a parent of 0.
    cr_assert(contains(status, "NSpid:\t" + std::to_string(pid) + "\t"), "%s", status.c_str());
}

Test(exec, process_file) {
    Env e = running("exproc");
    std::string file = e.root + "/process.json";
    test::write_file(file, "{\"args\": [\"sh\", \"-c\", \"echo $A-$(pwd)\"], \"cwd\": \"/etc\", "
                           "\"env\": [\"A=from-file\", \"PATH=/bin\"], "
                           "\"user\": {\"uid\": 0, \"gid\": 0}}");
    auto x = oci({"--root", e.root, "exec", "--process", file, e.id});
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "from-file-/etc\n");
}

Test(exec, capabilities_and_no_new_privs) {
    Env e = running("excaps", [](Env &x) { x.b.spec.process->no_new_privileges = false; });
    auto plain = oci({"--root", e.root, "exec", e.id, "grep", "-E", "^(CapEff|NoNewPrivs)",
                      "/proc/self/status"});
    auto more = oci({"--root", e.root, "exec", "--cap", "CAP_NET_RAW", "--no-new-privs", e.id,
                     "grep", "-E", "^(CapEff|NoNewPrivs)", "/proc/self/status"});
    cleanup_all();
    cr_assert_eq(plain.status, 0, "%s", plain.err.c_str());
    cr_assert_eq(more.status, 0, "%s", more.err.c_str());
    // The default set (CAP_KILL, CAP_NET_BIND_SERVICE, CAP_AUDIT_WRITE), then
    // with CAP_NET_RAW (bit 13) added.
    cr_assert(contains(plain.out, "CapEff:\t0000000020000420"), "%s", plain.out.c_str());
    cr_assert(contains(plain.out, "NoNewPrivs:\t0"), "%s", plain.out.c_str());
    cr_assert(contains(more.out, "CapEff:\t0000000020002420"), "%s", more.out.c_str());
    cr_assert(contains(more.out, "NoNewPrivs:\t1"), "%s", more.out.c_str());
}

Test(exec, gets_no_fd_of_the_runtime) {
    Env e = running("exfds");
    auto x = oci({"--root", e.root, "exec", e.id, "ls", "/proc/self/fd"});
    cleanup_all();
    cr_assert_eq(x.status, 0, "%s", x.err.c_str());
    // 0-2 and the directory ls reads.
    cr_assert_str_eq(x.out.c_str(), "0\n1\n2\n3\n", "%s", x.out.c_str());
}

Test(exec, into_a_stopped_container_fails) {
    Env e = make_env("exstop", {"true"});
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string st = wait_status(e.root, e.id, "stopped");
    auto x = oci({"--root", e.root, "exec", e.id, "true"});
    cleanup_all();
    cr_assert_str_eq(st.c_str(), "stopped");
    cr_assert_eq(x.status, 1);
    cr_assert(contains(x.err, "is not running"), "%s", x.err.c_str());
}

Test(exec, missing_command_is_reported) {
    Env e = running("exmiss");
    auto x = oci({"--root", e.root, "exec", e.id, "no-such-program"});
    cleanup_all();
    cr_assert_eq(x.status, 1, "status %d", x.status);
    cr_assert(contains(x.err, "exec no-such-program: executable file not found in $PATH"), "%s",
              x.err.c_str());
}

// RLIMIT_NPROC is counted per user when a process forks. In a user
// namespace whose root already runs more processes than the limit, exec of
// a process for another user with that limit works: the limit is set by the
// process itself, not by the root that forks it (where the fork would fail
// with EAGAIN).
Test(exec, low_nproc_for_another_user_in_a_user_namespace) {
    Env e = make_env("xnproc", {"sh", "-c", "for i in 1 2 3 4 5 6; do sleep 30 & done; wait"});
    test::use_user_namespace(e);
    e.b.spec.process->rlimits.clear();
    e.b.save();
    auto c = create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto s = oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    usleep(300000);
    std::string file = test::track_dir(test::make_temp_dir("xnprocp")) + "/process.json";
    test::write_file(file,
                     R"({"args": ["sh", "-c", "id -u; grep 'Max processes' /proc/self/limits"],
        "cwd": "/", "user": {"uid": 1000, "gid": 1000},
        "env": ["PATH=/bin"],
        "rlimits": [{"type": "RLIMIT_NPROC", "soft": 3, "hard": 3}]})");
    auto x = oci({"--root", e.root, "exec", "--process", file, e.id});
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert(contains(x.out, "1000\n") && contains(x.out, "Max processes             3"), "%s",
              x.out.c_str());
}

// process.oomScoreAdj holds for exec'd processes too (as runc): the
// container's for a command line exec, the --process file's own for one.
// With and without a user namespace. Raised only: lowering it needs
// CAP_SYS_RESOURCE, which this sandbox's bounding set lacks.
Test(exec, takes_process_oom_score_adj) {
    for (bool userns : {false, true}) {
        Env e = running(userns ? "exoomu" : "exoom", [userns](Env &x) {
            x.b.spec.process->oom_score_adj = 500;
            if (userns) test::use_user_namespace(x);
        });
        std::string file = e.root + "/process.json";
        test::write_file(file, R"({"args": ["cat", "/proc/self/oom_score_adj"], "cwd": "/",
            "user": {"uid": 0, "gid": 0}, "env": ["PATH=/bin"], "oomScoreAdj": 700})");
        auto init = test::read_file("/proc/" + std::to_string(test::state_of(e.root, e.id).pid) +
                                    "/oom_score_adj");
        auto plain = oci({"--root", e.root, "exec", e.id, "cat", "/proc/self/oom_score_adj"});
        auto own = oci({"--root", e.root, "exec", "--process", file, e.id});
        cleanup_all();
        cr_assert_str_eq(init.c_str(), "500\n", "the init: %s", init.c_str());
        cr_assert_eq(plain.status, 0, "exec: %s", plain.err.c_str());
        cr_assert_str_eq(plain.out.c_str(), "500\n", "userns %d: %s", userns, plain.out.c_str());
        cr_assert_eq(own.status, 0, "exec --process: %s", own.err.c_str());
        cr_assert_str_eq(own.out.c_str(), "700\n", "userns %d: %s", userns, own.out.c_str());
    }
}
