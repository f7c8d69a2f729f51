// Behaviour the OCI runtime spec asks for, or runc shows where the spec is
// silent, that clients (Podman, conmon, buildah, containerd) rely on: each
// test runs a real container and checks what it saw, and names the spec
// section or runc's behaviour it follows.
#include "runtime/cgroups/cgroup_host.hpp"
#include "support/container_env.hpp"
#include "support/leftovers.hpp"

#include <criterion/criterion.h>

#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::ns_link;
using test::read_file;

TestSuite(conformance, .fini = cleanup_all, .timeout = 60);

namespace {

// The SigIgn and SigBlk lines of a /proc/PID/status text.
std::string signal_lines(const std::string &status) {
    std::string out;
    for (const char *key : {"SigBlk:", "SigIgn:"}) {
        size_t at = status.find(key);
        if (at != std::string::npos) out += status.substr(at, status.find('\n', at) - at) + "\n";
    }
    return out;
}

// A container of `e` (saved) created and started, `exec` (the command after
// the ID) run in it, and what the container's own process wrote by then.
struct RunAndExec {
    test::FileRun create;
    test::Output start, exec;
    std::string out;
};
RunAndExec run_and_exec(Env &e, const std::vector<std::string> &exec,
                        const std::string &needle = "") {
    e.b.save();
    RunAndExec r;
    r.create = test::create(e);
    r.start = test::oci({"--root", e.root, "start", e.id});
    std::vector<std::string> args = {"--root", e.root, "exec", e.id};
    args.insert(args.end(), exec.begin(), exec.end());
    r.exec = test::oci(args);
    r.out = test::read_output(r.create.out_path, needle);
    return r;
}

} // namespace

// runc resets every signal disposition and the signal mask before the
// container's process runs (the spec is silent; an exec keeps what is
// ignored and what is blocked): under conmon the caller ignores SIGPIPE and
// a `trap ... PIPE` in the container would never fire. For run and exec.
Test(conformance, runc_signals_reset_before_the_process_for_run_and_exec) {
    Env e = make_env("cfsig", {"sh", "-c", "cat /proc/self/status; sleep 30"});
    e.b.save();
    struct sigaction ign {
    }, old_pipe{}, old_hup{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_pipe);
    ::sigaction(SIGHUP, &ign, &old_hup);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &block, &old_mask);
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto x = test::oci({"--root", e.root, "exec", e.id, "cat", "/proc/self/status"});
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ::sigaction(SIGHUP, &old_hup, nullptr);
    std::string run_status = test::read_output(c.out_path, "nonvoluntary_ctxt_switches");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    const std::string clean = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";
    // sh itself ignores nothing and blocks nothing while it waits; cat is
    // its child, so the init's lines are sh's own.
    const std::string run_lines = signal_lines(run_status), exec_lines = signal_lines(x.out);
    cr_assert_str_eq(run_lines.c_str(), clean.c_str(), "run: %s", run_status.c_str());
    cr_assert_str_eq(exec_lines.c_str(), clean.c_str(), "exec: %s", x.out.c_str());
}

// runc sets HOME from the container's /etc/passwd for the process's uid
// when process.env has none (or an empty one), else "/" (libcontainer
// init_linux.go; the spec is silent). Run and exec; a HOME given is kept.
Test(conformance, runc_home_comes_from_the_containers_passwd) {
    struct Case {
        const char *tag;
        uint32_t uid;
        std::vector<std::string> env;
        const char *want;
    } cases[] = {
        {"cfhome0", 0, {"PATH=/bin"}, "HOME=/root\n"},
        {"cfhome1", 0, {"PATH=/bin", "HOME="}, "HOME=/root\n"},
        {"cfhome2", 65534, {"PATH=/bin"}, "HOME=/nonexistent\n"},
        {"cfhome3", 4242, {"PATH=/bin"}, "HOME=/\n"},
        {"cfhome4", 0, {"PATH=/bin", "HOME=/work"}, "HOME=/work\n"},
    };
    for (const auto &k : cases) {
        Env e = make_env(k.tag, {"sh", "-c", "env | grep ^HOME=; sleep 30"});
        e.b.spec.process->user.uid = k.uid;
        e.b.spec.process->user.gid = k.uid;
        e.b.spec.process->env = k.env;
        auto r = run_and_exec(e, {"sh", "-c", "env | grep ^HOME="});
        cleanup_all();
        cr_assert_eq(r.create.status, 0, "%s: %s", k.tag, r.create.err.c_str());
        cr_assert_str_eq(r.out.c_str(), k.want, "%s run: %s", k.tag, r.out.c_str());
        cr_assert_str_eq(r.exec.out.c_str(), k.want, "%s exec: %s %s", k.tag, r.exec.out.c_str(),
                         r.exec.err.c_str());
    }
}

// The container's /etc/passwd as a symlink that would leave the rootfs
// (to a file beside it in the bundle): HOME is looked up inside the
// container's root for run and exec alike (exec reads it from outside,
// below the init's root), so the file beyond is never read.
Test(conformance, home_lookup_stays_in_the_container) {
    Env e = make_env("cfhomex", {"sh", "-c", "env | grep ^HOME=; sleep 30"});
    e.b.spec.process->user.uid = 4243;
    e.b.spec.process->user.gid = 4243;
    e.b.spec.process->env = {"PATH=/bin"};
    test::write_file(e.b.dir + "/hostpasswd", "host:x:4243:4243::/FROM-HOST:/bin/sh\n");
    ::chmod((e.b.dir + "/hostpasswd").c_str(), 0644);
    ::unlink((e.b.rootfs + "/etc/passwd").c_str());
    // Absolute: resolved against the host's root, it would reach the file.
    std::string beyond = e.b.dir + "/hostpasswd";
    cr_assert_eq(::symlink(beyond.c_str(), (e.b.rootfs + "/etc/passwd").c_str()), 0);
    auto r = run_and_exec(e, {"sh", "-c", "env | grep ^HOME="});
    cleanup_all();
    cr_assert_eq(r.create.status, 0, "%s", r.create.err.c_str());
    cr_assert_str_eq(r.out.c_str(), "HOME=/\n", "run: %s", r.out.c_str());
    cr_assert_str_eq(r.exec.out.c_str(), "HOME=/\n", "exec: %s %s", r.exec.out.c_str(),
                     r.exec.err.c_str());
}

// dev.ocirun.deny-write means read-only, nothing else: programs under a
// deny-write path still run (contrib/kubernetes/pod.yaml denies writes to
// /usr and /etc; here /bin, where busybox is), and writing is refused.
Test(conformance, deny_write_keeps_exec) {
    Env e = make_env("cfdwx", {"sh", "-c",
                               "/bin/true && echo ran; touch /bin/x 2>&1; "
                               "grep ' /bin ' /proc/self/mounts"});
    e.b.spec.root->readonly = false;
    e.b.spec.annotations["dev.ocirun.deny-write"] = "/bin";
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.out, "ran\n"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "Read-only file system"), "%s", o.out.c_str());
    cr_assert(!contains(o.out, "noexec"), "%s", o.out.c_str());
}

// The runtime's own system calls come before the container's filter: with
// noNewPrivileges false the filter goes in before the identity change (it
// needs CAP_SYS_ADMIN then), and only the change and the exec may run under
// it (runtime-spec config.md "seccomp": the runtime loads it; runc's order
// in libcontainer/standard_init_linux.go). An allow-list with what the drop,
// the wait for start and the exec need, and what busybox's true and sleep
// call, but not close_range, getcwd, chdir, stat, access, umask or
// rt_sigaction: run, and exec of a process file, work.
Test(conformance, runtime_calls_precede_an_allow_list_filter) {
    Env e = make_env("cfallow", {"sleep", "30"});
    ocirun::oci::Seccomp sc;
    sc.default_action = "SCMP_ACT_ERRNO";
    sc.default_errno_ret = 1;
    sc.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"};
    ocirun::oci::Syscall allow;
    allow.action = "SCMP_ACT_ALLOW";
    allow.names = {// the identity change and the death signal
                   "setgroups", "setresgid", "setresuid", "setgid", "setuid", "capget", "capset",
                   "prctl",
                   // the wait for start, its report, the sync socket
                   "read", "write", "openat", "close", "sendmsg", "recvmsg", "sendto", "recvfrom",
                   "poll", "ppoll", "fcntl", "futex", "exit", "exit_group", "rt_sigreturn",
                   // the exec, and busybox true / sleep
                   "execve", "execveat", "arch_prctl", "brk", "getrandom", "getuid", "mprotect",
                   "prlimit64", "readlink", "rseq", "set_robust_list", "set_tid_address",
                   "clock_nanosleep", "nanosleep", "mmap", "munmap"};
    sc.syscalls = {allow};
    e.b.spec.linux_->seccomp = sc;
    e.b.spec.process->no_new_privileges = false;
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    std::string pfile = e.root + "/process.json";
    test::write_file(pfile, R"({"args": ["true"], "cwd": "/", "env": ["PATH=/bin"],
                               "user": {"uid": 0, "gid": 0}})");
    auto x = test::oci({"--root", e.root, "exec", "--process", pfile, e.id});
    auto st = test::state_of(e.root, e.id);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_eq(st.status, "running", "%s", st.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
}

// As runc, process.cwd is entered before the identity change (a uid that
// may not search the path still starts there), and again after it when
// root could not (runc's finalizeNamespace).
Test(conformance, runc_cwd_is_entered_before_the_identity_change) {
    Env e = make_env("cfcwd", {"sh", "-c", "pwd; sleep 30"});
    e.b.spec.root->readonly = false;
    ::mkdir((e.b.rootfs + "/private").c_str(), 0700);
    ::mkdir((e.b.rootfs + "/private/work").c_str(), 0755);
    e.b.spec.process->cwd = "/private/work";
    e.b.spec.process->user.uid = 65534;
    e.b.spec.process->user.gid = 65534;
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto x = test::oci({"--root", e.root, "exec", "--user", "65534:65534", e.id, "pwd"});
    std::string out = test::read_output(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_str_eq(out.c_str(), "/private/work\n", "%s", out.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "/private/work\n", "%s", x.out.c_str());
}

// As runc: an ambient capability the kernel would refuse (not also permitted
// and inheritable: buildah's RUN steps and `runc spec` ask for such) is left
// out, the others are raised; an unknown name is a warning and grants
// nothing (runtime-spec config.md: MUST log, SHOULD NOT fail). `exec --cap`
// raises the capability in ambient too where inheritable has it.
Test(conformance, runc_ambient_capabilities_the_kernel_allows) {
    Env e = make_env("cfamb", {"sh", "-c", "cat /proc/self/status; sleep 30"});
    auto &c = *e.b.spec.process->capabilities;
    c.bounding = {"CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_AUDIT_WRITE", "CAP_FOO"};
    c.permitted = {"CAP_NET_BIND_SERVICE"};
    c.effective = {"CAP_NET_BIND_SERVICE"};
    c.inheritable = {"CAP_NET_BIND_SERVICE", "CAP_NET_RAW"};
    c.ambient = {"CAP_NET_BIND_SERVICE", "CAP_AUDIT_WRITE"};
    e.b.spec.process->user.uid = 1000;
    e.b.spec.process->user.gid = 1000;
    e.b.spec.process->no_new_privileges = false;
    e.b.save();
    auto cr = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto x = test::oci(
        {"--root", e.root, "exec", "--cap", "CAP_NET_RAW", e.id, "cat", "/proc/self/status"});
    std::string out = test::read_output(cr.out_path, "nonvoluntary_ctxt_switches");
    cleanup_all();
    cr_assert_eq(cr.status, 0, "create: %s", cr.err.c_str());
    cr_assert(contains(cr.err, "process.capabilities.bounding[3]: unknown capability \"CAP_FOO\", "
                               "ignored"),
              "%s", cr.err.c_str());
    const uint64_t bind = 1ull << 10, raw = 1ull << 13;
    cr_assert_eq(test::status_hex(out, "CapAmb"), bind, "run: %s", out.c_str());
    cr_assert_eq(test::status_hex(out, "CapEff"), bind, "run: %s", out.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert_eq(test::status_hex(x.out, "CapAmb"), bind | raw, "exec: %s", x.out.c_str());
}

// containerd's runc shim sends the container's whole linux.resources on a
// CRI UpdateContainerResources, the unchanged device rules included (runc
// accepts them): the same rules are no change and the other limits apply.
Test(conformance, runc_update_with_the_unchanged_device_rules) {
    Env e = make_env("cfupd", {"sleep", "30"});
    e.b.spec.linux_->resources->pids = ocirun::oci::Pids{};
    e.b.spec.linux_->resources->pids->limit = 50;
    e.b.save();
    auto c = test::create(e);
    std::string same = e.root + "/same.json";
    test::write_file(same, R"({"devices": [{"allow": false, "access": "rwm"}],
                               "pids": {"limit": 40}})");
    auto u = test::oci({"--root", e.root, "update", "--resources", same, e.id});
    // pids.max where the init's cgroup is, in the v1 pids hierarchy or v2.
    std::string pids;
    std::istringstream cg(
        read_file("/proc/" + std::to_string(test::state_of(e.root, e.id).pid) + "/cgroup"));
    for (std::string line; std::getline(cg, line);) {
        std::string path = line.substr(line.rfind(':') + 1);
        if (line.find(":pids:") != std::string::npos)
            pids = read_file("/sys/fs/cgroup/pids" + path + "/pids.max");
        else if (line.rfind("0::", 0) == 0 && pids.empty())
            pids = read_file("/sys/fs/cgroup" + path + "/pids.max");
    }
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(u.status, 0, "update: %s", u.err.c_str());
    cr_assert_str_eq(pids.c_str(), "40\n", "pids.max %s", pids.c_str());
}

// runc's update of linux.resources.devices: other rules replace the
// container's, applied to the running container: /dev/fuse (a node from
// linux.devices, denied by the deny-all rule) opens once an update allows
// it and no more once the next drops it again; /dev/null, allowed
// throughout, opens in between (no gap).
Test(conformance, runc_update_changes_the_device_rules) {
    Env e = make_env("cfdev", {"sleep", "30"});
    ocirun::oci::Device fuse;
    fuse.path = "/dev/fuse";
    fuse.type = "c";
    fuse.major = 10;
    fuse.minor = 229;
    fuse.file_mode = 0666;
    e.b.spec.linux_->devices.push_back(fuse);
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto open_fuse = [&] {
        return test::oci(
            {"--root", e.root, "exec", e.id, "sh", "-c",
             "(exec 3<>/dev/fuse) && echo fuse-open; echo x > /dev/null && echo null-ok"});
    };
    auto before = open_fuse();
    std::string allow = e.root + "/allow.json", deny = e.root + "/deny.json";
    test::write_file(allow, R"({"devices": [{"allow": false, "access": "rwm"},
                                           {"allow": true, "type": "c", "major": 10,
                                            "minor": 229, "access": "rw"}]})");
    test::write_file(deny, R"({"devices": [{"allow": false, "access": "rwm"}]})");
    auto u1 = test::oci({"--root", e.root, "update", "--resources", allow, e.id});
    auto allowed = open_fuse();
    auto u2 = test::oci({"--root", e.root, "update", "--resources", deny, e.id});
    auto denied = open_fuse();
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert(!contains(before.out, "fuse-open") && contains(before.out, "null-ok"), "%s %s",
              before.out.c_str(), before.err.c_str());
    cr_assert_eq(u1.status, 0, "update (allow): %s", u1.err.c_str());
    cr_assert(contains(allowed.out, "fuse-open") && contains(allowed.out, "null-ok"), "%s %s",
              allowed.out.c_str(), allowed.err.c_str());
    cr_assert_eq(u2.status, 0, "update (deny): %s", u2.err.c_str());
    cr_assert(!contains(denied.out, "fuse-open") && contains(denied.out, "null-ok"), "%s %s",
              denied.out.c_str(), denied.err.c_str());
}

// exec into a paused container is refused at once, as runc does (a frozen
// cgroup would hold the new process, and the command, in the kernel until
// resume); --ignore-paused execs anyway and the process runs once resumed.
// resume and delete --force are not held up either.
Test(conformance, runc_exec_into_a_paused_container) {
    Env e = make_env("cfpause", {"sleep", "30"});
    e.b.save();
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto p = test::oci({"--root", e.root, "pause", e.id});
    auto t0 = std::chrono::steady_clock::now();
    auto x = test::oci({"--root", e.root, "exec", e.id, "true"});
    auto took = std::chrono::steady_clock::now() - t0;
    test::Spawned later = test::spawn_oci(
        {"--root", e.root, "exec", "--ignore-paused", e.id, "sh", "-c", "echo resumed"});
    usleep(300000);
    bool waiting = !test::pid_gone_now(later.pid);
    auto r = test::oci({"--root", e.root, "resume", e.id});
    int later_status = test::wait_bounded(later.pid, 5000);
    std::string later_out = read_file(later.out_path);
    auto d = test::oci({"--root", e.root, "delete", "--force", e.id});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(p.status, 0, "pause: %s", p.err.c_str());
    cr_assert_neq(x.status, 0);
    cr_assert(contains(x.err, "is paused: resume it first, or use --ignore-paused"), "%s",
              x.err.c_str());
    cr_assert_lt(std::chrono::duration_cast<std::chrono::seconds>(took).count(), 3);
    cr_assert(waiting, "exec --ignore-paused finished while the container was paused");
    cr_assert_eq(r.status, 0, "resume: %s", r.err.c_str());
    cr_assert_eq(later_status, 0, "%s", read_file(later.err_path).c_str());
    cr_assert_str_eq(later_out.c_str(), "resumed\n");
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
}

// linux.devices makes nodes; the device cgroup is resources.devices' alone
// (runc: an entry adds no allow rule): /dev/kmsg listed under a deny-all
// exists and cannot be opened. A FIFO (type p) needs no major or minor, and
// numbers given for one are not compared with what mknod made
// (config-linux.md "Devices": major and minor are for c, b and u).
Test(conformance, runc_linux_devices_add_nodes_not_rules) {
    Env e = make_env("cfdev", {"sh", "-c",
                               "ls -l /dev/kmsg /dev/pipe; head -c 1 /dev/kmsg >/dev/null 2>&1; "
                               "echo kmsg=$?"});
    ocirun::oci::Device kmsg;
    kmsg.path = "/dev/kmsg";
    kmsg.type = "c";
    kmsg.major = 1;
    kmsg.minor = 11;
    ocirun::oci::Device fifo;
    fifo.path = "/dev/pipe";
    fifo.type = "p";
    fifo.major = 7;
    fifo.minor = 7;
    e.b.spec.linux_->devices = {kmsg, fifo};
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "/dev/kmsg") && contains(o.out, "/dev/pipe"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "\np") || o.out.rfind("p", 0) == 0, "no FIFO: %s", o.out.c_str());
    cr_assert(contains(o.out, "kmsg=1"), "read /dev/kmsg against a deny-all: %s", o.out.c_str());
}

// A terminal as runc makes it: the pty is owned by process.user's uid (its
// group devpts's tty group), and `run` in the foreground relaying it to an
// output that is not a terminal keeps "\n" as the process wrote it (runc's
// ClearONLCR), for run and exec.
Test(conformance, runc_terminal_owner_and_newlines) {
    Env e = make_env("cftty", {"sh", "-c", "printf 'a\\nb\\n'; stat -c 'owner=%u:%g' $(tty)"});
    e.b.spec.process->terminal = true;
    e.b.spec.process->user.uid = 1000;
    e.b.spec.process->user.gid = 1000;
    auto o = test::run(e);
    Env f = make_env("cftty2", {"sleep", "30"});
    f.b.save();
    auto c = test::create(f);
    auto s = test::oci({"--root", f.root, "start", f.id});
    auto x = test::oci({"--root", f.root, "exec", "--tty", "--user", "1000:1000", f.id, "sh", "-c",
                        "printf 'c\\nd\\n'; stat -c 'owner=%u:%g' $(tty)"});
    cleanup_all();
    cr_assert_eq(o.status, 0, "run: %s", o.err.c_str());
    cr_assert(o.out.rfind("a\nb\n", 0) == 0, "run: [%s]", o.out.c_str());
    cr_assert(contains(o.out, "owner=1000:5"), "run: [%s]", o.out.c_str());
    cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
    cr_assert(x.out.rfind("c\nd\n", 0) == 0, "exec: [%s]", x.out.c_str());
    cr_assert(contains(x.out, "owner=1000:5"), "exec: [%s]", x.out.c_str());
}

// The container's process does not inherit the caller's CPU affinity (runc
// since 1.2 resets it; the mask stays within the cgroup's cpuset): oci-run
// pinned to CPU 0 still gives run and exec every CPU.
Test(conformance, runc_cpu_affinity_is_not_inherited) {
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2) cr_skip_test("one CPU: nothing to tell apart");
    cpu_set_t all, one;
    cr_assert(::sched_getaffinity(0, sizeof all, &all) == 0);
    if (CPU_COUNT(&all) < 2) cr_skip_test("this test process may use one CPU only");
    Env e = make_env("cfcpu", {"sh", "-c", "grep Cpus_allowed_list /proc/self/status; sleep 30"});
    e.b.save();
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    cr_assert(::sched_setaffinity(0, sizeof one, &one) == 0);
    auto c = test::create(e);
    auto s = test::oci({"--root", e.root, "start", e.id});
    auto x = test::oci(
        {"--root", e.root, "exec", e.id, "grep", "Cpus_allowed_list", "/proc/self/status"});
    ::sched_setaffinity(0, sizeof all, &all);
    std::string out = test::read_output(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert(!contains(out, "Cpus_allowed_list:\t0\n") && contains(out, "Cpus_allowed_list:"),
              "run: %s", out.c_str());
    cr_assert(!contains(x.out, "Cpus_allowed_list:\t0\n") && contains(x.out, "Cpus_allowed_list:"),
              "exec: %s", x.out.c_str());
}

// An existing cgroup directory is reused, as runc does (a caller may make it
// first); one with a process in it is refused naming it, and nothing of the
// caller's is removed.
Test(conformance, runc_existing_empty_cgroup_is_reused) {
    std::string parent = test::cgroup_parent("cfreuse");
    Env e = make_env("cfreuse", {"true"});
    e.b.spec.linux_->cgroups_path = parent + "/" + e.id;
    e.b.save();
    for (const auto &d : test::cgroup_dirs(parent, e.id))
        std::system(("mkdir -p '" + d + "'").c_str());
    auto o = test::run(e);
    // Again, with a process of ours in the container's cgroup.
    Env f = make_env("cfreuse2", {"true"});
    f.b.spec.linux_->cgroups_path = parent + "/" + f.id;
    f.b.save();
    std::vector<std::string> dirs = test::cgroup_dirs(parent, f.id);
    for (const auto &d : dirs)
        std::system(("mkdir -p '" + d + "'").c_str());
    pid_t sleeper = ::fork();
    if (sleeper == 0) {
        ::pause();
        ::_exit(0);
    }
    std::string busy;
    for (const auto &d : dirs)
        if (busy.empty() && test::exists(d + "/cgroup.procs")) {
            test::write_file(d + "/cgroup.procs", std::to_string(sleeper));
            if (contains(read_file(d + "/cgroup.procs"), std::to_string(sleeper))) busy = d;
        }
    auto refused = test::run(f);
    bool kept = test::exists(busy);
    bool alive = ::waitpid(sleeper, nullptr, WNOHANG) == 0;
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
    cleanup_all();
    for (const auto &d : dirs) // ours, made above: the refused create left them
        ::rmdir(d.c_str());
    std::string left = test::remove_cgroup_parent(parent);
    cr_assert_eq(o.status, 0, "run in an existing cgroup: %s", o.err.c_str());
    cr_assert(!busy.empty(), "could not put a process in the cgroup");
    cr_assert_neq(refused.status, 0);
    cr_assert(contains(refused.err, "already exists and has processes in it"), "%s",
              refused.err.c_str());
    cr_assert(kept, "%s was removed", busy.c_str());
    cr_assert(alive, "the process in %s was killed", busy.c_str());
    cr_assert(left.empty(), "%s", left.c_str());
}

// An LSM label for an LSM this host does not have is refused, naming the
// field and the LSM (as runc's validator), and nothing is left behind.
Test(conformance, runc_lsm_fields_without_the_lsm_are_refused) {
    bool apparmor = contains(read_file("/sys/module/apparmor/parameters/enabled"), "Y");
    bool selinux = test::exists("/sys/fs/selinux/enforce");
    struct Case {
        const char *tag, *want;
        bool skip;
        void (*set)(Env &);
    } cases[] = {
        {"cflsm1", "process.apparmorProfile \"docker-default\": AppArmor is not enabled", apparmor,
         [](Env &e) { e.b.spec.process->apparmor_profile = "docker-default"; }},
        {"cflsm2", "process.selinuxLabel \"system_u:system_r:container_t:s0\": SELinux is not",
         selinux,
         [](Env &e) { e.b.spec.process->selinux_label = "system_u:system_r:container_t:s0"; }},
        {"cflsm3", "linux.mountLabel \"system_u:object_r:container_file_t:s0\": SELinux is not",
         selinux,
         [](Env &e) { e.b.spec.linux_->mount_label = "system_u:object_r:container_file_t:s0"; }},
    };
    for (const auto &k : cases) {
        if (k.skip) continue;
        Env e = make_env(k.tag, {"true"});
        k.set(e);
        auto o = test::run(e);
        bool left = test::exists(e.root + "/" + e.id);
        cleanup_all();
        cr_assert_eq(o.status, 1, "%s: %s", k.tag, o.err.c_str());
        cr_assert(contains(o.err, k.want), "%s: %s", k.tag, o.err.c_str());
        cr_assert(!left, "%s left its state", k.tag);
    }
}

namespace {

// Field `n` (1-based, as proc(5) counts) of a /proc/PID/stat line whose
// command has no spaces.
std::string stat_field(const std::string &stat, size_t n) {
    std::vector<std::string> f;
    std::istringstream in(stat);
    std::string w;
    while (in >> w)
        f.push_back(w);
    return n <= f.size() ? f[n - 1] : "";
}

// The first line of `text` that starts with `prefix`.
std::string line_with(const std::string &text, const std::string &prefix) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(prefix, 0) == 0) return line;
    return "";
}

} // namespace

// runtime-spec config.md process.scheduler (sched_setattr) and
// process.ioPriority (ioprio_set), for the container's process and for an
// exec'd one (which takes config.json's process): a batch policy at nice 7
// and best-effort I/O at level 6, as proc(5) field 41 (policy) and 19
// (nice) and ioprio_get show them.
Test(conformance, runtime_spec_scheduler_and_io_priority_for_run_and_exec) {
    Env e = make_env("cfsched", {"sh", "-c", "cat /proc/self/stat; ionice; sleep 30"});
    ocirun::oci::Scheduler s;
    s.policy = "SCHED_BATCH";
    s.nice = 7;
    e.b.spec.process->scheduler = s;
    e.b.spec.process->io_priority = ocirun::oci::IoPriority{"IOPRIO_CLASS_BE", 6};
    auto r = run_and_exec(e, {"sh", "-c", "cat /proc/self/stat; ionice"}, "prio");
    cleanup_all();
    cr_assert_eq(r.create.status, 0, "create: %s", r.create.err.c_str());
    cr_assert_eq(r.start.status, 0, "start: %s", r.start.err.c_str());
    cr_assert_eq(r.exec.status, 0, "exec: %s", r.exec.err.c_str());
    for (const std::string *o : {&r.out, &r.exec.out}) {
        std::string stat = line_with(*o, "");
        cr_assert_eq(stat_field(stat, 41), "3", "policy (SCHED_BATCH is 3): %s", o->c_str());
        cr_assert_eq(stat_field(stat, 19), "7", "nice: %s", o->c_str());
        cr_assert(contains(*o, "best-effort: prio 6"), "%s", o->c_str());
    }
}

// A real-time policy: SCHED_FIFO at priority 10, for run and exec (as root
// in the host's user namespace: CAP_SYS_NICE). Where the v1 cpu controller
// has real-time group scheduling, the container's cgroup gets a real-time
// budget (linux.resources.cpu.realtimeRuntime) under a parent of ours that
// has one. In a user namespace the kernel refuses it, and the error names
// the field.
Test(conformance, runtime_spec_realtime_scheduler_and_its_refusal) {
    std::string parent = test::cgroup_parent("cfrt");
    Env e = make_env("cfrt", {"sh", "-c", "cat /proc/self/stat; sleep 30"});
    ocirun::oci::Scheduler s;
    s.policy = "SCHED_FIFO";
    s.priority = 10;
    e.b.spec.process->scheduler = s;
    auto host = ocirun::detect_cgroup_host();
    cr_assert(host.has_value());
    const ocirun::Hierarchy *cpu = host->for_controller("cpu");
    std::string rt_parent;
    if (cpu && cpu->version == 1 && test::exists(cpu->dir_of("/") + "/cpu.rt_runtime_us")) {
        rt_parent = cpu->dir_of(parent);
        ::mkdir(rt_parent.c_str(), 0755);
        test::write_file(rt_parent + "/cpu.rt_runtime_us", "20000");
        e.b.spec.linux_->cgroups_path = parent + "/" + e.id;
        ocirun::oci::Resources r;
        r.cpu.emplace().realtime_runtime = 10000;
        e.b.spec.linux_->resources = r;
    }
    auto r = run_and_exec(e, {"cat", "/proc/self/stat"});
    cleanup_all();
    // In a user namespace.
    Env u = make_env("cfrtu", {"true"});
    u.b.spec.process->scheduler = s;
    test::use_user_namespace(u);
    u.b.save();
    auto refused = test::run(u);
    bool left = test::exists(u.root + "/" + u.id);
    cleanup_all();
    if (!rt_parent.empty()) ::rmdir(rt_parent.c_str());
    std::string gone = test::remove_cgroup_parent(parent);
    cr_assert_eq(r.create.status, 0, "create: %s", r.create.err.c_str());
    cr_assert_eq(r.start.status, 0, "start: %s", r.start.err.c_str());
    cr_assert_eq(r.exec.status, 0, "exec: %s", r.exec.err.c_str());
    for (const std::string *o : {&r.out, &r.exec.out}) {
        cr_assert_eq(stat_field(*o, 41), "1", "policy (SCHED_FIFO is 1): %s", o->c_str());
        cr_assert_eq(stat_field(*o, 40), "10", "rt_priority: %s", o->c_str());
    }
    cr_assert_neq(refused.status, 0);
    cr_assert(contains(refused.err, "process.scheduler: sched_setattr SCHED_FIFO: Operation not "
                                    "permitted"),
              "%s", refused.err.c_str());
    cr_assert(!left, "the refused container left its state");
    cr_assert(gone.empty(), "%s", gone.c_str());
}

// runtime-spec 1.2.1 process.execCPUAffinity, for exec'd processes ("not
// applicable to the container's init process"): `final` is the affinity in
// the container; with `initial` alone the kernel keeps that one (the
// runtime SHOULD NOT change it); from process.json or from config.json's
// process. Invalid lists are refused naming the field.
Test(conformance, runtime_spec_exec_cpu_affinity) {
    cpu_set_t all;
    cr_assert(::sched_getaffinity(0, sizeof all, &all) == 0);
    if (CPU_COUNT(&all) < 2 || !CPU_ISSET(1, &all)) cr_skip_test("needs CPUs 0 and 1");
    Env e = make_env("cfeaff", {"sh", "-c", "grep Cpus_allowed_list /proc/self/status; sleep 30"});
    e.b.spec.process->exec_cpu_affinity = ocirun::oci::CpuAffinity{"0-1", "1"};
    e.b.save();
    auto c = test::create(e);
    auto st = test::oci({"--root", e.root, "start", e.id});
    const std::string grep = R"("args": ["grep", "Cpus_allowed_list", "/proc/self/status"],
                                "cwd": "/", "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0})";
    auto with = [&](const std::string &affinity) {
        std::string pfile = e.root + "/process.json";
        test::write_file(pfile, "{\"execCPUAffinity\": " + affinity + ", " + grep + "}");
        return test::oci({"--root", e.root, "exec", "--process", pfile, e.id});
    };
    auto from_config = test::oci(
        {"--root", e.root, "exec", e.id, "grep", "Cpus_allowed_list", "/proc/self/status"});
    auto final1 = with(R"({"initial": "0", "final": "1"})");
    auto initial1 = with(R"({"initial": "1"})");
    auto bad = with(R"({"final": "1-0"})");
    std::string out = test::read_output(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(!contains(out, "Cpus_allowed_list:\t1\n"), "the init took it: %s", out.c_str());
    for (const auto *x : {&from_config, &final1, &initial1}) {
        cr_assert_eq(x->status, 0, "exec: %s", x->err.c_str());
        cr_assert(contains(x->out, "Cpus_allowed_list:\t1\n"), "%s", x->out.c_str());
    }
    cr_assert_neq(bad.status, 0);
    cr_assert(contains(bad.err, "execCPUAffinity.final: \"1-0\" is not a list of CPUs"), "%s",
              bad.err.c_str());
}

// linux.personality holds for exec'd processes too (runc applies it in
// every process it starts): LINUX32 makes uname say i686 on x86_64. With a
// sandbox policy too, whose guard allows only the default personality to
// the container (the runtime sets it before the guard).
Test(conformance, runc_personality_for_run_and_exec) {
    struct utsname host {};
    ::uname(&host);
    if (std::string(host.machine) != "x86_64") cr_skip_test("not x86_64: %s", host.machine);
    for (bool policy : {false, true}) {
        Env e = make_env(policy ? "cfpers2" : "cfpers", {"sh", "-c", "uname -m; sleep 30"});
        e.b.spec.linux_->personality = ocirun::oci::Personality{"LINUX32", {}};
        if (policy) e.b.spec.annotations["dev.ocirun.deny-rename"] = "/etc";
        auto r = run_and_exec(e, {"uname", "-m"});
        cleanup_all();
        cr_assert_eq(r.create.status, 0, "create (policy %d): %s", policy, r.create.err.c_str());
        cr_assert_eq(r.exec.status, 0, "exec (policy %d): %s", policy, r.exec.err.c_str());
        cr_assert(contains(r.out, "i686"), "run (policy %d): %s", policy, r.out.c_str());
        cr_assert(contains(r.exec.out, "i686"), "exec (policy %d): %s", policy, r.exec.out.c_str());
    }
}

// runtime-spec 1.3 linux.memoryPolicy: set_mempolicy(2) for the container's
// process and exec'd ones, as /proc/self/numa_maps shows the policy of each
// mapping ("bind=static:0"); a node the host does not have is refused by
// the kernel, the error naming the field, and nothing is left behind.
Test(conformance, runtime_spec_1_3_memory_policy) {
    if (!test::exists("/proc/self/numa_maps")) cr_skip_test("this kernel has no NUMA support");
    Env e = make_env("cfmpol", {"sh", "-c", "head -n 1 /proc/self/numa_maps; sleep 30"});
    e.b.spec.linux_->memory_policy =
        ocirun::oci::MemoryPolicy{"MPOL_BIND", "0", {"MPOL_F_STATIC_NODES"}};
    auto r = run_and_exec(e, {"head", "-n", "1", "/proc/self/numa_maps"});
    cleanup_all();
    // A node past the last one this host has.
    std::string online = read_file("/sys/devices/system/node/online");
    std::string last = online.substr(
        online.find_last_of(",-") == std::string::npos ? 0 : online.find_last_of(",-") + 1);
    std::string missing = std::to_string(std::atoi(last.c_str()) + 1);
    Env b = make_env("cfmpol2", {"true"});
    b.b.spec.linux_->memory_policy = ocirun::oci::MemoryPolicy{"MPOL_BIND", missing, {}};
    b.b.save();
    auto refused = test::run(b);
    bool left = test::exists(b.root + "/" + b.id);
    cleanup_all();
    cr_assert_eq(r.create.status, 0, "create: %s", r.create.err.c_str());
    cr_assert_eq(r.start.status, 0, "start: %s", r.start.err.c_str());
    cr_assert_eq(r.exec.status, 0, "exec: %s", r.exec.err.c_str());
    cr_assert(contains(r.out, " bind=static:0 "), "run: %s", r.out.c_str());
    cr_assert(contains(r.exec.out, " bind=static:0 "), "exec: %s", r.exec.out.c_str());
    cr_assert_neq(refused.status, 0);
    cr_assert(contains(refused.err, "linux.memoryPolicy: set_mempolicy MPOL_BIND nodes " + missing +
                                        ": Invalid argument"),
              "%s", refused.err.c_str());
    cr_assert(!left, "the refused container left its state");
}

// runtime-spec 1.3 linux.intelRdt: with no resctrl filesystem mounted "the
// runtime MUST generate an error"; the 1.3 shape (schemata as lines) is
// read, a memBwSchema that is not an "MB:" line refused by name; features
// says what is supported (memoryPolicy's modes and flags, intelRdt not).
Test(conformance, runtime_spec_1_3_intel_rdt_and_features) {
    bool resctrl = contains(read_file("/proc/self/mountinfo"), " - resctrl ");
    Env e = make_env("cfrdt", {"true"});
    ocirun::oci::IntelRdt rdt;
    rdt.schemata = {"L3:0=ff", "MB:0=50"};
    rdt.enable_monitoring = true;
    e.b.spec.linux_->intel_rdt = rdt;
    e.b.save();
    auto o = test::run(e);
    bool left = test::exists(e.root + "/" + e.id);
    cleanup_all();
    Env m = make_env("cfrdt2", {"true"});
    m.b.spec.linux_->intel_rdt = ocirun::oci::IntelRdt{};
    m.b.spec.linux_->intel_rdt->mem_bw_schema = "L3:0=ff";
    m.b.save();
    auto bad = test::run(m);
    cleanup_all();
    auto f = test::oci({"features"});
    cr_assert_eq(o.status, 1, "%s", o.err.c_str());
    if (!resctrl)
        cr_assert(contains(o.err, "linux.intelRdt: no resctrl filesystem is mounted"), "%s",
                  o.err.c_str());
    cr_assert(!left, "the refused container left its state");
    cr_assert(contains(bad.err, "linux.intelRdt.memBwSchema: must be one line starting with MB:"),
              "%s", bad.err.c_str());
    cr_assert(contains(f.out, "\"ociVersionMax\": \"1.3.0\""), "%s", f.out.c_str());
    cr_assert(contains(f.out, "\"MPOL_WEIGHTED_INTERLEAVE\""), "%s", f.out.c_str());
    cr_assert(contains(f.out, "\"MPOL_F_NUMA_BALANCING\""), "%s", f.out.c_str());
    cr_assert(contains(f.out, "\"monitoring\": false"), "%s", f.out.c_str());
}

// runc's msMoveRoot: with --no-pivot the old root stays under the new one,
// and a nested user namespace could mount a fresh procfs with none of the
// masks (the kernel allows that where a procfs is fully visible, as the
// host's would be). The host's procfs and sysfs are detached (or, locked in
// a user namespace, covered) first: the nested mount is refused, with and
// without a user namespace, as with pivot_root. (CAP_SETFCAP: mapping root
// in a new user namespace needs it since Linux 5.12.)
Test(conformance, runc_no_pivot_gives_no_fresh_procfs_to_a_nested_namespace) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    for (bool userns : {false, true})
        for (bool no_pivot : {false, true}) {
            Env e = make_env(userns ? "cfnpu" : "cfnp", {"/syscall-probe", "nestproc", "/tmp"});
            e.b.spec.root->readonly = false;
            test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
            ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
            e.b.spec.mounts.push_back(test::mount_entry("/tmp", "tmpfs", "tmpfs", {}));
            if (userns) test::use_user_namespace(e);
            test::add_capabilities(e, {"CAP_SETFCAP"});
            e.b.save();
            std::vector<std::string> args = {"--root", e.root, "run", "--bundle", e.b.dir};
            if (no_pivot) args.push_back("--no-pivot");
            args.push_back(e.id);
            auto o = test::oci(args);
            cleanup_all();
            cr_assert_eq(o.status, 0, "userns %d no-pivot %d: %s", userns, no_pivot, o.err.c_str());
            cr_assert(contains(o.out, "nestproc=1\n"),
                      "userns %d no-pivot %d: a nested namespace mounted a procfs: %s", userns,
                      no_pivot, o.out.c_str());
        }
}

namespace {

// A configuration that makes no mount: nothing the container's filesystem
// setup would do in a mount namespace that is not its own.
void without_mounts(Env &e) {
    auto &lx = *e.b.spec.linux_;
    std::erase_if(lx.namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::mount; });
    e.b.spec.mounts.clear();
    lx.masked_paths.clear();
    lx.readonly_paths.clear();
    lx.devices.clear();
    e.b.spec.root->readonly = false;
    test::write_file(e.b.rootfs + "/marker", "in the rootfs\n");
}

} // namespace

// runtime-spec config-linux.md "Namespaces": a type not in linux.namespaces
// is inherited from the runtime (MUST), the mount namespace too. Nothing is
// mounted in the runtime's (that would be the host's filesystem): the
// process is chrooted into root.path, as runc does without a mount
// namespace. With and without a user namespace; run and exec.
Test(conformance, runtime_spec_mount_namespace_inherited) {
    for (bool userns : {false, true}) {
        Env e = make_env(userns ? "cfmnsu" : "cfmns", {"sh", "-c", "cat /marker; sleep 30"});
        without_mounts(e);
        // A chroot holds no process with CAP_SYS_CHROOT: create says so.
        if (userns) {
            test::use_user_namespace(e);
            test::add_capabilities(e, {"CAP_SYS_CHROOT"});
        }
        std::vector<std::string> before = test::mount_ids();
        auto r = run_and_exec(e, {"sh", "-c", "cat /marker; ls /"});
        auto st = test::state_of(e.root, e.id);
        std::string mnt = ns_link(st.pid, "mnt"), own = ns_link(0, "mnt");
        char root[4096] = {};
        (void)!::readlink(("/proc/" + std::to_string(st.pid) + "/root").c_str(), root,
                          sizeof root - 1);
        std::string made = test::new_mounts(before, {e.b.dir});
        cleanup_all();
        cr_assert_eq(r.create.status, 0, "userns %d: %s", userns, r.create.err.c_str());
        cr_assert_eq(r.exec.status, 0, "userns %d exec: %s", userns, r.exec.err.c_str());
        cr_assert(!mnt.empty(), "userns %d: the init's mount namespace", userns);
        cr_assert_str_eq(mnt.c_str(), own.c_str(), "userns %d: not the runtime's", userns);
        cr_assert_str_eq(root, e.b.rootfs.c_str(), "userns %d: the init's root", userns);
        cr_assert_str_eq(r.out.c_str(), "in the rootfs\n", "userns %d: %s", userns, r.out.c_str());
        cr_assert(contains(r.exec.out, "in the rootfs\nbin\n"), "userns %d exec: %s", userns,
                  r.exec.out.c_str());
        cr_assert_str_eq(made.c_str(), "", "userns %d: mounted in the runtime's namespace: %s",
                         userns, made.c_str());
        cr_assert_eq(contains(r.create.err, "CAP_SYS_CHROOT can leave"), userns, "userns %d: %s",
                     userns, r.create.err.c_str());
    }
}

// What would mount in a mount namespace not the container's own is refused,
// naming the field (runc: "unable to restrict sys entries without a private
// MNT namespace"), and nothing is left behind.
Test(conformance, runtime_spec_inherited_mount_namespace_refuses_mounts) {
    struct Case {
        const char *tag, *field;
        void (*set)(Env &);
    } cases[] = {
        {"cfmnr0", "mounts[0] /tmp",
         [](Env &e) {
             e.b.spec.mounts.push_back(test::mount_entry("/tmp", "tmpfs", "tmpfs", {}));
         }},
        {"cfmnr1", "linux.maskedPaths",
         [](Env &e) { e.b.spec.linux_->masked_paths.push_back("/proc/kcore"); }},
        {"cfmnr2", "linux.readonlyPaths",
         [](Env &e) { e.b.spec.linux_->readonly_paths.push_back("/proc/sys"); }},
        {"cfmnr3", "root.readonly", [](Env &e) { e.b.spec.root->readonly = true; }},
        {"cfmnr4", "linux.rootfsPropagation",
         [](Env &e) { e.b.spec.linux_->rootfs_propagation = "private"; }},
        {"cfmnr5", "dev.ocirun sandbox policy",
         [](Env &e) { e.b.spec.annotations["dev.ocirun.deny"] = "/etc"; }},
    };
    for (const auto &k : cases) {
        Env e = make_env(k.tag, {"true"});
        without_mounts(e);
        k.set(e);
        e.b.save();
        auto c = test::create(e);
        auto st = test::state_of(e.root, e.id);
        cleanup_all();
        cr_assert_neq(c.status, 0, "%s: created", k.tag);
        cr_assert(contains(c.err, k.field) && contains(c.err, "mount namespace"), "%s: %s", k.tag,
                  c.err.c_str());
        cr_assert_neq(st.exit, 0, "%s: a state was left", k.tag);
    }
}

// runtime-spec config-linux.md "Namespaces": a mount namespace joined by
// path is the process's (MUST). It is someone else's: nothing is mounted in
// it, root.path is resolved there (it must be the directory the runtime
// checked) and chrooted into. The test's namespace has a tmpfs on the
// rootfs's /mnt that only it has. With a new user namespace the joined
// namespaces (a network one too, the pod case) are joined first, as the
// host's root (runc's order); exec likewise.
Test(conformance, runtime_spec_mount_namespace_joined_by_path) {
    for (bool userns : {false, true}) {
        Env e = make_env(userns ? "cfmnju" : "cfmnj", {"sh", "-c", "cat /mnt/f; sleep 30"});
        without_mounts(e);
        ::mkdir((e.b.rootfs + "/mnt").c_str(), 0755);
        std::string script = "mount -t tmpfs none " + e.b.rootfs + "/mnt && echo joined > " +
                             e.b.rootfs + "/mnt/f && exec sleep 60";
        test::Spawned holder = test::spawn_files(
            {"unshare", "-m", "-n", "--propagation", "private", "sh", "-c", script});
        std::string f = "/proc/" + std::to_string(holder.pid) + "/root" + e.b.rootfs + "/mnt/f";
        for (int i = 0; i < 100 && !test::exists(f); i++)
            usleep(20000);
        std::string ns = "/proc/" + std::to_string(holder.pid) + "/ns/";
        auto &lx = *e.b.spec.linux_;
        lx.namespaces.push_back({ocirun::oci::NsType::mount, ns + "mnt"});
        if (userns) {
            std::erase_if(lx.namespaces,
                          [](const auto &n) { return n.type == ocirun::oci::NsType::network; });
            lx.namespaces.push_back({ocirun::oci::NsType::network, ns + "net"});
            test::use_user_namespace(e);
        }
        auto r = run_and_exec(e, {"cat", "/mnt/f"});
        auto st = test::state_of(e.root, e.id);
        std::string mnt = ns_link(st.pid, "mnt"), want = ns_link(holder.pid, "mnt");
        std::string net = ns_link(st.pid, "net"), want_net = ns_link(holder.pid, "net");
        bool leaked = test::exists(e.b.rootfs + "/mnt/f");
        cleanup_all();
        ::kill(holder.pid, SIGKILL);
        test::wait_bounded(holder.pid, 5000);
        cr_assert_eq(r.create.status, 0, "userns %d: %s", userns, r.create.err.c_str());
        cr_assert_eq(r.exec.status, 0, "userns %d exec: %s", userns, r.exec.err.c_str());
        cr_assert(!mnt.empty(), "userns %d: the init's mount namespace", userns);
        cr_assert_str_eq(mnt.c_str(), want.c_str(), "userns %d: not the joined one", userns);
        if (userns) cr_assert_str_eq(net.c_str(), want_net.c_str(), "network namespace");
        cr_assert_str_eq(r.out.c_str(), "joined\n", "userns %d: %s", userns, r.out.c_str());
        cr_assert_str_eq(r.exec.out.c_str(), "joined\n", "userns %d exec: %s", userns,
                         r.exec.out.c_str());
        cr_assert(!leaked, "the host has the joined namespace's file");
    }
}
