#include "systemd_node.hpp"

#include "container_env.hpp"
#include "harness.hpp"

#include "oci/names.hpp"
#include "oci/spec_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace test {

namespace {

using ocirun::oci::Mount;

Mount mnt(const std::string &dest, const std::string &type, const std::string &source,
          std::vector<std::string> options) {
    Mount m;
    m.destination = dest;
    m.type = type;
    m.source = source;
    m.options = std::move(options);
    return m;
}

// The node's root: the host's /usr (bound), the usual links into it, and an
// /etc systemd boots from without asking anything (a machine ID: not a first
// boot), with the D-Bus daemon's user and an unprivileged user (kNodeUser)
// whose manager (user@UID.service) PAM lets start.
void make_rootfs(const std::string &rootfs) {
    for (const char *d : {"", "/usr", "/etc", "/var", "/var/tmp", "/var/lib", "/var/log", "/root",
                          "/tmp", "/run", "/proc", "/sys", "/dev", "/home", "/srv", "/opt", "/mnt"})
        ::mkdir((rootfs + d).c_str(), 0755);
    for (const char *l : {"bin", "sbin", "lib", "lib64"})
        (void)::symlink((std::string("usr/") + l).c_str(), (rootfs + "/" + l).c_str());
    const std::string uid = std::to_string(kNodeUser);
    write_file(rootfs + "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
                                       "messagebus:x:100:101::/nonexistent:/usr/sbin/nologin\n"
                                       "ocitest:x:" +
                                           uid + ":" + uid + "::/home/ocitest:/bin/sh\n");
    write_file(rootfs + "/etc/group", "root:x:0:\nmessagebus:x:101:\nocitest:x:" + uid + ":\n");
    ::mkdir((rootfs + "/etc/pam.d").c_str(), 0755);
    write_file(rootfs + "/etc/pam.d/systemd-user",
               "auth required pam_permit.so\naccount required pam_permit.so\n"
               "session required pam_permit.so\nsession optional pam_systemd.so\n");
    ::mkdir((rootfs + "/home/ocitest").c_str(), 0700);
    (void)::chown((rootfs + "/home/ocitest").c_str(), kNodeUser, kNodeUser);
    write_file(rootfs + "/etc/hostname", "ocirun-node\n");
    write_file(rootfs + "/etc/fstab", "");
    write_file(rootfs + "/etc/hosts", "127.0.0.1 localhost ocirun-node\n");
    write_file(rootfs + "/etc/resolv.conf", "");
    std::string uuid = read_file("/proc/sys/kernel/random/uuid");
    std::string id;
    for (char c : uuid)
        if (c != '-' && c != '\n') id += c;
    write_file(rootfs + "/etc/machine-id", id + "\n");
    (void)::symlink("../usr/lib/os-release", (rootfs + "/etc/os-release").c_str());
    // Podman's and containerd's image code read a signature policy.
    ::mkdir((rootfs + "/etc/containers").c_str(), 0755);
    write_file(rootfs + "/etc/containers/policy.json",
               "{\"default\": [{\"type\": \"insecureAcceptAnything\"}]}\n");
}

void write_spec(const SystemdNode &n, const std::vector<std::string> &binds, bool legacy) {
    ocirun::oci::Spec s = ocirun::oci::default_spec(false, 0, 0);
    s.root->path = "rootfs";
    s.root->readonly = false;
    s.hostname = "ocirun-node";
    auto &p = *s.process;
    p.terminal = false;
    p.args = {"/lib/systemd/systemd"};
    if (legacy) {
        // Without the unified mount, and told not to mount it again (in a
        // container, systemd takes its kernel command line options as
        // arguments).
        p.args = {"/bin/sh", "-c",
                  "umount /sys/fs/cgroup/unified && exec /lib/systemd/systemd "
                  "systemd.unified_cgroup_hierarchy=0 systemd.legacy_systemd_cgroup_controller=1"};
    }
    // systemd knows it runs in a container from $container.
    p.env = {"container=oci-run", "PATH=/usr/sbin:/usr/bin"};
    p.no_new_privileges = false;
    uint64_t ours = status_hex(read_file("/proc/self/status"), "CapBnd");
    auto &c = *p.capabilities;
    for (auto *set : {&c.bounding, &c.effective, &c.permitted}) {
        set->clear();
        for (const auto &cap : ocirun::oci::capability_names())
            if (ours & (1ull << cap.value)) set->push_back(cap.name);
    }
    c.inheritable.clear();
    c.ambient.clear();
    s.mounts = {
        mnt("/proc", "proc", "proc", {}),
        mnt("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
        mnt("/dev/pts", "devpts", "devpts",
            {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}),
        mnt("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777"}),
        mnt("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
        mnt("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev"}),
        mnt("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "rw"}),
        mnt("/run", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=755"}),
        mnt("/tmp", "tmpfs", "tmpfs", {"nosuid", "nodev", "mode=1777"}),
        mnt("/usr", "bind", "/usr", {"rbind", "ro"}),
    };
    for (const auto &b : binds)
        s.mounts.push_back(mnt(b, "bind", b, {"rbind", "ro"}));
    // A sanitized build's reports, where the suite's runner reads them.
    for (const char *var : {"ASAN_OPTIONS", "UBSAN_OPTIONS"}) {
        const char *v = std::getenv(var);
        std::string o = v ? v : "";
        size_t at = o.find("log_path=");
        if (at == std::string::npos) continue;
        std::string path = o.substr(at + 9, o.find(':', at) - at - 9);
        std::string d = path.substr(0, path.rfind('/'));
        if (!d.empty() && exists(d)) s.mounts.push_back(mnt(d, "bind", d, {"rbind", "rw"}));
    }
    s.mounts.push_back(mnt(n.share, "bind", n.share, {"rbind", "rw"}));
    auto &lx = *s.linux_;
    lx.namespaces.clear();
    for (auto t :
         {ocirun::oci::NsType::pid, ocirun::oci::NsType::mount, ocirun::oci::NsType::uts,
          ocirun::oci::NsType::ipc, ocirun::oci::NsType::cgroup, ocirun::oci::NsType::network})
        lx.namespaces.push_back({t, ""});
    lx.masked_paths.clear();
    lx.readonly_paths.clear();
    lx.seccomp.reset();
    lx.cgroups_path = "/oci-run-node-" + n.id;
    auto &r = lx.resources ? *lx.resources : lx.resources.emplace();
    ocirun::oci::DeviceRule all;
    all.allow = true;
    all.access = "rwm";
    r.devices = {all};
    write_file(n.dir + "/config.json", ocirun::oci::write_spec(s, true));
}

// A child that deletes the node and its directory once the test's process
// is gone (a timed-out test is killed before its fini runs) or tear_down
// closes the pipe: a node is never left behind.
void start_reaper(SystemdNode &n) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return;
    std::string oci = absolute_path(oci_run_path());
    pid_t pid = ::fork();
    if (pid == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::dup2(p[0], 3);
        ::close_range(4, ~0U, 0);
        char c;
        while (::read(3, &c, 1) != 0 && errno == EINTR) {
        }
        std::string cmd = "'" + oci + "' --root '" + n.root + "' delete --force '" + n.id +
                          "'; rm -rf '" + n.dir + "'";
        ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
        ::_exit(127);
    }
    ::close(p[0]);
    if (pid > 0) {
        n.reaper_fd = p[1];
        n.reaper = pid;
    } else {
        ::close(p[1]);
    }
}

} // namespace

void boot_node(SystemdNode &n, const std::vector<std::string> &binds, bool legacy) {
    if (::geteuid() != 0) {
        n.skip = "a systemd node needs root";
        return;
    }
    if (!exists("/lib/systemd/systemd") || !exists("/usr/bin/nsenter")) {
        n.skip = "systemd is not installed (Debian: systemd)";
        return;
    }
    n.dir = make_temp_dir("sdnode");
    n.share = n.dir + "/share";
    ::mkdir(n.share.c_str(), 0755);
    n.root = n.dir + "/state";
    n.id = "sdnode-" + std::to_string(::getpid());
    make_rootfs(n.dir + "/rootfs");
    if (legacy && !exists("/sys/fs/cgroup/unified")) {
        n.skip = "the host has no v1 hierarchies besides a unified one";
        return;
    }
    write_spec(n, binds, legacy);
    start_reaper(n);
    // Its stdio on files (the node's systemd keeps them open).
    auto c = oci_files({"--root", n.root, "create", "--bundle", n.dir, n.id}, -1, 30000);
    if (c.status != 0) {
        n.failure = "create the node: " + c.err;
        return;
    }
    n.pid = state_of(n.root, n.id).pid;
    auto s = oci({"--root", n.root, "start", n.id});
    if (s.status != 0 || n.pid <= 0) {
        n.failure = "start the node: " + s.err;
        return;
    }
    std::string said;
    for (int i = 0; i < 600; i++) {
        auto o = in_node(n, {"/usr/bin/systemctl", "is-system-running"});
        said = o.out;
        if (said == "running\n" || said == "degraded\n") return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    n.failure = "the node's systemd did not come up in 60 s: " + said +
                in_node(n, {"/usr/bin/systemctl", "list-jobs", "--no-pager"}).out;
}

Output in_node(const SystemdNode &n, const std::vector<std::string> &argv,
               const std::string &input) {
    // Out of the host's cgroup (outside the node's namespace, its paths
    // would read "/.."): into one of the node's in every hierarchy, moved
    // there from the host's side before entering the node's namespaces (a
    // v2 hierarchy mounted with nsdelegate, as systemd mounts it, refuses
    // a move into a cgroup namespace from outside it).
    const std::string join =
        "id=$1 pid=$2; shift 2; "
        "for h in $(awk '$9 == \"cgroup\" || $9 == \"cgroup2\" {print $5}' "
        "/proc/self/mountinfo); do d=\"$h/oci-run-node-$id\"; [ -d \"$d\" ] || continue; "
        "t=\"$d/oci-run-tests\"; mkdir -p \"$t\" && "
        "for f in cpuset.cpus cpuset.mems; do [ -f \"$t/$f\" ] && [ -z \"$(cat \"$t/$f\")\" ] "
        "&& cat \"$d/$f\" > \"$t/$f\"; done; echo $$ > \"$t/cgroup.procs\" || exit 125; done; "
        "exec /usr/bin/nsenter -t \"$pid\" -a \"$@\"";
    std::vector<std::string> cmd = {"/bin/sh", "-c", join, "sh", n.id, std::to_string(n.pid)};
    cmd.insert(cmd.end(), argv.begin(), argv.end());
    return run(cmd, input);
}

std::string unit_object_path(const std::string &unit) {
    static const char *hex = "0123456789abcdef";
    std::string out = "/org/freedesktop/systemd1/unit/";
    for (unsigned char c : unit)
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out += static_cast<char>(c);
        } else {
            out += '_';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    return out;
}

std::string unit_property(const SystemdNode &n, const std::string &unit, const char *iface,
                          const char *prop) {
    return in_node(n, {"/usr/bin/busctl", "get-property", "org.freedesktop.systemd1",
                       unit_object_path(unit), iface, prop})
        .out;
}

void SystemdNode::tear_down() {
    if (!root.empty() && !id.empty()) (void)oci({"--root", root, "delete", "--force", id});
    if (!dir.empty()) rm_rf(dir);
    dir.clear();
    id.clear();
    if (reaper_fd >= 0) {
        ::close(reaper_fd);
        reaper_fd = -1;
        int st;
        ::waitpid(reaper, &st, 0);
    }
}

SystemdNode::~SystemdNode() {
    tear_down();
}

} // namespace test
