// Attacks from runc's and crun's CVE history, attempted from a container, each
// shown to fail. (The rootfs issue adds the mount and masked-path ones.)
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::oci;
using test::read_file;
using test::state_of;

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

// CVE-2019-5736. Container A is created: its init runs the runtime's code in
// A's namespaces until `start`. Container B shares the host's PID namespace
// and has CAP_SYS_PTRACE, so PR_SET_DUMPABLE alone would not stop it from
// opening /proc/<A's init>/exe. It holds that file open until A is gone (no
// more ETXTBSY) and then writes through it, as the published exploit does. The
// runtime binary that created A (a copy, so a failure cannot damage the build)
// must be unchanged, and what B reached must be the sealed memfd copy.
Test(cve, cve_2019_5736_runtime_binary_cannot_be_overwritten) {
    std::string bin_dir = test::track_dir(test::make_temp_dir("cve5736bin"));
    std::string runtime = bin_dir + "/oci-run";
    std::string original = read_file(test::oci_run_path());
    cr_assert(original.size() > 1000, "cannot read %s", test::oci_run_path().c_str());
    test::write_file(runtime, original);
    ::chmod(runtime.c_str(), 0755);

    Env a = make_env("cveA", {"true"});
    a.b.save();
    std::string saved = test::oci_run_path();
    ::setenv("OCI_RUN", runtime.c_str(), 1);
    auto ca = create(a);
    ::setenv("OCI_RUN", saved.c_str(), 1);
    long init = state_of(a.root, a.id).pid;

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
    auto &caps = *b.b.spec.process->capabilities;
    for (auto *set : {&caps.bounding, &caps.effective, &caps.permitted})
        set->push_back("CAP_SYS_PTRACE");
    ocirun::oci::Mount m;
    m.destination = "/shared";
    m.type = "bind";
    m.source = shared;
    m.options = {"rbind"};
    b.b.spec.mounts.push_back(m);
    b.b.save();
    test::Spawned sb = test::spawn_oci({"--root", b.root, "run", "--bundle", b.b.dir, b.id});
    bool ready = wait_for_file(shared + "/ready", 5000);
    auto da = oci({"--root", a.root, "delete", "--force", a.id});
    test::write_file(shared + "/go", "");
    int rb = test::wait_bounded(sb.pid, 10000);
    std::string exe = read_file(shared + "/exe");
    std::string rc = read_file(shared + "/rc");
    std::string after = read_file(runtime);
    cleanup_all();

    cr_assert_eq(ca.status, 0, "create A: %s", ca.err.c_str());
    cr_assert(ready, "B never opened A's /proc/PID/exe (exe link: %s)", exe.c_str());
    cr_assert_eq(da.status, 0, "delete A: %s", da.err.c_str());
    cr_assert_eq(rb, 0, "run B: %d", rb);
    cr_assert(after == original, "the runtime binary was modified (B's write: rc %s)", rc.c_str());
    cr_assert(!rc.empty() && rc != "0\n", "B's write through the exe link succeeded");
    cr_assert(exe.rfind("/memfd:oci-run", 0) == 0, "A's init ran from %s", exe.c_str());
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
