// The systemd cgroup driver (--systemd-cgroup, runtime/cgroups/systemd_unit.hpp)
// against a real systemd: each test boots a node (support/systemd_node.hpp:
// systemd as PID 1 of a container of its own) and runs oci-run inside it,
// as on a host whose init is systemd. The unit and its properties are read
// back over D-Bus (busctl); the cgroup files and the processes are checked
// as without systemd. Tearing the node down removes everything in it.
#include "oci/spec_io.hpp"
#include "support/bundle.hpp"
#include "support/containerd.hpp"
#include "support/harness.hpp"
#include "support/process.hpp"
#include "support/systemd_node.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

using test::contains;

namespace {

test::SystemdNode g_node;

std::string dir_of(const std::string &path) {
    return path.substr(0, path.rfind('/'));
}

void boot(bool legacy) {
    // The build tree (oci-run and its helpers next to it) and the sources
    // (the bundle maker), read-only at the same paths.
    std::string oci = test::absolute_path(test::oci_run_path());
    std::string build = dir_of(dir_of(oci));
    std::vector<std::string> binds = {build};
    if (const char *m = std::getenv("OCI_RUN_BUNDLE_MAKER"))
        binds.push_back(dir_of(dir_of(test::absolute_path(m))));
    test::boot_node(g_node, binds, legacy);
}

void node_init() {
    boot(false);
}

void legacy_node_init() {
    boot(true);
}

void node_fini() {
    g_node.tear_down();
    test::cleanup_all();
}

void need_node() {
    if (!g_node.skip.empty()) cr_skip_test("%s", g_node.skip.c_str());
    cr_assert(g_node.failure.empty(), "%s", g_node.failure.c_str());
}

// A busybox bundle in the node's shared directory, with cgroupsPath.
test::Bundle node_bundle(const char *tag, const std::vector<std::string> &args,
                         const std::string &cgroups_path) {
    ::setenv("TMPDIR", g_node.share.c_str(), 1);
    test::Bundle b = test::make_bundle(tag, args);
    ::unsetenv("TMPDIR");
    b.spec.linux_->cgroups_path = cgroups_path;
    return b;
}

// oci-run inside the node, with --systemd-cgroup and the node test's --root;
// its output through files (a container's init keeps create's stdio open).
test::Output oci_in(const std::vector<std::string> &args) {
    std::vector<std::string> argv = {"/bin/sh",
                                     "-c",
                                     "o=$1; shift; \"$@\" > $o.out 2> $o.err < /dev/null",
                                     "sh",
                                     g_node.share + "/oci",
                                     test::absolute_path(test::oci_run_path()),
                                     "--systemd-cgroup",
                                     "--root",
                                     g_node.share + "/state"};
    argv.insert(argv.end(), args.begin(), args.end());
    test::Output o = test::in_node(g_node, argv);
    o.out = test::read_file(g_node.share + "/oci.out");
    o.err = test::read_file(g_node.share + "/oci.err");
    return o;
}

// A property of a unit, as systemd says it over D-Bus ("t 32").
std::string unit_property(const std::string &unit, const char *iface, const char *prop) {
    return test::unit_property(g_node, unit, iface, prop);
}

} // namespace

TestSuite(systemd, .init = node_init, .fini = node_fini, .timeout = 180);

namespace {

// The node's hierarchies are v2 alone (else hybrid or v1 here).
bool node_pure_v2() {
    return test::in_node(g_node, {"/usr/bin/test", "-f", "/sys/fs/cgroup/cgroup.procs"}).status ==
           0;
}

// A shell script inside the node with $OCI (oci-run --systemd-cgroup
// --root ...) and $ID set.
test::Output script_in(const std::string &id, const std::string &body) {
    std::string oci = test::absolute_path(test::oci_run_path()) + " --systemd-cgroup --root " +
                      g_node.share + "/state";
    return test::in_node(g_node, {"/bin/sh", "-c", "OCI='" + oci + "'; ID=" + id + "; " + body});
}

// The unit's cgroup directories in the node, one per hierarchy (with
// `file` after each).
std::string scope_dirs(const std::string &unit, const std::string &file = "") {
    return "$(if [ -f /sys/fs/cgroup/cgroup.procs ]; then echo /sys/fs/cgroup; else printf "
           "'%s\\n' /sys/fs/cgroup/*; fi | sed 's|$|/system.slice/" +
           unit + file + "|')";
}

} // namespace

// A container with --systemd-cgroup: its scope in system.slice, with the
// init in it and the resources as unit properties systemd reports (and in
// the cgroup files); ps, pause and resume on it; delete stops the unit and
// leaves no cgroup. `legacy`: on a node with the v1 hierarchies only.
void scope_holds_the_container(bool legacy) {
    need_node();
    test::Bundle b = node_bundle("sdscope", {"sleep", "300"}, "");
    std::string id = "sd1";
    b.spec.linux_->cgroups_path = "system.slice:ocirun:" + id;
    auto &r = b.spec.linux_->resources.emplace();
    r.pids.emplace().limit = 32;
    r.memory.emplace().limit = 64 << 20;
    auto &cpu = r.cpu.emplace();
    cpu.quota = 50000;
    cpu.period = 100000;
    cpu.shares = 512;
    b.save();
    const std::string unit = "ocirun-" + id + ".scope";
    auto c = oci_in({"create", "--bundle", b.dir, id});
    auto s = oci_in({"start", id});
    const char *scope = "org.freedesktop.systemd1.Scope";
    std::string tasks = unit_property(unit, scope, "TasksMax");
    std::string mem = unit_property(unit, scope, node_pure_v2() ? "MemoryMax" : "MemoryLimit");
    std::string quota = unit_property(unit, scope, "CPUQuotaPerSecUSec");
    std::string delegate = unit_property(unit, scope, "Delegate");
    std::string slice = unit_property(unit, scope, "Slice");
    auto in =
        script_in(id, "p=$($OCI state $ID | sed -n 's/.*\"pid\": *\\([0-9]*\\).*/\\1/p'); "
                      "cat /proc/$p/cgroup; cat " +
                          scope_dirs(unit, "/pids.max") +
                          " 2>/dev/null | head -1; $OCI ps $ID | tail -n +2 | wc -l; "
                          "$OCI pause $ID && $OCI state $ID | grep -o paused; $OCI resume $ID && "
                          "$OCI state $ID | grep -o running");
    auto d = oci_in({"delete", "--force", id});
    auto gone = test::in_node(g_node, {"/usr/bin/busctl", "call", "org.freedesktop.systemd1",
                                       "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "GetUnit", "s", unit});
    auto left =
        script_in(id, "for d in " + scope_dirs(unit) + "; do [ -e $d ] && echo $d; done; true");
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(tasks == "t 32\n", "TasksMax %s", tasks.c_str());
    cr_assert(mem == "t 67108864\n", "memory %s", mem.c_str());
    cr_assert(quota == "t 500000\n", "CPUQuotaPerSecUSec %s", quota.c_str());
    cr_assert(delegate == "b true\n", "Delegate %s", delegate.c_str());
    cr_assert(slice == "s \"system.slice\"\n", "Slice %s", slice.c_str());
    cr_assert(contains(in.out, "/system.slice/" + unit + "\n") && contains(in.out, "\n32\n") &&
                  contains(in.out, "\n1\n") && contains(in.out, "paused\nrunning\n"),
              "%s%s", in.out.c_str(), in.err.c_str());
    // Legacy mode: no v2 hierarchy in the node, none of the scope's.
    if (legacy)
        cr_assert(!contains(in.out, "0::/system.slice/"), "in a v2 cgroup: %s", in.out.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(gone.status != 0 && contains(gone.err, "not loaded"), "the unit is still there: %s%s",
              gone.out.c_str(), gone.err.c_str());
    cr_assert(left.out.empty(), "left behind: %s", left.out.c_str());
}

Test(systemd, scope_holds_the_container_and_delete_removes_it) {
    scope_holds_the_container(false);
}

// The same on a node with the v1 hierarchies only (systemd's legacy mode).
TestSuite(systemd_v1, .init = legacy_node_init, .fini = node_fini, .timeout = 180);

Test(systemd_v1, scope_holds_the_container_and_delete_removes_it) {
    scope_holds_the_container(true);
}

// TasksMax holds a fork bomb; update changes the unit's properties (and the
// files); kill --all empties the scope.
Test(systemd, tasks_max_holds_a_fork_bomb_and_update_changes_it) {
    need_node();
    test::Bundle b = node_bundle("sdbomb",
                                 {"sh", "-c",
                                  "(for i in $(seq 60); do sleep 30 & done) 2>/dev/null; "
                                  "exec sleep 300"},
                                 "");
    std::string id = "sd2";
    b.spec.linux_->cgroups_path = ":ocirun:" + id; // an empty slice: system.slice
    b.spec.linux_->resources.emplace().pids.emplace().limit = 16;
    b.save();
    const std::string unit = "ocirun-" + id + ".scope";
    auto c = oci_in({"create", "--bundle", b.dir, id});
    auto s = oci_in({"start", id});
    // At the limit (one short once the loop's subshell is gone), and the
    // kernel refused forks.
    auto count =
        script_in(id, "for i in $(seq 100); do n=$(cat " + scope_dirs(unit, "/pids.current") +
                          " 2>/dev/null | head -1); [ \"$n\" -ge 15 ] && break; sleep 0.1; "
                          "done; echo $n; cat " +
                          scope_dirs(unit, "/pids.events") + " 2>/dev/null | head -1");
    auto u = oci_in({"update", "--pids-limit", "40", id});
    std::string tasks = unit_property(unit, "org.freedesktop.systemd1.Scope", "TasksMax");
    auto file = script_in(id, "cat " + scope_dirs(unit, "/pids.max") + " 2>/dev/null | head -1");
    // kill --all reaches every process of the scope (the init's children
    // too): the scope empties and systemd removes it.
    auto killed = script_in(id, "$OCI kill --all $ID KILL; for i in $(seq 50); do "
                                "$OCI state $ID | grep -q stopped && break; sleep 0.1; done; "
                                "sleep 0.3; n=$(cat " +
                                    scope_dirs(unit, "/pids.current") +
                                    " 2>/dev/null | head -1); echo killed=${n:-gone}");
    auto d = oci_in({"delete", "--force", id});
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert((contains(count.out, "15\n") || contains(count.out, "16\n")) &&
                  contains(count.out, "max ") && !contains(count.out, "max 0"),
              "pids.current and pids.events: %s", count.out.c_str());
    cr_assert_eq(u.status, 0, "update: %s", u.err.c_str());
    cr_assert(tasks == "t 40\n", "TasksMax after update: %s", tasks.c_str());
    cr_assert(file.out == "40\n", "pids.max after update: %s", file.out.c_str());
    cr_assert(contains(killed.out, "killed=gone\n") || contains(killed.out, "killed=0\n"),
              "kill --all: %s%s", killed.out.c_str(), killed.err.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
}

// A memory hog is OOM-killed at the scope's limit and events says so.
Test(systemd, memory_hog_is_oom_killed_and_events_says_so) {
    need_node();
    test::Bundle b = node_bundle("sdoom", {"awk", "BEGIN { s = \"x\"; while (1) s = s s }"}, "");
    std::string id = "sd3";
    b.spec.linux_->cgroups_path = "system.slice:ocirun:" + id;
    auto &m = b.spec.linux_->resources.emplace().memory.emplace();
    m.limit = 32 << 20;
    m.swap = 32 << 20;
    b.save();
    auto c = oci_in({"create", "--bundle", b.dir, id});
    const std::string ev = g_node.share + "/ev";
    // events ends by itself once the container has stopped.
    (void)script_in(id, "($OCI events --interval 1s $ID > " + ev + ".log 2> " + ev +
                            ".err < /dev/null &)");
    // Its first stats event comes once it has read the kill count it starts from.
    (void)test::read_output(ev + ".log", "\"stats\"");
    auto s = oci_in({"start", id});
    auto st = script_in(id, "for i in $(seq 200); do $OCI state $ID | grep -q stopped && break; "
                            "sleep 0.1; done; sleep 1.5; $OCI state $ID | grep -o stopped");
    std::string events = test::read_file(ev + ".log");
    auto d = oci_in({"delete", "--force", id});
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(st.out == "stopped\n", "%s%s", st.out.c_str(), st.err.c_str());
    cr_assert(contains(events, "{\"type\":\"oom\",\"id\":\"" + id + "\"}"), "%s%s", events.c_str(),
              test::read_file(ev + ".err").c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
}

// A cgroupsPath that is not slice:prefix:name is refused naming the field,
// before anything is made: no unit, no state.
Test(systemd, bad_cgroups_path_is_refused_and_leaves_nothing) {
    need_node();
    struct {
        const char *path, *why;
    } cases[] = {{"/plain/path", "slice:prefix:name"},
                 {"system:ocirun:x", "not a slice name"},
                 {"a--b.slice:ocirun:x", "not a valid slice name"},
                 {"system.slice:ocirun:x.slice", "a slice of its own"},
                 {"system.slice:oci/run:x", "may hold only"}};
    for (const auto &k : cases) {
        test::Bundle b = node_bundle("sdbad", {"true"}, k.path);
        b.save();
        auto c = oci_in({"create", "--bundle", b.dir, "sdbad"});
        auto st = oci_in({"state", "sdbad"});
        cr_assert_neq(c.status, 0, "%s accepted", k.path);
        cr_assert(contains(c.err, "linux.cgroupsPath") && contains(c.err, k.why), "%s: %s", k.path,
                  c.err.c_str());
        cr_assert_neq(st.status, 0, "%s: state left", k.path);
    }
}

namespace {

// Podman inside the node, with its systemd cgroup manager (its default on a
// systemd host): storage, configuration and oci-run's --root in the shared
// directory; the runtime a wrapper that logs its argv. `script` runs with
// $P (podman and its global flags) and $IMG (a busybox image imported).
test::Output podman_in_node(const std::string &script) {
    const std::string s = g_node.share + "/podman";
    ::mkdir(s.c_str(), 0700);
    test::write_file(s + "/containers.conf",
                     "[containers]\nnetns = \"none\"\n[engine]\ncgroup_manager = \"systemd\"\n"
                     "events_logger = \"file\"\nevents_logfile_path = \"" +
                         s + "/events.log\"\ntmp_dir = \"" + s +
                         "/tmp\"\nlock_type = \"file\"\n"
                         "helper_binaries_dir = [\"/usr/lib/podman\", \"/usr/bin\"]\n");
    test::write_file(s + "/registries.conf", "unqualified-search-registries = []\n");
    test::write_file(s + "/rt", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + s + "/argv.log\nexec " +
                                    test::absolute_path(test::oci_run_path()) + " --root " + s +
                                    "/oci-run \"$@\"\n");
    ::chmod((s + "/rt").c_str(), 0755);
    if (!test::exists(s + "/rootfs.tar")) {
        test::Bundle b = node_bundle("sdimg", {"true"}, "");
        auto t = test::run({"tar", "-C", b.rootfs, "-cf", s + "/rootfs.tar", "."});
        cr_assert_eq(t.status, 0, "tar: %s", t.err.c_str());
    }
    std::string p = "podman --root " + s + "/storage --runroot " + s + "/run --runtime " + s +
                    "/rt --cgroup-manager systemd --events-backend file";
    return test::in_node(
        g_node,
        {"/bin/sh", "-c",
         "export CONTAINERS_CONF=" + s + "/containers.conf CONTAINERS_REGISTRIES_CONF=" + s +
             "/registries.conf; P='" + p + "'; IMG=localhost/ocirun/busybox; $P import --quiet " +
             s + "/rootfs.tar $IMG > /dev/null || exit 9; " + script});
}

} // namespace

// Podman with cgroup_manager = "systemd" runs oci-run with --systemd-cgroup:
// each container in its libpod scope in machine.slice (the properties from
// Podman's flags), exec, stop and rm; a pod's containers in the pod's slice;
// nothing left once they are removed.
Test(systemd, podman_with_its_systemd_cgroup_manager) {
    need_node();
    if (test::find_in_path("podman").empty()) cr_skip_test("podman is not installed");
    auto o = podman_in_node(
        "$P run --rm --cgroupns host $IMG cat /proc/self/cgroup | grep -E '^(0|[0-9]+:pids):'; "
        "id=$($P run -d --pids-limit 50 --name c1 $IMG sleep 300) || exit 1; "
        "echo unit=$(busctl get-property org.freedesktop.systemd1 "
        "/org/freedesktop/systemd1/unit/libpod_2d${id}_2escope org.freedesktop.systemd1.Scope "
        "TasksMax); $P exec c1 echo exec=ok; $P stop -t 0 c1 > /dev/null; $P rm c1 > /dev/null; "
        "busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
        "org.freedesktop.systemd1.Manager GetUnit s libpod-$id.scope 2>&1 | grep -c 'not loaded'; "
        "$P pod create --name p1 > /dev/null || exit 2; "
        "$P run -d --pod p1 --name a $IMG sleep 300 > /dev/null; "
        "$P run -d --pod p1 --name b $IMG sleep 300 > /dev/null; "
        "for c in a b; do pid=$($P inspect -f '{{.State.Pid}}' $c); "
        "grep '^0::' /proc/$pid/cgroup | sed 's|/libpod-.*||'; done; "
        "$P pod rm -f -t 0 p1 > /dev/null; ls " +
        g_node.share + "/podman/oci-run | wc -l");
    std::string argv = test::read_file(g_node.share + "/podman/argv.log");
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    cr_assert(contains(argv, "--systemd-cgroup"), "%s", argv.c_str());
    cr_assert(contains(o.out, "/machine.slice/libpod-"), "%s", all.c_str());
    cr_assert(contains(o.out, "unit=t 50\n") && contains(o.out, "exec=ok\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "exec=ok\n1\n"), "the scope is left after rm: %s", all.c_str());
    size_t slice = o.out.find("0::/machine.slice/machine-libpod_pod_");
    cr_assert(slice != std::string::npos, "%s", all.c_str());
    std::string line = o.out.substr(slice, o.out.find('\n', slice) - slice + 1);
    cr_assert(contains(o.out.substr(slice + line.size()), line), "not in one slice: %s",
              all.c_str());
    cr_assert(o.out.size() >= 2 && o.out.substr(o.out.size() - 2) == "0\n",
              "oci-run's state is left: %s", all.c_str());
}

// containerd inside the node, its runc shim running oci-run with the systemd
// cgroup driver (ctr run --runc-systemd-cgroup, as SystemdCgroup = true
// does): the container in its scope, with the limit from ctr's flags, exec,
// kill, delete, and the scope gone.
Test(systemd, containerd_with_systemd_cgroup) {
    need_node();
    if (test::find_in_path("containerd").empty() || test::find_in_path("ctr").empty())
        cr_skip_test("containerd is not installed");
    const std::string d = g_node.share + "/ctrd";
    ::mkdir(d.c_str(), 0700);
    test::Bundle b = node_bundle("sdctr", {"true"}, "");
    std::string why;
    std::string archive = test::oci_archive(d + "/image", b.rootfs,
                                            "localhost/ocirun/busybox:latest", R"(["sh"])", why);
    cr_assert(!archive.empty(), "%s", why.c_str());
    test::write_file(d + "/config.toml", test::containerd_config(d, false));
    test::write_file(d + "/rt", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + d + "/argv.log\nexec " +
                                    test::absolute_path(test::oci_run_path()) + " \"$@\"\n");
    ::chmod((d + "/rt").c_str(), 0755);
    const std::string ctr = "ctr --address " + d + "/containerd.sock --namespace ocirun";
    auto o = test::in_node(
        g_node,
        {"/bin/sh", "-c",
         "(containerd --config " + d + "/config.toml > " + d +
             "/containerd.log 2>&1 < /dev/null &); "
             "for i in $(seq 100); do " +
             ctr +
             " version > /dev/null 2>&1 && break; sleep 0.1; done; "
             "C='" +
             ctr + "'; $C images import " + archive +
             " > /dev/null || exit 1; "
             "$C run -d --runc-binary " +
             d + "/rt --runc-root " + d +
             "/oci-run --runc-systemd-cgroup "
             "--cgroup system.slice:ctr:c1 --memory-limit 67108864 "
             "localhost/ocirun/busybox:latest c1 sleep 300 > /dev/null 2>&1 < /dev/null || exit 2; "
             "sleep 0.5; echo unit=$(busctl get-property org.freedesktop.systemd1 " +
             test::unit_object_path("ctr-c1.scope") + " org.freedesktop.systemd1.Scope " +
             std::string(node_pure_v2() ? "MemoryMax" : "MemoryLimit") +
             "); $C task exec --exec-id e1 c1 echo exec=ok; $C task kill -s KILL c1; for i in "
             "$(seq 50); do "
             "$C task ls | grep -q 'c1.*STOPPED' && break; sleep 0.1; done; $C task delete c1; "
             "$C container delete c1; busctl call org.freedesktop.systemd1 "
             "/org/freedesktop/systemd1 org.freedesktop.systemd1.Manager GetUnit s ctr-c1.scope "
             "2>&1 | grep -c 'not loaded'"});
    std::string argv = test::read_file(d + "/argv.log");
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s%s", all.c_str(), test::read_file(d + "/containerd.log").c_str());
    cr_assert(contains(argv, "--systemd-cgroup"), "%s", argv.c_str());
    cr_assert(contains(o.out, "unit=t 67108864\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "exec=ok\n"), "%s", all.c_str());
    cr_assert(o.out.size() >= 2 && o.out.substr(o.out.size() - 2) == "1\n", "the scope is left: %s",
              all.c_str());
}

// The unit a container acts on is named by config.json and read back from
// the state file: a cgroupsPath naming a unit that exists is refused at
// create (StartTransientUnit fails, naming the unit) and what that unit's
// cgroup holds is not killed on the way out; a state file
// rewritten to name another unit (here a scope of the node's own) gets
// delete refused before anything in that cgroup is killed, and update too;
// delete --force removes the state and touches neither.
Test(systemd, attack_a_unit_that_is_not_the_containers) {
    need_node();
    auto victim = script_in("x", "(setsid systemd-run --quiet --unit=victim-x --scope sleep 300 > "
                                 "/dev/null 2>&1 < /dev/null &); for i in $(seq 50); do "
                                 "systemctl is-active --quiet victim-x.scope && break; sleep 0.1; "
                                 "done; systemctl is-active victim-x.scope");
    test::Bundle taken = node_bundle("sdtaken", {"true"}, "system.slice:victim:x");
    taken.save();
    auto c = oci_in({"create", "--bundle", taken.dir, "sdtaken"});
    test::Bundle b = node_bundle("sdown", {"sleep", "300"}, "system.slice:ocirun:sd6");
    b.save();
    auto c6 = oci_in({"create", "--bundle", b.dir, "sd6"});
    std::string state = g_node.share + "/state/sd6/state.json";
    std::string rec = test::read_file(state);
    for (size_t at; (at = rec.find("ocirun-sd6.scope")) != std::string::npos;)
        rec.replace(at, 16, "victim-x.scope");
    for (size_t at; (at = rec.find("system.slice:ocirun:sd6")) != std::string::npos;)
        rec.replace(at, 23, "system.slice:victim:x");
    test::write_file(state, rec);
    auto d = oci_in({"delete", "sd6"});
    auto u = oci_in({"update", "--pids-limit", "5", "sd6"});
    // --force: the state goes, the unit and its cgroup are not touched.
    auto forced = oci_in({"delete", "--force", "sd6"});
    auto st = oci_in({"state", "sd6"});
    auto alive = script_in("x", "systemctl is-active victim-x.scope; "
                                "systemctl show -p TasksMax --value victim-x.scope");
    cr_assert(victim.out == "active\n", "%s%s", victim.out.c_str(), victim.err.c_str());
    cr_assert_neq(c.status, 0);
    cr_assert(contains(c.err, "victim-x.scope") && contains(c.err, "UnitExists"), "%s",
              c.err.c_str());
    cr_assert_eq(c6.status, 0, "%s", c6.err.c_str());
    cr_assert(d.status != 0 && contains(d.err, "not the container's"), "%s", d.err.c_str());
    cr_assert_neq(u.status, 0);
    cr_assert(contains(u.err, "not the container's"), "%s", u.err.c_str());
    cr_assert_eq(forced.status, 0, "%s", forced.err.c_str());
    cr_assert(contains(forced.err, "not the container's") &&
                  contains(forced.err, "nothing it names is killed"),
              "%s", forced.err.c_str());
    cr_assert_neq(st.status, 0, "the state is left");
    cr_assert(alive.out.rfind("active\n", 0) == 0 && !contains(alive.out, "\n5\n"),
              "the node's scope was touched: %s", alive.out.c_str());
}

// ---- An unprivileged user's manager (rootless --systemd-cgroup) -------------

namespace {

// The node's user's manager (user@UID.service) started, on a node whose
// cgroups are v2 alone (a user's manager is given that hierarchy only).
void user_node_init() {
    boot(false);
    if (!g_node.skip.empty() || !g_node.failure.empty()) return;
    if (!node_pure_v2()) {
        g_node.skip = "a user's systemd manager needs a host whose cgroups are v2 alone";
        return;
    }
    const std::string uid = std::to_string(test::kNodeUser);
    auto o = test::in_node(g_node, {"/usr/bin/systemctl", "start", "user@" + uid + ".service"});
    if (o.status != 0)
        g_node.failure =
            "start user@" + uid + ".service: " + o.out + o.err +
            test::in_node(g_node, {"/usr/bin/journalctl", "--no-pager", "-n", "30"}).out;
}

// A shell script as the node's user, logged in as over ssh: its processes
// in a cgroup of root's (the node's oci-run-tests, not its manager's), with
// XDG_RUNTIME_DIR (and so its bus) set. $OCI is oci-run --systemd-cgroup
// with the user's --root, $ID the container, $UNIT its scope's D-Bus path
// in the user's manager, $CG its cgroup directory.
test::Output user_script(const std::string &id, const std::string &body) {
    const std::string uid = std::to_string(test::kNodeUser);
    // The user reaches the shared directory (bundles, its --root).
    ::chmod(g_node.dir.c_str(), 0755);
    ::chmod(g_node.share.c_str(), 0755);
    const std::string state = g_node.share + "/ustate";
    if (!test::exists(state)) {
        ::mkdir(state.c_str(), 0700);
        (void)::chown(state.c_str(), test::kNodeUser, test::kNodeUser);
    }
    std::string oci =
        test::absolute_path(test::oci_run_path()) + " --systemd-cgroup --root " + state;
    std::string unit = "oci-run-" + id + ".scope";
    std::string cg = "/sys/fs/cgroup/user.slice/user-" + uid + ".slice/user@" + uid +
                     ".service/user.slice/" + unit;
    return test::in_node(g_node,
                         {"/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups",
                          "/usr/bin/env", "-u", "DBUS_SESSION_BUS_ADDRESS", "HOME=/home/ocitest",
                          "XDG_RUNTIME_DIR=/run/user/" + uid, "/bin/sh", "-c",
                          "OCI='" + oci + "'; ID=" + id + "; UNIT=" + test::unit_object_path(unit) +
                              "; CG=" + cg + "; " + body});
}

// A bundle for the node's user (`oci-run spec --rootless` as it would write
// it: its uid and gid mapped to root), readable by it.
test::Bundle user_bundle(const char *tag, const std::vector<std::string> &args) {
    test::Bundle b = node_bundle(tag, args, "");
    ::chmod(b.dir.c_str(), 0755);
    ocirun::oci::Spec s = ocirun::oci::default_spec(true, test::kNodeUser, test::kNodeUser);
    s.root->path = b.rootfs;
    s.process->args = args;
    s.process->terminal = false;
    b.spec = std::move(s);
    return b;
}

} // namespace

TestSuite(systemd_user, .init = user_node_init, .fini = node_fini, .timeout = 240);

// A rootless container with --systemd-cgroup, run by a user logged in as
// over ssh: its scope is made by the user's own manager, in user.slice below
// user@UID.service (runc's default for a rootless container), with the
// resources as the properties that manager reports and in the files; the
// limits hold (a fork bomb stops at TasksMax); update; exec joins the scope
// (the user may not move a process there itself: its manager does, asking
// the system's); ps, pause and resume, kill --all; delete stops the unit and
// leaves no cgroup.
Test(systemd_user, a_users_manager_holds_a_rootless_container) {
    need_node();
    test::Bundle b = user_bundle("sduser", {"sh", "-c",
                                            "(for i in $(seq 60); do sleep 30 & done) "
                                            "2>/dev/null; exec sleep 300"});
    auto &r = b.spec.linux_->resources.emplace();
    r.pids.emplace().limit = 16;
    r.memory.emplace().limit = 64 << 20;
    b.save();
    auto o = user_script(
        "u1",
        "$OCI create --bundle " + b.dir +
            " $ID > /dev/null 2>&1 < /dev/null || { echo create-failed; $OCI create --bundle " +
            b.dir +
            " x 2>&1; exit 1; }; $OCI start $ID || exit 2; "
            "p=$($OCI state $ID | sed -n 's/.*\"pid\": *\\([0-9]*\\).*/\\1/p'); "
            "echo init=$(grep '^0::' /proc/$p/cgroup); "
            "for i in $(seq 100); do n=$(cat $CG/pids.current); [ \"$n\" -ge 15 ] && break; "
            "sleep 0.1; done; echo current=$n; echo events=$(cat $CG/pids.events); "
            "B='busctl --user get-property org.freedesktop.systemd1 '$UNIT' "
            "org.freedesktop.systemd1.Scope'; "
            "echo tasks=$($B TasksMax) memory=$($B MemoryMax) slice=$($B Slice); "
            "echo files=$(cat $CG/pids.max $CG/memory.max); "
            "$OCI update --pids-limit 40 $ID && echo updated=$($B TasksMax) $(cat $CG/pids.max); "
            "$OCI exec --detach --pid-file $HOME/x.pid $ID sleep 300 && "
            "echo exec=$(grep '^0::' /proc/$(cat $HOME/x.pid)/cgroup); "
            "echo ps=$($OCI ps $ID | tail -n +2 | wc -l); "
            "$OCI pause $ID && echo frozen=$(cat $CG/cgroup.freeze) && $OCI resume $ID && "
            "$OCI state $ID | grep -o running; "
            "$OCI kill --all $ID KILL; for i in $(seq 50); do $OCI state $ID | grep -q stopped && "
            "break; sleep 0.1; done; $OCI delete $ID && echo deleted; "
            "busctl --user call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
            "org.freedesktop.systemd1.Manager GetUnit s oci-run-$ID.scope 2>&1 | "
            "grep -c 'not loaded'; test -e $CG && echo left; true");
    std::string uid = std::to_string(test::kNodeUser);
    std::string scope =
        "/user.slice/user-" + uid + ".slice/user@" + uid + ".service/user.slice/oci-run-u1.scope";
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    cr_assert(contains(o.out, "init=0::" + scope + "\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "current=15\n") || contains(o.out, "current=16\n"), "%s",
              all.c_str());
    cr_assert(contains(o.out, "events=max ") && !contains(o.out, "events=max 0\n"), "%s",
              all.c_str());
    cr_assert(contains(o.out, "tasks=t 16 memory=t 67108864 slice=s \"user.slice\"\n"), "%s",
              all.c_str());
    cr_assert(contains(o.out, "files=16 67108864\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "updated=t 40 40\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "exec=0::" + scope + "\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "frozen=1\nrunning\n"), "%s", all.c_str());
    cr_assert(contains(o.out, "deleted\n1\n") && !contains(o.out, "left"), "%s", all.c_str());
}

// Without the user's bus (no dbus-user-session, or a broken address), the
// manager's private socket in $XDG_RUNTIME_DIR serves; a cgroupsPath's
// slice is made in the user's manager (as runc: user-ocirun.slice).
Test(systemd_user, the_managers_private_socket_and_a_slice_of_the_users) {
    need_node();
    test::Bundle b = user_bundle("sdupriv", {"sh", "-c", "grep '^0::' /proc/self/cgroup"});
    b.spec.linux_->cgroups_path = "user-ocirun.slice:p:u2";
    // (Without a cgroup namespace of its own, it sees where it is.)
    std::erase_if(b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::cgroup; });
    b.save();
    auto o =
        user_script("u2", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent $OCI run --bundle " +
                              b.dir + " $ID < /dev/null");
    std::string uid = std::to_string(test::kNodeUser);
    cr_assert_eq(o.status, 0, "%s%s", o.out.c_str(), o.err.c_str());
    cr_assert(o.out == "0::/user.slice/user-" + uid + ".slice/user@" + uid +
                           ".service/user.slice/user-ocirun.slice/p-u2.scope\n",
              "%s%s", o.out.c_str(), o.err.c_str());
}

// Where the host has v1 hierarchies, a user's manager is given none of them:
// a rootless container with --systemd-cgroup is refused (as runc), saying
// why, and leaves no state.
void users_manager_refused_beside_v1() {
    need_node();
    if (node_pure_v2()) cr_skip_test("the node's cgroups are v2 alone: see systemd_user");
    test::Bundle b = user_bundle("sdurefuse", {"true"});
    b.save();
    auto o = user_script("u3", "$OCI create --bundle " + b.dir +
                                   " $ID < /dev/null; echo rc=$?; $OCI state $ID > /dev/null "
                                   "2>&1 || echo no-state");
    cr_assert(contains(o.out, "rc=1\nno-state\n"), "%s%s", o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.err, "--systemd-cgroup: as an unprivileged user") &&
                  contains(o.err, "cgroups are v2 alone"),
              "%s", o.err.c_str());
}

Test(systemd, a_users_manager_is_refused_beside_v1_hierarchies) {
    users_manager_refused_beside_v1();
}

Test(systemd_v1, a_users_manager_is_refused_beside_v1_hierarchies) {
    users_manager_refused_beside_v1();
}

// In a user's manager as in the system's: a state file rewritten to name a
// unit of the user's own (init.scope, the user's manager itself) gets
// delete and update refused before anything in its cgroup is killed;
// delete --force removes the state and touches neither.
Test(systemd_user, attack_a_users_unit_that_is_not_the_containers) {
    need_node();
    test::Bundle b = user_bundle("sduatk", {"sleep", "300"});
    b.save();
    auto c = user_script("u4", "$OCI create --bundle " + b.dir + " $ID < /dev/null > /dev/null 2>&1 || exit 1");
    std::string state = g_node.share + "/ustate/u4/state.json";
    std::string rec = test::read_file(state);
    for (const auto &[from, to] : std::vector<std::pair<std::string, std::string>>{
             {"user.slice/oci-run-u4.scope", "init.scope"},
             {"\"cgroupsPath\":\"\"", "\"cgroupsPath\":\"-.slice::init\""}})
        for (size_t at; (at = rec.find(from)) != std::string::npos;)
            rec.replace(at, from.size(), to);
    test::write_file(state, rec);
    auto o = user_script("u4", "$OCI delete $ID; echo rc=$?; $OCI update --pids-limit 5 $ID; "
                               "echo rc=$?; $OCI delete --force $ID; echo rc=$?; "
                               "systemctl --user is-active init.scope; "
                               "systemctl --user show -p TasksMax --value init.scope");
    cr_assert_eq(c.status, 0, "%s%s", c.out.c_str(), c.err.c_str());
    cr_assert(
        contains(rec, "\"cgroupsPath\":\"-.slice::init\"") &&
            contains(rec, "user@" + std::to_string(test::kNodeUser) + ".service/init.scope\""),
        "%s", rec.c_str());
    cr_assert(o.out.rfind("rc=1\nrc=1\nrc=0\nactive\n", 0) == 0 && !contains(o.out, "\n5\n"),
              "%s%s", o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.err, "not the container's"), "%s", o.err.c_str());
}
