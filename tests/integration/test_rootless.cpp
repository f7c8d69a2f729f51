// oci-run run by an unprivileged user (nobody, 65534): the configuration from
// `oci-run spec --rootless`, a single self-mapping written by the runtime, and
// a multi-range mapping through newuidmap/newgidmap against /etc/subuid.
#include "oci/spec_io.hpp"
#include "support/container_env.hpp"
#include "support/host_snapshot.hpp"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;

namespace {

constexpr uid_t kNobody = 65534;

std::vector<std::string> as_nobody(std::vector<std::string> argv) {
    std::vector<std::string> out{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

// A copy of oci-run that nobody can reach (the build tree may not be).
std::string runtime_copy() {
    std::string dir = test::track_dir(test::make_temp_dir("rlbin"));
    ::chmod(dir.c_str(), 0755);
    std::string bin = dir + "/oci-run";
    test::write_file(bin, test::read_file(test::oci_run_path()));
    ::chmod(bin.c_str(), 0755);
    return bin;
}

// A container for nobody: config.json written by nobody's `spec --rootless`,
// pointed at the busybox rootfs; --root owned by nobody.
Env rootless_env(const char *tag, const std::string &bin, const std::vector<std::string> &args) {
    Env e = make_env(tag, args);
    ::chmod(e.b.dir.c_str(), 0755);
    ::chown(e.root.c_str(), kNobody, kNobody);
    std::string spec_dir = test::track_dir(test::make_temp_dir("rlspec"));
    ::chown(spec_dir.c_str(), kNobody, kNobody);
    auto s = test::run(as_nobody({bin, "spec", "--rootless", "--bundle", spec_dir}));
    cr_assert_eq(s.status, 0, "spec --rootless as nobody: %s", s.err.c_str());
    auto spec = ocirun::oci::load_bundle_spec(spec_dir);
    cr_assert(spec.has_value(), "%s", spec ? "" : spec.error().text().c_str());
    spec->root->path = e.b.rootfs;
    spec->process->args = args;
    spec->process->terminal = false;
    e.b.spec = std::move(*spec);
    e.b.save();
    return e;
}

test::Output run_as_nobody(const Env &e, const std::string &bin) {
    return test::run(as_nobody({bin, "--root", e.root, "run", "--bundle", e.b.dir, e.id}));
}

std::string normalised(const std::string &s) {
    std::istringstream in(s);
    std::string w, out;
    while (in >> w)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

} // namespace

TestSuite(rootless, .fini = cleanup_all, .timeout = 60);

Test(rootless, self_mapping_runs_a_container) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rlself", bin,
                         {"sh", "-c",
                          "cat /proc/self/uid_map /proc/self/gid_map; id -u; "
                          "test -c /dev/null && echo null-ok; hostname"});
    auto o = run_as_nobody(e, bin);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run as nobody: %d %s", o.status, o.err.c_str());
    std::string out = normalised(o.out);
    cr_assert_str_eq(out.c_str(), "0 65534 1 0 65534 1 0 null-ok oci-run", "out: [%s]",
                     out.c_str());
    cr_assert(left.empty(), "run left %s", left.empty() ? "" : left[0].c_str());
}

// An unprivileged user's container with a rule on files: `spec --rootless`
// writes no device rule, and none is needed (no devices cgroup is made; the
// user's own permissions hold the host's nodes), so the rule is not
// refused for the host's disks being open.
Test(rootless, a_rule_on_files_needs_no_device_rules) {
    std::string bin = runtime_copy();
    // (The user's own: the runtime looks in it for other names of its files.)
    std::string host = test::track_dir(test::make_temp_dir("rlprot"));
    ::chown(host.c_str(), kNobody, kNobody);
    Env e = rootless_env("rlprot", bin, {"sh", "-c", "echo ran"});
    e.b.spec.annotations["dev.ocirun.protected"] = host;
    e.b.save();
    auto o = run_as_nobody(e, bin);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run as nobody: %d %s", o.status, o.err.c_str());
    cr_assert(contains(o.out, "ran"), "%s %s", o.out.c_str(), o.err.c_str());
    cr_assert(left.empty(), "run left %s", left.empty() ? "" : left[0].c_str());
}

// exec into a running rootless container: the process joins the
// container's PID namespace (which the container's user namespace owns, so
// it is entered from there) and every other, as the container's root; the
// container is deleted with nothing left.
Test(rootless, exec_joins_a_rootless_container) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rlexec", bin, {"sleep", "60"});
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        // (Its stdio on files: a detached container keeps them.)
        return test::run_files(as_nobody(argv));
    };
    auto c = nobody({"run", "--detach", "--bundle", e.b.dir, e.id});
    auto x = nobody({"exec", e.id, "sh", "-c", "id -u; ps -o pid,args | awk '$1 == 1'"});
    auto d = nobody({"delete", "--force", e.id});
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(c.status, 0, "run -d as nobody: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec as nobody: %d %s", x.status, x.err.c_str());
    cr_assert_str_eq(normalised(x.out).c_str(), "0 1 sleep 60", "exec: [%s]", x.out.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

// Without a cgroup, delete --force ends every process of the container's
// PID namespace by the SIGKILL its PID 1 gets (the kernel kills the rest as
// it exits): the init's children and an exec'd process whose parent is
// outside, each held by a pidfd before the delete (a PID reused since
// cannot answer for it).
Test(rootless, delete_force_ends_every_process_of_the_namespace) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rldelns", bin, {"sh", "-c", "sleep 600 & sleep 600 & wait"});
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(as_nobody(argv));
    };
    auto c = nobody({"run", "--detach", "--bundle", e.b.dir, e.id});
    auto x = nobody({"exec", "--detach", e.id, "sleep", "600"});
    auto st = nobody({"state", e.id});
    size_t at = st.out.find("\"pid\": ");
    long init = at == std::string::npos ? -1 : std::atol(st.out.c_str() + at + 7);
    char ns[128] = "";
    std::string init_ns = "/proc/" + std::to_string(init) + "/ns/pid";
    (void)!::readlink(init_ns.c_str(), ns, sizeof ns - 1);
    std::vector<int> members; // pidfds, the init's included
    for (int i = 0; i < 100 && members.size() < 4; i++) {
        for (int fd : members)
            ::close(fd);
        members.clear();
        DIR *d = ::opendir("/proc");
        while (struct dirent *de = d ? ::readdir(d) : nullptr) {
            char link[128] = "";
            std::string p = std::string("/proc/") + de->d_name + "/ns/pid";
            if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
                ::readlink(p.c_str(), link, sizeof link - 1) <= 0 || std::strcmp(link, ns) != 0)
                continue;
            int fd = static_cast<int>(::syscall(SYS_pidfd_open, std::atoi(de->d_name), 0));
            if (fd >= 0) members.push_back(fd);
        }
        if (d) ::closedir(d);
        if (members.size() < 4) ::usleep(20000);
    }
    auto del = nobody({"delete", "--force", e.id});
    size_t left = 0;
    for (int fd : members) {
        struct pollfd p = {fd, POLLIN, 0};
        if (::poll(&p, 1, 5000) != 1) left++;
        ::close(fd);
    }
    cleanup_all();
    cr_assert(ns[0] != '\0', "no PID namespace read for init %ld", init);
    cr_assert_eq(c.status, 0, "run -d as nobody: %s", c.err.c_str());
    cr_assert_eq(x.status, 0, "exec -d as nobody: %s", x.err.c_str());
    cr_assert_geq(members.size(), 4u, "the init, its two sleeps and the exec'd one");
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
    cr_assert_eq(left, 0u, "%zu of the namespace's processes outlived delete --force", left);
}

// Ranges beyond its own id need the setuid helpers and an /etc/subuid entry;
// the test gives nobody one in a private mount namespace (the host's files
// are not touched).
Test(rootless, multi_range_mapping_through_newuidmap) {
    if (::access("/usr/bin/newuidmap", X_OK) != 0 || ::access("/etc/subuid", F_OK) != 0 ||
        ::access("/etc/subgid", F_OK) != 0)
        cr_skip_test("needs newuidmap (package uidmap) and /etc/subuid, /etc/subgid");
    std::string bin = runtime_copy();
    Env e = rootless_env("rlmulti", bin,
                         {"sh", "-c",
                          "cat /proc/self/uid_map; touch /dev/shm/f; "
                          "chown 1000:1000 /dev/shm/f && stat -c %u:%g /dev/shm/f"});
    auto &lx = *e.b.spec.linux_;
    lx.uid_mappings = {{0, kNobody, 1}, {1, 200000, 65536}};
    lx.gid_mappings = {{0, kNobody, 1}, {1, 200000, 65536}};
    test::add_capabilities(e, {"CAP_CHOWN"});
    e.b.save();
    std::string subid = test::track_dir(test::make_temp_dir("rlsubid")) + "/subid";
    test::write_file(subid, "nobody:200000:65536\n");
    std::string script = "mount --bind " + subid + " /etc/subuid && mount --bind " + subid +
                         " /etc/subgid && exec setpriv --reuid=65534 --regid=65534 "
                         "--clear-groups " +
                         bin + " --root " + e.root + " run --bundle " + e.b.dir + " " + e.id;
    auto o = test::run({"unshare", "-m", "sh", "-c", script});
    cleanup_all();
    cr_assert_eq(o.status, 0, "run as nobody: %d %s", o.status, o.err.c_str());
    std::string out = normalised(o.out);
    cr_assert_str_eq(out.c_str(), "0 65534 1 1 200000 65536 1000:1000", "out: [%s]", out.c_str());
}

Test(rootless, multi_range_without_subuid_entry_fails_cleanly) {
    if (::access("/usr/bin/newuidmap", X_OK) != 0) cr_skip_test("needs newuidmap (package uidmap)");
    std::string bin = runtime_copy();
    Env e = rootless_env("rlnosub", bin, {"true"});
    e.b.spec.linux_->uid_mappings = {{0, kNobody, 1}, {1, 300000, 10}};
    e.b.save();
    // An empty subuid file: newuidmap must refuse the range.
    std::string subid = test::track_dir(test::make_temp_dir("rlsubid")) + "/subid";
    test::write_file(subid, "");
    std::string script = "mount --bind " + subid +
                         " /etc/subuid && exec setpriv "
                         "--reuid=65534 --regid=65534 --clear-groups " +
                         bin + " --root " + e.root + " run --bundle " + e.b.dir + " " + e.id;
    auto o = test::run({"unshare", "-m", "sh", "-c", script});
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "run: %d %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "linux.uidMappings: newuidmap: exited with status 1"), "%s",
              o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1, "%s", o.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

Test(rootless, unprivileged_user_without_user_namespace_is_refused) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rlnouser", bin, {"true"});
    std::erase_if(e.b.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::user; });
    e.b.spec.linux_->uid_mappings.clear();
    e.b.spec.linux_->gid_mappings.clear();
    e.b.save();
    auto o = run_as_nobody(e, bin);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1, "run: %d %s", o.status, o.err.c_str());
    cr_assert(contains(o.err, "an unprivileged user needs a user namespace"), "%s", o.err.c_str());
    cr_assert(left.empty());
}

// The network helper works for an unprivileged user too: the init's
// listener in the container's namespace, the helper (nobody's) connecting
// from the host's; the proxy env is there; publish needs root and says so.
Test(rootless, local_ports_and_the_proxy_without_privileges) {
    std::string bin = runtime_copy();
    std::string shim = bin.substr(0, bin.rfind('/')) + "/oci-run-shim";
    const char *built = std::getenv("OCI_RUN_SHIM");
    cr_assert(built, "OCI_RUN_SHIM is not set");
    test::write_file(shim, test::read_file(built));
    ::chmod(shim.c_str(), 0755);
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert(::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 && ::listen(s, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
    std::string port = std::to_string(ntohs(a.sin_port));
    Env e = rootless_env(
        "rlnet", bin, {"sh", "-c", "echo $HTTPS_PROXY; (echo hi; sleep 0.5) | nc 127.0.0.1 8080"});
    auto &ns = e.b.spec.linux_->namespaces;
    if (!e.b.spec.linux_->find_namespace(ocirun::oci::NsType::network))
        ns.push_back({ocirun::oci::NsType::network, ""});
    e.b.spec.annotations["dev.ocirun.local-ports"] = "8080:" + port;
    e.b.spec.annotations["dev.ocirun.domains"] = "example.com";
    e.b.save();
    // A server that answers the one connection it gets.
    pid_t srv = ::fork();
    if (srv == 0) {
        int c = ::accept(s, nullptr, nullptr);
        char buf[64];
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n > 0) (void)!::write(c, "srv:", 4), (void)!::write(c, buf, static_cast<size_t>(n));
        ::_exit(0);
    }
    ::close(s);
    ::setenv("OCI_RUN_SHIM", shim.c_str(), 1);
    auto o = run_as_nobody(e, bin);
    e.b.spec.annotations["dev.ocirun.publish"] = "8081:80";
    e.b.save();
    auto pub = run_as_nobody(e, bin);
    ::kill(srv, SIGKILL);
    ::waitpid(srv, nullptr, 0);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run as nobody: %s", o.err.c_str());
    cr_assert(test::contains(o.out, "http://127.0.0.1:3128\nsrv:hi\n"), "%s", o.out.c_str());
    cr_assert_eq(pub.status, 1);
    cr_assert(test::contains(pub.err, "dev.ocirun.publish needs root"), "%s", pub.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

namespace {

// What Podman writes by default: a seccomp filter without noNewPrivileges,
// which goes in before the exec stage could, so the init execs the process
// itself (no stage) and waits for start as a fork of the runtime.
void podman_seccomp(Env &e) {
    ocirun::oci::Seccomp sc;
    sc.default_action = "SCMP_ACT_ALLOW";
    sc.syscalls = {{{"keyctl"}, "SCMP_ACT_ERRNO", 1, {}, {}}};
    e.b.spec.linux_->seccomp = sc;
    e.b.spec.process->no_new_privileges = false;
    e.b.save();
}

std::string state_status(const std::string &bin, const Env &e) {
    auto s = test::run(as_nobody({bin, "--root", e.root, "state", e.id}));
    auto at = s.out.find("\"status\": \"");
    if (at == std::string::npos) return "(" + s.err + ")";
    at += 11;
    return s.out.substr(at, s.out.find('"', at) - at);
}

} // namespace

// A container that joins another's user and PID namespaces by path (a
// rootless pod sharing its PID namespace; runc runs it). The joined user
// namespace owns that PID namespace and an unprivileged runtime has no
// capability over it from the host's, so the process that joins the user
// namespace enters it; the runtime's own setns failed with EPERM. The second
// container sees the first one's process as its PID 1. A separate create
// is refused (its init waits without the exec stage, which `start` could not
// reach there): it said created and start failed.
Test(rootless, joins_another_containers_user_and_pid_namespaces) {
    std::string bin = runtime_copy();
    Env a = rootless_env("rljpa", bin, {"sleep", "600"});
    Env b = rootless_env("rljpb", bin, {"sleep", "600"});
    auto nobody = [&](const Env &e, std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(as_nobody(argv));
    };
    auto ra = nobody(a, {"run", "--detach", "--bundle", a.b.dir, a.id});
    auto st = test::run(as_nobody({bin, "--root", a.root, "state", a.id}));
    auto at = st.out.find("\"pid\": ");
    std::string ns_dir =
        "/proc/" +
        std::to_string(at == std::string::npos ? -1 : std::atol(st.out.c_str() + at + 7)) + "/ns/";
    for (auto &ns : b.b.spec.linux_->namespaces)
        if (ns.type == ocirun::oci::NsType::user || ns.type == ocirun::oci::NsType::pid)
            ns.path = ns_dir + (ns.type == ocirun::oci::NsType::user ? "user" : "pid");
    b.b.spec.linux_->uid_mappings.clear();
    b.b.spec.linux_->gid_mappings.clear();
    b.b.save();
    auto rb = nobody(b, {"run", "--detach", "--bundle", b.b.dir, b.id});
    auto x = nobody(b, {"exec", b.id, "sh", "-c",
                        "ps -o pid,args | awk '$1 == 1'; readlink /proc/self/ns/pid"});
    char a_pidns[64] = "";
    (void)!::readlink((ns_dir + "pid").c_str(), a_pidns, sizeof a_pidns - 1);
    auto db = nobody(b, {"delete", "--force", b.id});
    // The first one's processes are not the second's: still running (a
    // SIGKILL sent to it would have ended it by then).
    ::usleep(500000);
    std::string a_after = state_status(bin, a);
    auto xa = nobody(a, {"exec", a.id, "true"});
    // A separate create is refused: `start` could not reach that init.
    auto cb = nobody(b, {"create", "--bundle", b.b.dir, b.id});
    auto da = nobody(a, {"delete", "--force", a.id});
    auto left = test::dir_entries(b.root);
    cleanup_all();
    cr_assert_eq(ra.status, 0, "run -d as nobody: %s", ra.err.c_str());
    cr_assert_eq(rb.status, 0, "run -d in the first one's namespaces: %s", rb.err.c_str());
    cr_assert_eq(x.status, 0, "exec: %d %s", x.status, x.err.c_str());
    cr_assert_str_eq(normalised(x.out).c_str(), ("1 sleep 600 " + std::string(a_pidns)).c_str());
    cr_assert_eq(db.status, 0, "delete: %s", db.err.c_str());
    cr_assert_str_eq(a_after.c_str(), "running", "the first container after the second's delete");
    cr_assert_eq(xa.status, 0, "exec into the first one: %s", xa.err.c_str());
    cr_assert(cb.status == 1 && test::count_lines(cb.err) == 1 &&
                  contains(cb.err, "can only `run` the container"),
              "create: %d %s", cb.status, cb.err.c_str());
    cr_assert_eq(da.status, 0, "delete: %s", da.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

// create, state, start and delete as separate commands, as Podman calls
// them, with Podman's default seccomp (no stage): the runtime reaches the
// waiting init's pipes, so state says created and start runs the process.
Test(rootless, create_then_start_without_the_stage) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rlcs", bin, {"sh", "-c", "echo started > /dev/shm/ran; sleep 30"});
    podman_seccomp(e);
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(as_nobody(argv));
    };
    auto c = nobody({"create", "--bundle", e.b.dir, e.id});
    std::string created = state_status(bin, e);
    auto s = nobody({"start", e.id});
    std::string started = state_status(bin, e);
    auto x = nobody({"exec", e.id, "sh", "-c", "sleep 0.2; cat /dev/shm/ran"});
    auto d = nobody({"delete", "--force", e.id});
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create as nobody: %s", c.err.c_str());
    cr_assert_str_eq(created.c_str(), "created");
    cr_assert_eq(s.status, 0, "start as nobody: %s", s.err.c_str());
    cr_assert_str_eq(started.c_str(), "running");
    cr_assert_eq(x.status, 0, "exec as nobody: %s", x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "started\n");
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

// Attack: while the init waits for start it is open to its user's
// processes (dumpable, for the runtime's sake). Nothing of the container's
// may run then: exec is refused until start, and the init is closed again
// before a startContainer hook (forked from it, in the container) runs.
Test(rootless, nothing_in_the_container_reaches_the_waiting_init) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rlwait", bin, {"sleep", "30"});
    podman_seccomp(e);
    e.b.spec.hooks.emplace().start_container = {
        {"/bin/sh",
         {"sh", "-c",
          "ls /proc/1/fd > /dev/shm/hook 2>&1 && echo fds-open >> /dev/shm/hook; "
          "head -c1 /proc/1/mem > /dev/null 2>> /dev/shm/hook && echo mem-open >> /dev/shm/hook; "
          "echo hook-ran >> /dev/shm/hook"},
         {},
         {}}};
    e.b.save();
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(as_nobody(argv));
    };
    auto c = nobody({"create", "--bundle", e.b.dir, e.id});
    auto x = nobody({"exec", e.id, "sh", "-c", "ls /proc/1/fd; echo exec-ran"});
    auto s = nobody({"start", e.id});
    auto hook = nobody({"exec", e.id, "cat", "/dev/shm/hook"});
    auto d = nobody({"delete", "--force", e.id});
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create as nobody: %s", c.err.c_str());
    cr_assert_neq(x.status, 0, "exec before start ran: %s", x.out.c_str());
    cr_assert(!contains(x.out, "exec-ran"), "%s", x.out.c_str());
    cr_assert(contains(x.err, "is created and an unprivileged runtime's init is open"), "%s",
              x.err.c_str());
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    cr_assert_eq(hook.status, 0, "exec after start: %s", hook.err.c_str());
    cr_assert(contains(hook.out, "hook-ran"), "%s", hook.out.c_str());
    cr_assert(!contains(hook.out, "fds-open") && !contains(hook.out, "mem-open"),
              "the hook reached the init: %s", hook.out.c_str());
    cr_assert(contains(hook.out, "Permission denied"), "%s", hook.out.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}

// A deny rule in a rootless container without the stage: the rule probe
// joins the waiting init's namespaces (it used to fail to open them), and
// the denied file (the busybox rootfs's /etc/passwd has lines) reads empty.
Test(rootless, a_deny_rule_without_the_stage) {
    std::string bin = runtime_copy();
    Env e = rootless_env("rldeny", bin, {"sh", "-c", "echo [$(cat /etc/passwd)]"});
    podman_seccomp(e);
    e.b.spec.annotations["dev.ocirun.deny"] = "/etc/passwd";
    e.b.save();
    auto o = run_as_nobody(e, bin);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 0, "run as nobody: %d %s", o.status, o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "[]\n", "%s", o.out.c_str());
    cr_assert(left.empty(), "run left %s", left.empty() ? "" : left[0].c_str());
}

// Attack: an unprivileged runtime makes no devices cgroup, so a disk node
// the user may open (here through group disk, 6, which the single mapping
// keeps) opens in the container too, and the denied file's bytes are read
// off the raw device. Under a rule on files a node bound in by config.json's
// mounts is refused, one line naming it; any other way does not open (the
// binds and the rootfs are nodev): a bind of the host's /dev (with the
// node over /dev/loop7, in a private mount namespace), a bound directory
// with the node in it, the node in the rootfs. Without the rule the same
// container reads the device: the attack is real.
Test(rootless, attack_a_disk_the_user_opens_under_filesystem_rules) {
    test::LoopDisk disk = test::make_loop_disk("rlblk");
    const std::string &dir = disk.dir, &mnt = disk.mnt, &marker = disk.marker;
    std::string failures = disk.failure, node = dir + "/node";
    if (::mknod(node.c_str(), S_IFBLK | 0660, disk.rdev) != 0 || ::chown(node.c_str(), 0, 6) != 0)
        failures += "set up " + node + ": " + std::strerror(errno) + "\n";
    std::string numbers = std::to_string(major(disk.rdev)) + ":" + std::to_string(minor(disk.rdev));
    // A directory of the host's with the node in it.
    std::string nodes = dir + "/nodes";
    ::mkdir(nodes.c_str(), 0755);
    if (::mknod((nodes + "/blk").c_str(), S_IFBLK | 0660, disk.rdev) != 0 ||
        ::chown((nodes + "/blk").c_str(), 0, 6) != 0)
        failures += "set up " + nodes + "/blk: " + std::strerror(errno) + "\n";
    struct Case {
        const char *name, *refusal, *path, *seen;
    } cases[] = {
        {"bound", "mounts[N] /dev/blk binds NODE (block device NUM), which reaches", "/dev/blk",
         nullptr},
        // Any other way is closed: the binds and the rootfs are nodev.
        {"a bind of /dev", nullptr, "/hostdev/loop7", "Permission denied"},
        {"in a bound directory", nullptr, "/nodes/blk", "Permission denied"},
        {"in the rootfs", nullptr, "/blk", "Permission denied"},
        {"no rule", nullptr, "/dev/blk", "seen=1\n"},
    };
    bool ready = failures.empty();
    for (const auto &c : cases) {
        if (!ready) break;
        std::string what = c.name;
        std::string bin = runtime_copy(); // (each case's cleanup_all removes it)
        Env e = rootless_env(
            "rlblk", bin,
            {"sh", "-c", "echo seen=$(grep -a -c " + marker + " " + c.path + " 2>&1)"});
        ::mkdir((e.b.rootfs + "/data").c_str(), 0755);
        e.b.spec.mounts.push_back(test::mount_entry("/data", "bind", mnt, {"rbind", "ro"}));
        size_t bound = e.b.spec.mounts.size();
        std::string over = "/dev/loop7";
        if (what == "a bind of /dev") {
            // The host's /dev, with the user's node as /dev/loop7 in it.
            if (::mount(node.c_str(), over.c_str(), nullptr, MS_BIND, nullptr) != 0)
                failures += what + ": bind over " + over + ": " + std::strerror(errno) + "\n";
            ::mkdir((e.b.rootfs + "/hostdev").c_str(), 0755);
            e.b.spec.mounts.push_back(test::mount_entry("/hostdev", "bind", "/dev", {"rbind"}));
        } else if (what == "in a bound directory") {
            ::mkdir((e.b.rootfs + "/nodes").c_str(), 0755);
            e.b.spec.mounts.push_back(test::mount_entry("/nodes", "bind", nodes, {"rbind"}));
        } else if (what == "in the rootfs") {
            if (::mknod((e.b.rootfs + "/blk").c_str(), S_IFBLK | 0660, disk.rdev) != 0 ||
                ::chown((e.b.rootfs + "/blk").c_str(), 0, 6) != 0)
                failures += what + ": mknod: " + std::strerror(errno) + "\n";
        } else {
            e.b.spec.mounts.push_back(test::mount_entry("/dev/blk", "bind", node, {"bind"}));
        }
        if (what != "no rule") e.b.spec.annotations["dev.ocirun.deny"] = "/data/secret";
        e.b.save();
        auto o = test::run(std::vector<std::string>{"setpriv", "--reuid=65534", "--regid=65534",
                                                    "--groups=6", bin, "--root", e.root, "run",
                                                    "--bundle", e.b.dir, e.id});
        if (what == "a bind of /dev") ::umount2(over.c_str(), MNT_DETACH);
        auto left = test::dir_entries(e.root);
        std::string all = o.out + o.err;
        if (c.refusal) {
            std::string want = c.refusal;
            for (auto [from, to] : {std::pair<std::string, std::string>{"N", std::to_string(bound)},
                                    {"NODE", node},
                                    {"NUM", numbers}})
                if (auto at = want.find(from == "N" ? "[N]" : from); at != std::string::npos)
                    want.replace(from == "N" ? at + 1 : at, from.size(), to);
            if (o.status != 1 || test::count_lines(o.err) != 1 || !contains(o.err, want) ||
                !left.empty() || contains(o.out, "seen="))
                failures += what + ": not refused (want \"" + want +
                            "\"): " + std::to_string(o.status) + " " + all + "\n";
        } else if (o.status != 0 || !contains(o.out, c.seen) || !left.empty()) {
            failures +=
                what + ": want \"" + c.seen + "\": " + std::to_string(o.status) + " " + all + "\n";
        }
        cleanup_all();
    }
    disk.remove();
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
}

// Rootless Podman runs its runtime as root of a user namespace of its own
// (the user's id and its /etc/subuid range), where root is no root of the
// host: oci-run takes $XDG_RUNTIME_DIR/oci-run for its state (as runc),
// binds device nodes instead of making them, and its lock of the masks'
// mounts maps the identity of that namespace's ids. Podman as nobody, its
// storage and configuration in one directory (oci-run named in
// runtime_supports_nocgroup, as Podman 4.3 spells it, and cgroups disabled,
// which it passes as --cgroup-manager disabled: its own cgroups depend on
// the host's), /etc/subuid given a range in a private mount namespace:
// run, a detached container with a deny rule, exec into it, rm; nothing
// is left mounted below the directory.
Test(rootless, podman_runs_oci_run_as_root_of_its_user_namespace, .timeout = 120) {
    for (const char *tool : {"/usr/bin/podman", "/usr/bin/newuidmap", "/usr/bin/catatonit"})
        if (::access(tool, X_OK) != 0) cr_skip_test("needs %s", tool);
    std::string dir = test::make_temp_dir("rlpodman");
    ::chmod(dir.c_str(), 0755);
    ::chown(dir.c_str(), kNobody, kNobody);
    std::string built = test::oci_run_path();
    std::string bin = dir + "/oci-run";
    test::write_file(bin, test::read_file(built));
    ::chmod(bin.c_str(), 0755);
    std::string stage = built.substr(0, built.rfind('/')) + "/oci-run-exec-stage";
    if (::access(stage.c_str(), X_OK) == 0) {
        test::write_file(dir + "/oci-run-exec-stage", test::read_file(stage));
        ::chmod((dir + "/oci-run-exec-stage").c_str(), 0755);
    }
    Env e = make_env("rlpodman", {"true"});
    auto tar = test::run(
        std::vector<std::string>{"tar", "-C", e.b.rootfs, "-cf", dir + "/rootfs.tar", "."});
    cr_assert_eq(tar.status, 0, "tar: %s", tar.err.c_str());
    ::chmod((dir + "/rootfs.tar").c_str(), 0644);
    test::write_file(dir + "/subid", "nobody:200000:65536\n");
    test::write_file(dir + "/containers.conf",
                     "[engine]\nruntime = \"ocirun\"\nruntime_supports_nocgroup = [\"ocirun\"]\n"
                     "cgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n"
                     "[engine.runtimes]\nocirun = [\"" +
                         bin + "\"]\n");
    std::string podman = "podman --root " + dir + "/storage --runroot " + dir + "/runroot";
    std::string run = podman + " run --cgroups disabled --network none ";
    std::string script = "export CONTAINERS_CONF=" + dir + "/containers.conf HOME=" + dir +
                         "/home XDG_RUNTIME_DIR=" + dir + "/xdg XDG_CONFIG_HOME=" + dir +
                         "/home/.config\n"
                         "mkdir -p $HOME $XDG_RUNTIME_DIR && chmod 700 $XDG_RUNTIME_DIR\n" +
                         podman + " import " + dir +
                         "/rootfs.tar localhost/oci-run-test/bb >/dev/null 2>&1 || "
                         "echo import-failed\n"
                         "echo \"run: $(" +
                         run +
                         "--rm localhost/oci-run-test/bb sh -c 'id -u; cat /proc/self/uid_map' | "
                         "tr -s ' \\n' ' ')\"\n" +
                         run +
                         "-d --name c1 --annotation dev.ocirun.deny=/etc/passwd "
                         "localhost/oci-run-test/bb sleep 60 >/dev/null && echo detached\n"
                         "echo \"exec: $(" +
                         podman +
                         " exec c1 sh -c 'wc -c < /etc/passwd')\"\n"
                         "ls $XDG_RUNTIME_DIR/oci-run | grep -c . | sed 's/^/state: /'\n" +
                         podman +
                         " rm -f -t 0 c1 >/dev/null && echo removed\n"
                         "ls $XDG_RUNTIME_DIR/oci-run | grep -c . | sed 's/^/state after: /'\n" +
                         podman + " system migrate >/dev/null 2>&1\n";
    test::write_file(dir + "/script", script);
    auto o = test::run(std::vector<std::string>{
        "unshare", "-m", "sh", "-c",
        "mount --bind " + dir + "/subid /etc/subuid && mount --bind " + dir +
            "/subid /etc/subgid && exec setpriv --reuid=65534 --regid=65534 --clear-groups sh " +
            dir + "/script"});
    // The pause process Podman keeps, if migrate left it (its PID file).
    std::string pause = dir + "/xdg/libpod/tmp/pause.pid";
    if (::access(pause.c_str(), F_OK) == 0)
        if (int pid = std::atoi(test::read_file(pause).c_str()); pid > 0) ::kill(pid, SIGKILL);
    std::string mounts = test::read_file("/proc/self/mountinfo");
    test::track_dir(dir);
    cleanup_all();
    cr_assert(contains(o.out, "run: 0 0 65534 1 1 200000 65536 \n"), "%s %s", o.out.c_str(),
              o.err.c_str());
    cr_assert(contains(o.out, "detached\nexec: 0\nstate: 1\nremoved\nstate after: 0\n"), "%s %s",
              o.out.c_str(), o.err.c_str());
    cr_assert(!contains(mounts, " " + dir + "/"), "left mounted below %s", dir.c_str());
}

// Attack: the binds of an unprivileged runtime's container under a rule on
// files are nodev, but a mount the host made below a bound directory after
// create came in as a slave's does, with its own flags: a device node on it
// opened in the container. Those binds are rprivate now: the later mount
// does not come in. (A shared host directory, in a private mount namespace
// of the test's; a tmpfs mounted there once the container runs, with a null
// node in it, which the container tries to open.)
Test(rootless, attack_a_host_mount_made_later_below_a_bind) {
    test::private_mount_namespace();
    std::string dir = test::make_temp_dir("rllater");
    ::chmod(dir.c_str(), 0755);
    std::string later = dir + "/later";
    ::mkdir(later.c_str(), 0755);
    std::string failures;
    if (::mount(later.c_str(), later.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, later.c_str(), nullptr, MS_SHARED, nullptr) != 0)
        failures = std::string("make ") + later + " shared: " + std::strerror(errno);
    ::mkdir((later + "/sub").c_str(), 0755);
    std::string bin = runtime_copy();
    Env e = rootless_env("rllater", bin, {"sleep", "60"});
    ::mkdir((e.b.rootfs + "/later").c_str(), 0755);
    e.b.spec.mounts.push_back(test::mount_entry("/later", "bind", later, {"rbind"}));
    e.b.spec.annotations["dev.ocirun.deny"] = "/etc/passwd";
    e.b.save();
    auto nobody = [&](std::vector<std::string> args) {
        std::vector<std::string> argv = {bin, "--root", e.root};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(as_nobody(argv));
    };
    auto c = nobody({"run", "--detach", "--bundle", e.b.dir, e.id});
    std::string sub = later + "/sub";
    if (::mount("tmpfs", sub.c_str(), "tmpfs", 0, "mode=755") != 0 ||
        ::mknod((sub + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
        ::chmod((sub + "/null").c_str(), 0666) != 0)
        failures += "mount a tmpfs on " + sub + ": " + std::strerror(errno) + "\n";
    auto x = nobody({"exec", e.id, "sh", "-c", "echo x > /later/sub/null && echo opened"});
    auto d = nobody({"delete", "--force", e.id});
    ::umount2(sub.c_str(), MNT_DETACH);
    ::umount2(later.c_str(), MNT_DETACH);
    test::track_dir(dir);
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert_eq(c.status, 0, "run: %s", c.err.c_str());
    cr_assert(!contains(x.out, "opened"), "a node on the later mount opened: %s %s", x.out.c_str(),
              x.err.c_str());
    cr_assert(contains(x.err, "can't create /later/sub/null"), "%s %s", x.out.c_str(),
              x.err.c_str());
    cr_assert_eq(d.status, 0, "delete: %s", d.err.c_str());
    cr_assert(left.empty(), "left %s", left.empty() ? "" : left[0].c_str());
}
