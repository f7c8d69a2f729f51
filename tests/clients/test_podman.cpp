// Podman driving oci-run: podman (with conmon) runs busybox containers with
// `--runtime` naming oci-run, and each test checks what the container saw.
//
// Podman gets its own world under one temp directory: storage (--root,
// --runroot), containers.conf, storage.conf and registries.conf written here
// (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, CONTAINERS_REGISTRIES_CONF),
// cgroupfs with a cgroup parent of its own (no systemd), the events log, file
// locks and its tmp_dir; the network defaults to none, so no CNI network, bridge
// or firewall rule is made. The runtime is a wrapper script that logs its
// argv (shown when a test fails) and runs $OCI_RUN with a --root of its own.
//
// Criterion runs .init/.fini around every test, in the test's process, and
// fires POST_SUITE while a suite's tests may still run (--jobs): so the shared
// directory is made by a PRE_ALL hook, the image is imported once by the first
// test that needs it (under a lock), and everything is removed by a POST_ALL
// hook in the runner after the last test. Each test removes its containers in
// .fini.
#include "support/harness.hpp"
#include "support/process.hpp"

#include "support/net_server.hpp"

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char **environ;

using test::contains;
using test::exists;
using test::read_file;
using test::write_file;

namespace {

// The suite's directory, made by PRE_ALL in the runner and inherited by the
// test processes through the environment.
constexpr const char *kDirEnv = "OCI_RUN_PODMAN_SUITE_DIR";
constexpr const char *kImage = "localhost/oci-run-test/busybox:latest";
// Written by `podman import` when it copies the image (containers/image's blob
// info cache; for root it always lives here). Removed at the end when the
// suite made it.
const std::vector<std::string> kBlobCache = {"/var/lib/containers", "/var/lib/containers/cache",
                                             "/var/lib/containers/cache/blob-info-cache-v1.boltdb"};

// Where everything of one suite run lives.
struct Layout {
    std::string dir;
    std::string storage, run, state, tmp, cni;
    std::string containers_conf, storage_conf, registries_conf;
    std::string runtime, argv_log, events_log;
    std::string image_lock, image_ready, created_paths;
    std::string cgroup_parent; // "/" + the directory's name
    // The suite's CNI bridge network (its own bridge and subnet, no NAT, no
    // host firewall rules; removed by the teardown).
    std::string bridge, cni_data;
};

constexpr const char *kBridgeNetwork = "ocirun-test";
constexpr const char *kBridgeSubnet = "10.89.77.0/24";
constexpr const char *kBridgeGateway = "10.89.77.1";

Layout layout_of(const std::string &dir) {
    Layout l;
    l.dir = dir;
    l.storage = dir + "/storage";
    l.run = dir + "/run";
    l.state = dir + "/oci-run-state";
    l.tmp = dir + "/tmp";
    l.cni = dir + "/cni";
    l.containers_conf = dir + "/containers.conf";
    l.storage_conf = dir + "/storage.conf";
    l.registries_conf = dir + "/registries.conf";
    l.runtime = dir + "/oci-run-runtime";
    l.argv_log = dir + "/runtime-argv.log";
    l.events_log = dir + "/events.log";
    l.image_lock = dir + "/image.lock";
    l.image_ready = dir + "/image.ready";
    l.created_paths = dir + "/host-paths-made";
    l.cgroup_parent = "/" + dir.substr(dir.rfind('/') + 1);
    l.bridge = "ocrt" + dir.substr(dir.size() - std::min<size_t>(dir.size(), 6));
    l.cni_data = dir + "/cni-ipam";
    return l;
}

Layout g; // this process's layout (set by .init or the hooks)
std::vector<std::string> g_names;

// 'text' for sh, with ' inside closed, escaped and reopened.
std::string sh_quote(const std::string &s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

long now_ms() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// A limit as containers.conf's default_ulimits wants it: within this
// process's limits (the sandbox's hard nofile is below what Podman asks for,
// and without CAP_SYS_RESOURCE a container cannot be given more). Podman
// lowers its own RLIMIT_NPROC to kernel.pid_max when it loads its defaults
// (containers/common), and conmon and the runtime inherit that, so nproc is
// kept within pid_max too.
struct Limit {
    unsigned long long soft, hard;
};
Limit host_limit(int resource) {
    struct rlimit r;
    getrlimit(resource, &r);
    unsigned long long top = 1048576; // Podman's own default for both
    if (resource == RLIMIT_NPROC) {
        unsigned long long pid_max =
            std::strtoull(read_file("/proc/sys/kernel/pid_max").c_str(), nullptr, 10);
        if (pid_max > 0) top = pid_max;
    }
    auto cap = [top](rlim_t v) {
        return v == RLIM_INFINITY ? top : std::min<unsigned long long>(v, top);
    };
    return {cap(r.rlim_cur), cap(r.rlim_max)};
}
std::string ulimit_entry(const char *name, Limit l) {
    return std::string("\"") + name + "=" + std::to_string(l.soft) + ":" + std::to_string(l.hard) +
           "\"";
}

// ---- running programs, bounded ----------------------------------------------

struct Ran {
    int status = -1; // exit status, 128 + signal, -1 when it timed out
    std::string out, err;
};

// argv with stdin on /dev/null and both outputs captured. Stops reading once
// the child has exited (conmon, started by `podman run -d`, may keep a copy of
// the pipes open); after `timeout_ms` the child is killed and reaped.
Ran run_bounded(const std::vector<std::string> &argv, int timeout_ms = 30000) {
    Ran r;
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0) return r;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]);
        close(out[1]);
        return r;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    // conmon writes an `oom` file into its working directory when the OOM
    // killer acts: keep that in the suite's directory.
    if (!g.dir.empty()) posix_spawn_file_actions_addchdir_np(&fa, g.dir.c_str());
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        r.err = "spawn " + argv[0] + ": " + std::strerror(rc);
        return r;
    }
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    long deadline = now_ms() + timeout_ms;
    bool open_out = true, open_err = true, exited = false;
    int st = 0;
    auto drain = [](int fd, std::string &to, bool &open) {
        char buf[65536];
        for (;;) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n > 0) {
                to.append(buf, static_cast<size_t>(n));
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) open = false;
            return;
        }
    };
    while (!exited) {
        struct pollfd p[2];
        int n = 0;
        if (open_out) p[n++] = {out[0], POLLIN, 0};
        if (open_err) p[n++] = {err[0], POLLIN, 0};
        if (n > 0)
            poll(p, n, 20);
        else
            usleep(20000);
        if (open_out) drain(out[0], r.out, open_out);
        if (open_err) drain(err[0], r.err, open_err);
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            exited = true;
        } else if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            close(out[0]);
            close(err[0]);
            r.err += "\n(killed after " + std::to_string(timeout_ms) + " ms)";
            return r;
        }
    }
    if (open_out) drain(out[0], r.out, open_out);
    if (open_err) drain(err[0], r.err, open_err);
    close(out[0]);
    close(err[0]);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

// ---- podman with the suite's storage, configuration and runtime -------------

void use_config_env(const Layout &l) {
    setenv("CONTAINERS_CONF", l.containers_conf.c_str(), 1);
    setenv("CONTAINERS_STORAGE_CONF", l.storage_conf.c_str(), 1);
    setenv("CONTAINERS_REGISTRIES_CONF", l.registries_conf.c_str(), 1);
}

std::vector<std::string> podman_argv(const Layout &l, const std::vector<std::string> &args) {
    std::vector<std::string> v{"podman",   "--root",           l.storage, "--runroot",
                               l.run,      "--runtime",        l.runtime, "--cgroup-manager",
                               "cgroupfs", "--events-backend", "file"};
    v.insert(v.end(), args.begin(), args.end());
    return v;
}

Ran podman(const std::vector<std::string> &args, int timeout_ms = 30000) {
    return run_bounded(podman_argv(g, args), timeout_ms);
}

// A container name for this test, removed by .fini.
std::string new_name(const char *tag) {
    std::string n = std::string("oci-run-test-") + tag + "-" + std::to_string(getpid()) + "-" +
                    std::to_string(g_names.size());
    g_names.push_back(n);
    return n;
}

// `podman run` of the suite's image: --name NAME, under the suite's cgroup
// parent, with `flags`, running `cmd`.
std::vector<std::string> run_args(const std::string &name, const std::vector<std::string> &flags,
                                  const std::vector<std::string> &cmd) {
    std::vector<std::string> v{"run", "--name", name, "--cgroup-parent", g.cgroup_parent};
    v.insert(v.end(), flags.begin(), flags.end());
    v.push_back(kImage);
    v.insert(v.end(), cmd.begin(), cmd.end());
    return v;
}

Ran podman_run(const char *tag, const std::vector<std::string> &flags,
               const std::vector<std::string> &cmd) {
    return podman(run_args(new_name(tag), flags, cmd));
}

// A detached container that ends on SIGTERM (a PID 1 without a handler
// ignores it).
std::string start_detached(const char *tag, const std::vector<std::string> &flags = {}) {
    std::string name = new_name(tag);
    std::vector<std::string> f{"-d"};
    f.insert(f.end(), flags.begin(), flags.end());
    Ran r = podman(run_args(name, f, {"sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"}));
    cr_assert_eq(r.status, 0, "podman run -d: %d: %s", r.status, r.err.c_str());
    return name;
}

// `podman ...` inside a terminal that `script` makes, as from an interactive
// shell; returns script's status (the command's, with -e).
Ran podman_on_terminal(const std::vector<std::string> &args) {
    std::string cmd;
    for (const auto &a : podman_argv(g, args))
        cmd += (cmd.empty() ? "" : " ") + sh_quote(a);
    return run_bounded({"script", "-qec", cmd, "/dev/null"});
}

std::string inspect(const std::string &name, const char *format) {
    Ran r = podman({"inspect", "--format", format, name});
    std::string s = r.out;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// What oci-run was asked to do (the end of the log, for failure messages).
std::string runtime_calls() {
    std::string log = read_file(g.argv_log);
    return log.size() > 3000 ? "..." + log.substr(log.size() - 3000) : log;
}
// The first call of `command` for the container `id`, as logged.
std::string runtime_call(const char *command, const std::string &id) {
    std::istringstream in(read_file(g.argv_log));
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(std::string(command) + " ", 0) == 0 && contains(line, id)) return line;
    return "";
}

std::vector<std::string> lines_of(const std::string &s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        v.push_back(line);
    }
    return v;
}

// Mount points of this process's cgroup hierarchies (v1 and v2).
std::vector<std::string> cgroup_mounts() {
    std::vector<std::string> v;
    for (const auto &line : lines_of(read_file("/proc/self/mountinfo"))) {
        std::istringstream in(line);
        std::vector<std::string> f;
        std::string w;
        while (in >> w)
            f.push_back(w);
        auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 5 || dash == f.end() || dash + 1 == f.end()) continue;
        if (dash[1] == "cgroup" || dash[1] == "cgroup2") v.push_back(f[4]);
    }
    return v;
}

// ---- the suite's setup and teardown -----------------------------------------

void write_setup(const Layout &l) {
    for (const auto &d : {l.storage, l.run, l.state, l.tmp, l.cni})
        mkdir(d.c_str(), 0700);
    auto quoted = [](const std::string &v) { return "\"" + v + "\""; };
    std::string conf = "# Written by tests/clients/test_podman.cpp for one run of the suite.\n";
    conf += "[containers]\n";
    conf += "netns = \"none\"\n";
    conf += "default_ulimits = [" + ulimit_entry("nofile", host_limit(RLIMIT_NOFILE)) + ", " +
            ulimit_entry("nproc", host_limit(RLIMIT_NPROC)) + "]\n";
    conf += "[engine]\n";
    conf += "cgroup_manager = \"cgroupfs\"\n";
    conf += "events_logger = \"file\"\n";
    conf += "events_logfile_path = " + quoted(l.events_log) + "\n";
    conf += "tmp_dir = " + quoted(l.tmp) + "\n";
    conf += "lock_type = \"file\"\n"; // not the host-wide /dev/shm/libpod_lock
    // Where a pod's infra container finds catatonit (Debian: /usr/bin).
    conf += "helper_binaries_dir = [\"/usr/lib/podman\", \"/usr/bin\"]\n";
    conf += "[network]\n";
    conf += "network_backend = \"cni\"\n";
    conf += "network_config_dir = " + quoted(l.cni) + "\n";
    write_file(l.containers_conf, conf);
    write_file(l.cni + "/" + kBridgeNetwork + ".conflist",
               std::string("{\"cniVersion\": \"0.4.0\", \"name\": \"") + kBridgeNetwork +
                   "\", \"plugins\": [{\"type\": \"bridge\", \"bridge\": \"" + l.bridge +
                   "\", \"isGateway\": true, \"ipMasq\": false, \"ipam\": {\"type\": "
                   "\"host-local\", \"dataDir\": " +
                   quoted(l.cni_data) +
                   ", \"routes\": [{\"dst\": \"0.0.0.0/0\"}], \"ranges\": "
                   "[[{\"subnet\": \"" +
                   kBridgeSubnet + "\", \"gateway\": \"" + kBridgeGateway + "\"}]]}}]}\n");

    std::string storage = "[storage]\n";
    storage += "driver = \"overlay\"\n";
    storage += "graphroot = " + quoted(l.storage) + "\n";
    storage += "runroot = " + quoted(l.run) + "\n";
    write_file(l.storage_conf, storage);

    write_file(l.registries_conf, "unqualified-search-registries = []\n");

    std::string wrapper = "#!/bin/sh\n";
    wrapper += "# oci-run as Podman's runtime, with a state directory of its own.\n";
    wrapper += "printf '%s\\n' \"$*\" >> " + sh_quote(l.argv_log) + "\n";
    wrapper += "exec " + sh_quote(test::absolute_path(test::oci_run_path())) + " --root " +
               sh_quote(l.state) + " \"$@\"\n";
    write_file(l.runtime, wrapper);
    chmod(l.runtime.c_str(), 0755);
    write_file(l.image_lock, "");
}

// The image, imported once per suite run: the first caller builds a busybox
// rootfs with the bundle maker, tars it and `podman import`s it; the others
// wait on the lock. Returns an error text, empty on success.
std::string ensure_image() {
    int fd = open(g.image_lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        if (fd >= 0) close(fd);
        return "lock " + g.image_lock + ": " + std::strerror(errno);
    }
    std::string error;
    if (!exists(g.image_ready)) {
        std::string made;
        for (const auto &p : kBlobCache)
            if (!exists(p)) made += p + "\n";
        write_file(g.created_paths, made);
        const char *maker = std::getenv("OCI_RUN_BUNDLE_MAKER");
        std::string bundle = g.dir + "/image-bundle", tar = g.dir + "/rootfs.tar";
        Ran b = run_bounded({maker && *maker ? maker : "contrib/make-bundle.sh", "--oci-run",
                             test::oci_run_path(), bundle});
        Ran t =
            b.status == 0 ? run_bounded({"tar", "-C", bundle + "/rootfs", "-cf", tar, "."}) : Ran{};
        Ran i = t.status == 0 ? podman({"import", "--quiet", tar, kImage}, 60000) : Ran{};
        if (b.status != 0)
            error = "make-bundle: " + b.err;
        else if (t.status != 0)
            error = "tar: " + t.err;
        else if (i.status != 0)
            error = "podman import: " + i.err;
        else
            write_file(g.image_ready, i.out);
        test::rm_rf(bundle); // inside the suite's directory, which rm_rf accepts
        unlink(tar.c_str());
    }
    close(fd);
    return error;
}

// Skip without podman; otherwise point this process at the suite's
// configuration and make sure the image is there.
void podman_init() {
    if (test::find_in_path("podman").empty())
        cr_skip_test("podman not installed (apt-get install podman)");
    const char *dir = std::getenv(kDirEnv);
    cr_assert(dir && *dir, "%s unset: the PRE_ALL hook did not make the suite's directory",
              kDirEnv);
    g = layout_of(dir);
    use_config_env(g);
    std::string err = ensure_image();
    cr_assert(err.empty(), "importing the busybox image: %s", err.c_str());
}

// The test's containers, then its temp dirs; the suite's directory stays for
// the other tests.
void podman_fini() {
    if (!g_names.empty()) {
        std::vector<std::string> rm{"rm", "--force", "--ignore", "--time", "0"};
        rm.insert(rm.end(), g_names.begin(), g_names.end());
        podman(rm);
        g_names.clear();
    }
    test::cleanup_all();
}

// Unmount what is left under `dir` (overlay and shm mounts of a container
// Podman did not get to remove), deepest first.
void unmount_under(const std::string &dir) {
    std::vector<std::string> points;
    for (const auto &line : lines_of(read_file("/proc/self/mountinfo"))) {
        std::istringstream in(line);
        std::string f[5];
        for (auto &x : f)
            in >> x;
        if (f[4].rfind(dir + "/", 0) == 0) points.push_back(f[4]);
    }
    std::sort(points.begin(), points.end(),
              [](const std::string &a, const std::string &b) { return a.size() > b.size(); });
    for (const auto &p : points)
        umount2(p.c_str(), MNT_DETACH);
}

// rmdir a cgroup directory and its children, deepest first.
void remove_cgroup_tree(const std::string &path) {
    for (const auto &e : test::dir_entries(path)) {
        std::string child = path + "/" + e;
        struct stat st;
        if (lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_cgroup_tree(child);
    }
    rmdir(path.c_str());
}

void teardown(const Layout &l) {
    use_config_env(l);
    if (exists(l.storage_conf) && !test::find_in_path("podman").empty()) {
        run_bounded(podman_argv(l, {"rm", "--all", "--force", "--time", "0"}));
        run_bounded(podman_argv(l, {"rmi", "--all", "--force"}));
    }
    run_bounded({"ip", "link", "del", l.bridge});
    unmount_under(l.dir);
    for (const auto &m : cgroup_mounts())
        if (exists(m + l.cgroup_parent)) remove_cgroup_tree(m + l.cgroup_parent);
    auto made = lines_of(read_file(l.created_paths));
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
        if (it->empty()) continue;
        if (unlink(it->c_str()) != 0) rmdir(it->c_str());
    }
    test::rm_rf(l.dir);
}

} // namespace

TestSuite(podman, .init = podman_init, .fini = podman_fini, .timeout = 60);

// ---- run: exit status and output ---------------------------------------------

// `podman run --rm` passes the container's exit status and both outputs through.
Test(podman, run_passes_exit_code_and_output) {
    Ran r = podman_run("exit", {"--rm"}, {"sh", "-c", "echo out-line; echo err-line >&2; exit 7"});
    cr_assert_eq(r.status, 7, "status %d, err: %s\ncalls:\n%s", r.status, r.err.c_str(),
                 runtime_calls().c_str());
    cr_assert_str_eq(r.out.c_str(), "out-line\n");
    cr_assert(contains(r.err, "err-line"), "%s", r.err.c_str());
}

// A command missing from the image is Podman's 127, as with runc: the runtime
// refuses it at create, and Podman maps "no such file" to "command not found".
Test(podman, run_missing_command_is_127) {
    Ran r = podman_run("nocmd", {"--rm"}, {"no-such-command"});
    cr_assert_eq(r.status, 127, "status %d (runc: 127), err: %s", r.status, r.err.c_str());
}

// The rlimits of the suite's containers.conf reach the container's process.
Test(podman, run_applies_configured_ulimits) {
    Ran r = podman_run("ulimit", {"--rm"},
                       {"sh", "-c", "ulimit -Sn; ulimit -Hn; ulimit -Su; ulimit -Hu"});
    cr_assert_eq(r.status, 0, "status %d, err: %s", r.status, r.err.c_str());
    Limit nofile = host_limit(RLIMIT_NOFILE), nproc = host_limit(RLIMIT_NPROC);
    std::string want = std::to_string(nofile.soft) + "\n" + std::to_string(nofile.hard) + "\n" +
                       std::to_string(nproc.soft) + "\n" + std::to_string(nproc.hard) + "\n";
    cr_assert_str_eq(r.out.c_str(), want.c_str());
}

// ---- detached: exec, stop, rm -------------------------------------------------

// `run -d`, `exec` (output and status, in the container's PID namespace), `stop`
// (SIGTERM reaches PID 1, which exits 0 before the timeout) and `rm` (oci-run's
// state and the container's cgroups gone).
Test(podman, detached_exec_stop_rm) {
    std::string name = start_detached("life");
    std::string id = inspect(name, "{{.Id}}");
    std::string running = inspect(name, "{{.State.Status}}");

    Ran e = podman({"exec", name, "sh", "-c", "echo in-exec; cat /proc/1/cmdline; exit 3"});
    long t0 = now_ms();
    Ran s = podman({"stop", "--time", "20", name});
    long stop_ms = now_ms() - t0;
    std::string stopped = inspect(name, "{{.State.Status}} {{.State.ExitCode}}");
    Ran rm = podman({"rm", name});
    Ran after = podman({"ps", "--all", "--quiet", "--filter", "name=" + name});

    cr_assert_str_eq(running.c_str(), "running");
    cr_assert_eq(e.status, 3, "exec status %d, err: %s\ncalls:\n%s", e.status, e.err.c_str(),
                 runtime_calls().c_str());
    cr_assert(contains(e.out, "in-exec\n"), "%s", e.out.c_str());
    cr_assert(contains(e.out, "sleep 300 & wait"), "exec saw PID 1 as: %s", e.out.c_str());
    cr_assert_eq(s.status, 0, "stop: %s", s.err.c_str());
    cr_assert_lt(stop_ms, 10000, "stop took %ld ms: SIGTERM did not end the container", stop_ms);
    cr_assert_str_eq(stopped.c_str(), "exited 0");
    cr_assert_eq(rm.status, 0, "rm: %s", rm.err.c_str());
    cr_assert_str_eq(after.out.c_str(), "");
    cr_assert(!exists(g.state + "/" + id), "oci-run's state for %s is left", id.c_str());
    for (const auto &m : cgroup_mounts()) {
        std::string cg = m + g.cgroup_parent + "/libpod-" + id;
        cr_assert(!exists(cg), "cgroup left: %s", cg.c_str());
    }
}

// ---- terminals ----------------------------------------------------------------

// `run -t` from a terminal: oci-run hands the pty to conmon through the console
// socket, and the process has it as stdin and stdout.
Test(podman, run_tty_through_console_socket) {
    if (test::find_in_path("script").empty()) cr_skip_test("script not installed (bsdutils)");
    std::string name = new_name("tty");
    Ran r = podman_on_terminal(run_args(
        name, {"-t"}, {"sh", "-c", "tty; test -t 0 && test -t 1 && echo both-tty; exit 4"}));
    std::string id = inspect(name, "{{.Id}}");
    std::string create = runtime_call("create", id);
    cr_assert_eq(r.status, 4, "status %d, out: %s err: %s", r.status, r.out.c_str(), r.err.c_str());
    cr_assert(contains(r.out, "/dev/pts/"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "both-tty"), "%s", r.out.c_str());
    cr_assert(contains(create, "--console-socket "), "create was: %s", create.c_str());
}

// `exec -t` into a running container gets its own pty the same way.
Test(podman, exec_tty_through_console_socket) {
    if (test::find_in_path("script").empty()) cr_skip_test("script not installed (bsdutils)");
    std::string name = start_detached("exectty");
    std::string id = inspect(name, "{{.Id}}");
    Ran r = podman_on_terminal(
        {"exec", "-t", name, "sh", "-c", "tty; test -t 0 && test -t 1 && echo exec-tty"});
    std::string exec = runtime_call("exec", id);
    cr_assert_eq(r.status, 0, "status %d, out: %s err: %s", r.status, r.out.c_str(), r.err.c_str());
    cr_assert(contains(r.out, "/dev/pts/"), "%s", r.out.c_str());
    cr_assert(contains(r.out, "exec-tty"), "%s", r.out.c_str());
    cr_assert(contains(exec, "--tty") && contains(exec, "--console-socket "), "exec was: %s",
              exec.c_str());
}

// ---- resources ----------------------------------------------------------------

// --pids-limit: the container reads it in its pids cgroup, and forking past it
// fails.
Test(podman, pids_limit_is_enforced) {
    Ran r = podman_run("pids", {"--rm", "--pids-limit", "20"},
                       {"sh", "-c",
                        "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat "
                        "/sys/fs/cgroup/pids.max; for i in $(seq 40); do sleep 5 & done; "
                        "echo all-forked"});
    auto out = lines_of(r.out);
    cr_assert(!out.empty(), "no output, status %d, err: %s", r.status, r.err.c_str());
    cr_assert_str_eq(out[0].c_str(), "20");
    cr_assert(!contains(r.out, "all-forked"), "40 processes forked under pids.max 20");
    cr_assert(contains(r.err, "can't fork"), "%s", r.err.c_str());
}

// --memory (no swap): the container reads the limit, 8 MiB through a pipe
// buffer fits, 64 MiB does not (the OOM killer ends it).
Test(podman, memory_limit_is_enforced) {
    Ran r = podman_run(
        "mem", {"--rm", "--memory", "32m", "--memory-swap", "32m"},
        {"sh", "-c",
         "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat "
         "/sys/fs/cgroup/memory.max; head -c 8388608 /dev/zero | tail -c 8388608 | wc -c; "
         "head -c 67108864 /dev/zero | tail -c 67108864 | wc -c"});
    auto out = lines_of(r.out);
    cr_assert_geq(out.size(), 2u, "output: %s, status %d, err: %s", r.out.c_str(), r.status,
                  r.err.c_str());
    cr_assert_str_eq(out[0].c_str(), "33554432");
    cr_assert_str_eq(out[1].c_str(), "8388608");
    cr_assert(!contains(r.out, "67108864"), "64 MiB held under a 32 MiB limit: %s", r.out.c_str());
}

// `podman update --memory` on a running container: the container reads the new
// limit.
Test(podman, update_changes_memory_limit) {
    const char *read_limit = "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || "
                             "cat /sys/fs/cgroup/memory.max";
    std::string name = start_detached("update", {"--memory", "32m"});
    Ran before = podman({"exec", name, "sh", "-c", read_limit});
    Ran u = podman({"update", "--memory", "64m", name});
    Ran after = podman({"exec", name, "sh", "-c", read_limit});
    cr_assert_str_eq(before.out.c_str(), "33554432\n", "err: %s", before.err.c_str());
    cr_assert_eq(u.status, 0, "update: %s\ncalls:\n%s", u.err.c_str(), runtime_calls().c_str());
    cr_assert_str_eq(after.out.c_str(), "67108864\n", "err: %s", after.err.c_str());
}

// `pause` freezes the container (its output stops, state "paused"); `unpause`
// lets it go on (state "running", output again).
Test(podman, pause_freezes_and_unpause_resumes) {
    std::string name = new_name("pause");
    Ran d = podman(run_args(name, {"-d"}, {"sh", "-c", "while :; do echo tick; sleep 0.05; done"}));
    cr_assert_eq(d.status, 0, "run -d: %s", d.err.c_str());
    auto ticks = [&] { return test::count_lines(podman({"logs", name}).out); };
    for (long end = now_ms() + 5000; ticks() < 2 && now_ms() < end;)
        usleep(50000);

    Ran p = podman({"pause", name});
    std::string paused = inspect(name, "{{.State.Status}}");
    usleep(200000); // what conmon read before the freeze reaches the log
    size_t n1 = ticks();
    usleep(600000);
    size_t n2 = ticks();
    Ran u = podman({"unpause", name});
    std::string resumed = inspect(name, "{{.State.Status}}");
    size_t n3 = n2;
    for (long end = now_ms() + 5000; n3 <= n2 && now_ms() < end; usleep(50000))
        n3 = ticks();

    cr_assert_eq(p.status, 0, "pause: %s", p.err.c_str());
    cr_assert_str_eq(paused.c_str(), "paused");
    cr_assert_eq(n1, n2, "the paused container went on printing (%zu -> %zu lines)", n1, n2);
    cr_assert_eq(u.status, 0, "unpause: %s", u.err.c_str());
    cr_assert_str_eq(resumed.c_str(), "running");
    cr_assert_gt(n3, n2, "no output after unpause");
}

// ---- sandbox policy, network, devices -------------------------------------------

// --annotation dev.ocirun.deny=/etc/hostname: the file Podman writes reads
// empty inside (the hostname itself is still set).
Test(podman, deny_annotation_empties_file) {
    const char *show = "echo \"host=$(hostname)\"; echo \"file=[$(cat /etc/hostname)]\"";
    Ran plain = podman_run("nodeny", {"--rm", "--hostname", "box"}, {"sh", "-c", show});
    Ran denied = podman_run(
        "deny", {"--rm", "--hostname", "box", "--annotation", "dev.ocirun.deny=/etc/hostname"},
        {"sh", "-c", show});
    cr_assert_str_eq(plain.out.c_str(), "host=box\nfile=[box]\n", "err: %s", plain.err.c_str());
    cr_assert_eq(denied.status, 0, "status %d, err: %s", denied.status, denied.err.c_str());
    cr_assert_str_eq(denied.out.c_str(), "host=box\nfile=[]\n");
}

// --annotation dev.ocirun.trace-log=|COMMAND (the path of strace's log, which
// only the runtime sets): refused with oci-run's reason; the command never
// runs on the host.
Test(podman, trace_log_annotation_is_refused) {
    std::string marker = g.tmp + "/trace-log-ran";
    Ran r = podman_run("tracelog",
                       {"--rm", "--annotation", "dev.ocirun.trace=true", "--annotation",
                        "dev.ocirun.trace-log=|touch " + marker},
                       {"true"});
    cr_assert_neq(r.status, 0, "podman run succeeded: %s", r.out.c_str());
    cr_assert(contains(r.err, "annotations[dev.ocirun.trace-log]: set by the runtime"), "%s",
              r.err.c_str());
    cr_assert(!exists(marker), "the annotation's command ran on the host");
}

std::set<std::string> interfaces(const std::string &proc_net_dev) {
    std::set<std::string> v;
    for (const auto &line : lines_of(proc_net_dev)) {
        size_t colon = line.find(':');
        if (colon == std::string::npos || contains(line, "|")) continue;
        std::string n = line.substr(0, colon);
        n.erase(0, n.find_first_not_of(' '));
        v.insert(n);
    }
    return v;
}

// --network none: the container's network namespace holds loopback only.
Test(podman, network_none_has_only_loopback) {
    Ran r = podman_run("netnone", {"--rm", "--network", "none"}, {"cat", "/proc/net/dev"});
    cr_assert_eq(r.status, 0, "status %d, err: %s", r.status, r.err.c_str());
    auto seen = interfaces(r.out);
    cr_assert(seen == std::set<std::string>{"lo"}, "interfaces inside: %s", r.out.c_str());
    cr_assert_gt(interfaces(read_file("/proc/net/dev")).size(), 1u,
                 "the host has only lo: the check above shows nothing");
}

// ---- the default bridge network: network policy in Podman's namespace -------

// The suite's bridge network up (a first container attaches the bridge and
// gives it the gateway address), and a server on the gateway address: the
// "outside" a container on the bridge reaches without a policy.
std::string bridge_server(test::Server &srv) {
    Ran up = podman_run("brup", {"--rm", "--network", kBridgeNetwork}, {"true"});
    cr_assert_eq(up.status, 0, "podman run --network %s: %s", kBridgeNetwork, up.err.c_str());
    test::serve(srv, kBridgeGateway, "PUB:");
    return std::to_string(srv.port);
}

std::string direct_to(const std::string &port) {
    return std::string("echo hi | nc -w 5 ") + kBridgeGateway + " " + port + "; echo tcp=$?; ";
}

std::string via_proxy_to(const std::string &port) {
    return std::string("(printf 'CONNECT ") + kBridgeGateway + ":" + port +
           " HTTP/1.1\\r\\n\\r\\nping\\n'; sleep 0.5) | nc -w 5 127.0.0.1 3128; echo; ";
}

// Podman's bridge network: the container joins the namespace Podman made
// (CNI: a veth on the bridge, an address, a default route). Without a policy
// it reaches the host's gateway address; with each need, nothing but
// loopback, and under https the proxy (whose address entry allows the
// gateway) is the way out.
Test(podman, bridge_network_needs_are_enforced) {
    test::Server srv;
    std::string port = bridge_server(srv);
    Ran plain =
        podman_run("brplain", {"--rm", "--network", kBridgeNetwork}, {"sh", "-c", direct_to(port)});
    cr_assert_eq(plain.status, 0, "%s", plain.err.c_str());
    cr_assert(contains(plain.out, "PUB:hi"), "the bridge does not reach the host: %s",
              plain.out.c_str());
    for (const char *need : {"none", "local", "https"}) {
        std::vector<std::string> flags{"--rm", "--network", kBridgeNetwork, "--annotation",
                                       std::string("dev.ocirun.network=") + need};
        if (std::string(need) == "https") {
            flags.push_back("--annotation");
            flags.push_back(std::string("dev.ocirun.domains=") + kBridgeGateway + ":" + port);
        }
        Ran r = podman_run(need, flags, {"sh", "-c", direct_to(port) + via_proxy_to(port)});
        std::string all = r.out + r.err;
        cr_assert_eq(r.status, 0, "%s: %s", need, all.c_str());
        cr_assert(contains(all, "tcp=1") && !contains(all, "PUB:hi"), "%s: %s", need, all.c_str());
        if (std::string(need) == "https")
            cr_assert(contains(all, "PUB:ping"), "proxy: %s", all.c_str());
        else
            cr_assert(!contains(all, "PUB:ping"), "%s: %s", need, all.c_str());
    }
}

// Two containers sharing one network namespace, as in a Podman pod: the
// first with a need installs it, the second (--network container:) is held
// to it, and asking for more than the first is refused.
Test(podman, shared_namespace_is_held_to_its_first_containers_policy) {
    test::Server srv;
    std::string port = bridge_server(srv);
    std::string owner =
        start_detached("brown", {"--network", kBridgeNetwork, "--annotation",
                                 "dev.ocirun.network=https", "--annotation",
                                 std::string("dev.ocirun.domains=") + kBridgeGateway + ":" + port});
    Ran held = podman_run(
        "brheld", {"--rm", "--network", "container:" + owner},
        {"sh", "-c", "echo proxy=$HTTPS_PROXY; " + direct_to(port) + via_proxy_to(port)});
    Ran more = podman_run(
        "brmore",
        {"--rm", "--network", "container:" + owner, "--annotation", "dev.ocirun.network=full"},
        {"true"});
    cr_assert_eq(held.status, 0, "%s", held.err.c_str());
    cr_assert(contains(held.out, "proxy=http://127.0.0.1:3128") && contains(held.out, "tcp=1") &&
                  !contains(held.out, "PUB:hi") && contains(held.out, "PUB:ping"),
              "%s", held.out.c_str());
    cr_assert_neq(more.status, 0);
    cr_assert(contains(more.err, "dev.ocirun.network") && contains(more.err, "more than its pod"),
              "%s", more.err.c_str());
}

// A Podman pod on the bridge network (its infra container holds the
// namespace): the pod's first container with a need installs the policy,
// the next one is held to it.
Test(podman, pod_containers_share_the_policy) {
    test::Server srv;
    std::string port = bridge_server(srv);
    std::string pod = new_name("pod");
    Ran made = podman({"pod", "create", "--name", pod, "--network", kBridgeNetwork}, 60000);
    cr_assert_eq(made.status, 0, "podman pod create: %s", made.err.c_str());
    std::string owner = start_detached(
        "podown", {"--pod", pod, "--annotation", "dev.ocirun.network=https", "--annotation",
                   std::string("dev.ocirun.domains=") + kBridgeGateway + ":" + port});
    Ran held = podman_run("podheld", {"--rm", "--pod", pod},
                          {"sh", "-c", direct_to(port) + via_proxy_to(port)});
    Ran gone = podman({"pod", "rm", "--force", "--time", "0", pod}, 60000);
    cr_assert_eq(held.status, 0, "%s", held.err.c_str());
    cr_assert(contains(held.out, "tcp=1") && !contains(held.out, "PUB:hi") &&
                  contains(held.out, "PUB:ping"),
              "%s", held.out.c_str());
    cr_assert_eq(gone.status, 0, "podman pod rm: %s", gone.err.c_str());
}

// --network none: loopback is up and usable, as runc and crun leave a new
// network namespace.
Test(podman, network_none_loopback_is_up) {
    Ran r = podman_run("netlo", {"--rm", "--network", "none"},
                       {"sh", "-c", "ip -o link show lo; ping -c 1 -W 2 127.0.0.1"});
    cr_assert_eq(r.status, 0, "ping 127.0.0.1 failed (%d): %s %s", r.status, r.out.c_str(),
                 r.err.c_str());
}

// --device HOST:CONTAINER: the node is there with the host device's numbers
// and works (Podman passes fileMode with the file type bits, S_IFCHR|0666).
Test(podman, device_is_created) {
    Ran r = podman_run("dev", {"--rm", "--device", "/dev/null:/dev/xnull"},
                       {"sh", "-c",
                        "stat -c '%F %t:%T' /dev/xnull; echo x > /dev/xnull && "
                        "echo wrote"});
    cr_assert_eq(r.status, 0, "status %d, err: %s", r.status, r.err.c_str());
    cr_assert_str_eq(r.out.c_str(), "character special file 1:3\nwrote\n");
}

// ---- hooks: once per run of the test binary, in the runner ----------------------
// (ReportHook names its function after the line it is on, with C linkage: a
// hook on the same line of another file of this binary would clash at link.)

ReportHook(PRE_ALL)(struct criterion_test_set *) {
    if (test::find_in_path("podman").empty()) return;
    std::string dir = test::make_temp_dir("podman");
    if (dir.empty()) return;
    write_setup(layout_of(dir));
    setenv(kDirEnv, dir.c_str(), 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *) {
    const char *dir = std::getenv(kDirEnv);
    if (dir && *dir) teardown(layout_of(dir));
}
