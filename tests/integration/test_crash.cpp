// Crash at every phase: an oci-run built with -Dfault_injection=true dies,
// as if SIGKILLed, at a named step of create, start, exec or delete
// (OCI_RUN_FAULT=PHASE, runtime/fault.hpp). What it leaves must be found and
// removed by `delete --force`: afterwards no process, mount, cgroup (in any
// hierarchy), network helper or state directory of the container remains.
// The network helper killed while relaying costs the container its forward
// and the host nothing.
#include "support/container_env.hpp"
#include "support/leftovers.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::read_file;

namespace {

// Every process the runtime starts for a container inherits the runtime's
// environment until it execs (init, intermediate, network helper, exec's
// child) and the container's processes get it from config.json: a process
// carrying the mark afterwards is a leftover.
struct Crash {
    Env e;
    std::string mark;      // NAME=VALUE
    std::string cg_parent; // cgroupsPath's parent, ours alone
};

Crash make_crash(const char *tag) {
    Crash c{make_env(tag, {"sleep", "1000"}), "", test::cgroup_parent("crash")};
    c.mark = "OCI_RUN_TEST_MARK=" + c.e.id;
    c.e.b.spec.process->env.push_back(c.mark);
    c.e.b.save();
    ::setenv("OCI_RUN_TEST_MARK", c.e.id.c_str(), 1);
    return c;
}

// Container c.e.id-SUFFIX, tracked, its cgroup under the test's parent:
// its ID.
std::string new_container(Crash &c, const std::string &suffix) {
    std::string id = c.e.id + "-" + suffix;
    test::track(c.e.root, id);
    c.e.b.spec.linux_->cgroups_path = c.cg_parent + "/" + id;
    c.e.b.save();
    return id;
}

// Live (non-zombie) processes other than this one whose environment holds `mark`.
std::vector<long> marked_processes(const std::string &mark) {
    std::vector<long> out;
    DIR *d = ::opendir("/proc");
    if (!d) return out;
    while (auto *ent = ::readdir(d)) {
        char *end;
        long pid = std::strtol(ent->d_name, &end, 10);
        if (*end || pid <= 0 || pid == ::getpid()) continue;
        std::string base = "/proc/" + std::to_string(pid);
        std::string stat = read_file(base + "/stat");
        auto rp = stat.rfind(')');
        if (rp == std::string::npos || rp + 2 >= stat.size() || stat[rp + 2] == 'Z') continue;
        std::string env = read_file(base + "/environ");
        size_t pos = 0;
        while (pos < env.size()) {
            size_t nul = env.find('\0', pos);
            if (nul == std::string::npos) nul = env.size();
            if (env.compare(pos, nul - pos, mark) == 0) {
                out.push_back(pid);
                break;
            }
            pos = nul + 1;
        }
    }
    ::closedir(d);
    return out;
}

// Nothing of container `id` remains: processes (given `wait_ms` to finish
// dying), cgroups in every hierarchy, mounts naming the bundle, the state
// directory.
void assert_nothing_left(const Crash &c, const std::string &id, const char *phase,
                         int wait_ms = 3000) {
    std::vector<long> left = marked_processes(c.mark);
    for (int waited = 0; !left.empty() && waited < wait_ms; waited += 20) {
        ::usleep(20000);
        left = marked_processes(c.mark);
    }
    cr_assert(left.empty(), "%s: process %ld (%s) left", phase, left.empty() ? 0L : left[0],
              left.empty() ? ""
                           : read_file("/proc/" + std::to_string(left[0]) + "/cmdline").c_str());
    for (const auto &dir : test::cgroup_dirs(c.cg_parent, id))
        cr_assert(!test::exists(dir), "%s: cgroup %s left", phase, dir.c_str());
    cr_assert(!contains(read_file("/proc/self/mountinfo"), c.e.b.dir), "%s: a mount of %s left",
              phase, c.e.b.dir.c_str());
    cr_assert(!test::exists(c.e.root + "/" + id), "%s: state directory %s/%s left", phase,
              c.e.root.c_str(), id.c_str());
    auto entries = test::dir_entries(c.e.root);
    cr_assert(entries.empty(), "%s: %s left in the state root", phase,
              entries.empty() ? "" : entries[0].c_str());
}

// oci-run with OCI_RUN_FAULT=phase: it must have died there (SIGKILL).
test::FileRun run_faulted(const std::string &phase, const std::vector<std::string> &args) {
    ::setenv("OCI_RUN_FAULT", phase.c_str(), 1);
    auto r = test::oci_files(args, -1, 15000);
    ::unsetenv("OCI_RUN_FAULT");
    return r;
}

// Skips the suite's tests on a binary built without the hooks (a plain
// release build): create must die at its first step.
void require_fault_build(Crash &c) {
    std::string id = new_container(c, "probe");
    auto r = run_faulted("create:dir", {"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
    if (r.status == 137) {
        cr_assert_eq(test::oci({"--root", c.e.root, "delete", "--force", id}).status, 0);
        return;
    }
    (void)test::oci({"--root", c.e.root, "delete", "--force", id});
    cr_skip_test("%s was built without -Dfault_injection=true (create exited %d)",
                 test::oci_run_path().c_str(), r.status);
}

// create killed at `phase`, then delete --force: nothing left.
void crash_create(Crash &c, const std::string &phase) {
    std::string id = new_container(c, phase.substr(phase.find(':') + 1));
    auto r = run_faulted(phase, {"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
    cr_assert_eq(r.status, 137, "create did not die at %s (exit %d): %s", phase.c_str(), r.status,
                 r.err.c_str());
    auto d = test::oci({"--root", c.e.root, "delete", "--force", id});
    cr_assert_eq(d.status, 0, "delete --force after a crash at %s: %s", phase.c_str(),
                 d.err.c_str());
    assert_nothing_left(c, id, phase.c_str());
}

// Container c.e.id-SUFFIX created and started: its ID.
std::string create_started(Crash &c, const std::string &suffix) {
    std::string id = new_container(c, suffix);
    auto r = test::oci_files({"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
    cr_assert_eq(r.status, 0, "create: %s", r.err.c_str());
    auto s = test::oci({"--root", c.e.root, "start", id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    return id;
}

// A network policy with one forwarded port: the helper runs.
void with_helper(Crash &c, const std::string &ports) {
    c.e.b.spec.annotations["dev.ocirun.network"] = "local";
    c.e.b.spec.annotations["dev.ocirun.local-ports"] = ports;
    c.e.b.save();
}

// rmdir, deepest first, every cgroup below `path` in every hierarchy.
void remove_cgroups_below(const std::string &path) {
    for (const auto &dir : test::cgroup_children(path)) {
        remove_cgroups_below(path + "/" + dir.substr(dir.rfind('/') + 1));
        ::rmdir(dir.c_str());
    }
}

// After each test, also when an assertion ended it: the containers, then
// the test's cgroup parent in every hierarchy. A test that failed because
// the runtime left something behind must not leave it on the machine: what
// still runs with the test's mark is killed (by PID), and the cgroups below
// the test's own parent go with it.
void crash_fini() {
    if (const char *id = std::getenv("OCI_RUN_TEST_MARK"))
        for (long pid : marked_processes(std::string("OCI_RUN_TEST_MARK=") + id)) {
            ::kill(static_cast<pid_t>(pid), SIGKILL);
            (void)test::pid_gone(pid, 2000);
        }
    cleanup_all();
    std::string parent = test::cgroup_parent("crash");
    remove_cgroups_below(parent);
    (void)test::remove_cgroup_parent(parent);
}

} // namespace

TestSuite(crash, .fini = crash_fini, .timeout = 120);

Test(crash, create_killed_at_every_step_leaves_nothing_after_delete_force) {
    Crash c = make_crash("crash-create");
    require_fault_build(c);
    for (const char *phase :
         {"create:dir", "create:fifos", "create:recorded", "create:cgroup", "create:spawned",
          "create:pid-saved", "create:cgroup-v1", "create:joined", "create:proceeded",
          "create:ready", "create:created"})
        crash_create(c, phase);
}

// create slow to die after it let the init set up (OCI_RUN_FAULT_DELAY on
// the same phase: 300 ms, then the kill): the init is ready by then, no
// longer dies with the runtime, and sits in its exec stage. A CI run
// under load met this; the record then named no init, and delete --force
// left it running.
Test(crash, create_killed_after_the_init_got_ready) {
    Crash c = make_crash("crash-late");
    require_fault_build(c);
    std::string id = new_container(c, "late");
    ::setenv("OCI_RUN_FAULT_DELAY", "create:proceeded", 1);
    auto r =
        run_faulted("create:proceeded", {"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    cr_assert_eq(r.status, 137, "create did not die (exit %d): %s", r.status, r.err.c_str());
    cr_assert(!marked_processes(c.mark).empty(),
              "the init did not outlive create: the window was not met");
    auto d = test::oci({"--root", c.e.root, "delete", "--force", id});
    cr_assert_eq(d.status, 0, "delete --force: %s", d.err.c_str());
    assert_nothing_left(c, id, "create:proceeded, late");
}

Test(crash, create_killed_during_hooks_and_after_starting_the_helper) {
    Crash c = make_crash("crash-hooks");
    require_fault_build(c);
    c.e.b.spec.hooks.emplace();
    c.e.b.spec.hooks->create_runtime.push_back({"/bin/true", {"true"}, {}, {}});
    with_helper(c, "9");
    for (const char *phase : {"create:hooks", "create:ready", "create:shim", "create:created"})
        crash_create(c, phase);
}

// The init dying mid-setup is create's to clean up: it fails with one line
// and leaves nothing, with no delete needed.
Test(crash, init_killed_at_every_step_fails_create_and_leaves_nothing) {
    Crash c = make_crash("crash-init");
    require_fault_build(c);
    for (const char *phase : {"init:setup", "init:mounted", "init:ready"}) {
        std::string id = new_container(c, std::string(phase).substr(5));
        auto r = run_faulted(phase, {"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
        cr_assert_eq(r.status, 1, "%s: create exited %d", phase, r.status);
        cr_assert(contains(r.err, "init exited during setup"), "%s: %s", phase, r.err.c_str());
        cr_assert_eq(test::count_lines(r.err), 1u, "%s: %s", phase, r.err.c_str());
        assert_nothing_left(c, id, phase);
        cr_assert_eq(test::oci({"--root", c.e.root, "delete", "--force", id}).status, 0);
    }
}

// start dies after releasing the init: the process runs, state says so, and
// delete --force ends it.
Test(crash, start_killed_after_releasing_the_init) {
    Crash c = make_crash("crash-start");
    require_fault_build(c);
    std::string id = new_container(c, "s");
    auto r = test::oci_files({"--root", c.e.root, "create", "--bundle", c.e.b.dir, id});
    cr_assert_eq(r.status, 0, "create: %s", r.err.c_str());
    auto s = run_faulted("start:released", {"--root", c.e.root, "start", id});
    cr_assert_eq(s.status, 137, "start did not die (exit %d): %s", s.status, s.err.c_str());
    std::string after = test::wait_status(c.e.root, id, "running");
    cr_assert_str_eq(after.c_str(), "running");
    cr_assert_eq(test::oci({"--root", c.e.root, "delete", "--force", id}).status, 0);
    assert_nothing_left(c, id, "start:released");
}

// exec dies at each step: its process goes with it (PR_SET_PDEATHSIG), the
// container keeps running, and delete --force leaves nothing.
Test(crash, exec_killed_at_every_step_takes_only_its_own_process) {
    Crash c = make_crash("crash-exec");
    require_fault_build(c);
    std::string id = create_started(c, "x");
    long init = test::state_of(c.e.root, id).pid;
    for (const char *phase : {"exec:cloned", "exec:joined", "exec-child:joined",
                              "exec-child:visible", "exec:running"}) {
        std::string mark = std::string("OCI_RUN_TEST_EXEC=") + phase;
        ::setenv("OCI_RUN_TEST_EXEC", phase, 1);
        auto r =
            run_faulted(phase, {"--root", c.e.root, "exec", "--env", mark, id, "sleep", "999"});
        ::unsetenv("OCI_RUN_TEST_EXEC");
        // The runtime's death, or its child's before exec: the sync socket
        // closes either way and exec reports what killed the child (137).
        cr_assert_eq(r.status, 137, "exec at %s: exit %d: %s", phase, r.status, r.err.c_str());
        std::vector<long> left = marked_processes(mark);
        for (int waited = 0; !left.empty() && waited < 3000; waited += 20) {
            ::usleep(20000);
            left = marked_processes(mark);
        }
        cr_assert(left.empty(), "%s: exec's process %ld left", phase, left.empty() ? 0L : left[0]);
        auto st = test::state_of(c.e.root, id);
        cr_assert_str_eq(st.status.c_str(), "running", "%s: the container is %s", phase,
                         st.status.c_str());
        cr_assert_eq(st.pid, init);
    }
    cr_assert_eq(test::oci({"--root", c.e.root, "delete", "--force", id}).status, 0);
    assert_nothing_left(c, id, "exec");
}

// delete dies at each step (with a helper running): a second delete --force
// finishes the job.
Test(crash, delete_killed_at_every_step_is_finished_by_the_next) {
    Crash c = make_crash("crash-delete");
    require_fault_build(c);
    with_helper(c, "9");
    for (const char *phase : {"delete:killed", "delete:cgroup", "delete:shim"}) {
        std::string id = create_started(c, std::string(phase).substr(7));
        auto r = run_faulted(phase, {"--root", c.e.root, "delete", "--force", id});
        cr_assert_eq(r.status, 137, "delete did not die at %s (exit %d): %s", phase, r.status,
                     r.err.c_str());
        auto st = test::state_of(c.e.root, id);
        cr_assert_str_eq(st.status.c_str(), "stopped", "%s: state says %s", phase,
                         st.status.c_str());
        auto d = test::oci({"--root", c.e.root, "delete", "--force", id});
        cr_assert_eq(d.status, 0, "%s: second delete: %s", phase, d.err.c_str());
        assert_nothing_left(c, id, phase);
    }
}

namespace {

bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
}

// In the network namespace of `pid`: connect to 127.0.0.1:port, then say
// "ping", expect "pong", then wait for EOF, writing each step reached to
// `report` ("c", "p", "e"); exit 0 when all were seen. With `connect_only`,
// exit 0 if the connection is refused.
pid_t in_container_netns(long pid, uint16_t port, int report, bool connect_only) {
    pid_t child = ::fork();
    cr_assert(child >= 0);
    if (child > 0) return child;
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
    int ns = ::open(path.c_str(), O_RDONLY);
    if (ns < 0 || ::setns(ns, CLONE_NEWNET) < 0) ::_exit(2);
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
    if (connect_only) ::_exit(rc < 0 && errno == ECONNREFUSED ? 0 : 3);
    if (rc < 0) ::_exit(4);
    (void)!::write(report, "c", 1);
    if (::write(s, "ping", 4) != 4) ::_exit(5);
    char buf[16];
    if (!readable(s, 5000) || ::read(s, buf, sizeof buf) != 4 || std::memcmp(buf, "pong", 4) != 0)
        ::_exit(6);
    (void)!::write(report, "p", 1);
    if (!readable(s, 10000) || ::read(s, buf, sizeof buf) > 0) ::_exit(7);
    (void)!::write(report, "e", 1);
    ::_exit(0);
}

char next_step(int report) {
    char c = 0;
    if (!readable(report, 10000) || ::read(report, &c, 1) != 1) return 0;
    return c;
}

} // namespace

Test(crash, helper_killed_while_relaying_costs_the_forward_not_the_host) {
    Crash c = make_crash("crash-shim");
    int host = test::listen_on("127.0.0.1", 0, 8);
    with_helper(c, "8080:" + std::to_string(test::port_of(host)));
    std::string id = create_started(c, "h");
    long init = test::state_of(c.e.root, id).pid;
    std::string state = read_file(c.e.root + "/" + id + "/state.json");
    auto at = state.find("\"shimPid\":");
    cr_assert(at != std::string::npos, "no shimPid in %s", state.c_str());
    long shim = std::strtol(state.c_str() + at + 10, nullptr, 10);
    cr_assert_gt(shim, 0);

    int p[2];
    cr_assert(::pipe2(p, O_CLOEXEC) == 0);
    pid_t talker = in_container_netns(init, 8080, p[1], false);
    ::close(p[1]);
    cr_assert_eq(next_step(p[0]), 'c', "no connection through the forward");
    cr_assert(readable(host, 5000), "the helper did not connect to the host port");
    int conn = ::accept4(host, nullptr, nullptr, SOCK_CLOEXEC);
    cr_assert(conn >= 0);
    char buf[16];
    cr_assert(readable(conn, 5000) && ::read(conn, buf, sizeof buf) == 4);
    cr_assert(::write(conn, "pong", 4) == 4);
    cr_assert_eq(next_step(p[0]), 'p', "the relay did not carry the answer");

    // The helper is oci-run's child, recorded in the state: ours to kill.
    cr_assert_eq(::kill(static_cast<pid_t>(shim), SIGKILL), 0);
    cr_assert_eq(next_step(p[0]), 'e', "the container's end did not see the relay end");
    cr_assert(readable(conn, 5000) && ::read(conn, buf, sizeof buf) <= 0,
              "the host's end did not see the relay end");
    int status = 0;
    cr_assert_eq(::waitpid(talker, &status, 0), talker);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "talker: %d", status);
    ::close(conn);
    ::close(p[0]);

    // The forward is gone with its listener (closed once the helper has
    // fully exited); the container is not.
    cr_assert(test::pid_gone(shim, 5000), "the helper %ld did not exit", shim);
    pid_t refused = in_container_netns(init, 8080, -1, true);
    cr_assert_eq(::waitpid(refused, &status, 0), refused);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "connect after the helper: %d",
              status);
    std::string status_now = test::state_of(c.e.root, id).status;
    cr_assert_str_eq(status_now.c_str(), "running");
    ::close(host);

    cr_assert_eq(test::oci({"--root", c.e.root, "delete", "--force", id}).status, 0);
    assert_nothing_left(c, id, "helper killed");
}
