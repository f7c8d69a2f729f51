// cgroups on this host (hybrid: v1 controllers plus the v2 "unified"
// hierarchy; pure v2 is exercised in a private mount namespace below): the
// container's cgroup in every hierarchy, resources read back from the files,
// limits observed, pause/resume, ps, update, events, and nothing left after
// delete. A test that needs a controller this host lacks is skipped with the
// reason.
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/cgroup_host.hpp"
#include "runtime/cgroups/device_filter.hpp"
#include "support/container_env.hpp"
#include "support/leftovers.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

ocirun::CgroupHost host() {
    auto h = ocirun::detect_cgroup_host();
    cr_assert(h.has_value(), "%s", h ? "" : h.error().text().c_str());
    return *h;
}

// The cgroup of `pid` in the hierarchy carrying `controller` ("" = v2), as a
// directory on this host; "" when there is none.
std::string cgroup_dir(long pid, const char *controller) {
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *hy = *controller ? h.for_controller(controller) : h.unified();
    if (!hy) return {};
    std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
        auto a = line.find(':'), b = line.find(':', a + 1);
        std::string ctrls = line.substr(a + 1, b - a - 1);
        // (A controller on the v2 hierarchy is in its one "0::" line.)
        bool match =
            *controller && hy->version == 1
                ? ("," + ctrls + ",").find(std::string(",") + controller + ",") != std::string::npos
                : ctrls.empty();
        if (match) return hy->dir_of(line.substr(b + 1));
    }
    return {};
}

std::string trimmed(const std::string &s) {
    std::string t = s;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.pop_back();
    return t;
}

void need(const char *controller) {
    if (!host().for_controller(controller))
        cr_skip_test("this host has no %s cgroup controller", controller);
}

// Every cgroup directory of the container's init, in every hierarchy.
std::vector<std::string> all_dirs(long pid) {
    std::vector<std::string> out;
    ocirun::CgroupHost h = host();
    std::istringstream in(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
        auto a = line.find(':'), b = line.find(':', a + 1);
        std::string ctrls = line.substr(a + 1, b - a - 1);
        for (const auto &hy : h.hierarchies) {
            bool match = ctrls.empty() ? hy.version == 2 : hy.version == 1 && [&] {
                std::string joined;
                for (const auto &c : hy.controllers)
                    joined += (joined.empty() ? "" : ",") + c;
                return joined == ctrls;
            }();
            if (match) out.push_back(hy.dir_of(line.substr(b + 1)));
        }
    }
    return out;
}

Env started(const char *tag, std::vector<std::string> args,
            const std::function<void(Env &)> &edit = {}) {
    Env e = make_env(tag, args);
    if (edit) edit(e);
    e.b.save();
    auto c = create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto s = oci({"--root", e.root, "start", e.id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    return e;
}

ocirun::oci::Resources &resources(Env &e) {
    auto &lx = *e.b.spec.linux_;
    return lx.resources ? *lx.resources : lx.resources.emplace();
}

} // namespace

TestSuite(cgroups, .fini = cleanup_all, .timeout = 60);

// The init is in the container's cgroup in every hierarchy but a v1 one of
// cpuset alone, where a container that sets no cpus or mems stays in the
// caller's cgroup (runtime/cgroups/cgroup.hpp v1_cpuset_only); delete removes them.
Test(cgroups, init_is_in_its_cgroup_everywhere_and_delete_removes_it) {
    Env e = started("cgplace", {"sh", "-c", "cat /proc/self/cgroup; sleep 30"});
    long pid = state_of(e.root, e.id).pid;
    std::vector<std::string> dirs = all_dirs(pid);
    ocirun::CgroupHost h = host();
    std::string callers_cpuset, cpuset_of_init;
    const ocirun::Hierarchy *cs = h.for_controller("cpuset");
    bool idle_cpuset = cs && ocirun::v1_cpuset_only(*cs);
    if (idle_cpuset) {
        callers_cpuset = cgroup_dir(::getpid(), "cpuset");
        cpuset_of_init = cgroup_dir(pid, "cpuset");
    }
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    std::string left;
    for (const auto &dir : dirs)
        if (dir != cpuset_of_init && test::exists(dir)) left += dir + " ";
    cleanup_all();
    cr_assert_eq(dirs.size(), h.hierarchies.size(), "in %zu of %zu hierarchies", dirs.size(),
                 h.hierarchies.size());
    for (const auto &dir : dirs) {
        if (idle_cpuset && dir == cpuset_of_init) continue;
        cr_assert(dir.size() > e.id.size() + 9 &&
                      dir.substr(dir.size() - e.id.size() - 9) == "/oci-run/" + e.id,
                  "init in %s", dir.c_str());
    }
    cr_assert_str_eq(cpuset_of_init.c_str(), callers_cpuset.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left behind: %s", left.c_str());
}

// --cgroup-manager (crun's global option, which Podman passes with
// --cgroups disabled): disabled makes no cgroup (the init stays in the
// caller's in every hierarchy); a limit it would not hold is refused with
// one line, nothing left, and so is a rule on files (as root the container
// could open, or make, a disk's node) (bad values: test_bad_cli.cpp).
Test(cgroups, cgroup_manager_disabled_makes_no_cgroup) {
    Env e = make_env("cgoff", {"sleep", "30"});
    e.b.save();
    auto c = test::oci_files(
        {"--root", e.root, "--cgroup-manager", "disabled", "create", "--bundle", e.b.dir, e.id});
    long pid = state_of(e.root, e.id).pid;
    std::vector<std::string> init_dirs = pid > 0 ? all_dirs(pid) : std::vector<std::string>{};
    std::vector<std::string> ours = all_dirs(::getpid());
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    resources(e).pids.emplace().limit = 10;
    e.b.save();
    auto limited =
        oci({"--root", e.root, "--cgroup-manager", "disabled", "run", "--bundle", e.b.dir, e.id});
    // Without a devices cgroup the host's disks are open: rules on files
    // are not enforced (strict refuses).
    resources(e).pids.reset();
    e.b.spec.annotations["dev.ocirun.deny"] = "/etc/passwd";
    e.b.save();
    auto ruled =
        oci({"--root", e.root, "--cgroup-manager", "disabled", "run", "--bundle", e.b.dir, e.id});
    auto left = test::dir_entries(e.root);
    // In report mode it runs, and report says so.
    e.b.spec.annotations["dev.ocirun.enforcement"] = "report";
    e.b.save();
    auto rc = test::oci_files(
        {"--root", e.root, "--cgroup-manager", "disabled", "create", "--bundle", e.b.dir, e.id});
    auto rep = oci({"--root", e.root, "report", "--format", "json", e.id});
    oci({"--root", e.root, "delete", "--force", e.id});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(!init_dirs.empty() && init_dirs == ours, "the init has a cgroup of its own");
    const std::string why = "the filesystem rules need the host's disks closed: the container "
                            "has no devices cgroup (--cgroup-manager disabled), so every device, "
                            "the host's disks among them, opens";
    cr_assert_eq(ruled.status, 1, "%s", ruled.err.c_str());
    cr_assert(contains(ruled.err, "(dev.ocirun.enforcement=strict): cannot enforce: " + why), "%s",
              ruled.err.c_str());
    cr_assert_eq(test::count_lines(ruled.err), 1, "%s", ruled.err.c_str());
    cr_assert_eq(rc.status, 0, "create: %s", rc.err.c_str());
    cr_assert(contains(rep.out, "{\"dimension\":\"deny /etc/passwd\",\"state\":\"degraded\"") &&
                  contains(rep.out, why),
              "%s", rep.out.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert_eq(limited.status, 1);
    cr_assert_str_eq(limited.err.c_str(), "oci-run: run: config.json: linux.resources.pids: "
                                          "--cgroup-manager disabled: no cgroup would hold it\n");
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

// update --cpuset-cpus on a container without a cpuset cgroup of its own
// (above) makes one and moves every process of the container into it, a
// child of the init included; exec joins it after; delete removes it.
Test(cgroups, update_cpuset_adds_the_cpuset_cgroup) {
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *cs = h.for_controller("cpuset");
    if (!cs || !ocirun::v1_cpuset_only(*cs))
        cr_skip_test("no v1 hierarchy of cpuset alone on this host");
    Env e = started("cgcpuset", {"sh", "-c", "sleep 30 & wait"});
    long pid = state_of(e.root, e.id).pid;
    std::string before = cgroup_dir(pid, "cpuset");
    auto u = oci({"--root", e.root, "update", "--cpuset-cpus", "0", e.id});
    std::string procs_file = cgroup_dir(pid, "cpuset") + "/cgroup.procs";
    std::string procs = read_file(procs_file);
    std::string cpus = trimmed(read_file(cgroup_dir(pid, "cpuset") + "/cpuset.cpus"));
    std::string pids_dir = cgroup_dir(pid, "pids");
    std::string members = pids_dir.empty() ? "" : read_file(pids_dir + "/cgroup.procs");
    std::string pid_file = e.root + "/x.pid";
    auto x = test::oci_files(
        {"--root", e.root, "exec", "--detach", "--pid-file", pid_file, e.id, "sleep", "30"});
    long xpid = std::strtol(read_file(pid_file).c_str(), nullptr, 10);
    std::string exec_in = xpid > 0 ? cgroup_dir(xpid, "cpuset") : "";
    std::string dir = cgroup_dir(pid, "cpuset");
    auto again = oci({"--root", e.root, "update", "--cpuset-cpus", "0", e.id});
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool left = test::exists(dir);
    cleanup_all();
    cr_assert_eq(u.status, 0, "update: %s", u.err.c_str());
    cr_assert_str_neq(before.c_str(), dir.c_str(), "the init did not move");
    cr_assert(dir.size() > e.id.size() + 9 &&
                  dir.substr(dir.size() - e.id.size() - 9) == "/oci-run/" + e.id,
              "cpuset cgroup %s", dir.c_str());
    cr_assert_str_eq(cpus.c_str(), "0");
    cr_assert(!members.empty());
    cr_assert_str_eq(procs.c_str(), members.c_str(), "cpuset has [%s], the container [%s]",
                     procs.c_str(), members.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_str_eq(exec_in.c_str(), dir.c_str(), "the exec'd process is in %s", exec_in.c_str());
    cr_assert_eq(again.status, 0, "second update: %s", again.err.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(!left, "%s left after delete", dir.c_str());
}

// exec from a caller in another cpuset cgroup: the exec'd process joins the
// init's (the create caller's), as it joins the container's cgroups elsewhere.
Test(cgroups, exec_joins_the_inits_cpuset_cgroup) {
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *cs = h.for_controller("cpuset");
    if (!cs || !ocirun::v1_cpuset_only(*cs))
        cr_skip_test("no v1 hierarchy of cpuset alone on this host");
    Env e = started("cgexcs", {"sleep", "30"});
    long init = state_of(e.root, e.id).pid;
    std::string init_cpuset = cgroup_dir(init, "cpuset");
    // Another cpuset cgroup for the caller of exec, beside ours.
    std::string other =
        cgroup_dir(::getpid(), "cpuset") + "/oci-run-test-" + std::to_string(::getpid()) + "-exec";
    ::mkdir(other.c_str(), 0755);
    std::string parent = other.substr(0, other.rfind('/'));
    for (const char *f : {"/cpuset.cpus", "/cpuset.mems"})
        test::write_file(other + f, read_file(parent + f));
    std::string pid_file = e.root + "/x.pid", err_file = e.root + "/x.err";
    // The detached process keeps the stdio it is given: /dev/null, so that
    // the shell's output pipes close when oci-run exits.
    auto x = test::run(std::vector<std::string>{
        "sh", "-c",
        "echo $$ > " + other + "/cgroup.procs && exec " + test::oci_run_path() + " --root " +
            e.root + " exec --detach --pid-file " + pid_file + " " + e.id +
            " sleep 30 </dev/null >/dev/null 2>" + err_file});
    long xpid = std::strtol(read_file(pid_file).c_str(), nullptr, 10);
    std::string exec_in = xpid > 0 ? cgroup_dir(xpid, "cpuset") : "";
    std::string exec_err = read_file(err_file);
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool removed = ::rmdir(other.c_str()) == 0;
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", exec_err.c_str());
    cr_assert_str_neq(init_cpuset.c_str(), other.c_str());
    cr_assert_str_eq(exec_in.c_str(), init_cpuset.c_str(), "the exec'd process is in %s",
                     exec_in.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(removed, "%s: %s", other.c_str(), std::strerror(errno));
}

// CAP_SYS_ADMIN without a user namespace: the container could mount the
// cpuset hierarchy, so it gets a cpuset cgroup of its own (the root of its
// cgroup namespace there) even with no cpus or mems set.
Test(cgroups, admin_container_gets_its_own_cpuset_cgroup) {
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *cs = h.for_controller("cpuset");
    if (!cs || !ocirun::v1_cpuset_only(*cs))
        cr_skip_test("no v1 hierarchy of cpuset alone on this host");
    Env e = started("cgadmin", {"sleep", "30"},
                    [](Env &x) { test::add_capabilities(x, {"CAP_SYS_ADMIN"}); });
    long pid = state_of(e.root, e.id).pid;
    std::string dir = cgroup_dir(pid, "cpuset");
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool left = test::exists(dir);
    cleanup_all();
    cr_assert(dir.size() > e.id.size() + 9 &&
                  dir.substr(dir.size() - e.id.size() - 9) == "/oci-run/" + e.id,
              "init in %s", dir.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(!left, "%s left after delete", dir.c_str());
}

// With a cgroup namespace the container sees its own cgroup as the root.
Test(cgroups, cgroup_namespace_root_is_the_containers_cgroup) {
    auto o = [] {
        Env e = make_env("cgns", {"cat", "/proc/self/cgroup"});
        // `oci-run spec` asks for one only on pure v2 hosts (as runc).
        auto &ns = e.b.spec.linux_->namespaces;
        if (!e.b.spec.linux_->find_namespace(ocirun::oci::NsType::cgroup))
            ns.push_back({ocirun::oci::NsType::cgroup, {}});
        return test::run(e);
    }();
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    std::istringstream in(o.out);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
        lines++;
        cr_assert(line.size() >= 2 && line.substr(line.size() - 2) == ":/", "%s", o.out.c_str());
    }
    cr_assert_gt(lines, 0);
}

// runc spec adds a cgroup namespace only on a pure cgroup v2 host.
Test(cgroups, spec_asks_for_a_cgroup_namespace_only_on_pure_v2) {
    Env e = make_env("cgspec", {"true"});
    struct statfs fs;
    bool pure_v2 = ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
    bool has = e.b.spec.linux_->find_namespace(ocirun::oci::NsType::cgroup) != nullptr;
    cleanup_all();
    cr_assert_eq(has, pure_v2, "pure v2 %d, cgroup namespace in the spec %d", pure_v2, has);
}

Test(cgroups, resources_from_config_are_written) {
    need("pids");
    need("memory");
    need("cpu");
    Env e = started("cgres", {"sleep", "30"}, [](Env &x) {
        auto &r = resources(x);
        r.pids.emplace().limit = 99;
        auto &m = r.memory.emplace();
        m.limit = 64 << 20;
        m.reservation = 32 << 20;
        auto &c = r.cpu.emplace();
        c.shares = 512;
        c.quota = 20000;
        c.period = 100000;
        c.cpus = "0";
    });
    long pid = state_of(e.root, e.id).pid;
    std::string pids = cgroup_dir(pid, "pids"), mem = cgroup_dir(pid, "memory"),
                cpu = cgroup_dir(pid, "cpu"), cpuset = cgroup_dir(pid, "cpuset");
    bool v1 = host().for_controller("memory")->version == 1;
    std::string got =
        trimmed(read_file(pids + "/pids.max")) + " " +
        trimmed(read_file(mem + (v1 ? "/memory.limit_in_bytes" : "/memory.max"))) + " " +
        trimmed(read_file(mem + (v1 ? "/memory.soft_limit_in_bytes" : "/memory.low"))) + " " +
        trimmed(read_file(cpu + (v1 ? "/cpu.shares" : "/cpu.weight"))) + " " +
        trimmed(read_file(cpu + (v1 ? "/cpu.cfs_quota_us" : "/cpu.max"))) + " " +
        (cpuset.empty() ? "0" : trimmed(read_file(cpuset + "/cpuset.cpus")));
    cleanup_all();
    std::string want =
        v1 ? "99 67108864 33554432 512 20000 0" : "99 67108864 33554432 20 20000 100000 0";
    cr_assert_str_eq(got.c_str(), want.c_str());
}

// A fork bomb stops at pids.limit: 60 background sleeps under a limit of 32.
// A shell exits at its first refused fork, and the container with it (its
// init), so the forks run in a subshell: the sleeps it made outlive it, and
// the init keeps the container at the limit for two seconds of sampling.
Test(cgroups, fork_bomb_stops_at_pids_limit) {
    need("pids");
    Env e = make_env("cgbomb", {"sh", "-c",
                                "(for i in $(seq 60); do sleep 5 & done) 2>/dev/null; "
                                "sleep 2; echo survived"});
    resources(e).pids.emplace().limit = 32;
    e.b.save();
    auto c = create(e);
    long pid = state_of(e.root, e.id).pid;
    std::string dir = cgroup_dir(pid, "pids");
    auto s = oci({"--root", e.root, "start", e.id});
    // Up to 10 s (under ASan the shell may start its forks late), until the
    // count is at (or one short of) the limit.
    long peak = 0;
    for (int i = 0; i < 1000 && peak < 31; i++) {
        long cur = std::strtol(read_file(dir + "/pids.current").c_str(), nullptr, 10);
        if (cur > peak) peak = cur;
        usleep(10000);
    }
    // The kernel's figures once it has stopped (the sampler may end one fork
    // before the limit); the cgroup stays until delete.
    std::string st = wait_status(e.root, e.id, "stopped", 10000);
    std::string events = read_file(dir + "/pids.events");
    std::string kernel_peak = trimmed(read_file(dir + "/pids.peak")); // newer kernels only
    std::string out = read_file(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    // Sampled, so the limit itself may fall between samples; the kernel's
    // own peak (where it has one) and the refused forks say the rest.
    cr_assert(peak <= 32 && peak >= 16, "peak pids %ld", peak);
    if (!kernel_peak.empty()) cr_assert_str_eq(kernel_peak.c_str(), "32");
    cr_assert(contains(events, "max ") && !contains(events, "max 0"), "%s", events.c_str());
    cr_assert_str_eq(st.c_str(), "stopped", "the container did not exit by itself");
    cr_assert(contains(out, "survived"), "the init did not outlive the refused forks: %s",
              out.c_str());
}

// A created memory hog, limited to 32 MiB (and swap), and `events` streaming
// it: its first stats event comes once it has read the kill count it starts
// from.
struct OomHog {
    Env e;
    test::FileRun c;
    test::Spawned ev;
};

OomHog oom_hog(const char *name) {
    Env e = make_env(name, {"awk", "BEGIN { s = \"x\"; while (1) s = s s }"});
    auto &m = resources(e).memory.emplace();
    m.limit = 32 << 20;
    if (host().for_controller("memory")->version == 1 &&
        test::exists(std::string("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")))
        m.swap = 32 << 20;
    else if (host().for_controller("memory")->version == 2)
        m.swap = 32 << 20;
    e.b.save();
    auto c = create(e);
    test::Spawned ev = test::spawn_oci({"--root", e.root, "events", "--interval", "1s", e.id});
    (void)test::read_output(ev.out_path, "\"stats\"");
    return {std::move(e), std::move(c), ev};
}

// What every OOM test asserts, after cleanup: created, started, stopped by
// the kill, `events` ended by itself with the OOM in its output.
void assert_oom_reported(const OomHog &h, const test::Output &start, const std::string &status,
                         int events_status, const std::string &out) {
    cr_assert_eq(h.c.status, 0, "create: %s", h.c.err.c_str());
    cr_assert_eq(start.status, 0, "start: %s", start.err.c_str());
    cr_assert_str_eq(status.c_str(), "stopped");
    cr_assert_eq(events_status, 0, "events: %s", read_file(h.ev.err_path).c_str());
    cr_assert(contains(out, "{\"type\":\"oom\",\"id\":\"" + h.e.id + "\"}"), "%s", out.c_str());
}

// A memory hog is OOM-killed at its limit and `events` reports the OOM.
Test(cgroups, memory_hog_is_oom_killed_and_events_reports_it) {
    need("memory");
    OomHog h = oom_hog("cgoom");
    auto s = oci({"--root", h.e.root, "start", h.e.id});
    std::string st = wait_status(h.e.root, h.e.id, "stopped", 20000);
    int evs = test::wait_bounded(h.ev.pid, 5000);
    std::string out = read_file(h.ev.out_path);
    cleanup_all();
    assert_oom_reported(h, s, st, evs, out);
    cr_assert(contains(out, "{\"type\":\"stats\",\"id\":\"" + h.e.id + "\""), "%s", out.c_str());
}

// `events` asleep (stopped) through the OOM kill and the removal of the
// container's cgroups still reports the OOM once it runs again: on v1 the
// eventfd then holds the OOM's count and the removal's, as it does when a
// systemd scope's cgroup goes with its OOM-killed init before `events` got
// the CPU. (v2 tells by memory.events, which goes with the cgroup: there the
// OOM must be read before it goes.)
Test(cgroups, events_woken_after_the_cgroup_went_still_reports_the_oom) {
    need("memory");
    if (host().for_controller("memory")->version != 1)
        cr_skip_test("memory is a v2 controller on this host: no eventfd to hold the count");
    OomHog h = oom_hog("cgoomlate");
    cr_assert_eq(::kill(h.ev.pid, SIGSTOP), 0);
    auto s = oci({"--root", h.e.root, "start", h.e.id});
    std::string st = wait_status(h.e.root, h.e.id, "stopped", 20000);
    auto d = oci({"--root", h.e.root, "delete", h.e.id}); // its cgroups go
    ::kill(h.ev.pid, SIGCONT);
    int evs = test::wait_bounded(h.ev.pid, 5000);
    std::string out = read_file(h.ev.out_path);
    cleanup_all();
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    assert_oom_reported(h, s, st, evs, out);
}

Test(cgroups, pause_freezes_and_resume_thaws) {
    Env e =
        started("cgpause",
                {"sh", "-c", "i=0; while true; do i=$((i+1)); echo $i > /tmp/n; sleep 0.05; done"},
                [](Env &x) { x.b.spec.root->readonly = false; });
    usleep(300000);
    auto p = oci({"--root", e.root, "pause", e.id});
    std::string paused = state_of(e.root, e.id).status;
    std::string a = read_file(e.b.rootfs + "/tmp/n");
    usleep(400000);
    std::string b = read_file(e.b.rootfs + "/tmp/n");
    auto again = oci({"--root", e.root, "pause", e.id});
    auto r = oci({"--root", e.root, "resume", e.id});
    std::string running = state_of(e.root, e.id).status;
    usleep(400000);
    std::string c = read_file(e.b.rootfs + "/tmp/n");
    cleanup_all();
    cr_assert_eq(p.status, 0, "pause: %s", p.err.c_str());
    cr_assert_str_eq(paused.c_str(), "paused");
    cr_assert_str_eq(a.c_str(), b.c_str(), "the counter advanced while paused");
    cr_assert_eq(again.status, 1);
    cr_assert(contains(again.err, "is paused, not running"), "%s", again.err.c_str());
    cr_assert_eq(r.status, 0, "resume: %s", r.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_neq(std::strtol(c.c_str(), nullptr, 10), std::strtol(b.c_str(), nullptr, 10),
                  "the counter did not advance after resume");
}

Test(cgroups, delete_force_of_a_paused_container) {
    Env e = started("cgpdel", {"sleep", "30"});
    long pid = state_of(e.root, e.id).pid;
    std::vector<std::string> dirs = all_dirs(pid);
    std::erase_if(dirs, [&](const std::string &d) { return !contains(d, "/oci-run/" + e.id); });
    auto p = oci({"--root", e.root, "pause", e.id});
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = test::pid_gone(pid);
    std::string left;
    for (const auto &dir : dirs)
        if (test::exists(dir)) left += dir + " ";
    cleanup_all();
    cr_assert_eq(p.status, 0, "pause: %s", p.err.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(gone);
    cr_assert(left.empty(), "left %s", left.c_str());
}

// ps lists exactly the container's processes: every PID in its cgroup, each
// of them the container's.
Test(cgroups, ps_lists_the_containers_processes) {
    Env e = started("cgps", {"sh", "-c", "sleep 30 & sleep 31 & wait"});
    usleep(200000);
    long init = state_of(e.root, e.id).pid;
    auto js = oci({"--root", e.root, "ps", "--format", "json", e.id});
    auto table = oci({"--root", e.root, "ps", e.id});
    std::string procs = read_file(cgroup_dir(init, "pids") + "/cgroup.procs");
    cleanup_all();
    cr_assert_eq(js.status, 0, "%s", js.err.c_str());
    std::set<long> listed, in_cgroup;
    std::string digits;
    for (char ch : js.out + ",") {
        if (ch >= '0' && ch <= '9')
            digits += ch;
        else if (!digits.empty()) {
            listed.insert(std::stol(digits));
            digits.clear();
        }
    }
    std::istringstream in(procs);
    long v;
    while (in >> v)
        in_cgroup.insert(v);
    cr_assert_eq(listed.size(), 3u, "%s", js.out.c_str());
    cr_assert(listed == in_cgroup, "ps: %s cgroup: %s", js.out.c_str(), procs.c_str());
    cr_assert(listed.count(init));
    cr_assert_eq(table.status, 0, "%s", table.err.c_str());
    cr_assert(contains(table.out, "PID") && contains(table.out, "sleep 31"), "%s",
              table.out.c_str());
    cr_assert_eq(test::count_lines(table.out), 4u, "%s", table.out.c_str());
}

Test(cgroups, update_changes_the_limits) {
    need("pids");
    need("memory");
    Env e =
        started("cgupd", {"sleep", "30"}, [](Env &x) { resources(x).pids.emplace().limit = 10; });
    long pid = state_of(e.root, e.id).pid;
    auto u1 = oci({"--root", e.root, "update", "--pids-limit", "20", "--memory", "48m", e.id});
    std::string pids1 = trimmed(read_file(cgroup_dir(pid, "pids") + "/pids.max"));
    bool v1 = host().for_controller("memory")->version == 1;
    std::string mem1 = trimmed(
        read_file(cgroup_dir(pid, "memory") + (v1 ? "/memory.limit_in_bytes" : "/memory.max")));
    std::string file = e.root + "/res.json";
    test::write_file(file, "{\"pids\": {\"limit\": 30}}");
    auto u2 = oci({"--root", e.root, "update", "--resources", file, e.id});
    std::string pids2 = trimmed(read_file(cgroup_dir(pid, "pids") + "/pids.max"));
    auto bad = oci({"--root", e.root, "update", "--memory", "lots", e.id});
    cleanup_all();
    cr_assert_eq(u1.status, 0, "update: %s", u1.err.c_str());
    cr_assert_str_eq(pids1.c_str(), "20");
    cr_assert_str_eq(mem1.c_str(), "50331648");
    cr_assert_eq(u2.status, 0, "update -r: %s", u2.err.c_str());
    cr_assert_str_eq(pids2.c_str(), "30");
    cr_assert_eq(bad.status, 1);
    cr_assert(contains(bad.err, "--memory: expected bytes"), "%s", bad.err.c_str());
}

Test(cgroups, events_stats_reads_the_cgroup) {
    need("pids");
    Env e =
        started("cgstats", {"sleep", "30"}, [](Env &x) { resources(x).pids.emplace().limit = 40; });
    auto o = oci({"--root", e.root, "events", "--stats", e.id});
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "{\"type\":\"stats\",\"id\":\"" + e.id + "\",\"data\":{"), "%s",
              o.out.c_str());
    cr_assert(contains(o.out, "\"pids\":{\"current\":1,\"limit\":40}"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "\"cpu\":{\"usage\":{\"total\":"), "%s", o.out.c_str());
}

Test(cgroups, exec_joins_the_containers_cgroup) {
    Env e = started("cgexec", {"sleep", "30"});
    long init = state_of(e.root, e.id).pid;
    auto x = test::oci_files({"--root", e.root, "exec", "--detach", "--pid-file", e.root + "/x.pid",
                              e.id, "sleep", "30"});
    long pid = std::strtol(read_file(e.root + "/x.pid").c_str(), nullptr, 10);
    std::string a = read_file("/proc/" + std::to_string(init) + "/cgroup");
    std::string b = read_file("/proc/" + std::to_string(pid) + "/cgroup");
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert(!a.empty() && a == b, "init:\n%s\nexec:\n%s", a.c_str(), b.c_str());
}

// The same where exec has no stage: a sandbox policy that locks the mounts
// gives the init a nested user namespace that maps the runtime's uid, so
// exec runs a sealed copy of itself, whose intermediate is born in the v2
// cgroup and moves itself into the v1 ones (as the stage's does).
Test(cgroups, exec_without_the_stage_joins_the_containers_cgroup) {
    Env e = started("cgexns", {"sleep", "30"}, [](Env &x) {
        x.b.spec.annotations["dev.ocirun.deny"] = "/nonexistent-denied";
    });
    long init = state_of(e.root, e.id).pid;
    auto x = test::oci_files({"--debug", "--root", e.root, "exec", "--detach", "--pid-file",
                              e.root + "/x.pid", e.id, "sleep", "30"});
    long pid = std::strtol(read_file(e.root + "/x.pid").c_str(), nullptr, 10);
    std::string a = read_file("/proc/" + std::to_string(init) + "/cgroup");
    std::string b = read_file("/proc/" + std::to_string(pid) + "/cgroup");
    cleanup_all();
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert(contains(x.err, "exec stage not used: the container's user namespace maps"),
              "the stage was used: %s", x.err.c_str());
    cr_assert(!a.empty() && a == b, "init:\n%s\nexec:\n%s", a.c_str(), b.c_str());
}

Test(cgroups, kill_all_reaches_every_process_in_the_cgroup) {
    Env e = started("cgkill", {"sh", "-c", "sleep 30 & sleep 30 & wait"}, [](Env &x) {
        std::erase_if(x.b.spec.linux_->namespaces,
                      [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    });
    usleep(200000);
    long init = state_of(e.root, e.id).pid;
    std::string procs_before = read_file(cgroup_dir(init, "pids") + "/cgroup.procs");
    auto k = oci({"--root", e.root, "kill", "--all", e.id, "KILL"});
    std::string st = wait_status(e.root, e.id, "stopped");
    std::istringstream in(procs_before);
    long v;
    std::string alive;
    while (in >> v)
        if (!test::pid_gone(v)) alive += std::to_string(v) + " ";
    cleanup_all();
    cr_assert_eq(test::count_lines(procs_before), 3u, "%s", procs_before.c_str());
    cr_assert_eq(k.status, 0, "%s", k.err.c_str());
    cr_assert_str_eq(st.c_str(), "stopped");
    cr_assert(alive.empty(), "still alive: %s", alive.c_str());
}

// Device rules (v1 devices controller here): the default deny-all lets the
// standard devices through; a block device node made inside cannot be read.
Test(cgroups, device_rules_allow_defaults_and_deny_the_rest) {
    need("devices");
    if (host().for_controller("devices")->version != 1)
        cr_skip_test("device rules on cgroup v2 need the eBPF program (not implemented yet)");
    Env e = make_env("cgdev", {"sh", "-c",
                               "head -c 1 /dev/zero | wc -c; mknod /tmp/blk b 7 0 && "
                               "head -c 1 /tmp/blk; echo rc=$?"});
    e.b.spec.root->readonly = false;
    test::add_capabilities(e, {"CAP_MKNOD"});
    auto &r = resources(e);
    r.devices.clear();
    ocirun::oci::DeviceRule deny;
    deny.allow = false;
    deny.access = "rwm";
    r.devices.push_back(deny);
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "1\n"), "/dev/zero unreadable: %s", o.out.c_str());
    cr_assert(contains(o.out, "rc=1"), "the block device was readable: %s %s", o.out.c_str(),
              o.err.c_str());
    cr_assert(contains(o.err, "Operation not permitted"), "%s", o.err.c_str());
}

Test(cgroups, resource_the_host_lacks_is_a_clear_error) {
    Env e = make_env("cglack", {"true"});
    if (host().for_controller("net_cls")) cr_skip_test("this host has net_cls");
    resources(e).network.emplace().class_id = 0x100001;
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1);
    cr_assert(contains(o.err, "linux.resources.network.classID: needs the cgroup v1 net_cls "
                              "controller, which this host does not have"),
              "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u);
    cr_assert(left.empty());
}

// Attack: linux.resources.unified naming cgroup.procs or cgroup.threads
// would have the runtime, as root, move any process of the host into the
// container's cgroup (its limits apply to it, and delete kills it). Refused
// naming the key; the process stays where it was, alive. The limits among
// the core files stay allowed (block_io_and_unified_read_back).
Test(cgroups, attack_unified_cgroup_procs_cannot_move_a_host_process) {
    if (!host().unified()) cr_skip_test("this host has no cgroup v2 hierarchy");
    pid_t victim = ::fork();
    if (victim == 0) {
        ::pause();
        ::_exit(0);
    }
    std::string before = read_file("/proc/" + std::to_string(victim) + "/cgroup");
    std::vector<test::Output> runs;
    for (const char *key : {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"}) {
        Env e = make_env("cgmove", {"true"});
        resources(e).unified[key] = std::to_string(victim);
        runs.push_back(test::run(e));
    }
    std::string after = read_file("/proc/" + std::to_string(victim) + "/cgroup");
    bool alive = ::waitpid(victim, nullptr, WNOHANG) == 0;
    ::kill(victim, SIGKILL);
    ::waitpid(victim, nullptr, 0);
    cleanup_all();
    for (size_t i = 0; i < runs.size(); i++) {
        cr_assert_eq(runs[i].status, 1, "run %zu: %s", i, runs[i].err.c_str());
        cr_assert(contains(runs[i].err, "linux.resources.unified.cgroup.") &&
                      contains(runs[i].err, ": refused: of the cgroup.* files only "
                                            "cgroup.max.depth and cgroup.max.descendants"),
                  "run %zu: %s", i, runs[i].err.c_str());
        cr_assert_eq(test::count_lines(runs[i].err), 1u, "%s", runs[i].err.c_str());
    }
    cr_assert(alive, "the host process was killed");
    cr_assert_str_eq(after.c_str(), before.c_str());
}

// Attack: kill --all with a signal cgroup.kill cannot send reads the
// container's PIDs from cgroup.procs, as numbers. A process that ends right
// after that read may leave its PID to a process outside the container,
// which must not get the signal. Made to happen in a PID namespace of the
// test's own (unshare), where ns_last_pid hands the PID on: kill --all is
// held 300 ms after its read (OCI_RUN_FAULT_DELAY), a container process is
// killed and reaped, and a process of the test's takes its PID. It lives
// on (before, SIGTERM killed it).
Test(cgroups, attack_kill_all_does_not_signal_a_pid_reused_after_the_read, .timeout = 180) {
    Env e = make_env("cgreuse", {"sh", "-c", "sleep 1000 & sleep 1000 & wait"});
    e.b.save();
    const char *script = R"(oci=$1 root=$2 bundle=$3 id=$4
"$oci" --root "$root" run -d --bundle "$bundle" "$id" </dev/null >/dev/null 2>&1 || exit 10
init=$("$oci" --root "$root" state "$id" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
member=
for i in $(seq 100); do
    member=$(cat /proc/$init/task/$init/children 2>/dev/null | awk '{print $1}')
    [ -n "$member" ] && break
    sleep 0.05
done
[ -n "$member" ] || exit 11
OCI_RUN_FAULT_DELAY=cgroup:listed "$oci" --root "$root" kill --all "$id" TERM &
k=$!
for i in $(seq 200); do
    grep -qE '^(35|230) ' /proc/$k/syscall 2>/dev/null && break
    sleep 0.01
done
kill -9 $member
while [ -e /proc/$member ]; do sleep 0.01; done
echo $((member - 1)) >/proc/sys/kernel/ns_last_pid
sleep 1000 &
victim=$!
wait $k
echo "kill=$?"
sleep 0.2
[ "$victim" = "$member" ] && echo reused
kill -0 $victim 2>/dev/null && echo "victim alive"
kill -9 $victim
"$oci" --root "$root" delete --force "$id"
)";
    auto o = test::run(std::vector<std::string>{"unshare", "--pid", "--fork", "--mount-proc", "sh",
                                                "-c", script, "sh", std::getenv("OCI_RUN"), e.root,
                                                e.b.dir, e.id});
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.out, "kill=0\nreused\n"), "the PID was not reused: %s %s", o.out.c_str(),
              o.err.c_str());
    cr_assert(contains(o.out, "victim alive"),
              "kill --all signalled a process it read as a PID: %s", o.out.c_str());
}

// Attack: a stopped container's cgroup stays until its delete, and an empty
// cgroup is reused (as runc does), so a second container given the same
// cgroupsPath runs in it. The first container's kill --all, ps and delete
// must not reach the second's processes: its init was PID 1 of its own PID
// namespace, and nothing of it outlived the init. delete removes the first
// container and leaves the busy cgroup, saying so.
Test(cgroups, attack_a_stopped_containers_reused_cgroup_is_not_its_own) {
    std::string parent = test::cgroup_parent("cgreuse");
    std::string path = parent + "/shared";
    Env a = make_env("cgreusea", {"true"});
    a.b.spec.linux_->cgroups_path = path;
    a.b.save();
    auto ca = create(a);
    auto sa = oci({"--root", a.root, "start", a.id});
    std::string stopped = wait_status(a.root, a.id, "stopped");
    Env b =
        started("cgreuseb", {"sleep", "30"}, [&](Env &x) { x.b.spec.linux_->cgroups_path = path; });
    long pid = state_of(b.root, b.id).pid;
    auto k = oci({"--root", a.root, "kill", "--all", a.id, "KILL"});
    auto ps = oci({"--root", a.root, "ps", "--format", "json", a.id});
    auto d = oci({"--root", a.root, "delete", a.id});
    bool a_left = test::exists(a.root + "/" + a.id);
    bool b_alive = !test::pid_gone_now(pid);
    std::string b_status = state_of(b.root, b.id).status;
    cleanup_all();
    std::string left = test::remove_cgroup_parent(parent);
    cr_assert_eq(ca.status, 0, "create: %s", ca.err.c_str());
    cr_assert_eq(sa.status, 0, "start: %s", sa.err.c_str());
    cr_assert_str_eq(stopped.c_str(), "stopped");
    cr_assert_eq(k.status, 0, "kill --all: %s", k.err.c_str());
    cr_assert_eq(ps.status, 0, "ps: %s", ps.err.c_str());
    cr_assert(!contains(ps.out, std::to_string(pid)), "ps lists the other's %ld: %s", pid,
              ps.out.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(contains(d.err, "its processes are not the container's"), "%s", d.err.c_str());
    cr_assert(!a_left, "the stopped container's state is still there");
    cr_assert(b_alive, "the other container's init %ld was killed", pid);
    cr_assert_str_eq(b_status.c_str(), "running");
    cr_assert(left.empty(), "%s", left.c_str());
}

// Without a PID namespace of its own, what the init started outlives it, in
// the container's cgroup: delete of the stopped container kills it (runc
// does the same).
Test(cgroups, delete_of_a_stopped_container_kills_what_outlived_its_init) {
    Env e = make_env("cgorphan", {"sh", "-c", "sleep 30 & echo $!"});
    std::erase_if(e.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string st = wait_status(e.root, e.id, "stopped");
    long orphan = std::strtol(test::read_output(c.out_path).c_str(), nullptr, 10);
    bool alive_before = orphan > 0 && !test::pid_gone_now(orphan);
    auto d = oci({"--root", e.root, "delete", e.id});
    bool gone = orphan > 0 && test::pid_gone(orphan);
    if (orphan > 0 && !gone) ::kill(static_cast<pid_t>(orphan), SIGKILL);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_str_eq(st.c_str(), "stopped");
    cr_assert(alive_before, "no sleep outlived the init (pid %ld)", orphan);
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(gone, "%ld outlived delete", orphan);
}

Test(cgroups, cgroups_path_with_dotdot_is_refused) {
    Env e = make_env("cgdots", {"true"});
    e.b.spec.linux_->cgroups_path = "/../../etc";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 1);
    cr_assert(contains(o.err, "linux.cgroupsPath: \"/../../etc\" must not contain \"..\""), "%s",
              o.err.c_str());
}

Test(cgroups, absolute_cgroups_path) {
    Env e = started("cgabs", {"sleep", "30"}, [](Env &x) {
        x.b.spec.linux_->cgroups_path = "/oci-run-test-" + std::to_string(getpid()) + "/" + x.id;
    });
    long pid = state_of(e.root, e.id).pid;
    std::string dir = cgroup_dir(pid, "pids");
    std::string parent = dir.substr(0, dir.rfind('/'));
    std::string want = host().for_controller("pids")->mount + "/oci-run-test-" +
                       std::to_string(getpid()) + "/" + e.id;
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    bool left = test::exists(dir);
    // The intermediate directory is the test's: remove it in every hierarchy.
    for (const auto &h : host().hierarchies)
        ::rmdir((h.mount + "/oci-run-test-" + std::to_string(getpid())).c_str());
    cleanup_all();
    cr_assert_str_eq(dir.c_str(), want.c_str());
    cr_assert_eq(d.status, 0, "%s", d.err.c_str());
    cr_assert(!left);
}

// Pure cgroup v2: in a private mount namespace the v1 hierarchies are
// unmounted and cgroup2 is mounted on /sys/fs/cgroup, so oci-run sees a v2-only
// host (on a hybrid host with no controller enabled at its root, since the
// host binds them to v1: only core v2 features apply). The init is born in its cgroup,
// pause/resume use cgroup.freeze, ps and kill --all read cgroup.procs, events
// reads cpu.stat, device rules become an eBPF program, delete removes the
// cgroup, and a pids limit is a clear error.
Test(cgroups, pure_v2_in_a_private_mount_namespace) {
    if (!host().unified()) cr_skip_test("this host has no cgroup v2 hierarchy to mount");
    Env e = make_env("cgv2", {"sleep", "30"});
    e.b.spec.root->readonly = false; // for the device node below
    e.b.save();
    Env bad = make_env("cgv2bad", {"true"});
    resources(bad).pids.emplace().limit = 5;
    bad.b.save();
    std::string o = test::oci_run_path() + " --root " + e.root;
    std::string script =
        "set -e\n"
        "for m in $(awk '$9==\"cgroup\"{print $5}' /proc/self/mountinfo); do umount -l $m; done\n"
        "for m in $(awk '$9==\"cgroup2\"{print $5}' /proc/self/mountinfo); do umount -l $m; "
        "done\n"
        "umount -l /sys/fs/cgroup 2>/dev/null || true\n"
        "mount -t cgroup2 none /sys/fs/cgroup\n"
        "trap '" +
        o + " delete --force " + e.id + " >/dev/null 2>&1 || true' EXIT\n" + o +
        " run --detach --bundle " + e.b.dir + " " + e.id + "\n" + "pid=$(" + o + " state " + e.id +
        " | sed -n 's/.*\"pid\": *\\([0-9]*\\).*/\\1/p')\n"
        "echo \"cgroup=$(grep '^0::' /proc/$pid/cgroup)\"\n" +
        o + " pause " + e.id + "\n" + "echo \"freeze=$(cat /sys/fs/cgroup/oci-run/" + e.id +
        "/cgroup.freeze)\"\n" + "echo \"status=$(" + o + " state " + e.id +
        " | grep -o paused)\"\n" + o + " resume " + e.id + "\n" + "echo \"ps=$(" + o +
        " ps --format json " + e.id + ")\"\n" + "echo \"expect=[$pid]\"\n" + o +
        " events --stats " + e.id + "\n" +
        // The default deny-all device rule, through the eBPF program.
        o + " exec --cap CAP_MKNOD " + e.id +
        " sh -c 'echo zero=$(head -c 1 /dev/zero | wc -c); mknod /tmp/blk b 7 0; "
        "head -c 1 /tmp/blk; echo blk-rc=$?'\n" +
        o + " kill --all " + e.id + " KILL\n" + "sleep 0.3\n" + o + " delete " + e.id + "\n" +
        "test -e /sys/fs/cgroup/oci-run/" + e.id + " && echo left || echo removed\n" + "if " +
        test::oci_run_path() + " --root " + bad.root + " run --bundle " + bad.b.dir + " " + bad.id +
        " 2>/tmp/err-$$; then echo pids-accepted; else cat /tmp/err-$$; fi\n"
        "rm -f /tmp/err-$$\n";
    auto r = test::run({"unshare", "-m", "sh", "-c", script});
    cleanup_all();
    cr_assert_eq(r.status, 0, "script: %s\n%s", r.out.c_str(), r.err.c_str());
    cr_assert(contains(r.out, "cgroup=0::/oci-run/" + e.id + "\n"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "freeze=1\n"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "status=paused\n"), "%s", r.out.c_str());
    std::string expect = r.out.substr(r.out.find("expect=") + 7);
    expect = expect.substr(0, expect.find('\n'));
    cr_assert(contains(r.out, "ps=" + expect + "\n"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "{\"type\":\"stats\",\"id\":\"" + e.id +
                                  "\",\"data\":{\"cpu\":{\"usage\":{\"total\":"),
              "%s", r.out.c_str());
    cr_assert(contains(r.out, "zero=1\n"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "blk-rc=1\n"), "the device program let a block device through: %s",
              r.out.c_str());
    cr_assert(contains(r.out, "removed\n"), "%s", r.out.c_str());
    // pids, where the v2 hierarchy has it (a pure v2 host), else a clear error.
    if (contains(" " + read_file(host().unified()->mount + "/cgroup.controllers"), " pids"))
        cr_assert(contains(r.out, "pids-accepted\n"), "%s", r.out.c_str());
    else
        cr_assert(contains(r.out, "linux.resources.pids.limit: the pids cgroup controller is not "
                                  "available on this host"),
                  "%s", r.out.c_str());
}

namespace {

// major:minor of a real disk of this host (not loop, ram or zram), or "".
std::pair<long, long> a_disk() {
    for (const auto &name : test::dir_entries("/sys/block")) {
        if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0 || name.rfind("zram", 0) == 0)
            continue;
        std::string dev = read_file("/sys/block/" + name + "/dev");
        auto colon = dev.find(':');
        if (colon != std::string::npos)
            return {std::strtol(dev.c_str(), nullptr, 10),
                    std::strtol(dev.c_str() + colon + 1, nullptr, 10)};
    }
    return {-1, -1};
}

} // namespace

// blockIO throttles (set at create, then changed by update) and a unified key
// (cgroup.max.depth, a core v2 file that this hybrid host's unified hierarchy
// has too), read back from the files; events carries blkio and the
// container's network interfaces (none but loopback here, which is left out).
Test(cgroups, block_io_and_unified_read_back) {
    auto [major, minor] = a_disk();
    if (major < 0) cr_skip_test("this host has no disk to throttle");
    if (!host().for_controller("blkio") && !host().for_controller("io"))
        cr_skip_test("this host has no blkio/io cgroup controller");
    if (!host().unified()) cr_skip_test("this host has no cgroup v2 hierarchy");
    Env e = started("cgblk", {"sleep", "30"}, [&](Env &x) {
        auto &r = resources(x);
        r.block_io.emplace().throttle_read_bps.push_back({major, minor, 1048576});
        r.unified["cgroup.max.depth"] = "3";
    });
    long pid = state_of(e.root, e.id).pid;
    bool v1 = host().for_controller("blkio") != nullptr;
    std::string dir = cgroup_dir(pid, v1 ? "blkio" : "io");
    std::string file = dir + (v1 ? "/blkio.throttle.read_bps_device" : "/io.max");
    std::string before = read_file(file);
    std::string res = e.root + "/blk.json";
    test::write_file(
        res, "{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": " + std::to_string(major) +
                 ", \"minor\": " + std::to_string(minor) + ", \"rate\": 2097152}]}}");
    auto u = oci({"--root", e.root, "update", "--resources", res, e.id});
    std::string after = read_file(file);
    std::string depth = trimmed(read_file(cgroup_dir(pid, "") + "/cgroup.max.depth"));
    auto ev = oci({"--root", e.root, "events", "--stats", e.id});
    cleanup_all();
    std::string dev = std::to_string(major) + ":" + std::to_string(minor);
    cr_assert(contains(before, dev + (v1 ? " 1048576" : " rbps=1048576")), "%s", before.c_str());
    cr_assert_eq(u.status, 0, "update: %s", u.err.c_str());
    cr_assert(contains(after, dev + (v1 ? " 2097152" : " rbps=2097152")), "%s", after.c_str());
    cr_assert_str_eq(depth.c_str(), "3");
    cr_assert_eq(ev.status, 0, "%s", ev.err.c_str());
    cr_assert(contains(ev.out, "\"blkio\":{\"ioServiceBytesRecursive\":["), "%s", ev.out.c_str());
    cr_assert(contains(ev.out, "\"network_interfaces\":[]"), "%s", ev.out.c_str());
}

// The cgroup mount inside the container shows its own cgroup, never the
// host's tree: with a cgroup namespace (hierarchies mounted, their root the
// container's cgroup), without one and in a user namespace (the container's
// directories bound). Read-only as the default configuration asks, and
// nosuid, nodev, noexec: the tmpfs and every hierarchy on it (mountinfo
// lines that lack one are printed).
Test(cgroups, cgroup_mount_shows_only_the_containers_cgroup) {
    need("pids");
    static const std::string kCgroupFlagsCheck =
        "awk '$5 ~ \"^/sys/fs/cgroup\" && ($6 !~ /(^|,)ro(,|$)/ || $6 !~ /nosuid/ || "
        "$6 !~ /nodev/ || $6 !~ /noexec/) { print \"flags:\", $5, $6 }' /proc/self/mountinfo";
    // The pids hierarchy inside: /sys/fs/cgroup/pids on v1, the one mount on v2.
    std::string d =
        host().for_controller("pids")->version == 1 ? "/sys/fs/cgroup/pids" : "/sys/fs/cgroup";
    std::string failures;
    for (int variant = 0; variant < 3; variant++) {
        Env e =
            make_env("cgview", {"sh", "-c",
                                "cat " + d + "/pids.max; ls " + d + " | grep -c oci-run; mkdir " +
                                    d + "/x 2>&1 | grep -c Read-only; " + kCgroupFlagsCheck});
        resources(e).pids.emplace().limit = 55;
        auto &lx = *e.b.spec.linux_;
        if (variant == 1)
            std::erase_if(lx.namespaces,
                          [](const auto &n) { return n.type == ocirun::oci::NsType::cgroup; });
        if (variant == 2) {
            test::use_user_namespace(e);
            e.b.spec.root->readonly = false;
        }
        auto o = test::run(e);
        if (o.out != "55\n0\n1\n")
            failures += "variant " + std::to_string(variant) + ": status " +
                        std::to_string(o.status) + " out [" + o.out + "] err " + o.err + "\n";
        cleanup_all();
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// runtime-spec 1.3 (config-linux.md, pids): a limit of 0 is written as 0
// (the container's process runs, nothing in it may fork), -1 is "max". A
// config of an earlier version meant no limit by 0 (Podman 4 writes it for
// --pids-limit -1), and gets "max". update reads 0 as the container's
// version does.
Test(cgroups, pids_limit_zero_as_runtime_spec_1_3) {
    need("pids");
    auto with = [](const char *tag, const char *version) {
        return started(tag, {"sh", "-c", "sleep 30"}, [&](Env &x) {
            x.b.spec.oci_version = version;
            resources(x).pids.emplace().limit = 0;
        });
    };
    Env now = with("cgpid13", "1.3.0");
    Env old = with("cgpid12", "1.2.1");
    long pid_now = state_of(now.root, now.id).pid, pid_old = state_of(old.root, old.id).pid;
    std::string max_now = trimmed(read_file(cgroup_dir(pid_now, "pids") + "/pids.max"));
    std::string max_old = trimmed(read_file(cgroup_dir(pid_old, "pids") + "/pids.max"));
    // exec joins the cgroup (a move, which pids.max does not limit); its
    // fork does not.
    auto fork_now = oci({"--root", now.root, "exec", now.id, "sh", "-c", "true & wait"});
    auto fork_old = oci({"--root", old.root, "exec", old.id, "sh", "-c", "true & wait"});
    auto up_now = oci({"--root", now.root, "update", "--pids-limit", "5", now.id});
    std::string five = trimmed(read_file(cgroup_dir(pid_now, "pids") + "/pids.max"));
    auto zero_now = oci({"--root", now.root, "update", "--pids-limit", "0", now.id});
    std::string zero = trimmed(read_file(cgroup_dir(pid_now, "pids") + "/pids.max"));
    auto zero_old = oci({"--root", old.root, "update", "--pids-limit", "0", old.id});
    std::string unlimited = trimmed(read_file(cgroup_dir(pid_old, "pids") + "/pids.max"));
    cleanup_all();
    cr_assert_str_eq(max_now.c_str(), "0");
    cr_assert_str_eq(max_old.c_str(), "max");
    cr_assert_neq(fork_now.status, 0, "a fork under pids.max 0 worked: %s", fork_now.out.c_str());
    cr_assert_eq(fork_old.status, 0, "%s", fork_old.err.c_str());
    cr_assert_eq(up_now.status, 0, "%s", up_now.err.c_str());
    cr_assert_str_eq(five.c_str(), "5");
    cr_assert_eq(zero_now.status, 0, "%s", zero_now.err.c_str());
    cr_assert_str_eq(zero.c_str(), "0");
    cr_assert_eq(zero_old.status, 0, "%s", zero_old.err.c_str());
    cr_assert_str_eq(unlimited.c_str(), "max");
}

// cgroup v1 cpu under a parent with a CFS limit of half a CPU: a shorter
// period with the old quota would exceed it, so the kernel refuses the
// period first (EINVAL); as runc, the quota is written first then and the
// period after it.
Test(cgroups, v1_cfs_period_and_quota_under_a_limited_parent) {
    need("cpu");
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *cpu = h.for_controller("cpu");
    if (cpu->version != 1) cr_skip_test("cpu is on cgroup v2 here (cpu.max is one write)");
    std::string parent = test::cgroup_parent("cgcfs");
    std::string pdir = cpu->dir_of(parent);
    cr_assert(::mkdir(pdir.c_str(), 0755) == 0, "mkdir %s: %s", pdir.c_str(), strerror(errno));
    test::write_file(pdir + "/cpu.cfs_period_us", "100000");
    test::write_file(pdir + "/cpu.cfs_quota_us", "50000");
    Env e = started("cgcfs", {"sleep", "30"}, [&](Env &x) {
        x.b.spec.linux_->cgroups_path = parent + "/" + x.id;
        auto &c = resources(x).cpu.emplace();
        c.period = 100000;
        c.quota = 50000;
    });
    long pid = state_of(e.root, e.id).pid;
    auto u =
        oci({"--root", e.root, "update", "--cpu-period", "50000", "--cpu-quota", "25000", e.id});
    std::string dir = cgroup_dir(pid, "cpu");
    std::string period = trimmed(read_file(dir + "/cpu.cfs_period_us"));
    std::string quota = trimmed(read_file(dir + "/cpu.cfs_quota_us"));
    cleanup_all();
    std::string left = test::remove_cgroup_parent(parent);
    cr_assert_eq(u.status, 0, "update: %s", u.err.c_str());
    cr_assert_str_eq(period.c_str(), "50000");
    cr_assert_str_eq(quota.c_str(), "25000");
    cr_assert(left.empty(), "%s", left.c_str());
}

// The v2 device program that update replaces (runtime/cgroups/device_filter.hpp):
// on a cgroup v2 directory of ours, a process there may open /dev/null and
// not /dev/zero; after the replacement the other way round, with one
// program attached (the old one detached after the new one held).
Test(cgroups, v2_device_program_is_replaced) {
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *v2 = h.unified();
    if (!v2) cr_skip_test("no cgroup v2 hierarchy");
    std::string dir = v2->dir_of(test::cgroup_parent("cgdevbpf"));
    cr_assert(::mkdir(dir.c_str(), 0755) == 0, "mkdir %s: %s", dir.c_str(), strerror(errno));
    auto rules = [](int minor) {
        ocirun::oci::DeviceRule deny, allow;
        deny.allow = false;
        deny.access = "rwm";
        allow.allow = true;
        allow.type = "c";
        allow.major = 1;
        allow.minor = minor;
        allow.access = "rw";
        return std::vector<ocirun::oci::DeviceRule>{deny, allow};
    };
    // A child in the cgroup that opens both and says which opened.
    auto try_open = [&]() {
        int p[2];
        cr_assert(::pipe(p) == 0);
        pid_t c = ::fork();
        if (c == 0) {
            std::string me = std::to_string(::getpid());
            int f = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY);
            bool in = f >= 0 && ::write(f, me.data(), me.size()) > 0;
            char out[2] = {in && ::open("/dev/null", O_RDONLY) >= 0 ? 'n' : '-',
                           in && ::open("/dev/zero", O_RDONLY) >= 0 ? 'z' : '-'};
            (void)!::write(p[1], out, 2);
            ::_exit(0);
        }
        ::close(p[1]);
        char got[3] = {};
        (void)!::read(p[0], got, 2);
        ::close(p[0]);
        ::waitpid(c, nullptr, 0);
        return std::string(got);
    };
    auto a = ocirun::attach_device_program(rules(3), dir);
    std::string first = try_open();
    auto b = ocirun::attach_device_program(rules(5), dir, true);
    std::string second = try_open();
    // How many device programs the directory has (BPF_PROG_QUERY).
    uint32_t count = 99;
    {
        int cg = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        union bpf_attr q;
        std::memset(&q, 0, sizeof q);
        q.query.target_fd = static_cast<uint32_t>(cg);
        q.query.attach_type = BPF_CGROUP_DEVICE;
        if (cg >= 0 && ::syscall(SYS_bpf, BPF_PROG_QUERY, &q, sizeof q) == 0)
            count = q.query.prog_cnt;
        if (cg >= 0) ::close(cg);
    }
    ::rmdir(dir.c_str());
    cr_assert(a.has_value(), "%s", a ? "" : a.error().text().c_str());
    cr_assert(b.has_value(), "%s", b ? "" : b.error().text().c_str());
    cr_assert_str_eq(first.c_str(), "n-");
    cr_assert_str_eq(second.c_str(), "-z");
    cr_assert_eq(count, 1u, "device programs attached after the replacement");
}

// A container with its cgroup namespace and cgroupfs writable makes cgroups
// of its own below its cgroup (a systemd node's slices, a nested runtime's
// containers) and moves a process there, in every hierarchy: ps lists it,
// kill --all reaches it, and delete removes those cgroups with its own.
Test(cgroups, cgroups_the_container_made_below_its_own) {
    Env e = started("cgnest",
                    {"sh", "-c",
                     "sleep 300 & p=$!; for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do "
                     "[ -f $h/cgroup.procs ] || continue; mkdir -p $h/sub/deeper && "
                     "echo $p > $h/sub/deeper/cgroup.procs; done; echo $p > /moved; sleep 300"},
                    [](Env &x) {
                        x.b.spec.root->readonly = false;
                        for (auto &m : x.b.spec.mounts)
                            if (m.destination == "/sys/fs/cgroup")
                                std::erase(m.options, std::string("ro"));
                    });
    long pid = state_of(e.root, e.id).pid;
    std::vector<std::string> dirs = all_dirs(pid);
    // Not the caller's cpuset cgroup, which a container without cpus or mems
    // stays in (it is not the container's: nothing is made or removed there).
    ocirun::CgroupHost h = host();
    const ocirun::Hierarchy *cs = h.for_controller("cpuset");
    if (cs && ocirun::v1_cpuset_only(*cs)) std::erase(dirs, cgroup_dir(::getpid(), "cpuset"));
    std::string moved_file = e.b.rootfs + "/moved";
    // Up to 10 s (read_output: a whole line, not the file the shell's
    // redirection has made and not yet written): in the suite
    // integration-v2 (an emulated virtual machine, another test beside it)
    // the shell's mkdirs and moves once took longer than 2 s.
    std::string inner = trimmed(test::read_output(moved_file));
    // The process's host PID: the child of the init that sleeps.
    std::string children = trimmed(
        read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
    auto ps = oci({"--root", e.root, "ps", "--format", "json", e.id});
    std::string below;
    for (const auto &d : dirs)
        if (test::exists(d + "/sub/deeper")) below += d + " ";
    auto d = oci({"--root", e.root, "delete", "--force", e.id});
    std::string left;
    for (const auto &dir : dirs)
        if (test::exists(dir)) left += dir + " ";
    cleanup_all();
    cr_assert(!inner.empty(), "the container did not move its process");
    cr_assert(!below.empty(), "no cgroup below the container's");
    std::string sleeper = children.substr(0, children.find(' '));
    cr_assert(contains(ps.out, sleeper), "ps: %s (children %s)", ps.out.c_str(), children.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left behind: %s", left.c_str());
}
