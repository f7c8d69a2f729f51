#include "container_env.hpp"

#include "host_snapshot.hpp"
#include "oci/json.hpp"
#include "oci/names.hpp"

#include <criterion/criterion.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

namespace test {

Env make_env(const char *tag, const std::vector<std::string> &args) {
    Env e;
    e.b = make_bundle(tag, args);
    track_dir(e.b.dir);
    e.root = track_dir(make_root(tag));
    e.id = unique_id(tag);
    track(e.root, e.id);
    return e;
}

void use_user_namespace(Env &e) {
    auto &lx = *e.b.spec.linux_;
    lx.namespaces.push_back({ocirun::oci::NsType::user, ""});
    lx.uid_mappings = {{0, 100000, 65536}};
    lx.gid_mappings = {{0, 100000, 65536}};
    ::chmod(e.b.dir.c_str(), 0755);
}

void add_capabilities(Env &e, std::initializer_list<const char *> caps) {
    auto &c = *e.b.spec.process->capabilities;
    for (auto *set : {&c.bounding, &c.effective, &c.permitted})
        for (const char *cap : caps)
            set->push_back(cap);
}

void add_all_capabilities(Env &e) {
    uint64_t ours = status_hex(read_file("/proc/self/status"), "CapBnd");
    auto &c = *e.b.spec.process->capabilities;
    for (auto *set : {&c.bounding, &c.effective, &c.permitted}) {
        set->clear();
        for (const auto &cap : ocirun::oci::capability_names())
            if (ours & (1ull << cap.value)) set->push_back(cap.name);
    }
}

ocirun::oci::Mount mount_entry(const std::string &dest, const std::string &type,
                               const std::string &source, std::vector<std::string> options) {
    ocirun::oci::Mount m;
    m.destination = dest;
    m.type = type;
    m.source = source;
    m.options = std::move(options);
    return m;
}

ocirun::oci::DeviceRule device_rule(bool allow, const char *type, std::optional<int64_t> major,
                                    std::optional<int64_t> minor, const char *access) {
    ocirun::oci::DeviceRule r;
    r.allow = allow;
    r.type = type;
    r.major = major;
    r.minor = minor;
    r.access = access;
    return r;
}

LoopDisk make_loop_disk(const char *tag) {
    private_mount_namespace();
    LoopDisk d;
    d.dir = make_temp_dir(tag);
    ::chmod(d.dir.c_str(), 0755);
    d.mnt = d.dir + "/mnt";
    d.marker = "MARKER-" + std::to_string(::getpid());
    ::mkdir(d.mnt.c_str(), 0755);
    std::string img = d.dir + "/img";
    auto made = run(std::vector<std::string>{"sh", "-c",
                                             "truncate -s 8M " + img + " && mkfs.ext4 -q " + img +
                                                 " && losetup -f --show " + img});
    d.loop = made.out.substr(0, made.out.find('\n'));
    if (made.status != 0 || d.loop.empty()) {
        track_dir(d.dir);
        cr_skip_test("no loop device: %s", skip_reason(made.err).c_str());
    }
    struct stat st {};
    if (::mount(d.loop.c_str(), d.mnt.c_str(), "ext4", 0, nullptr) != 0 ||
        ::stat(d.loop.c_str(), &st) != 0)
        d.failure = "mount " + d.loop + ": " + std::strerror(errno) + "\n";
    d.rdev = st.st_rdev;
    ::mkdir((d.mnt + "/secret").c_str(), 0755);
    write_file(d.mnt + "/secret/data", d.marker + "\n");
    ::chmod((d.mnt + "/secret/data").c_str(), 0644);
    ::sync();
    return d;
}

void LoopDisk::remove() {
    ::umount2(mnt.c_str(), MNT_DETACH);
    if (!loop.empty()) run(std::vector<std::string>{"losetup", "-d", loop});
    track_dir(dir);
}

FileRun create(const Env &e, std::vector<std::string> extra) {
    std::vector<std::string> args{"--root", e.root, "create", "--bundle", e.b.dir};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(e.id);
    return oci_files(args);
}

// ---- state ----------------------------------------------------------------

StateInfo state_of(const std::string &root, const std::string &id) {
    StateInfo s;
    auto o = oci({"--root", root, "state", id});
    s.exit = o.status;
    s.err = o.err;
    if (o.status != 0) return s;
    auto doc = ocirun::json::Document::parse(o.out);
    if (!doc) return s;
    yajl_val st = ocirun::json::member(doc->root(), "status");
    yajl_val pid = ocirun::json::member(doc->root(), "pid");
    if (st && YAJL_IS_STRING(st)) s.status = st->u.string;
    if (pid && YAJL_IS_INTEGER(pid)) s.pid = static_cast<long>(YAJL_GET_INTEGER(pid));
    return s;
}

// Poll the state until it says `want` (bounded); returns the last status seen.
std::string wait_status(const std::string &root, const std::string &id, const char *want,
                        int timeout_ms) {
    std::string last;
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        last = state_of(root, id).status;
        if (last == want) return last;
        usleep(10000);
    }
    return last;
}

// A process that no longer runs: absent, or a zombie nobody reaped yet.
std::string helper_cgroup_mismatch(const std::string &helper_cgroup,
                                   const std::string &init_cgroup) {
    // "ID:CONTROLLERS:PATH" per hierarchy: controllers, path.
    auto paths = [](const std::string &text) {
        std::vector<std::pair<std::string, std::string>> out;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            size_t a = line.find(':'), b = line.find(':', a + 1);
            if (a == std::string::npos || b == std::string::npos) continue;
            out.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
        }
        return out;
    };
    auto helper = paths(helper_cgroup), init = paths(init_cgroup);
    if (helper.size() != init.size() || init.empty())
        return "not the same hierarchies: " + helper_cgroup + " | " + init_cgroup;
    int charged = 0;
    for (size_t i = 0; i < init.size(); i++) {
        const std::string &ctl = init[i].first;
        if (!ctl.empty() && ctl.find("memory") == std::string::npos &&
            ctl.find("pids") == std::string::npos)
            continue;
        charged++;
        if (helper[i].second != init[i].second + "/oci-run-helper")
            return (ctl.empty() ? "v2" : ctl) + ": " + helper[i].second + ", not under " +
                   init[i].second;
    }
    return charged > 0 ? "" : "no hierarchy charges the container: " + init_cgroup;
}

bool pid_gone_now(long pid) {
    if (kill(static_cast<pid_t>(pid), 0) < 0 && errno == ESRCH) return true;
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    auto rp = stat.rfind(')');
    return stat.empty() || (rp != std::string::npos && rp + 2 < stat.size() &&
                            (stat[rp + 2] == 'Z' || stat[rp + 2] == 'X'));
}

bool pid_gone(long pid, int timeout_ms) {
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        if (pid_gone_now(pid)) return true;
        usleep(10000);
    }
    return false;
}

std::string i386_answer(const std::string &want) {
    static const bool entry = [] {
        const char *probe = std::getenv("OCI_RUN_SYSCALL_PROBE");
        return !probe ||
               contains(test::run(std::vector<std::string>{probe, "nr32", "20"}).out, "20=0\n");
    }();
    return entry ? want : "fault";
}

// `oci-run run` the bundle (foreground) and return what it printed.
Output run(const Env &e, std::vector<std::string> extra) {
    e.b.save();
    std::vector<std::string> args{"--root", e.root, "run", "--bundle", e.b.dir};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(e.id);
    return oci(args);
}

} // namespace test
