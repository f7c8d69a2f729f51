// Attacks from runc's and crun's CVE history, attempted from a container, each
// shown to fail. (The rootfs issue adds the mount and masked-path ones.)
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/record.hpp"
#include "runtime/process/proc.hpp"
#include "support/container_env.hpp"
#include "support/host_snapshot.hpp"
#include "support/leftovers.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::oci;
using test::read_file;
using test::state_of;
using test::status_hex;

namespace {

bool wait_for_file(const std::string &path, int timeout_ms) {
    for (int waited = 0; waited <= timeout_ms; waited += 20) {
        if (test::exists(path)) return true;
        usleep(20000);
    }
    return false;
}

} // namespace

TestSuite(cve, .fini = cleanup_all, .timeout = 60);

// CVE-2019-5736. Container A is created: its init waits for `start` in A's
// namespaces, running the exec stage (runtime/lifecycle/exec_stage.hpp) or, where the
// stage cannot be used, the runtime's own code. Container B shares the
// host's PID namespace and has CAP_SYS_PTRACE, so PR_SET_DUMPABLE alone would
// not stop it from opening /proc/<A's init>/exe. It holds that file open
// until A is gone (no more ETXTBSY) and then writes through it, as the
// published exploit does. The runtime binary and the stage that created A
// (copies, so a failure cannot damage the build) must be unchanged, and what
// B reached must be the sealed view: `seal` is OCI_RUN_SEAL for A's runtime
// ("" for the default, "memfd" for the copy); `host_pid` puts A in the host's
// PID namespace, where the stage is not used.
namespace {

struct Attack {
    test::FileRun create_a;
    test::Output delete_a;
    bool ready = false;
    int run_b = -1;
    std::string exe, rc, err;
    bool binary_unchanged = false;
    std::string map_files_write; // what writing through /proc/PID/map_files did
};

// The other way to a process's binary: /proc/PID/map_files/RANGE for each
// mapping of it (open needs CAP_SYS_ADMIN in the host's user namespace; the
// test has it). Tries to append a byte through each: "" when every mapping
// was found and refused, else what happened.
std::string write_through_map_files(long pid) {
    std::string maps = read_file("/proc/" + std::to_string(pid) + "/maps"), out;
    std::istringstream in(maps);
    std::string line;
    int found = 0;
    while (std::getline(in, line)) {
        if (line.find("oci-run") == std::string::npos) continue;
        found++;
        std::string range = line.substr(0, line.find(' '));
        // maps pads addresses to 8 digits; map_files names them without
        // leading zeros (a non-PIE binary maps at 0x400000).
        unsigned long lo = 0, hi = 0;
        std::sscanf(range.c_str(), "%lx-%lx", &lo, &hi);
        char name[64];
        std::snprintf(name, sizeof name, "%lx-%lx", lo, hi);
        std::string link = "/proc/" + std::to_string(pid) + "/map_files/" + name;
        int fd = ::open(link.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        int e = errno;
        if (fd >= 0) {
            if (::write(fd, "x", 1) == 1) out += "wrote through " + range + "; ";
            e = errno;
            ::close(fd);
        }
        // Refused: a read-only view (EROFS), a sealed copy (EPERM), or a
        // file being executed (ETXTBSY; the memfd copy while the init runs).
        if (e != EROFS && e != EPERM && e != ETXTBSY) out += range + ": " + std::strerror(e) + "; ";
    }
    if (found == 0) out = "no mapping of the binary in the init's maps";
    return out;
}

Attack attack_runtime_binary(const char *seal, bool host_pid = false) {
    Attack at;
    std::string bin_dir = test::track_dir(test::make_temp_dir("cve5736bin"));
    std::string runtime = bin_dir + "/oci-run", stage = bin_dir + "/oci-run-exec-stage";
    std::string original = read_file(test::oci_run_path());
    std::string built_stage = test::oci_run_path();
    built_stage = built_stage.substr(0, built_stage.rfind('/') + 1) + "oci-run-exec-stage";
    std::string original_stage = read_file(built_stage);
    cr_assert(original.size() > 1000, "cannot read %s", test::oci_run_path().c_str());
    cr_assert(original_stage.size() > 1000, "cannot read %s", built_stage.c_str());
    test::write_file(runtime, original);
    test::write_file(stage, original_stage);
    ::chmod(runtime.c_str(), 0755);
    ::chmod(stage.c_str(), 0755);

    Env a = make_env("cveA", {"true"});
    if (host_pid)
        std::erase_if(a.b.spec.linux_->namespaces,
                      [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    a.b.save();
    std::string saved = test::oci_run_path();
    ::setenv("OCI_RUN", runtime.c_str(), 1);
    if (*seal) ::setenv("OCI_RUN_SEAL", seal, 1);
    at.create_a = create(a);
    ::unsetenv("OCI_RUN_SEAL");
    ::setenv("OCI_RUN", saved.c_str(), 1);
    long init = state_of(a.root, a.id).pid;
    at.map_files_write = write_through_map_files(init);

    std::string shared = test::track_dir(test::make_temp_dir("cve5736"));
    std::string pid = std::to_string(init);
    Env b = make_env("cveB",
                     {"sh", "-c",
                      "readlink /proc/" + pid + "/exe > /shared/exe; exec 3</proc/" + pid +
                          "/exe || exit 9; touch /shared/ready; "
                          "while [ ! -e /shared/go ]; do sleep 0.05; done; "
                          "(echo PWNED > /proc/self/fd/3) 2>/shared/err; echo $? > /shared/rc"});
    std::erase_if(b.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    test::add_capabilities(b, {"CAP_SYS_PTRACE"});
    ocirun::oci::Mount m;
    m.destination = "/shared";
    m.type = "bind";
    m.source = shared;
    m.options = {"rbind"};
    b.b.spec.mounts.push_back(m);
    b.b.save();
    test::Spawned sb = test::spawn_oci({"--root", b.root, "run", "--bundle", b.b.dir, b.id});
    at.ready = wait_for_file(shared + "/ready", 5000);
    at.delete_a = oci({"--root", a.root, "delete", "--force", a.id});
    test::write_file(shared + "/go", "");
    at.run_b = test::wait_bounded(sb.pid, 10000);
    at.exe = read_file(shared + "/exe");
    at.rc = read_file(shared + "/rc");
    at.err = read_file(shared + "/err");
    at.binary_unchanged = read_file(runtime) == original && read_file(stage) == original_stage;
    cleanup_all();
    return at;
}

void expect_attack_failed(const Attack &at) {
    cr_assert_eq(at.create_a.status, 0, "create A: %s", at.create_a.err.c_str());
    cr_assert(at.ready, "B never opened A's /proc/PID/exe (exe link: %s)", at.exe.c_str());
    cr_assert_eq(at.delete_a.status, 0, "delete A: %s", at.delete_a.err.c_str());
    cr_assert_eq(at.run_b, 0, "run B: %d", at.run_b);
    cr_assert(at.binary_unchanged, "the runtime binary was modified (B's write: rc %s)",
              at.rc.c_str());
    cr_assert(!at.rc.empty() && at.rc != "0\n", "B's write through the exe link succeeded");
    cr_assert(at.map_files_write.empty(), "written through map_files %s",
              at.map_files_write.c_str());
}

} // namespace

// The exec stage, from its sealed memfd copy (the same as root or not).
Test(cve, cve_2019_5736_sealed_stage_copy_cannot_be_overwritten) {
    Attack at = attack_runtime_binary("");
    expect_attack_failed(at);
    cr_assert(at.exe.rfind("/memfd:oci-run-exec-stage", 0) == 0, "A's init ran from %s",
              at.exe.c_str());
}

// A in the host's PID namespace: no exec stage, the runtime re-executed
// itself from its sealed view before making A (and so A's init is that). As
// root, a private read-only overlay whose path is "/oci-run" at the root of a
// mount in no mount table; the write gets EROFS.
Test(cve, cve_2019_5736_sealed_runtime_where_the_stage_is_not_used) {
    if (!contains(read_file("/proc/filesystems"), "\toverlay\n"))
        cr_skip_test("no overlayfs on this host: the memfd copy is used (tested below)");
    Attack at = attack_runtime_binary("", true);
    expect_attack_failed(at);
    cr_assert_str_eq(at.exe.c_str(), "/oci-run\n", "A's init ran from %s", at.exe.c_str());
    cr_assert(contains(at.err, "Read-only file system"), "B's write: %s", at.err.c_str());
}

// The same with the runtime's sealed memfd copy (the way without overlayfs
// or privilege for it).
Test(cve, cve_2019_5736_sealed_runtime_memfd_copy_cannot_be_overwritten) {
    Attack at = attack_runtime_binary("memfd", true);
    expect_attack_failed(at);
    cr_assert(at.exe.rfind("/memfd:oci-run", 0) == 0 &&
                  at.exe.rfind("/memfd:oci-run-exec-stage", 0) != 0,
              "A's init ran from %s", at.exe.c_str());
}

// Hosts that restrict executable memfds (vm.memfd_noexec, Linux 6.3+, set
// per PID namespace: here only in one made for the test). At 1 a memfd is
// executable only when made with MFD_EXEC; at 2 none is, and the stage
// comes through the overlay. A container runs either way.
Test(cve, cve_2019_5736_stage_where_memfds_are_not_executable) {
    if (::access("/proc/sys/vm/memfd_noexec", F_OK) != 0)
        cr_skip_test("this kernel has no vm.memfd_noexec (6.3+)");
    std::vector<std::pair<int, test::Output>> runs;
    for (int level : {1, 2}) {
        Env e = make_env(level == 1 ? "noexec1" : "noexec2", {"echo", "ran"});
        e.b.save();
        runs.push_back({level, test::run({"unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
                                          "echo " + std::to_string(level) +
                                              " > /proc/sys/vm/memfd_noexec && exec \"$0\" "
                                              "\"$@\"",
                                          test::oci_run_path(), "--root", e.root, "run", "--bundle",
                                          e.b.dir, e.id})});
    }
    cleanup_all();
    for (const auto &[level, o] : runs) {
        cr_assert_eq(o.status, 0, "vm.memfd_noexec=%d: %s", level, o.err.c_str());
        cr_assert_str_eq(o.out.c_str(), "ran\n", "vm.memfd_noexec=%d", level);
    }
}

// When create returns, the init already runs the sealed stage: create waits
// for the stage's exec, so nothing that joins the container afterwards can
// meet the init running the runtime's binary. ps shows it as oci-run-stage. The init is held 300 ms
// right before that exec (OCI_RUN_FAULT_DELAY, a -Dfault_injection build).
Test(cve, cve_2019_5736_create_returns_with_the_init_in_the_sealed_stage) {
    Env e = make_env("stagenow", {"true"});
    e.b.save();
    ::setenv("OCI_RUN_FAULT_DELAY", "init:staging", 1);
    auto c = create(e);
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    long pid = state_of(e.root, e.id).pid;
    char buf[256] = "";
    ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(exe.rfind("/memfd:oci-run-exec-stage", 0) == 0,
              "the init ran %s when create returned", exe.c_str());
    cr_assert_str_eq(comm.c_str(), "oci-run-stage\n", "what ps shows of the init");
}

// An installed prefix put anywhere (sbin/oci-run beside
// libexec/oci-run/oci-run-exec-stage: a DESTDIR staging, /opt/NAME): the
// runtime finds its exec stage there as it finds its other helpers, not only
// in the configured $libexecdir, and the init runs from the stage's sealed
// copy rather than the runtime re-executing itself.
Test(cve, exec_stage_found_in_a_relocated_prefix) {
    std::string prefix = test::track_dir(test::make_temp_dir("prefix"));
    std::string runtime = prefix + "/sbin/oci-run";
    std::string stage = prefix + "/libexec/oci-run/oci-run-exec-stage";
    std::string built_stage = test::oci_run_path();
    built_stage = built_stage.substr(0, built_stage.rfind('/') + 1) + "oci-run-exec-stage";
    for (const char *d : {"/sbin", "/libexec", "/libexec/oci-run"})
        cr_assert_eq(::mkdir((prefix + d).c_str(), 0755), 0, "mkdir %s", d);
    test::write_file(runtime, read_file(test::oci_run_path()));
    test::write_file(stage, read_file(built_stage));
    ::chmod(runtime.c_str(), 0755);
    ::chmod(stage.c_str(), 0755);
    Env e = make_env("stpfx", {"true"});
    e.b.save();
    std::string saved = test::oci_run_path();
    ::setenv("OCI_RUN", runtime.c_str(), 1);
    auto c = create(e);
    ::setenv("OCI_RUN", saved.c_str(), 1);
    long pid = state_of(e.root, e.id).pid;
    char buf[256] = "";
    ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(exe.rfind("/memfd:oci-run-exec-stage", 0) == 0, "the init runs %s", exe.c_str());
}

namespace {

// What the process `exec` starts runs from while the container first sees it
// (held there 300 ms): /proc/PID/exe of the runtime's child that is in the
// container's PID namespace, and what the exec printed.
struct SeenExec {
    std::string exe, out, err;
    int status = -1;
    int write_errno = -1; // of a write through /proc/PID/exe (0: it went through)
};
SeenExec exe_of_exec_child(const Env &e) {
    long init = state_of(e.root, e.id).pid;
    std::string pidns = test::ns_link(init, "pid");
    ::setenv("OCI_RUN_FAULT_DELAY", "exec-child:visible", 1);
    test::Spawned x = test::spawn_oci({"--root", e.root, "exec", e.id, "echo", "exec-ran"});
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    SeenExec seen;
    int held = -1;
    for (int waited = 0; seen.exe.empty() && waited < 3000; waited += 5) {
        for (const auto &name : test::dir_entries("/proc")) {
            if (name.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string stat = read_file("/proc/" + name + "/stat");
            size_t paren = stat.rfind(')');
            if (paren == std::string::npos) continue;
            long ppid = std::atol(stat.c_str() + paren + 4); // ") S PPID"
            if (ppid != x.pid || test::ns_link(std::stol(name), "pid") != pidns) continue;
            char buf[256];
            ssize_t n = ::readlink(("/proc/" + name + "/exe").c_str(), buf, sizeof buf - 1);
            if (n > 0) seen.exe.assign(buf, static_cast<size_t>(n));
            // Held, to be written once the process has exec'd (as in
            // CVE-2019-5736).
            if (held < 0) held = ::open(("/proc/" + name + "/exe").c_str(), O_PATH | O_CLOEXEC);
        }
        if (seen.exe.empty()) ::usleep(5000);
    }
    seen.status = test::wait_bounded(x.pid, 10000);
    // Whatever it ran from cannot be written, even by the host's root (a
    // sealed memfd: EPERM; the overlay view: EROFS).
    if (held >= 0) {
        int fd = ::open(("/proc/self/fd/" + std::to_string(held)).c_str(), O_WRONLY | O_CLOEXEC);
        seen.write_errno = fd < 0 ? errno : ::write(fd, "PWNED", 5) < 0 ? errno : 0;
        if (fd >= 0) ::close(fd);
        ::close(held);
    }
    seen.out = read_file(x.out_path);
    seen.err = read_file(x.err_path);
    return seen;
}

} // namespace

// exec without re-executing the runtime: the process the container sees is
// forked by the exec stage's sealed copy, never the runtime's binary, with
// and without a user namespace. Where the container's user namespace maps the
// runtime's own uid (as a rootless container's does), the stage's memory
// would belong to that namespace, whose CAP_SYS_PTRACE would reach it
// (exec_stage.hpp open_join_stage): exec re-executes the runtime sealed
// instead, as before, and the process runs from that view. Either cannot be
// written through the process's exe link.
Test(cve, exec_process_forked_by_the_sealed_stage) {
    struct Case {
        const char *name;
        int userns; // 0: none; 1: 0 -> 100000; 2: 0 -> 0 (the runtime's uid mapped)
        bool stage;
    } cases[] = {
        {"no user namespace", 0, true},
        {"a user namespace", 1, true},
        {"a user namespace that maps the runtime's uid", 2, false},
    };
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("exstage", {"sleep", "30"});
        if (c.userns) test::use_user_namespace(e);
        if (c.userns == 2) {
            e.b.spec.linux_->uid_mappings = {{0, 0, 65536}};
            e.b.spec.linux_->gid_mappings = {{0, 0, 65536}};
        }
        e.b.save();
        auto cr = create(e);
        oci({"--root", e.root, "start", e.id});
        SeenExec seen = exe_of_exec_child(e);
        cleanup_all();
        std::string what = std::string(c.name) + ": ";
        if (cr.status != 0) {
            failures += what + "create: " + cr.err + "\n";
            continue;
        }
        if (seen.status != 0 || seen.out != "exec-ran\n")
            failures +=
                what + "exec (" + std::to_string(seen.status) + "): " + seen.out + seen.err + "\n";
        bool from_stage = seen.exe.rfind("/memfd:oci-run-exec-stage", 0) == 0;
        bool sealed_runtime = seen.exe.rfind("/memfd:oci-run ", 0) == 0 || seen.exe == "/oci-run";
        if (c.stage ? !from_stage : !sealed_runtime)
            failures += what + "the process ran from \"" + seen.exe + "\"\n";
        if (seen.write_errno != EPERM && seen.write_errno != EROFS)
            failures += what + "a write through its exe link: " +
                        (seen.write_errno > 0 ? std::strerror(seen.write_errno) : "went through") +
                        "\n";
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// The other way to the binary: a process of /proc/self/exe (or a
// `#!/proc/self/exe` script) runs whatever the init, or the process exec
// started, exec'd from. That is the exec stage's sealed view, which refuses
// to run without the runtime's arguments; the runtime's binary would have
// said "missing command".
Test(cve, cve_2019_5736_proc_self_exe_entry_point_runs_the_sealed_stage) {
    Env e = make_env("selfexe", {"/proc/self/exe"});
    auto o = run(e);
    cleanup_all();
    cr_assert_eq(o.status, 127, "status %d: %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "oci-run-exec-stage: run by oci-run only"), "%s", o.err.c_str());
    // And a process `exec` starts: the stage forked it.
    Env x = make_env("selfexex", {"sleep", "30"});
    x.b.save();
    auto c = create(x);
    oci({"--root", x.root, "start", x.id});
    auto ex = oci({"--root", x.root, "exec", x.id, "/proc/self/exe"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(ex.status, 127, "exec: status %d: %s", ex.status, ex.err.c_str());
    cr_assert(contains(ex.err, "oci-run-exec-stage: run by oci-run only"), "exec: %s",
              ex.err.c_str());
}

// CVE-2024-21626: a process.cwd of /proc/self/fd/N reaches whatever the init
// still has open there (in runc, a host cgroup directory). Every such cwd is
// refused with one line naming process.cwd, for run and for exec --cwd.
Test(cve, cve_2024_21626_cwd_through_leaked_fds_is_refused) {
    std::string failures;
    for (int fd = 3; fd <= 12; fd++) {
        Env e = make_env("cve21626", {"sh", "-c", "ls /proc/self/cwd/; pwd"});
        e.b.spec.process->cwd = "/proc/self/fd/" + std::to_string(fd);
        auto o = test::run(e);
        if (o.status != 1 || !contains(o.err, "process.cwd") || test::count_lines(o.err) != 1)
            failures += "fd " + std::to_string(fd) + ": status " + std::to_string(o.status) +
                        " out " + o.out + " err " + o.err + "\n";
    }
    Env x = make_env("cve21626x", {"sleep", "30"});
    x.b.save();
    auto c = create(x);
    auto s = oci({"--root", x.root, "start", x.id});
    std::string exec_failures;
    for (int fd = 3; fd <= 12; fd++) {
        auto o = oci({"--root", x.root, "exec", "--cwd", "/proc/self/fd/" + std::to_string(fd),
                      x.id, "pwd"});
        if (o.status != 1 || !contains(o.err, "cwd"))
            exec_failures += "fd " + std::to_string(fd) + ": status " + std::to_string(o.status) +
                             " out " + o.out + " err " + o.err + "\n";
    }
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(exec_failures.empty(), "%s", exec_failures.c_str());
}

// CVE-2024-21626: an init that waits for start without the exec stage (a
// startContainer hook here) runs in the container before it execs, so it
// holds no host directory: none of its descriptors is under the host's
// /sys/fs/cgroup (the runtime's cgroup files are opened below the mounts it
// opens once, which it closes before the init is cloned).
Test(cve, cve_2024_21626_the_waiting_init_holds_no_host_cgroup_directory) {
    Env e = make_env("cve21626h", {"true"});
    e.b.spec.hooks.emplace();
    e.b.spec.hooks->start_container = {{"/bin/true", {"true"}, {}, std::nullopt}};
    e.b.save();
    auto c = create(e);
    long pid = test::state_of(e.root, e.id).pid;
    std::string fds, held;
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    for (const auto &name : test::dir_entries(dir)) {
        char target[512] = "";
        ssize_t n = ::readlink((dir + "/" + name).c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        std::string t(target, static_cast<size_t>(n));
        fds += name + " -> " + t + "\n";
        if (t.starts_with("/sys")) held += name + " -> " + t + "\n";
    }
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(!fds.empty(), "the init's descriptors were not read (pid %ld)", pid);
    cr_assert(held.empty(), "the waiting init holds:\n%s", held.c_str());
}

// CVE-2022-29162: the inheritable and ambient sets start empty (a setuid or
// file-capability program must not gain what the runtime happened to hold),
// for the init and for exec.
Test(cve, cve_2022_29162_inheritable_and_ambient_start_empty) {
    Env e =
        make_env("cve29162", {"sh", "-c", "grep -E '^Cap(Inh|Amb)' /proc/self/status; sleep 30"});
    e.b.spec.process->capabilities->inheritable.clear();
    e.b.spec.process->capabilities->ambient.clear();
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    auto x =
        oci({"--root", e.root, "exec", e.id, "grep", "-E", "^Cap(Inh|Amb)", "/proc/self/status"});
    usleep(200000);
    std::string out = read_file(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    const char *want = "CapInh:\t0000000000000000\nCapAmb:\t0000000000000000\n";
    cr_assert_str_eq(out.c_str(), want);
    cr_assert_str_eq(x.out.c_str(), want);
}

// ---- hostile rootfs symlinks ------------------------------------------------------

namespace {

// A host directory the attacks aim at, with a canary file in it.
std::string host_target(const char *tag) {
    std::string d = test::track_dir(test::make_temp_dir(tag));
    test::write_file(d + "/canary", "host\n");
    return d;
}

// The host's mountinfo lines that mention `path`.
std::string host_mounts_at(const std::string &path) {
    std::string out;
    std::istringstream in(read_file("/proc/self/mountinfo"));
    std::string line;
    while (std::getline(in, line))
        if (line.find(" " + path + " ") != std::string::npos ||
            line.find(" " + path + "/") != std::string::npos)
            out += line + "\n";
    return out;
}

// What an attack aimed at a host_target left there, read before cleanup.
struct HostSeen {
    std::string mounts, canary;
};
HostSeen look_at(const std::string &host) {
    return {host_mounts_at(host), read_file(host + "/canary")};
}

// Nothing mounted over the host directory, and its canary as written.
void assert_untouched(const HostSeen &h) {
    cr_assert(h.mounts.empty(), "a host path was mounted over:\n%s", h.mounts.c_str());
    cr_assert_str_eq(h.canary.c_str(), "host\n");
}

ocirun::oci::Mount tmpfs_at(const std::string &dest) {
    return test::mount_entry(dest, "tmpfs", "tmpfs", {"nosuid", "nodev"});
}

} // namespace

// CVE-2021-30465 / CVE-2023-27561 class: a mount destination that is a
// symlink to a host path (absolute, and relative with ../..) is resolved
// inside the rootfs; nothing on the host is mounted over.
Test(cve, mount_destination_symlinks_stay_inside_the_rootfs) {
    std::string host = host_target("cvemnt");
    Env e = make_env("cvemnt", {"sh", "-c", "ls /abs /rel > /dev/null 2>&1; echo ran"});
    e.b.spec.root->readonly = false;
    ::symlink(host.c_str(), (e.b.rootfs + "/abs").c_str());
    ::symlink(("../../../../../../.." + host).c_str(), (e.b.rootfs + "/rel").c_str());
    e.b.spec.mounts.push_back(tmpfs_at("/abs"));
    e.b.spec.mounts.push_back(tmpfs_at("/rel"));
    auto o = test::run(e);
    HostSeen seen = look_at(host);
    cleanup_all();
    assert_untouched(seen);
    cr_assert(o.status == 0 || test::count_lines(o.err) == 1, "%d %s", o.status, o.err.c_str());
}

// CVE-2019-19921: /proc (or /sys) replaced by a symlink: refused, never
// followed (a procfs mounted anywhere but a real /proc directory would let
// later writes land elsewhere).
Test(cve, proc_as_a_symlink_is_refused) {
    Env e = make_env("cveproc", {"true"});
    std::string p = e.b.rootfs + "/proc";
    ::rmdir(p.c_str());
    ::symlink("/", p.c_str());
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "status %d: %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "/proc") && contains(o.err, "symlink"), "%s", o.err.c_str());
    cr_assert(left.empty());
}

// Masked and read-only paths that are symlinks to host paths: the symlink
// is masked or made read-only inside the rootfs, the host path is untouched.
Test(cve, masked_and_readonly_symlinks_do_not_reach_the_host) {
    std::string host = host_target("cvemask");
    Env e = make_env("cvemask", {"true"});
    e.b.spec.root->readonly = false;
    ::symlink((host + "/canary").c_str(), (e.b.rootfs + "/masked-file").c_str());
    ::symlink(host.c_str(), (e.b.rootfs + "/masked-dir").c_str());
    ::symlink(host.c_str(), (e.b.rootfs + "/ro-dir").c_str());
    e.b.spec.linux_->masked_paths.push_back("/masked-file");
    e.b.spec.linux_->masked_paths.push_back("/masked-dir");
    e.b.spec.linux_->readonly_paths.push_back("/ro-dir");
    auto o = test::run(e);
    HostSeen seen = look_at(host);
    cleanup_all();
    assert_untouched(seen);
    cr_assert(o.status == 0 || test::count_lines(o.err) == 1, "%d %s", o.status, o.err.c_str());
}

// CVE-2025-31133: /dev/null in the rootfs replaced (a bind of the bundle's
// own /dev over the default one) by a symlink to a host file or by a regular
// file, as root and in a user namespace. A bound /dev is used as it is (as
// runc; nothing is made in it), so what it has of the default devices is
// checked: what is not the character device 1:3 is refused (and masking
// binds /dev/null only through an fd checked the same way); the host file is
// never written or mounted over, and the container never gets a fake
// /dev/null.
Test(cve, dev_null_swapped_for_a_symlink_or_file) {
    std::string host = host_target("cvenull");
    std::string results;
    for (bool userns : {false, true})
        for (bool as_symlink : {true, false}) {
            Env e = make_env("cvenull", {"stat", "-c", "%t:%T", "/dev/null"});
            std::string evil = test::track_dir(test::make_temp_dir("cvenulldev"));
            ::chmod(evil.c_str(), 0777);
            if (as_symlink)
                ::symlink((host + "/canary").c_str(), (evil + "/null").c_str());
            else
                test::write_file(evil + "/null", "not a device\n");
            ocirun::oci::Mount dev;
            dev.destination = "/dev";
            dev.type = "bind";
            dev.source = evil;
            dev.options = {"rbind"};
            e.b.spec.mounts.push_back(dev); // after the default /dev tmpfs: replaces it
            e.b.spec.linux_->masked_paths = {"/proc/kcore"};
            if (userns) {
                test::use_user_namespace(e);
                e.b.spec.root->readonly = false;
            }
            auto o = test::run(e);
            std::string what = std::string(userns ? "userns " : "root ") +
                               (as_symlink ? "symlink" : "file") + ": ";
            if (o.status == 0 && o.out != "1:3\n")
                results += what + "the container's /dev/null is " + o.out + "\n";
            if (o.status != 0 && !contains(o.err, "1:3"))
                results += what + "status " + std::to_string(o.status) + ": " + o.err + "\n";
        }
    HostSeen seen = look_at(host);
    cleanup_all();
    cr_assert(results.empty(), "%s", results.c_str());
    assert_untouched(seen);
}

// CVE-2025-52881: the configuration binds a host file over a /proc/sys file
// that a sysctl then writes. The write goes through a private procfs and so
// reaches the container's real sysctl; the host file is untouched.
Test(cve, sysctl_writes_cannot_be_redirected_by_mounts_over_proc) {
    std::string host = host_target("cvesysctl");
    Env e = make_env("cvesysctl", {"sleep", "30"});
    ocirun::oci::Mount m;
    m.destination = "/proc/sys/kernel/shmmax";
    m.type = "bind";
    m.source = host + "/canary";
    m.options = {"bind"};
    e.b.spec.mounts.push_back(m);
    e.b.spec.linux_->sysctl["kernel.shmmax"] = "12345678";
    e.b.save();
    auto c = create(e);
    long pid = state_of(e.root, e.id).pid;
    auto seen = test::run(std::vector<std::string>{"nsenter", "-i", "-t", std::to_string(pid),
                                                   "cat", "/proc/sys/kernel/shmmax"});
    std::string canary = read_file(host + "/canary");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_str_eq(canary.c_str(), "host\n", "the write landed in the host file");
    cr_assert_str_eq(seen.out.c_str(), "12345678\n");
}

// A mount target swapped for a symlink to a host directory in a loop while
// containers start (bounded: 12 runs): every run either mounts inside the
// rootfs or fails with one line; the host directory is never mounted over.
Test(cve, mount_target_swapped_during_setup) {
    std::string host = host_target("cverace");
    Env e = make_env("cverace", {"true"});
    std::string mnt = e.b.rootfs + "/mnt";
    ::mkdir(mnt.c_str(), 0755);
    ::mkdir((mnt + "/target").c_str(), 0755);
    e.b.spec.mounts.push_back(tmpfs_at("/mnt/target"));
    e.b.save();
    std::atomic<bool> stop{false};
    std::thread racer([&] {
        std::string t = mnt + "/target", keep = mnt + "/target.dir", link = mnt + "/target.lnk";
        ::symlink(host.c_str(), link.c_str());
        while (!stop) {
            ::rename(t.c_str(), keep.c_str()); // the directory away
            ::rename(link.c_str(), t.c_str()); // the symlink in
            ::rename(t.c_str(), link.c_str()); // and back
            ::rename(keep.c_str(), t.c_str());
        }
    });
    std::string bad;
    auto mounts_before = test::mount_ids();
    for (int i = 0; i < 12; i++) {
        std::string id = test::unique_id("cverace");
        test::track(e.root, id);
        auto o = oci({"--root", e.root, "run", "--bundle", e.b.dir, id});
        if (o.status != 0 && test::count_lines(o.err) != 1)
            bad += "run " + std::to_string(i) + ": " + o.err + "\n";
        if (!host_mounts_at(host).empty())
            bad += "run " + std::to_string(i) + " mounted the host\n";
    }
    stop = true;
    racer.join();
    std::string canary = read_file(host + "/canary");
    std::string leaked = test::new_mounts(mounts_before, {e.root, e.b.dir, host, "cverace"});
    cleanup_all();
    cr_assert(bad.empty(), "%s", bad.c_str());
    cr_assert_str_eq(canary.c_str(), "host\n");
    cr_assert(leaked.empty(), "mounts leaked: %s", leaked.c_str());
}

// /proc/<pid>/root: a container that shares the host's PID namespace sees the
// host's PID 1, but without CAP_SYS_PTRACE (and with fewer capabilities than
// it) cannot go through its root: no host file is read or written that way.
Test(cve, proc_pid_root_of_a_host_process_is_out_of_reach) {
    std::string host = host_target("cvepidroot");
    Env e = make_env("cvepidroot", {"sh", "-c",
                                    "ls /proc/1/root/ > /dev/null 2>&1 && echo listed; "
                                    "echo pwned > /proc/1/root" +
                                        host +
                                        "/canary 2>/dev/null && echo wrote; "
                                        "echo done"});
    std::erase_if(e.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::pid; });
    auto o = test::run(e);
    std::string canary = read_file(host + "/canary");
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "done\n");
    cr_assert_str_eq(canary.c_str(), "host\n");
}

// ---- CVE-2016-9962: the process exec starts --------------------------------

namespace {

struct Hijack {
    test::FileRun create;
    test::Output exec;
    std::string attacker; // what exec-hijack printed
    uint64_t bounding = 0;
};

uint64_t mask_of(const std::vector<std::string> &caps) {
    uint64_t m = 0;
    for (const auto &c : caps)
        if (auto v = ocirun::oci::capability_from_name(c)) m |= 1ull << *v;
    return m;
}

// The field KEY of a /proc/PID/status text, as a hex number (0 if absent).
// A container whose process is exec-hijack, then `exec sh -c 'echo exec-ran'`
// into it with the process the container can see held 300 ms (where the old
// exec child waited for the runtime and where the new one is first visible).
// userns: 0 none, 1 mapping 0 -> 100000, 2 mapping 0 -> 0 (the runtime's
// own uid, as a rootless container's maps it).
// filter: a seccomp filter and noNewPrivileges false, so that the filter
// goes in before the identity change, with CAP_SYS_ADMIN.
Hijack hijack_exec(const char *tag, int userns, bool all_caps, bool ptrace, bool filter = false) {
    const char *helper = std::getenv("OCI_RUN_EXEC_HIJACK");
    Hijack h;
    Env e = make_env(tag, {"/exec-hijack"});
    test::write_file(e.b.rootfs + "/exec-hijack", read_file(helper));
    ::chmod((e.b.rootfs + "/exec-hijack").c_str(), 0755);
    test::write_file(e.b.rootfs + "/hijack-marker", "");
    if (userns) test::use_user_namespace(e);
    if (userns == 2) {
        e.b.spec.linux_->uid_mappings = {{0, 0, 65536}};
        e.b.spec.linux_->gid_mappings = {{0, 0, 65536}};
    }
    if (ptrace) test::add_capabilities(e, {"CAP_SYS_PTRACE"});
    if (all_caps) test::add_all_capabilities(e);
    if (filter) {
        ocirun::oci::Seccomp sc;
        sc.default_action = "SCMP_ACT_ALLOW";
        ocirun::oci::Syscall deny;
        deny.action = "SCMP_ACT_ERRNO";
        deny.names = {"kexec_load"};
        sc.syscalls = {deny};
        e.b.spec.linux_->seccomp = sc;
        e.b.spec.process->no_new_privileges = false;
    }
    h.bounding = mask_of(e.b.spec.process->capabilities->bounding);
    e.b.save();
    h.create = create(e);
    oci({"--root", e.root, "start", e.id});
    (void)test::read_output(h.create.out_path, "watching");
    ::setenv("OCI_RUN_FAULT_DELAY", "exec:cloned,exec-child:visible", 1);
    h.exec = oci({"--root", e.root, "exec", e.id, "sh", "-c", "echo exec-ran"});
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    test::wait_status(e.root, e.id, "stopped");
    h.attacker = read_file(h.create.out_path);
    cleanup_all();
    return h;
}

} // namespace

// A container process with CAP_SYS_PTRACE, in the host's user namespace when
// config.json has none of its own, writes code into the process `exec`
// starts, the moment it appears (tests/helpers/exec_hijack.cpp). That process
// is, from its first instruction in the container's PID namespace, in the
// container's user and mount namespaces, not dumpable, and holding no more
// than the exec'd process will: the code runs with the container's files
// and bounding set, never the host's. With a user namespace, or without
// CAP_SYS_PTRACE, the write is refused and the exec runs as asked: the
// process's memory belongs to a user namespace above the container's
// (the exec stage's execute-only copy, or the sealed runtime where the
// container's namespace maps the runtime's uid; exec_stage.hpp).
Test(cve, cve_2016_9962_exec_child_written_through_proc_mem_stays_in_the_container) {
    const char *helper = std::getenv("OCI_RUN_EXEC_HIJACK");
    if (!helper || ::access(helper, X_OK) != 0) cr_skip_test("no exec-hijack helper (x86-64 only)");
    struct Case {
        const char *name;
        int userns;
        bool all_caps, ptrace, reached, filter = false;
    } cases[] = {
        {"default capabilities + CAP_SYS_PTRACE", 0, false, true, true},
        // The filter goes in with CAP_SYS_ADMIN: loaded by the stage before
        // the process is in sight, so the written code finds it there (it
        // once found the process unfiltered, holding CAP_SYS_ADMIN, and made
        // a mount in the host's user namespace).
        {"CAP_SYS_PTRACE, a filter and noNewPrivileges false", 0, false, true, true, true},
        {"every capability", 0, true, false, true},
        {"CAP_SYS_PTRACE in a user namespace", 1, false, true, false},
        {"CAP_SYS_PTRACE in a user namespace that maps the runtime's uid", 2, false, true, false},
        {"default capabilities", 0, false, false, false},
    };
    std::string failures;
    for (const auto &c : cases) {
        Hijack h = hijack_exec("hijack", c.userns, c.all_caps, c.ptrace, c.filter);
        std::string what = std::string(c.name) + ": ";
        std::string seen = "\n  attacker: " + h.attacker + "  exec (" +
                           std::to_string(h.exec.status) + "): " + h.exec.out + h.exec.err;
        if (h.create.status != 0) {
            failures += what + "create: " + h.create.err + "\n";
            continue;
        }
        if (contains(h.exec.out, "ON_HOST"))
            failures += what + "the written code ran in the host's mount namespace" + seen + "\n";
        if (c.reached) {
            // The attack must have run: else the test shows nothing.
            if (!contains(h.attacker, "mem: wrote") || !contains(h.exec.out, "HIJACKED"))
                failures += what + "the attack did not get to run" + seen + "\n";
            if (!contains(h.exec.out, "IN_CONTAINER"))
                failures += what + "not in the container's root" + seen + "\n";
            uint64_t bnd = status_hex(h.exec.out, "CapBnd"), eff = status_hex(h.exec.out, "CapEff");
            if (bnd != h.bounding || (eff & ~h.bounding))
                failures += what + "capabilities beyond the container's bounding set" + seen + "\n";
            if (c.filter && !contains(h.exec.out, "Seccomp:\t2"))
                failures += what + "the process was in sight before its filter" + seen + "\n";
        } else {
            if (contains(h.exec.out, "HIJACKED") || contains(h.attacker, "mem: wrote"))
                failures += what + "the write went through" + seen + "\n";
            if (h.exec.status != 0 || h.exec.out != "exec-ran\n")
                failures += what + "the exec did not run as asked" + seen + "\n";
        }
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// The process exec starts holds its sync socket to the runtime until its
// exec, and a container process with CAP_SYS_PTRACE (without a user
// namespace) can take it (pidfd_getfd) and name another process in the
// stage's stead: a host process the test started (exec-hijack hello PID,
// with the stage's hello held 300 ms). The runtime acts only on a process
// that is its own child (the process is cloned with CLONE_PARENT): the
// host process lives, and the exec fails naming the forged PID.
Test(cve, exec_acts_only_on_its_own_child_whatever_the_socket_says) {
    const char *helper = std::getenv("OCI_RUN_EXEC_HIJACK");
    if (!helper || ::access(helper, X_OK) != 0) cr_skip_test("no exec-hijack helper (x86-64 only)");
    test::Spawned victim = test::spawn_files({"sleep", "30"});
    Env e = make_env("forgehello", {"/exec-hijack", "hello", std::to_string(victim.pid)});
    test::write_file(e.b.rootfs + "/exec-hijack", read_file(helper));
    ::chmod((e.b.rootfs + "/exec-hijack").c_str(), 0755);
    test::add_capabilities(e, {"CAP_SYS_PTRACE"});
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    (void)test::read_output(c.out_path, "watching");
    ::setenv("OCI_RUN_FAULT_DELAY", "exec-child:visible", 1);
    auto x = oci({"--root", e.root, "exec", e.id, "sh", "-c", "echo exec-ran"});
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    test::wait_status(e.root, e.id, "stopped");
    std::string attacker = read_file(c.out_path);
    bool victim_alive = !test::pid_gone_now(victim.pid);
    ::kill(victim.pid, SIGKILL);
    test::wait_bounded(victim.pid, 2000);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    // The attack must have run: else the test shows nothing.
    cr_assert(contains(attacker, "hello: sent naming " + std::to_string(victim.pid)),
              "the attack did not get to run: %s", attacker.c_str());
    cr_assert(victim_alive, "the host process the forged hello named was killed");
    cr_assert_neq(x.status, 0, "exec: %s", x.out.c_str());
    cr_assert(contains(x.err, "process " + std::to_string(victim.pid) + ", which is not"),
              "exec: %s", x.err.c_str());
}

// The container stops the process exec starts before its exec (SIGSTOP
// from its PID 1, exec-hijack stop, with the process held visible 300 ms):
// exec then waits for it, but not holding the container's lock, so the
// container can still be killed (kill takes the lock) and the exec ends.
Test(cve, a_stalled_exec_does_not_hold_off_kill) {
    const char *helper = std::getenv("OCI_RUN_EXEC_HIJACK");
    if (!helper || ::access(helper, X_OK) != 0) cr_skip_test("no exec-hijack helper (x86-64 only)");
    Env e = make_env("stallexec", {"/exec-hijack", "stop"});
    test::write_file(e.b.rootfs + "/exec-hijack", read_file(helper));
    ::chmod((e.b.rootfs + "/exec-hijack").c_str(), 0755);
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    (void)test::read_output(c.out_path, "watching");
    ::setenv("OCI_RUN_FAULT_DELAY", "exec-child:visible", 1);
    test::Spawned x = test::spawn_oci({"--root", e.root, "exec", e.id, "echo", "exec-ran"});
    ::unsetenv("OCI_RUN_FAULT_DELAY");
    std::string attacker = test::read_output(c.out_path, "stopped");
    auto k = test::oci_files({"--root", e.root, "kill", e.id, "KILL"}, -1, 5000);
    std::string after = test::wait_status(e.root, e.id, "stopped");
    int xs = test::wait_bounded(x.pid, 5000);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(contains(attacker, "stopped "), "the attack did not get to run: %s",
              attacker.c_str());
    cr_assert_eq(k.status, 0, "kill while an exec was stalled: %d %s", k.status, k.err.c_str());
    cr_assert_str_eq(after.c_str(), "stopped");
    cr_assert_neq(xs, -1, "exec did not end once the container was killed");
}

// ---- the runtime's own state ---------------------------------------------------

// A container that can write the state directory edits state.json, and the
// next delete --force kills and removes whatever cgroup it names. Every way
// a writable mount can reach --root is refused before anything is made: the
// directory itself, its parent, another container's directory inside it,
// through a symlink, through a second bind mount of its parent on the host,
// and a writable rootfs that holds it. With a sandbox policy a read-only
// one is refused too (untrusted work does not read the records); without
// one it is allowed, as runc allows a host's / bound read-only, and the
// write fails. The attack in each bundle: write another container's record.
Test(cve, mounts_that_reach_the_state_directory_are_refused) {
    test::private_mount_namespace();
    Env other = make_env("stother", {"sleep", "30"});
    other.b.save();
    auto c = create(other);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    const std::string root = other.root; // every container below shares it
    std::string parent = root.substr(0, root.rfind('/'));
    std::string links = test::track_dir(test::make_temp_dir("stlinks"));
    ::symlink(root.c_str(), (links + "/to-root").c_str());
    std::string alias = links + "/alias-of-parent";
    ::mkdir(alias.c_str(), 0755);
    cr_assert_eq(::mount(parent.c_str(), alias.c_str(), nullptr, MS_BIND, nullptr), 0, "%s",
                 std::strerror(errno));
    std::string alias_root = alias + root.substr(parent.size());
    struct Case {
        const char *name;
        std::string source;
        std::vector<std::string> options;
        bool policy;
    } cases[] = {
        {"--root", root, {"rbind"}, false},
        {"--root read-only, with a policy", root, {"rbind", "ro"}, true},
        {"its parent", parent, {"rbind"}, false},
        {"its parent read-only, with a policy", parent, {"rbind", "ro"}, true},
        {"another container's directory", root + "/" + other.id, {"rbind"}, false},
        {"a symlink to it", links + "/to-root", {"rbind"}, false},
        {"a second mount of its parent", alias_root, {"rbind"}, false},
    };
    std::string failures;
    for (const auto &k : cases) {
        Env e = make_env("stbind", {"sh", "-c", "echo '{}' > /state/" + other.id + "/state.json"});
        e.root = root;
        test::track(root, e.id);
        if (k.policy) e.b.spec.annotations["dev.ocirun.protected"] = "/nonexistent/protected";
        e.b.spec.mounts.push_back(test::mount_entry("/state", "bind", k.source, k.options));
        auto o = test::run(e);
        bool made = test::exists(root + "/" + e.id);
        if (o.status != 1 || test::count_lines(o.err) != 1 ||
            !contains(o.err, "--root " + root + ": mounts[") ||
            !contains(o.err, "the runtime's state directory") || made)
            failures += std::string(k.name) + ": " + std::to_string(o.status) + " " + o.err + "\n";
    }
    // Read-only without a policy: runs, and the write fails.
    Env ro = make_env("stbindro", {"sh", "-c", "echo '{}' > /state/" + other.id + "/state.json"});
    ro.root = root;
    test::track(root, ro.id);
    ro.b.spec.mounts.push_back(test::mount_entry("/state", "bind", root, {"rbind", "ro"}));
    auto ro_run = test::run(ro);
    // A rootfs that holds the state directory.
    Env in = make_env("strootfs", {"true"});
    in.b.spec.root->readonly = false;
    in.b.save();
    std::string inner_root = in.b.rootfs + "/var/lib/oci-run-state";
    auto o = oci({"--root", inner_root, "run", "--bundle", in.b.dir, in.id});
    bool inner_made = test::exists(inner_root + "/" + in.id);
    std::string other_record = read_file(root + "/" + other.id + "/state.json");
    ::umount2(alias.c_str(), MNT_DETACH);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_eq(ro_run.status, 1, "read-only without a policy: %s", ro_run.err.c_str());
    cr_assert(contains(ro_run.err, "Read-only file system"), "%s", ro_run.err.c_str());
    cr_assert_eq(o.status, 1, "rootfs holding --root: %s", o.err.c_str());
    cr_assert(contains(o.err, "--root " + inner_root + ": the rootfs ") &&
                  contains(o.err, "contains the runtime's state directory"),
              "%s", o.err.c_str());
    cr_assert(!inner_made);
    cr_assert(contains(other_record, "\"id\""), "the other container's record was changed: %s",
              other_record.c_str());
}

namespace {

// A created container running `sleep 30` with a cgroupsPath below `parent`
// (a cgroup parent of this test's, as Podman and containerd give one).
Env created_in_cgroup(const char *tag, const std::string &parent) {
    Env e = make_env(tag, {"sleep", "30"});
    e.b.spec.linux_->cgroups_path = parent + "/" + e.id;
    e.b.save();
    auto c = create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    return e;
}

// A created container (as created_in_cgroup) and its record, to be forged.
struct Forgeable {
    std::string parent;
    Env e;
    std::string record_path, original;
    ocirun::ContainerRecord rec;
};

Forgeable forgeable(const char *tag) {
    Forgeable f;
    f.parent = test::cgroup_parent(tag);
    f.e = created_in_cgroup(tag, f.parent);
    f.record_path = f.e.root + "/" + f.e.id + "/state.json";
    f.original = read_file(f.record_path);
    auto rec = ocirun::parse_record(f.original);
    cr_assert(rec && !rec->cgroup_dirs.empty(), "%s", f.original.c_str());
    f.rec = std::move(*rec);
    return f;
}

} // namespace

// Nothing read back from the state directory decides what to kill or
// remove without a check. The test changes a created container's record as a
// container with write access could have: its cgroup directory set to a
// victim cgroup beside the container's (a process inside), its init PID set
// to a victim process (with that process's start time), the helper's PID
// to the same victim, the record's ID to another container's. kill and
// delete --force refuse or pass over each; the victims live, the victim
// cgroup stays; with the record put back, delete works.
Test(cve, a_changed_record_does_not_decide_what_is_killed) {
    Forgeable f = forgeable("forge");
    const std::string &parent = f.parent, &record_path = f.record_path;
    Env &e = f.e;
    const ocirun::ContainerRecord *rec = &f.rec;
    std::string victim_cg =
        rec->cgroup_dirs[0].substr(0, rec->cgroup_dirs[0].rfind('/')) + "/victim";
    cr_assert_eq(::mkdir(victim_cg.c_str(), 0755), 0, "%s: %s", victim_cg.c_str(),
                 std::strerror(errno));
    test::Spawned in_cg = test::spawn_files({"sleep", "30"});
    test::write_file(victim_cg + "/cgroup.procs", std::to_string(in_cg.pid));
    test::Spawned victim = test::spawn_files({"sleep", "30"});
    usleep(50000);
    uint64_t victim_start = ocirun::process_start_time(victim.pid);
    auto forged = [&](auto change) {
        ocirun::ContainerRecord r = *rec;
        change(r);
        test::write_file(record_path, ocirun::write_record(r));
    };
    forged([&](auto &r) { r.cgroup_dirs = {victim_cg}; });
    auto del_cg = oci({"--root", e.root, "delete", e.id});
    auto events_cg = test::oci_files({"--root", e.root, "events", "--stats", e.id}, -1, 5000);
    forged([&](auto &r) {
        r.state.pid = victim.pid;
        r.init_start_time = victim_start;
    });
    auto kill_pid = oci({"--root", e.root, "kill", e.id, "KILL"});
    forged([&](auto &r) { r.state.id = "someone-else"; });
    auto kill_id = oci({"--root", e.root, "kill", e.id, "KILL"});
    forged([&](auto &r) {
        r.shim_pid = victim.pid;
        r.shim_start_time = victim_start;
    });
    auto del = oci({"--root", e.root, "delete", "--force", e.id});
    bool victim_alive = !test::pid_gone_now(victim.pid),
         in_cg_alive = !test::pid_gone_now(in_cg.pid);
    bool victim_cg_there = test::exists(victim_cg + "/cgroup.procs");
    bool container_gone = !test::exists(e.root + "/" + e.id);
    ::kill(victim.pid, SIGKILL);
    ::kill(in_cg.pid, SIGKILL);
    test::wait_bounded(victim.pid, 2000);
    test::wait_bounded(in_cg.pid, 2000);
    ::rmdir(victim_cg.c_str());
    cleanup_all();
    test::remove_cgroup_parent(parent);
    cr_assert_eq(del_cg.status, 1, "delete with a victim cgroup: %s", del_cg.err.c_str());
    cr_assert(contains(del_cg.err, "is not named by the container's cgroupsPath"), "%s",
              del_cg.err.c_str());
    cr_assert_eq(events_cg.status, 1, "events with a victim cgroup: %s", events_cg.out.c_str());
    cr_assert(contains(events_cg.err, "is not named by the container's cgroupsPath"), "%s",
              events_cg.err.c_str());
    cr_assert_eq(kill_pid.status, 1, "kill of a victim PID: %s", kill_pid.err.c_str());
    cr_assert(contains(kill_pid.err, "container not running (process " +
                                         std::to_string(victim.pid) + " is not in its cgroup"),
              "%s", kill_pid.err.c_str());
    cr_assert_eq(kill_id.status, 1, "%s", kill_id.err.c_str());
    cr_assert(contains(kill_id.err, "the record is of \"someone-else\""), "%s",
              kill_id.err.c_str());
    cr_assert_eq(del.status, 0, "delete with the helper PID changed: %s", del.err.c_str());
    cr_assert(contains(del.err, "not stopped: its command line is not the helper's"), "%s",
              del.err.c_str());
    cr_assert(container_gone, "the container's directory stayed");
    cr_assert(victim_alive, "the victim process was killed");
    cr_assert(in_cg_alive && victim_cg_there, "the victim cgroup or its process was killed");
}

// The pipes `start` releases the init through are as closed to the
// container as the fifos in the state directory were: a process exec'd into
// the created container writes a byte to each of the init's descriptors
// through /proc/1/fd, as root with the default capabilities and with every
// capability in a user namespace; the init is not released (it is still the
// exec stage, the container still created). (With every capability and no
// user namespace it can, as it could write to the fifos: that container's
// root is the host's, with CAP_SYS_PTRACE.)
Test(cve, the_container_cannot_release_its_own_init) {
    struct Case {
        const char *name;
        bool userns;
    } cases[] = {{"default capabilities", false}, {"every capability in a user namespace", true}};
    std::string failures;
    for (const auto &c : cases) {
        Env e = make_env("selfrel", {"sleep", "30"});
        if (c.userns) {
            test::use_user_namespace(e);
            test::add_all_capabilities(e);
        }
        e.b.save();
        auto cr = create(e);
        long pid = test::state_of(e.root, e.id).pid;
        auto x = oci({"--root", e.root, "exec", e.id, "sh", "-c",
                      "for n in 3 4 5 6 7 8 9 10 11 12; do echo 0 2>/dev/null >/proc/1/fd/$n "
                      "&& echo -n \"w$n \"; done; echo end"});
        usleep(200000);
        std::string cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
        std::string status = test::state_of(e.root, e.id).status;
        cleanup_all();
        std::string what = std::string(c.name) + ": ";
        if (cr.status != 0) {
            failures += what + "create: " + cr.err + "\n";
            continue;
        }
        if (x.status != 0 || !contains(x.out, "end"))
            failures += what + "the attack did not run: " + x.out + x.err + "\n";
        if (cmd.rfind("sleep", 0) == 0 || status != "created")
            failures += what + "the init was released (" + status + ", wrote: " + x.out + ")\n";
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// `start` writes to a pipe the record names only when it is the container's
// init's release pipe: a record naming the init's answer pipe for both is
// refused without releasing the init, and one whose init is a host process
// holding a pipe at the recorded number (its PID, start time and the pipe's
// inode all copied) is refused without a byte written to that pipe. With
// the record put back, start runs the container.
Test(cve, a_changed_record_does_not_decide_which_pipe_start_writes) {
    Forgeable f = forgeable("forgepipe");
    Env &e = f.e;
    const ocirun::ContainerRecord &rec = f.rec;
    cr_assert(rec.release_pipe && rec.result_pipe, "%s", f.original.c_str());
    int pfd[2];
    cr_assert_eq(::pipe2(pfd, O_CLOEXEC | O_NONBLOCK), 0);
    test::Spawned victim = test::spawn_files({"sleep", "30"}, pfd[0]);
    usleep(50000);
    struct stat pipe_st {};
    cr_assert_eq(::fstat(pfd[0], &pipe_st), 0);
    uint64_t victim_start = ocirun::process_start_time(victim.pid);
    auto forged = [&](auto change) {
        ocirun::ContainerRecord r = rec;
        change(r);
        test::write_file(f.record_path, ocirun::write_record(r));
    };
    forged([&](auto &r) {
        r.release_fd = r.result_fd;
        r.release_pipe = r.result_pipe;
    });
    auto one_pipe = oci({"--root", e.root, "start", e.id});
    std::string init_cmd = read_file("/proc/" + std::to_string(rec.state.pid) + "/cmdline");
    forged([&](auto &r) {
        r.state.pid = victim.pid;
        r.init_start_time = victim_start;
        r.release_fd = 3;
        r.release_pipe = pipe_st.st_ino;
    });
    auto host_pipe = oci({"--root", e.root, "start", e.id});
    char byte;
    ssize_t written = ::read(pfd[0], &byte, 1);
    test::write_file(f.record_path, f.original);
    auto good = oci({"--root", e.root, "start", e.id});
    std::string running = test::wait_status(e.root, e.id, "running", 2000);
    ::kill(victim.pid, SIGKILL);
    test::wait_bounded(victim.pid, 2000);
    ::close(pfd[0]);
    ::close(pfd[1]);
    cleanup_all();
    test::remove_cgroup_parent(f.parent);
    cr_assert_eq(one_pipe.status, 1, "start with one pipe for both: %s", one_pipe.err.c_str());
    cr_assert(contains(one_pipe.err, "names one pipe for both"), "%s", one_pipe.err.c_str());
    cr_assert(init_cmd.rfind("sleep", 0) != 0, "the init was released: %s", init_cmd.c_str());
    cr_assert_eq(host_pipe.status, 1, "start of a host process's pipe: %s", host_pipe.err.c_str());
    cr_assert(contains(host_pipe.err, "is not in its cgroup"), "%s", host_pipe.err.c_str());
    cr_assert_eq(written, -1, "start wrote to the host process's pipe");
    cr_assert_eq(good.status, 0, "start with the record put back: %s", good.err.c_str());
    cr_assert_str_eq(running.c_str(), "running");
}

// The PID namespace recorded as the init's excuses an init that left its
// cgroup, but only a namespace of the container's own with the process as
// its PID 1: a record naming a host process (with its start time) and the
// host's PID namespace as the init's is not acted on.
Test(cve, a_record_naming_the_hosts_pid_namespace_does_not_excuse_the_cgroup) {
    Forgeable f = forgeable("forgens");
    const std::string &parent = f.parent, &record_path = f.record_path, &original = f.original;
    Env &e = f.e;
    ocirun::ContainerRecord *rec = &f.rec;
    test::Spawned victim = test::spawn_files({"sleep", "30"});
    usleep(50000);
    struct stat host_pidns {};
    cr_assert_eq(::stat("/proc/self/ns/pid", &host_pidns), 0);
    rec->state.pid = victim.pid;
    rec->init_start_time = ocirun::process_start_time(victim.pid);
    rec->init_pidns = host_pidns.st_ino;
    test::write_file(record_path, ocirun::write_record(*rec));
    auto k = oci({"--root", e.root, "kill", e.id, "KILL"});
    bool victim_alive = !test::pid_gone_now(victim.pid);
    ::kill(victim.pid, SIGKILL);
    test::wait_bounded(victim.pid, 2000);
    test::write_file(record_path, original);
    // The true init moved out of its cgroups (to their parent's): still
    // the container's, in a PID namespace of its own, so kill reaches it.
    long init = state_of(e.root, e.id).pid;
    for (const auto &d : test::cgroup_dirs(parent, e.id))
        test::write_file(d.substr(0, d.rfind('/')) + "/cgroup.procs", std::to_string(init));
    auto moved = oci({"--root", e.root, "kill", e.id, "KILL"});
    std::string after = test::wait_status(e.root, e.id, "stopped");
    cleanup_all();
    test::remove_cgroup_parent(parent);
    cr_assert(victim_alive, "the host process the record named was killed");
    cr_assert_eq(k.status, 1, "kill: %s", k.err.c_str());
    cr_assert(contains(k.err, "is not in its cgroup"), "%s", k.err.c_str());
    cr_assert_eq(moved.status, 0, "kill of the init moved out of its cgroup: %s",
                 moved.err.c_str());
    cr_assert_str_eq(after.c_str(), "stopped");
}

// What the runtime reads back from --root decides what it kills, removes
// and runs as hooks, so it is trusted only where no one but this user could
// have written it. Another user (uid 65534 here) who owns the root could
// have put any record and any config.json copy there: the test plants a
// record that says the container has hooks and a config.json copy whose
// poststop hook touches a marker, as that user would. delete --force, kill
// and state refuse; so they do for a container directory of that user's,
// and kill and state for a record of that user's, one others may write, or
// one that is a symlink or a FIFO (which must not hang the read); a
// config.json copy of that user's is refused by exec and its hooks are
// never run by delete. The marker never appears.
Test(cve, state_another_user_could_have_written_is_not_trusted) {
    Env e = make_env("sttrust", {"sleep", "30"});
    e.b.save();
    auto c = create(e);
    long init = state_of(e.root, e.id).pid;
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    const std::string dir = e.root + "/" + e.id, record = dir + "/state.json",
                      config = dir + "/config.json";
    const std::string marker = test::track_dir(test::make_temp_dir("sttrustm")) + "/hook-ran";
    const std::string good_record = read_file(record), good_config = read_file(config);
    auto rec = ocirun::parse_record(good_record);
    auto spec = ocirun::oci::parse_spec(good_config);
    cr_assert(rec && spec, "%s", good_record.c_str());
    rec->has_hooks = true;
    ocirun::oci::Hook touch;
    touch.path = "/bin/sh";
    touch.args = {"sh", "-c", "touch " + marker};
    if (!spec->hooks) spec->hooks.emplace();
    spec->hooks->poststop.push_back(touch);
    // No assertion until ownership is back (cleanup_all's delete refuses a
    // root of another user's): what goes wrong is collected in `failures`.
    std::string failures;
    auto put = [&failures](const std::string &path, const std::string &text, uid_t uid,
                           mode_t mode) {
        ::unlink(path.c_str());
        test::write_file(path, text);
        if (::chown(path.c_str(), uid, uid) < 0 || ::chmod(path.c_str(), mode) < 0)
            failures += path + ": " + std::strerror(errno) + "\n";
    };
    auto restore = [&] {
        ::chown(e.root.c_str(), 0, 0);
        ::chown(dir.c_str(), 0, 0);
        put(record, good_record, 0, 0600);
        put(config, good_config, 0, 0600);
    };
    auto expect_refused = [&](const char *name, const std::vector<std::string> &cmd,
                              const std::string &why) {
        std::vector<std::string> args = {"--root", e.root};
        // The ID last, or where "ID" stands.
        bool placed = false;
        for (const auto &a : cmd) {
            placed = placed || a == "ID";
            args.push_back(a == "ID" ? e.id : a);
        }
        if (!placed) args.push_back(e.id);
        auto o = test::oci_files(args, -1, 5000);
        if (o.status != 1 || !contains(o.err, why) || test::count_lines(o.err) != 1)
            failures += std::string(name) + " " + cmd[0] + ": " + std::to_string(o.status) + " " +
                        o.err + "\n";
    };
    // The root another user's, holding that user's record and config.json.
    put(record, ocirun::write_record(*rec), 65534, 0600);
    put(config, ocirun::oci::write_spec(*spec), 65534, 0600);
    ::chown(e.root.c_str(), 65534, 65534);
    ::chown(dir.c_str(), 65534, 65534);
    const std::string not_ours = "owned by uid 65534, not by this user (0)";
    for (const char *cmd : {"state", "kill"})
        expect_refused("the root of another user", {cmd}, "--root " + e.root + ": " + not_ours);
    expect_refused("the root of another user", {"delete", "--force"},
                   "--root " + e.root + ": " + not_ours);
    ::chown(e.root.c_str(), 0, 0);
    expect_refused("the directory of another user", {"delete", "--force"}, dir + ": " + not_ours);
    ::chown(dir.c_str(), 0, 0);
    expect_refused("the record of another user", {"kill"}, record + ": " + not_ours);
    restore();
    ::chmod(record.c_str(), 0666);
    expect_refused("a record others may write", {"state"},
                   record + ": writable by group or others");
    restore();
    std::string copy = dir + "/state.copy";
    put(copy, good_record, 0, 0600);
    ::unlink(record.c_str());
    ::symlink("state.copy", record.c_str());
    expect_refused("a record that is a symlink", {"state"}, record + ": not a regular file");
    ::unlink(copy.c_str());
    ::unlink(record.c_str());
    ::mkfifo(record.c_str(), 0600);
    expect_refused("a record that is a FIFO", {"state"}, record + ": not a regular file");
    restore();
    // Only the config.json copy another user's: exec refuses it, and
    // delete removes the container without its hooks.
    put(record, ocirun::write_record(*rec), 0, 0600);
    put(config, ocirun::oci::write_spec(*spec), 65534, 0600);
    auto st = oci({"--root", e.root, "start", e.id});
    expect_refused("the config.json copy of another user", {"exec", "ID", "true"},
                   config + ": " + not_ours);
    auto del = oci({"--root", e.root, "delete", "--force", e.id});
    bool gone = !test::exists(dir);
    bool hook_ran = test::exists(marker);
    // Should the state have gone without the container (a refusal that
    // failed), its init would wait for start for good: ended here.
    bool init_left = init > 0 && !test::pid_gone(init, 2000);
    if (init_left) {
        ::kill(static_cast<pid_t>(init), SIGKILL);
        test::pid_gone(init, 2000);
    }
    cleanup_all();
    cr_assert(!init_left, "the container's init outlived its delete");
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_eq(del.status, 0, "delete --force: %s", del.err.c_str());
    cr_assert(contains(del.err, "poststop hooks not run") && contains(del.err, not_ours), "%s",
              del.err.c_str());
    cr_assert(gone, "the container's directory stayed");
    cr_assert(!hook_ran, "a hook another user planted ran as root");
    (void)st;
}

// A record written before the configured cgroupsPath was kept in it (an
// upgrade with containers running, as Podman and containerd make them with
// a cgroupsPath of their own): the path comes from the config.json beside
// the record, and kill and delete work on the container's cgroup.
Test(cve, a_record_from_before_cgroups_path_was_kept) {
    std::string parent = test::cgroup_parent("legacy");
    Env e = created_in_cgroup("legacy", parent);
    std::string record_path = e.root + "/" + e.id + "/state.json";
    std::string text = read_file(record_path);
    size_t at = text.find(",\"cgroupsPath\":\"");
    cr_assert(at != std::string::npos, "%s", text.c_str());
    size_t end = text.find('"', at + 16);
    text.erase(at, end + 1 - at);
    test::write_file(record_path, text);
    auto dirs = test::cgroup_dirs(parent, e.id);
    auto k = oci({"--root", e.root, "kill", e.id, "KILL"});
    test::wait_status(e.root, e.id, "stopped");
    auto d = oci({"--root", e.root, "delete", e.id});
    bool left = false;
    for (const auto &dir : dirs)
        if (test::exists(dir)) left = true;
    cleanup_all();
    test::remove_cgroup_parent(parent);
    cr_assert_eq(k.status, 0, "kill: %s", k.err.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(!left, "the container's cgroup stayed");
}
