// A container that exhausts what it was given: processes (a fork bomb under a
// pids limit), a size-limited tmpfs, file descriptors (RLIMIT_NOFILE), memory
// (OOM kill at the memory limit) and egress proxy connections (past
// dev.ocirun.proxy-max-connections). Each time the limit holds inside, the
// runtime reports it (events, stats, report, the egress log), the host and a
// second running container keep working, and `delete` leaves nothing: no
// state directory, cgroup (every hierarchy, under this test's own parent),
// process or mount.
#include "support/container_env.hpp"
#include "support/leftovers.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::oci;
using test::read_file;
using test::serve;
using test::Server;
using test::state_of;

namespace {

using test::Clock;
using test::seconds_since;

std::string parent() {
    return test::cgroup_parent("exhaust");
}

// A container whose cgroup is under this test's parent, `edit`ed, saved.
Env make(const char *tag, const std::vector<std::string> &args,
         const std::function<void(Env &)> &edit = {}) {
    Env e = test::make_env(tag, args);
    e.b.spec.linux_->cgroups_path = parent() + "/" + e.id;
    if (edit) edit(e);
    e.b.save();
    return e;
}

void create_and_start(const Env &e) {
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create %s: %s", e.id.c_str(), c.err.c_str());
    auto s = oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start %s: %s", e.id.c_str(), s.err.c_str());
}

// The second container that must not notice the first one's exhaustion.
Env witness() {
    Env w = make("exwit", {"sleep", "120"});
    create_and_start(w);
    return w;
}

// "" when the witness still runs and takes an exec, and the host still forks
// and writes a file; else what failed.
std::string others_unharmed(const Env &w) {
    std::string out;
    auto st = state_of(w.root, w.id);
    if (st.status != "running") out += "witness is " + st.status + "; ";
    auto x = oci({"--root", w.root, "exec", w.id, "sh", "-c", "echo alive"});
    if (x.status != 0 || x.out != "alive\n") out += "witness exec: " + x.out + x.err + "; ";
    auto h = test::run({"sh", "-c", "head -c 1048576 /dev/zero > \"$0\" && wc -c < \"$0\"",
                        w.root + "/host-probe"});
    if (h.out != "1048576\n") out += "host: " + h.out + h.err + "; ";
    return out;
}

ocirun::oci::Resources &resources(Env &e) {
    auto &lx = *e.b.spec.linux_;
    return lx.resources ? *lx.resources : lx.resources.emplace();
}

// The container's cgroup directory in the hierarchy whose path contains
// `controller` ("/pids", "/memory").
std::string dir_with(const Env &e, const char *controller) {
    for (const auto &d : test::cgroup_dirs(parent(), e.id))
        if (contains(d, std::string("/") + controller + "/") ||
            contains(d, std::string(",") + controller + "/") ||
            contains(d, std::string("/") + controller + ","))
            return d;
    return {};
}

// `delete` (forced when asked), then "" when nothing of the container is
// left, else what is.
std::string delete_leaves_nothing(const Env &e, bool force, const std::string &marker = "") {
    auto t0 = Clock::now();
    std::vector<std::string> args{"--root", e.root, "delete"};
    if (force) args.push_back("--force");
    args.push_back(e.id);
    auto d = test::oci_files(args, -1, 20000);
    std::string out;
    if (d.status != 0)
        out += "delete exited " + std::to_string(d.status) + " after " +
               std::to_string(seconds_since(t0)) + " s: " + d.err + "; ";
    if (test::exists(e.root + "/" + e.id)) out += "state directory left; ";
    for (const auto &dir : test::cgroup_dirs(parent(), e.id))
        if (test::exists(dir)) out += "cgroup " + dir + " left; ";
    if (!marker.empty() && !test::processes_with(marker).empty()) out += "processes left; ";
    if (!test::mounts_naming(e.b.dir).empty()) out += "a mount of the bundle left; ";
    return out;
}

void finish() {
    cleanup_all();
    test::remove_cgroup_parent(parent());
}

void report_time(const char *test, Clock::time_point t0) {
    std::fprintf(stderr, "exhaustion: %s %.1f s\n", test, seconds_since(t0));
}

} // namespace

TestSuite(exhaustion, .fini = finish, .timeout = 90);

// A fork bomb under pids.limit 48 (and half a CPU, so the host keeps one and
// a half): the number of tasks never passes the limit, the kernel counts the
// refused forks, `events --stats` and `report` show the limit, and delete
// --force ends it however fast it forks.
Test(exhaustion, fork_bomb_is_held_at_the_pids_limit) {
    auto t0 = Clock::now();
    std::string marker = "ocirun-bomb-" + std::to_string(::getpid());
    Env w = witness();
    // awk, the init, never stops seeding the classic bomb: a failed fork is
    // -1 from system() for it, where a shell would give up.
    Env e = make(
        "exbomb",
        {"awk", "BEGIN { while (1) system(\"b() { b | b & }; b 2>/dev/null; : " + marker + "\") }"},
        [](Env &x) {
            resources(x).pids.emplace().limit = 48;
            auto &cpu = resources(x).cpu.emplace();
            cpu.quota = 50000;
            cpu.period = 100000;
        });
    create_and_start(e);
    std::string pids = dir_with(e, "pids");
    cr_assert(!pids.empty(), "no pids cgroup under %s", parent().c_str());
    long peak = 0;
    for (int i = 0; i < 150; i++) {
        long cur = std::atol(read_file(pids + "/pids.current").c_str());
        peak = std::max(peak, cur);
        ::usleep(10000);
    }
    std::string events = read_file(pids + "/pids.events");
    std::string kernel_peak = read_file(pids + "/pids.peak"); // newer kernels only
    auto stats = oci({"--root", e.root, "events", "--stats", e.id});
    auto rep = oci({"--root", e.root, "report", "--format", "json", e.id});
    std::string harmed = others_unharmed(w);
    std::string left = delete_leaves_nothing(e, true, marker);
    finish();
    report_time("fork bomb", t0);
    cr_assert(peak <= 48 && peak >= 40, "peak pids.current %ld under a limit of 48", peak);
    cr_assert(kernel_peak.empty() || kernel_peak == "48\n", "pids.peak %s", kernel_peak.c_str());
    cr_assert(contains(events, "max ") && !contains(events, "max 0\n"), "pids.events: %s",
              events.c_str());
    cr_assert_eq(stats.status, 0, "%s", stats.err.c_str());
    cr_assert(contains(stats.out, "\"limit\":48}"), "%s", stats.out.c_str());
    const std::string key = "\"pids\":{\"current\":";
    size_t at = stats.out.find(key);
    cr_assert(at != std::string::npos, "%s", stats.out.c_str());
    long current = std::atol(stats.out.c_str() + at + key.size());
    cr_assert(current >= 40 && current <= 48, "stats pids.current %ld: the bomb stopped", current);
    cr_assert(contains(rep.out, "{\"dimension\":\"pids limit\",\"state\":\"enforced\""), "%s",
              rep.out.c_str());
    cr_assert(harmed.empty(), "%s", harmed.c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// A 1 MiB tmpfs filled from inside: ENOSPC there, the pages charged to the
// container's memory cgroup (stats), nothing written on the host's disk.
Test(exhaustion, filling_a_size_limited_tmpfs) {
    auto t0 = Clock::now();
    Env w = witness();
    Env e = make("extmp",
                 {"sh", "-c",
                  "dd if=/dev/zero of=/tmp/fill bs=64k count=64 2>&1; echo dd=$?; "
                  "echo more > /tmp/more; echo more=$?; du -k /tmp/fill; sleep 600"},
                 [](Env &x) {
                     x.b.spec.mounts.push_back(test::mount_entry(
                         "/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "size=1m", "mode=1777"}));
                 });
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(oci({"--root", e.root, "start", e.id}).status, 0);
    std::string out;
    for (int i = 0; i < 500 && !contains(out, "/tmp/fill\n"); i++) {
        ::usleep(10000);
        out = read_file(c.out_path);
    }
    auto stats = oci({"--root", e.root, "events", "--stats", e.id});
    bool on_host = test::exists(e.b.rootfs + "/tmp/fill");
    std::string harmed = others_unharmed(w);
    std::string left = delete_leaves_nothing(e, true);
    finish();
    report_time("tmpfs", t0);
    cr_assert(contains(out, "No space left on device") && contains(out, "dd=1\n"), "%s",
              out.c_str());
    cr_assert(contains(out, "more=1\n"), "%s", out.c_str());
    cr_assert(contains(out, "1024\t/tmp/fill\n") || contains(out, "1020\t/tmp/fill\n"), "%s",
              out.c_str());
    cr_assert(!on_host, "the tmpfs file is on the host's disk");
    const std::string key = "\"shmem\":";
    size_t at = stats.out.find(key);
    cr_assert(at != std::string::npos, "%s", stats.out.c_str());
    long shmem = std::atol(stats.out.c_str() + at + key.size());
    cr_assert(shmem >= 1000 * 1024, "shmem %ld in the memory stats", shmem);
    cr_assert(harmed.empty(), "%s", harmed.c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// RLIMIT_NOFILE 200 (process.rlimits): a process opening 300 files gets
// EMFILE past the limit and keeps what it has; the container still takes an
// exec (a new process, its own table), and `report` measures the limit.
Test(exhaustion, opening_files_up_to_rlimit_nofile) {
    auto t0 = Clock::now();
    Env w = witness();
    Env e = make("exfd",
                 {"sh", "-c",
                  "set --; for i in $(seq 300); do set -- \"$@\" /dev/null; done; "
                  "echo limit=$(ulimit -n); "
                  "tail -n0 \"$@\" 2>&1 >/dev/null | sort | uniq -c; echo counted; "
                  "exec tail -f \"$@\" >/dev/null 2>&1"},
                 [](Env &x) {
                     auto &rl = x.b.spec.process->rlimits;
                     std::erase_if(rl, [](const auto &r) { return r.type == "RLIMIT_NOFILE"; });
                     ocirun::oci::Rlimit r;
                     r.type = "RLIMIT_NOFILE";
                     r.resource = RLIMIT_NOFILE;
                     r.soft = r.hard = 200;
                     rl.push_back(r);
                 });
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(oci({"--root", e.root, "start", e.id}).status, 0);
    std::string out;
    for (int i = 0; i < 500 && !contains(out, "counted\n"); i++) {
        ::usleep(10000);
        out = read_file(c.out_path);
    }
    // The init (now tail -f) holds every descriptor it may have.
    long init = state_of(e.root, e.id).pid;
    size_t open_fds = 0;
    for (int i = 0; i < 200 && open_fds < 200; i++) {
        open_fds = test::dir_entries("/proc/" + std::to_string(init) + "/fd").size();
        ::usleep(10000);
    }
    auto x = oci({"--root", e.root, "exec", e.id, "sh", "-c", "ls /proc/1/fd | wc -l"});
    auto rep = oci({"--root", e.root, "report", "--format", "json", e.id});
    std::string harmed = others_unharmed(w);
    auto refused = oci({"--root", e.root, "delete", e.id}); // it still runs
    std::string left = delete_leaves_nothing(e, true);
    finish();
    report_time("fds", t0);
    cr_assert(contains(out, "limit=200\n"), "%s", out.c_str());
    // 0, 1 and 2 are taken: 197 opened, the other 103 refused.
    cr_assert(contains(out, "103 tail: can't open '/dev/null': Too many open files\n"), "%s",
              out.c_str());
    cr_assert_eq(open_fds, 200u);
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "200\n");
    cr_assert(contains(rep.out, "{\"dimension\":\"rlimit RLIMIT_NOFILE\",\"state\":\"enforced\""),
              "%s", rep.out.c_str());
    cr_assert(harmed.empty(), "%s", harmed.c_str());
    cr_assert_eq(refused.status, 1);
    cr_assert(contains(refused.err, "stop it first or use --force"), "%s", refused.err.c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// A process eating memory under memory.limit 32 MiB (swap included): the
// kernel OOM-kills it, `events` (already streaming) reports the oom, `run`
// exits 137 as runc's does for a SIGKILLed init, and the container is
// stopped, to be deleted cleanly.
Test(exhaustion, eating_memory_to_the_limit) {
    auto t0 = Clock::now();
    Env w = witness();
    std::string gate = test::track_dir(test::make_temp_dir("gate"));
    Env e = make(
        "exoom",
        {"sh", "-c",
         "while [ ! -e /run/go ]; do sleep 0.02; done; "
         "exec awk 'BEGIN { s = \"x\"; while (1) s = s s }'"},
        [&](Env &x) {
            auto &m = resources(x).memory.emplace();
            m.limit = 32 << 20;
            m.swap = 32 << 20;
            x.b.spec.mounts.push_back(test::mount_entry("/run", "bind", gate, {"rbind", "ro"}));
        });
    test::Spawned run =
        test::spawn_oci({"--root", e.root, "run", "--keep", "--bundle", e.b.dir, e.id});
    std::string st = test::wait_status(e.root, e.id, "running", 10000);
    cr_assert_str_eq(st.c_str(), "running");
    test::Spawned ev = test::spawn_oci({"--root", e.root, "events", "--interval", "1s", e.id});
    // Its first stats event comes once it has read the kill count it starts from.
    (void)test::read_output(ev.out_path, "\"stats\"");
    test::write_file(gate + "/go", "");
    int status = test::wait_bounded(run.pid, 30000);
    int evs = test::wait_bounded(ev.pid, 5000);
    std::string events = read_file(ev.out_path);
    std::string after = state_of(e.root, e.id).status;
    std::string oom_control = read_file(dir_with(e, "memory") + "/memory.oom_control");
    std::string harmed = others_unharmed(w);
    std::string left = delete_leaves_nothing(e, false);
    finish();
    report_time("memory", t0);
    cr_assert_eq(status, 137, "run exited %d: %s", status, read_file(run.err_path).c_str());
    cr_assert_eq(evs, 0, "events: %s", read_file(ev.err_path).c_str());
    cr_assert(contains(events, "{\"type\":\"oom\",\"id\":\"" + e.id + "\"}"), "%s", events.c_str());
    cr_assert(contains(events, "{\"type\":\"stats\",\"id\":\"" + e.id + "\""), "%s",
              events.c_str());
    cr_assert_str_eq(after.c_str(), "stopped");
    cr_assert(oom_control.empty() ||
                  (contains(oom_control, "oom_kill ") && !contains(oom_control, "oom_kill 0\n")),
              "memory.oom_control: %s", oom_control.c_str());
    cr_assert(harmed.empty(), "%s", harmed.c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// ---- the egress proxy ------------------------------------------------------

namespace {

// What a tunnel's answer ends with: the request's last byte is the payload
// the test server echoes after "A:".
std::string tunnel_end(const std::string &request) {
    return "\r\n\r\nA:" + request.substr(request.size() - 1);
}

// Answers starting with `prefix`.
int count_starting(const std::vector<std::string> &answers, const char *prefix) {
    int n = 0;
    for (const auto &a : answers)
        n += a.rfind(prefix, 0) == 0;
    return n;
}

int count_lines_with(const std::string &text, const std::string &needle) {
    int n = 0;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        n += contains(line, needle);
    return n;
}

long shim_pid(const Env &e) {
    std::string rec = read_file(e.root + "/" + e.id + "/state.json");
    size_t at = rec.find("\"shimPid\":");
    cr_assert(at != std::string::npos, "no shimPid in %s", rec.c_str());
    return std::atol(rec.c_str() + at + 10);
}

} // namespace

// proxy-max-connections 8 and 40 connections at once: 8 tunnels, 32 answered
// 503 and logged (the log streamed by `events` too), the helper alive; once
// they close, all 8 places are free again (the count did not leak) and the
// ninth is still refused.
Test(exhaustion, proxy_connections_past_the_maximum) {
    auto t0 = Clock::now();
    const char *shim = std::getenv("OCI_RUN_SHIM");
    cr_assert(shim && ::access(shim, X_OK) == 0, "OCI_RUN_SHIM must name the built oci-run-shim");
    Server a;
    serve(a, "127.0.0.2", "A:", 256);
    std::string authority = "a.test:" + std::to_string(a.port);
    Env w = witness();
    Env e = make("exproxy", {"sleep", "120"}, [&](Env &x) {
        x.b.spec.annotations["dev.ocirun.domains"] =
            authority + ",127.0.0.2:" + std::to_string(a.port);
        x.b.spec.annotations["dev.ocirun.proxy-max-connections"] = "8";
    });
    std::string hosts = e.root + "/hosts";
    test::write_file(hosts, "127.0.0.2 a.test\n");
    ::setenv("OCI_RUN_RESOLVE_HOSTS", hosts.c_str(), 1);
    create_and_start(e);
    long init = state_of(e.root, e.id).pid;
    long helper = shim_pid(e);
    test::Spawned ev = test::spawn_oci({"--root", e.root, "events", "--interval", "60s", e.id});
    std::string req = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\nx";
    std::vector<std::string> first, second;
    int tunnels = 0, refusals = 0; // what the clients were answered, all rounds
    bool alive_while_full = false;
    std::string harmed;
    {
        test::Held h;
        test::hold(h, init, 3128, 40, req, tunnel_end(req));
        first = h.answers;
        tunnels += count_starting(first, "HTTP/1.1 200");
        refusals += count_starting(first, "HTTP/1.1 503");
        alive_while_full = !test::pid_gone_now(helper);
        harmed = others_unharmed(w);
    }
    // The closes reach the helper's loop a moment later.
    for (int i = 0; i < 50; i++) {
        test::Held h;
        test::hold(h, init, 3128, 9, req, tunnel_end(req));
        second = h.answers;
        tunnels += count_starting(second, "HTTP/1.1 200");
        refusals += count_starting(second, "HTTP/1.1 503");
        if (count_starting(second, "HTTP/1.1 200") == 8) break;
        ::usleep(100000);
    }
    // Each tunnel's close event is written when the helper sees it close.
    std::string log;
    for (int i = 0; i < 300; i++) {
        log = read_file(e.root + "/" + e.id + "/egress.jsonl");
        if (count_lines_with(log, "\"event\":\"close\"") >= tunnels) break;
        ::usleep(10000);
    }
    oci({"--root", e.root, "kill", e.id, "KILL"});
    int evs = test::wait_bounded(ev.pid, 5000);
    std::string events = read_file(ev.out_path);
    bool helper_gone = test::pid_gone(helper, 5000);
    std::string left = delete_leaves_nothing(e, false);
    finish();
    report_time("proxy", t0);
    cr_assert_eq(first.size(), 40u);
    cr_assert_eq(count_starting(first, "HTTP/1.1 200"), 8, "%s", first[0].c_str());
    for (const auto &ans : first)
        if (ans.rfind("HTTP/1.1 200", 0) == 0)
            cr_assert(contains(ans, "\r\n\r\nA:x"), "a tunnel did not reach the server: %s",
                      ans.c_str());
    cr_assert_eq(count_starting(first, "HTTP/1.1 503"), 32, "%s", first.back().c_str());
    cr_assert(contains(first.back(), "more than 8 connections at once"), "%s",
              first.back().c_str());
    cr_assert(alive_while_full, "the helper died with its connections full");
    cr_assert(harmed.empty(), "%s", harmed.c_str());
    cr_assert_eq(second.size(), 9u);
    cr_assert_eq(count_starting(second, "HTTP/1.1 200"), 8, "after the close: %s",
                 second.empty() ? "" : second[0].c_str());
    cr_assert_eq(count_starting(second, "HTTP/1.1 503"), 1);
    // Every refusal is counted in an egress event (the first of a run at
    // once, the rest in one event with "count" when the run ends), every
    // closed tunnel is an event, in the log and in the `events` stream.
    cr_assert_eq(test::refusals_in(log, "proxy-max-connections"), refusals);
    cr_assert_eq(count_lines_with(log, "\"event\":\"close\""), tunnels);
    cr_assert_eq(evs, 0, "events: %s", read_file(ev.err_path).c_str());
    cr_assert_eq(test::refusals_in(events, "proxy-max-connections"), refusals);
    cr_assert(helper_gone, "the helper outlived the container");
    cr_assert(left.empty(), "%s", left.c_str());
}

namespace {

// A proxied container whose `create` runs under `prlimit --nofile=NOFILE`
// (the helper inherits that limit), with `max` connections allowed; its
// init's PID. `rlimit` > 0 also sets the container's own RLIMIT_NOFILE
// (the init may not raise its hard limit past the runtime's).
long proxied_under(Env &e, const Server &a, const char *nofile, const char *max, int rlimit) {
    std::string authority = "a.test:" + std::to_string(a.port);
    e.b.spec.annotations["dev.ocirun.domains"] = authority + ",127.0.0.2:" + std::to_string(a.port);
    e.b.spec.annotations["dev.ocirun.proxy-max-connections"] = max;
    if (rlimit > 0)
        for (auto &r : e.b.spec.process->rlimits)
            if (r.type == "RLIMIT_NOFILE") r.soft = r.hard = static_cast<uint64_t>(rlimit);
    e.b.save();
    std::string hosts = e.root + "/hosts";
    test::write_file(hosts, "127.0.0.2 a.test\n");
    ::setenv("OCI_RUN_RESOLVE_HOSTS", hosts.c_str(), 1);
    auto c = test::run_files({"prlimit", std::string("--nofile=") + nofile, test::oci_run_path(),
                              "--root", e.root, "create", "--bundle", e.b.dir, e.id});
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(oci({"--root", e.root, "start", e.id}).status, 0);
    return state_of(e.root, e.id).pid;
}

std::string connect_request(const Server &a) {
    std::string authority = "a.test:" + std::to_string(a.port);
    return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\nx";
}

} // namespace

// oci-run run from a login shell has a soft RLIMIT_NOFILE of 1024, which the
// helper inherits; each tunnel takes six descriptors. Here the soft limit is
// 128 (so 20 tunnels would exhaust it) under a hard one of 20000: all 60
// tunnels of the default maximum must work, as the helper takes its hard limit.
Test(exhaustion, proxy_tunnels_past_the_callers_soft_fd_limit) {
    auto t0 = Clock::now();
    Server a;
    serve(a, "127.0.0.2", "A:", 256);
    Env e = make("exsoft", {"sleep", "120"});
    long init = proxied_under(e, a, "128:20000", "256", 0);
    std::string limits = read_file("/proc/" + std::to_string(shim_pid(e)) + "/limits");
    std::vector<std::string> answers;
    {
        test::Held h;
        test::hold(h, init, 3128, 60, connect_request(a), tunnel_end(connect_request(a)));
        answers = h.answers;
    }
    std::string left = delete_leaves_nothing(e, true);
    finish();
    report_time("proxy past the soft fd limit", t0);
    cr_assert(contains(limits, "Max open files            20000                20000"), "%s",
              limits.c_str());
    int tunnels = 0;
    for (const auto &ans : answers)
        tunnels += ans.rfind("HTTP/1.1 200", 0) == 0 && contains(ans, "\r\n\r\nA:x");
    cr_assert_eq(tunnels, 60, "%d of 60 tunnels worked, e.g. %s", tunnels,
                 answers.empty() ? "" : answers.back().c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// With the helper truly out of descriptors (hard limit 64), a tunnel that
// gets no pipes ends, is logged as closed with the reason, and gives its
// place back: after 20 connections against a maximum of 12, the next 12 are
// all taken in, none refused for places that leaked.
Test(exhaustion, proxy_out_of_descriptors_gives_places_back) {
    auto t0 = Clock::now();
    Server a;
    serve(a, "127.0.0.2", "A:", 256);
    Env e = make("exhard", {"sleep", "120"});
    long init = proxied_under(e, a, "64:64", "12", 64);
    long helper = shim_pid(e);
    std::vector<std::string> first, second;
    {
        test::Held h;
        test::hold(h, init, 3128, 20, connect_request(a), tunnel_end(connect_request(a)));
        first = h.answers;
    }
    for (int i = 0; i < 50; i++) {
        test::Held h;
        test::hold(h, init, 3128, 12, connect_request(a), tunnel_end(connect_request(a)));
        second = h.answers;
        if (count_starting(second, "HTTP/1.1 503") == 0) break;
        ::usleep(100000);
    }
    bool alive = !test::pid_gone_now(helper);
    std::string log = read_file(e.root + "/" + e.id + "/egress.jsonl");
    std::string left = delete_leaves_nothing(e, true);
    finish();
    report_time("proxy out of descriptors", t0);
    cr_assert_eq(count_starting(first, "HTTP/1.1 503"), 8, "%s", first.back().c_str());
    cr_assert(contains(log, "no pipe for the relay (out of file descriptors)"),
              "the helper never ran out of descriptors: %s", log.c_str());
    cr_assert_eq(count_starting(second, "HTTP/1.1 503"), 0,
                 "places lost to relays that never started: %s", second.back().c_str());
    cr_assert(alive, "the helper died");
    cr_assert(left.empty(), "%s", left.c_str());
}
