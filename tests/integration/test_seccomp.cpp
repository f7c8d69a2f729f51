// linux.seccomp on real containers: denied calls answer EPERM, their
// errnoRet or ENOSYS and allowed ones succeed; masked comparisons; the i386 and
// x32 entry points; a notify listener that receives the fd and the state and
// answers a call; exec is filtered too.
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "support/console.hpp"
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>

using ocirun::oci::Seccomp;
using ocirun::oci::Syscall;
using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::oci;
using test::read_file;

namespace {

Syscall rule(std::vector<std::string> names, const char *action,
             std::optional<uint32_t> errno_ret = {}) {
    Syscall s;
    s.names = std::move(names);
    s.action = action;
    s.errno_ret = errno_ret;
    return s;
}

Seccomp &filter(Env &e, const char *def = "SCMP_ACT_ALLOW") {
    Seccomp &s = e.b.spec.linux_->seccomp.emplace();
    s.default_action = def;
    s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    return s;
}

} // namespace

TestSuite(seccomp, .fini = cleanup_all, .timeout = 60);

Test(seccomp, denied_calls_answer_their_errno_and_allowed_ones_succeed) {
    Env e = make_env("scerr", {"sh", "-c",
                               "mkdir /tmp/a 2>&1; rmdir /tmp 2>&1; chmod 700 /tmp 2>&1; "
                               "echo allowed > /tmp/f && cat /tmp/f"});
    e.b.spec.root->readonly = false;
    Seccomp &s = filter(e);
    s.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO"));
    s.syscalls.push_back(rule({"rmdir", "unlinkat"}, "SCMP_ACT_ERRNO", ENOSPC));
    s.syscalls.push_back(
        rule({"chmod", "fchmodat", "fchmodat2", "not_a_syscall"}, "SCMP_ACT_ERRNO", ENOSYS));
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "Operation not permitted"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "No space left on device"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "Function not implemented"), "%s", o.out.c_str());
    cr_assert(contains(o.out, "allowed\n"), "%s", o.out.c_str());
}

Test(seccomp, default_errno_ret_and_kill_process) {
    Env e = make_env("sckill", {"mkdir", "/tmp/x"});
    Seccomp &s = filter(e);
    s.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_KILL_PROCESS"));
    auto o = test::run(e);
    Env d = make_env("scdef", {"sh", "-c", "mkdir /tmp/y"});
    Seccomp &sd = filter(d, "SCMP_ACT_ERRNO");
    sd.default_errno_ret = EROFS;
    // What a busybox shell needs to start and exec mkdir, allowed; the rest
    // answers EROFS.
    sd.syscalls.push_back(rule({"execve",
                                "brk",
                                "arch_prctl",
                                "set_tid_address",
                                "getuid",
                                "geteuid",
                                "getgid",
                                "getegid",
                                "getpid",
                                "getppid",
                                "rt_sigaction",
                                "rt_sigprocmask",
                                "uname",
                                "write",
                                "writev",
                                "exit_group",
                                "exit",
                                "fork",
                                "vfork",
                                "clone",
                                "wait4",
                                "read",
                                "stat",
                                "newfstatat",
                                "fstat",
                                "getcwd",
                                "ioctl",
                                "prlimit64",
                                "set_robust_list",
                                "rseq",
                                "mmap",
                                "munmap",
                                "mprotect",
                                "close",
                                "fcntl",
                                "dup2",
                                "access",
                                "faccessat",
                                "faccessat2"},
                               "SCMP_ACT_ALLOW"));
    auto od = test::run(d);
    cleanup_all();
    cr_assert_eq(o.status, 128 + SIGSYS, "status %d: %s", o.status, o.err.c_str());
    cr_assert_eq(od.status, 1, "status %d: %s", od.status, od.err.c_str());
    cr_assert(contains(od.err, "Read-only file system"), "%s", od.err.c_str());
}

// SCMP_CMP_MASKED_EQ: open with O_CREAT is denied, a plain open is not.
Test(seccomp, masked_eq_argument) {
    Env e = make_env("scmask", {"sh", "-c",
                                "cat /etc/passwd | grep -q root && echo read-ok; "
                                "echo x > /tmp/new 2>&1 || echo create-denied"});
    e.b.spec.root->readonly = false;
    Seccomp &s = filter(e);
    Syscall r = rule({"open", "openat"}, "SCMP_ACT_ERRNO", EACCES);
    ocirun::oci::SeccompArg a;
    a.index = 2; // openat's flags
    a.op = "SCMP_CMP_MASKED_EQ";
    a.value = O_CREAT;
    a.value_two = O_CREAT;
    r.args.push_back(a);
    r.names = {"openat"};
    s.syscalls.push_back(r);
    Syscall r2 = r;
    r2.names = {"open"};
    r2.args[0].index = 1; // open's flags
    s.syscalls.push_back(r2);
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(contains(o.out, "read-ok\n"), "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.out, "Permission denied") || contains(o.out, "create-denied"), "%s",
              o.out.c_str());
}

// The i386 (int 0x80) and x32 entry points cannot get around an x86_64
// filter: the call is refused through them as well (by its per-arch rule, by
// the filter's bad-arch action, or by a kernel without that entry point), and
// the directory never appears.
Test(seccomp, i386_and_x32_entry_points_do_not_bypass_the_filter) {
    const char *helper = std::getenv("OCI_RUN_ARCH_BYPASS");
    if (!helper || !*helper || ::access(helper, X_OK) != 0)
        cr_skip_test("no arch-bypass helper (x86-64 builds only)");
    std::string left;
    for (bool listed : {true, false}) {
        for (const char *entry : {"x86_64", "x32", "i386"}) {
            Env e = make_env("scarch", {"/arch-bypass", entry, "/tmp/made"});
            e.b.spec.root->readonly = false;
            test::write_file(e.b.rootfs + "/arch-bypass", read_file(helper));
            ::chmod((e.b.rootfs + "/arch-bypass").c_str(), 0755);
            Seccomp &s = filter(e);
            if (!listed) s.architectures = {"SCMP_ARCH_X86_64"};
            s.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO"));
            auto o = test::run(e);
            if (test::exists(e.b.rootfs + "/tmp/made") || contains(o.out, "ok"))
                left += std::string(entry) + (listed ? " (archs listed)" : " (x86_64 only)") +
                        ": " + o.out + "\n";
            cleanup_all();
        }
    }
    cr_assert(left.empty(), "mkdir got through: %s", left.c_str());
}

Test(seccomp, exec_is_filtered_too) {
    Env e = make_env("scexec", {"sleep", "30"});
    e.b.spec.root->readonly = false;
    filter(e).syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", EXDEV));
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    auto x = oci({"--root", e.root, "exec", e.id, "mkdir", "/tmp/z"});
    auto ok = oci({"--root", e.root, "exec", e.id, "true"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 1, "exec mkdir: %d %s", x.status, x.err.c_str());
    cr_assert(contains(x.err, "Invalid cross-device link"), "%s", x.err.c_str());
    cr_assert_eq(ok.status, 0, "%s", ok.err.c_str());
}

Test(seccomp, unknown_action_is_a_config_error) {
    Env e = make_env("scbad", {"true"});
    filter(e).syscalls.push_back(rule({"mkdir"}, "SCMP_ACT_EXPLODE"));
    auto o = test::run(e);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1);
    cr_assert(contains(o.err, "linux.seccomp.syscalls[0].action"), "%s", o.err.c_str());
    cr_assert(left.empty());
}

namespace {

// A seccomp agent on a UNIX socket (linux.seccomp.listenerPath): it takes
// `connections` messages, each with a notify fd, and answers the first
// notification of the last one's fd with EDQUOT.
struct Agent {
    std::string path;
    int lfd = -1;
    std::string message; // the last connection's
    int notify_fd = -1;
    long notified_nr = -1;
    int received = 0; // connections that came
    std::thread thread;
    ~Agent() {
        if (thread.joinable()) thread.join();
        if (notify_fd >= 0) close(notify_fd);
        if (lfd >= 0) close(lfd);
    }
};

void start_agent(Agent &a, const char *tag, int connections) {
    std::string dir = test::track_dir(test::make_temp_dir(tag));
    a.path = dir + "/agent.sock";
    a.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, a.path.c_str(), sizeof sa.sun_path - 1);
    cr_assert_eq(bind(a.lfd, reinterpret_cast<sockaddr *>(&sa), sizeof sa), 0);
    cr_assert_eq(listen(a.lfd, 2), 0);
    a.thread = std::thread([&a, connections] {
        for (int i = 0; i < connections; i++) {
            std::string message;
            int fd = test::accept_fd(a.lfd, 10000, &message);
            if (message.empty() && fd < 0) return;
            a.message = message;
            a.received++;
            if (a.notify_fd >= 0) close(a.notify_fd);
            a.notify_fd = fd;
        }
        if (a.notify_fd < 0) return;
        struct pollfd np = {a.notify_fd, POLLIN, 0};
        if (poll(&np, 1, 10000) != 1) return;
        struct seccomp_notif req {};
        if (ioctl(a.notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) return;
        a.notified_nr = req.data.nr;
        struct seccomp_notif_resp resp {};
        resp.id = req.id;
        resp.error = -EDQUOT;
        ioctl(a.notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    });
}

void notify_mkdir(Env &e, const Agent &a) {
    e.b.spec.root->readonly = false;
    Seccomp &s = filter(e);
    s.listener_path = a.path;
    s.listener_metadata = "agent-metadata";
    s.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_NOTIFY"));
}

void assert_agent_answered(const Agent &a, const Env &e, const std::string &out) {
    cr_assert(contains(a.message, "\"fds\":[\"seccompFd\"]"), "%s", a.message.c_str());
    cr_assert(contains(a.message, "\"metadata\":\"agent-metadata\""), "%s", a.message.c_str());
    cr_assert(contains(a.message, "\"state\":{\"ociVersion\":\"1.3.0\",\"id\":\"" + e.id + "\""),
              "%s", a.message.c_str());
    cr_assert_geq(a.notify_fd, 0, "no fd came with the message");
    cr_assert(a.notified_nr == 83 || a.notified_nr == 258, "notified syscall %ld", a.notified_nr);
    cr_assert(contains(out, "Disk quota exceeded"), "%s", out.c_str());
    cr_assert(contains(out, "done"), "%s", out.c_str());
}

} // namespace

// SCMP_ACT_NOTIFY: the listener gets the notify fd and the container process
// state (runtime-spec), then answers the container's mkdir with EDQUOT.
Test(seccomp, notify_listener_receives_the_fd_and_answers) {
    Agent a;
    start_agent(a, "scnotify", 1);
    Env e = make_env("scnote", {"sh", "-c", "mkdir /tmp/n 2>&1; echo done"});
    notify_mkdir(e, a);
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    std::string status = test::wait_status(e.root, e.id, "stopped", 10000);
    a.thread.join();
    std::string out = read_file(c.out_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    assert_agent_answered(a, e, out);
}

// The same for a process exec starts, without noNewPrivileges: its filter
// goes in before its identity change, while it holds CAP_SYS_ADMIN for it
// (the exec stage's early filters; with CAP_SYS_PTRACE in the container
// and no user namespace, loaded by the stage before its fork, the
// listener passed after the hello), and its listener reaches the agent
// after the init's. The process keeps no CAP_SYS_ADMIN and no
// no_new_privs.
Test(seccomp, exec_notify_listener_without_no_new_privileges) {
    for (bool ptrace : {false, true}) {
        Agent a;
        start_agent(a, ptrace ? "scnotifyp" : "scnotifyx", 2);
        Env e = make_env(ptrace ? "scnotexp" : "scnotex", {"sleep", "30"});
        notify_mkdir(e, a);
        e.b.spec.process->no_new_privileges = false;
        if (ptrace) test::add_capabilities(e, {"CAP_SYS_PTRACE"});
        e.b.save();
        auto c = create(e);
        auto st = oci({"--root", e.root, "start", e.id});
        long init = test::state_of(e.root, e.id).pid;
        auto x =
            oci({"--root", e.root, "exec", e.id, "sh", "-c",
                 "mkdir /tmp/n 2>&1; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; echo done"});
        a.thread.join();
        uint64_t want = 0;
        for (const auto &cap : e.b.spec.process->capabilities->effective)
            want |= 1ull << *ocirun::oci::capability_from_name(cap);
        cleanup_all();
        cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
        cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
        cr_assert_eq(x.status, 0, "exec: %s", x.err.c_str());
        cr_assert_eq(a.received, 2, "the agent heard from %d", a.received);
        // The process's PID, not the init's (which the state holds).
        std::string key = "\"fds\":[\"seccompFd\"],\"pid\":";
        size_t at = a.message.find(key);
        long pid = at == std::string::npos ? -1 : std::atol(a.message.c_str() + at + key.size());
        cr_assert(pid > 0 && pid != init, "the second listener's pid: %s", a.message.c_str());
        assert_agent_answered(a, e, x.out);
        cr_assert_eq(test::status_hex(x.out, "CapEff"), want, "%s", x.out.c_str());
        cr_assert(contains(x.out, "NoNewPrivs:\t0"), "%s", x.out.c_str());
    }
}

// ---- the shipped profiles ------------------------------------------------------

namespace {

std::string profile_path(const char *name) {
    const char *dir = std::getenv("OCI_RUN_PROFILES");
    return std::string(dir && *dir ? dir : "seccomp-profiles") + "/" + name;
}

// Put a shipped profile in the bundle's linux.seccomp (jq, as runc's tests
// edit configs) and read the spec back.
void use_profile(Env &e, const char *name) {
    e.b.save();
    std::string cfg = e.b.dir + "/config.json";
    auto r = test::run(std::vector<std::string>{
        "sh", "-c",
        "jq --slurpfile p '" + profile_path(name) + "' '.linux.seccomp = $p[0]' '" + cfg + "' > '" +
            cfg + ".new' && mv '" + cfg + ".new' '" + cfg + "'"});
    cr_assert_eq(r.status, 0, "jq: %s", r.err.c_str());
    auto spec = ocirun::oci::load_bundle_spec(e.b.dir);
    cr_assert(spec.has_value(), "%s", spec ? "" : spec.error().text().c_str());
    e.b.spec = std::move(*spec);
}

std::map<std::string, int> probe_results(const std::string &out) {
    std::map<std::string, int> m;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        auto eq = line.find('=');
        if (eq != std::string::npos) m[line.substr(0, eq)] = std::atoi(line.c_str() + eq + 1);
    }
    return m;
}

Env probe_env(const char *tag, bool userns_admin) {
    const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
    if (!probe || ::access(probe, X_OK) != 0) cr_skip_test("no syscall-probe helper");
    Env e = make_env(tag, {"/syscall-probe"});
    e.b.spec.root->readonly = false;
    test::write_file(e.b.rootfs + "/syscall-probe", read_file(probe));
    ::chmod((e.b.rootfs + "/syscall-probe").c_str(), 0755);
    if (userns_admin) {
        test::use_user_namespace(e);
        test::add_capabilities(e, {"CAP_SYS_ADMIN"});
    }
    return e;
}

} // namespace

Test(seccomp, default_profile_runs_busybox_shells_and_common_tools) {
    Env e = make_env("scprof",
                     {"sh", "-c",
                      "set -e; ls / > /dev/null; grep -c root /etc/passwd; mkdir -p /tmp/d/e; "
                      "touch /tmp/d/e/f; cp -r /tmp/d /tmp/d2; rm -r /tmp/d /tmp/d2; "
                      "echo $((6 * 7)); sleep 0.1 & wait; tar -cf /tmp/t.tar /etc 2>/dev/null; "
                      "gzip /tmp/t.tar; ls /tmp/t.tar.gz; ps > /dev/null; date > /dev/null; "
                      "sh -c 'exit 3' || echo sub=$?; echo all-ok"});
    e.b.spec.root->readonly = false;
    use_profile(e, "default.json");
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(o.status, 0, "status %d: %s\n%s", o.status, o.out.c_str(), o.err.c_str());
    cr_assert(contains(o.out, "42\n") && contains(o.out, "sub=3\n") && contains(o.out, "all-ok"),
              "%s", o.out.c_str());
}

Test(seccomp, default_profile_denies_mount_without_cap_sys_admin) {
    Env e = probe_env("scprofmnt", false);
    use_profile(e, "default.json");
    auto o = test::run(e);
    cleanup_all();
    auto r = probe_results(o.out);
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_eq(r["mount"], EPERM, "%s", o.out.c_str());
    cr_assert_eq(r["unshare"], EPERM, "%s", o.out.c_str());
    cr_assert_eq(r["clone_newuts"], EPERM, "%s", o.out.c_str());
}

// The guard, from a process that holds CAP_SYS_ADMIN in its own user
// namespace: every call in the list answers EPERM (clone3 ENOSYS, so that a
// C library falls back to the filtered clone), while without the guard the
// same process does get through (the probe's baseline run).
Test(seccomp, sandbox_guard_blocks_every_way_to_undo_isolation) {
    Env base = probe_env("scguard0", true);
    auto b = test::run(base);
    Env e = probe_env("scguard", true);
    use_profile(e, "sandbox-guard.json");
    auto o = test::run(e);
    cleanup_all();
    cr_assert_eq(b.status, 0, "baseline: %s", b.err.c_str());
    cr_assert_eq(o.status, 0, "guarded: %s", o.err.c_str());
    auto before = probe_results(b.out), after = probe_results(o.out);
    cr_assert_geq(after.size(), 30u, "%s", o.out.c_str());
    std::string leaked;
    for (const auto &[name, err] : after)
        if (err != (name == "clone3" ? ENOSYS : EPERM))
            leaked += name + "=" + std::to_string(err) + " ";
    cr_assert(leaked.empty(), "not blocked: %s", leaked.c_str());
    for (const char *name : {"mount", "umount2", "unshare", "setns", "pivot_root", "ptrace",
                             "keyctl", "personality", "clone_newuts", "open_tree", "fsopen"})
        cr_assert_neq(before[name], EPERM, "%s is EPERM even without the guard: not a test of it",
                      name);
}

// runc's -ENOSYS handling (issue 21): under an allow-list, a system call
// newer than every one the profile names answers ENOSYS (a C library then
// falls back, as glibc does from clone3 to clone), an older one it does not
// name the default's EPERM; for x86-64 and the i386 entry point alike.
Test(seccomp, calls_newer_than_the_profile_answer_enosys) {
    Env e = probe_env("scnosys", false);
    e.b.spec.process->args = {"/syscall-probe", "nr", "110", "435", "1000"};
    ocirun::oci::Seccomp sc;
    sc.default_action = "SCMP_ACT_ERRNO";
    sc.default_errno_ret = EPERM;
    sc.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_AARCH64"};
    ocirun::oci::Syscall allow;
    allow.action = "SCMP_ACT_ALLOW";
    allow.names = {"setgroups", "setresgid", "setresuid", "setgid", "setuid", "capget", "capset",
                   "prctl", "read", "write", "openat", "close", "sendmsg", "recvmsg", "sendto",
                   "recvfrom", "poll", "ppoll", "fcntl", "futex", "exit", "exit_group",
                   "rt_sigreturn", "execve", "arch_prctl", "brk", "getrandom", "getuid", "mprotect",
                   "prlimit64", "readlink", "readlinkat", "rseq", "set_robust_list",
                   "set_tid_address", "mmap", "munmap", "newfstatat", "fstat", "ioctl", "lseek",
                   // The probe's guard around int $0x80 (a SIGSEGV handler).
                   "rt_sigaction", "rt_sigprocmask"};
    sc.syscalls = {allow};
    e.b.spec.linux_->seccomp = sc;
    e.b.save();
    auto o = test::run(e);
    Env i = probe_env("scnosys32", false);
    i.b.spec.process->args = {"/syscall-probe", "nr32", "20", "500"};
    i.b.spec.linux_->seccomp = sc;
    i.b.save();
    auto o32 = test::run(i);
    cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    auto m = probe_results(o.out);
    cr_assert_eq(m["110"], EPERM, "getppid, older and not named: %s", o.out.c_str());
    cr_assert_eq(m["435"], ENOSYS, "clone3, newer than rseq: %s", o.out.c_str());
    cr_assert_eq(m["1000"], ENOSYS, "%s", o.out.c_str());
    cr_assert_eq(o32.status, 0, "%s", o32.err.c_str());
    // (Where this machine has no i386 entry point, there is none to filter.)
    std::string eperm = test::i386_answer(std::to_string(EPERM)),
                enosys = test::i386_answer(std::to_string(ENOSYS));
    cr_assert(contains(o32.out, "20=" + eperm + "\n"), "i386 getpid, want %s: %s", eperm.c_str(),
              o32.out.c_str());
    cr_assert(contains(o32.out, "500=" + enosys + "\n"), "i386 500, want %s: %s", enosys.c_str(),
              o32.out.c_str());
}

// The first exec compiles the profile and keeps the programs in the state
// directory; the next with the same bounding set loads them (the file is
// not written again), one with another bounding set compiles its own (a
// rule conditional on a capability then applies), and a kept file that is
// not the runtime's own, or is damaged, is compiled again.
Test(seccomp, exec_keeps_the_compiled_filter_for_the_next) {
    Env e = make_env("sckeep", {"sleep", "30"});
    e.b.spec.root->readonly = false;
    Seccomp &sc = filter(e);
    sc.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", EXDEV));
    Syscall cond = rule({"rmdir"}, "SCMP_ACT_ERRNO", EXDEV);
    cond.includes_caps = {"CAP_NET_RAW"};
    sc.syscalls.push_back(cond);
    e.b.save();
    auto c = create(e);
    auto s = oci({"--root", e.root, "start", e.id});
    std::string kept = e.root + "/" + e.id + "/seccomp.bpf";
    auto ino = [&] {
        struct stat st {};
        return ::stat(kept.c_str(), &st) == 0 ? st.st_ino : 0;
    };
    auto first = oci({"--root", e.root, "exec", e.id, "mkdir", "/tmp/a"});
    ino_t after_first = ino();
    auto second = oci({"--root", e.root, "exec", e.id, "mkdir", "/tmp/b"});
    ino_t after_second = ino();
    auto plain_rmdir = oci({"--root", e.root, "exec", e.id, "rmdir", "/tmp/none"});
    auto raw_rmdir =
        oci({"--root", e.root, "exec", "--cap", "CAP_NET_RAW", e.id, "rmdir", "/tmp/none"});
    ino_t after_raw = ino();
    ::chmod(kept.c_str(), 0666);
    auto loose = oci({"--root", e.root, "exec", e.id, "mkdir", "/tmp/c"});
    struct stat loose_st {};
    ::stat(kept.c_str(), &loose_st);
    std::string text = test::read_file(kept);
    test::write_file(kept, text.substr(0, text.find('\n') + 1) + "garbage");
    ::chmod(kept.c_str(), 0600);
    auto damaged = oci({"--root", e.root, "exec", e.id, "mkdir", "/tmp/d"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    const char *names[] = {"first", "second", "loose", "damaged"};
    const test::Output *runs[] = {&first, &second, &loose, &damaged};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(runs[i]->status, 1, "%s exec mkdir: %d %s", names[i], runs[i]->status,
                     runs[i]->err.c_str());
        cr_assert(contains(runs[i]->err, "Invalid cross-device link"), "%s: %s", names[i],
                  runs[i]->err.c_str());
    }
    cr_assert_neq(after_first, 0u, "no %s after the first exec", kept.c_str());
    cr_assert_eq(after_second, after_first, "the second exec wrote the programs again");
    cr_assert(contains(plain_rmdir.err, "No such file"), "%s", plain_rmdir.err.c_str());
    cr_assert(contains(raw_rmdir.err, "Invalid cross-device link"), "with CAP_NET_RAW: %s",
              raw_rmdir.err.c_str());
    cr_assert_neq(after_raw, after_first, "another bounding set took the kept programs");
    cr_assert_eq(loose_st.st_mode & 0777, 0600u, "a file others may write was taken");
    cr_assert(contains(text, " caps "), "%s", text.substr(0, text.find('\n')).c_str());
}
