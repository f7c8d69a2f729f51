#include "runtime/lifecycle/events.hpp"

#include "oci/json.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/systemd_driver.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <vector>

namespace ocirun {

namespace {

struct Target {
    std::string id;
    CgroupHost host;
    std::vector<std::string> dirs;
    pid_t pid = 0;
    uint64_t start_time = 0;
    std::optional<SystemdScope> scope; // --systemd-cgroup
    pid_t shim_pid = 0;                // the network helper, if it has one
    uint64_t shim_start_time = 0;
};

Result<Target> load_target(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    if (rec.cgroup_dirs.empty()) return fail("events: container \"" + id + "\" has no cgroup");
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("events: container \"" + id + "\" is not running");
    Target t;
    t.id = id;
    t.host = OCI_TRY(detect_cgroup_host());
    // Its own cgroup, as every command checks before it acts on one (the
    // directories come back from the state directory).
    OCI_CHECK(check_own_cgroup(t.host, rec));
    t.dirs = rec.cgroup_dirs;
    t.pid = rec.state.pid;
    t.start_time = rec.init_start_time;
    if (rec.systemd_cgroup) t.scope = OCI_TRY(recorded_scope(rec));
    t.shim_pid = rec.shim_pid;
    t.shim_start_time = rec.shim_start_time;
    return t;
}

// The container's directory in the hierarchy carrying `controller`.
std::string dir_for(const Target &t, const char *controller, int *version = nullptr) {
    const Hierarchy *h = t.host.for_controller(controller);
    for (const auto &d : t.dirs)
        if (h && hierarchy_of(t.host, d) == h) {
            if (version) *version = h->version;
            return d;
        }
    return {};
}

std::string text(const std::string &path) {
    auto r = oci::read_file(path);
    return r ? *r : std::string();
}

uint64_t number(const std::string &path) {
    std::string s = text(path);
    if (s.rfind("max", 0) == 0) return UINT64_MAX;
    return std::strtoull(s.c_str(), nullptr, 10);
}

// "key value" lines (memory.stat, cpu.stat, memory.events).
std::map<std::string, uint64_t> key_values(const std::string &path) {
    std::map<std::string, uint64_t> kv;
    std::string t = text(path);
    auto w = words(t);
    for (size_t i = 0; i + 1 < w.size(); i += 2) {
        auto v = ocirun::number<uint64_t>(w[i + 1]);
        if (!v) break;
        kv[std::string(w[i])] = *v;
    }
    return kv;
}

void write_cpu(json::Writer &w, const Target &t) {
    int v = 0;
    std::string acct = dir_for(t, "cpuacct", &v);
    std::string cpu = dir_for(t, "cpu", &v);
    w.key("cpu").begin_object();
    w.key("usage").begin_object();
    if (!acct.empty() && v == 1) {
        w.kv_u64("total", number(acct + "/cpuacct.usage"));
        w.key("percpu").begin_array();
        std::string percpu = text(acct + "/cpuacct.usage_percpu");
        for (auto word : words(percpu)) {
            auto n = ocirun::number<uint64_t>(word);
            if (!n) break;
            w.u64(*n);
        }
        w.end_array();
        auto st = key_values(acct + "/cpuacct.stat");
        long hz = ::sysconf(_SC_CLK_TCK);
        uint64_t ns_per_tick = hz > 0 ? 1000000000ull / static_cast<uint64_t>(hz) : 10000000ull;
        w.kv_u64("kernel", st["system"] * ns_per_tick);
        w.kv_u64("user", st["user"] * ns_per_tick);
    } else if (std::string u = unified_dir(t.host, t.dirs); !u.empty()) {
        // v2: cpu.stat's usage is there even without the cpu controller.
        auto st = key_values(u + "/cpu.stat");
        w.kv_u64("total", st["usage_usec"] * 1000);
        w.kv_u64("kernel", st["system_usec"] * 1000);
        w.kv_u64("user", st["user_usec"] * 1000);
    }
    w.end_object();
    if (!cpu.empty()) {
        auto st = key_values(cpu + "/cpu.stat");
        w.key("throttling").begin_object();
        w.kv_u64("periods", st["nr_periods"]);
        w.kv_u64("throttledPeriods", st["nr_throttled"]);
        w.kv_u64("throttledTime",
                 st.count("throttled_time") ? st["throttled_time"] : st["throttled_usec"] * 1000);
        w.end_object();
    }
    w.end_object();
}

void write_memory(json::Writer &w, const Target &t) {
    int v = 0;
    std::string d = dir_for(t, "memory", &v);
    if (d.empty()) return;
    w.key("memory").begin_object();
    auto raw = key_values(d + "/memory.stat");
    if (v == 1) {
        w.kv_u64("cache", raw["cache"]);
        auto entry = [&](const char *name, const std::string &prefix) {
            w.key(name).begin_object();
            w.kv_u64("limit", number(d + "/" + prefix + "limit_in_bytes"));
            w.kv_u64("usage", number(d + "/" + prefix + "usage_in_bytes"));
            w.kv_u64("max", number(d + "/" + prefix + "max_usage_in_bytes"));
            w.kv_u64("failcnt", number(d + "/" + prefix + "failcnt"));
            w.end_object();
        };
        entry("usage", "memory.");
        if (::access((d + "/memory.memsw.usage_in_bytes").c_str(), F_OK) == 0)
            entry("swap", "memory.memsw.");
    } else {
        w.kv_u64("cache", raw["file"]);
        w.key("usage").begin_object();
        w.kv_u64("limit", number(d + "/memory.max"));
        w.kv_u64("usage", number(d + "/memory.current"));
        w.kv_u64("max", number(d + "/memory.peak"));
        w.kv_u64("failcnt", key_values(d + "/memory.events")["max"]);
        w.end_object();
        if (::access((d + "/memory.swap.current").c_str(), F_OK) == 0) {
            w.key("swap").begin_object();
            w.kv_u64("limit", number(d + "/memory.swap.max"));
            w.kv_u64("usage", number(d + "/memory.swap.current"));
            w.kv_u64("failcnt", 0);
            w.end_object();
        }
    }
    w.key("raw").begin_object();
    for (const auto &[k, n] : raw)
        w.kv_u64(k, n);
    w.end_object();
    w.end_object();
}

void write_pids(json::Writer &w, const Target &t) {
    std::string d = dir_for(t, "pids");
    if (d.empty()) return;
    uint64_t limit = number(d + "/pids.max");
    w.key("pids").begin_object();
    w.kv_u64("current", number(d + "/pids.current"));
    w.kv_u64("limit", limit == UINT64_MAX ? 0 : limit);
    w.end_object();
}

// "8:0 Read 4096" lines (v1 blkio) or "8:0 rbytes=.. wbytes=.. rios=.. wios=.."
// (v2 io.stat) as runc's ioServiceBytesRecursive / ioServicedRecursive.
void write_blkio(json::Writer &w, const Target &t) {
    int v = 0;
    std::string d = dir_for(t, "blkio", &v);
    if (d.empty()) d = dir_for(t, "io", &v);
    if (d.empty()) return;
    struct Entry {
        uint64_t major, minor;
        std::string op;
        uint64_t value;
    };
    std::vector<Entry> bytes, ios;
    auto parse_v1 = [&](const std::string &file, std::vector<Entry> &out) {
        // "MAJ:MIN OP VALUE" lines, and a closing "Total VALUE".
        std::string t = text(d + "/" + file);
        for_each_line(t, [&](std::string_view line) {
            auto f = words(line);
            if (f.size() != 3) return;
            auto colon = f[0].find(':');
            auto ma = ocirun::number<uint64_t>(f[0].substr(0, colon));
            auto mi = colon == std::string_view::npos
                          ? std::nullopt
                          : ocirun::number<uint64_t>(f[0].substr(colon + 1));
            auto value = ocirun::number<uint64_t>(f[2]);
            if (ma && mi && value) out.push_back({*ma, *mi, std::string(f[1]), *value});
        });
    };
    if (v == 1) {
        parse_v1("blkio.throttle.io_service_bytes_recursive", bytes);
        parse_v1("blkio.throttle.io_serviced_recursive", ios);
    } else {
        // "MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..." lines.
        std::string t = text(d + "/io.stat");
        for_each_line(t, [&](std::string_view line) {
            auto f = words(line);
            if (f.empty()) return;
            auto colon = f[0].find(':');
            if (colon == std::string_view::npos) return;
            uint64_t ma = ocirun::number<uint64_t>(f[0].substr(0, colon)).value_or(0);
            uint64_t mi = ocirun::number<uint64_t>(f[0].substr(colon + 1)).value_or(0);
            for (size_t i = 1; i < f.size(); i++) {
                auto eq = f[i].find('=');
                if (eq == std::string_view::npos) continue;
                std::string_view k = f[i].substr(0, eq);
                uint64_t n = ocirun::number<uint64_t>(f[i].substr(eq + 1)).value_or(0);
                if (k == "rbytes") bytes.push_back({ma, mi, "Read", n});
                if (k == "wbytes") bytes.push_back({ma, mi, "Write", n});
                if (k == "rios") ios.push_back({ma, mi, "Read", n});
                if (k == "wios") ios.push_back({ma, mi, "Write", n});
            }
        });
    }
    w.key("blkio").begin_object();
    for (auto [name, list] :
         {std::pair{"ioServiceBytesRecursive", &bytes}, std::pair{"ioServicedRecursive", &ios}}) {
        w.key(name).begin_array();
        for (const auto &e : *list)
            w.begin_object()
                .kv_u64("major", e.major)
                .kv_u64("minor", e.minor)
                .kv("op", e.op)
                .kv_u64("value", e.value)
                .end_object();
        w.end_array();
    }
    w.end_object();
}

// Per huge page size: "2MB" from /sys/kernel/mm/hugepages/hugepages-2048kB.
void write_hugetlb(json::Writer &w, const Target &t) {
    int v = 0;
    std::string d = dir_for(t, "hugetlb", &v);
    if (d.empty()) return;
    std::vector<std::string> sizes;
    for (const char *kb : {"64", "2048", "32768", "524288", "1048576", "16777216"}) {
        if (::access((std::string("/sys/kernel/mm/hugepages/hugepages-") + kb + "kB").c_str(),
                     F_OK) != 0)
            continue;
        uint64_t k = std::strtoull(kb, nullptr, 10);
        sizes.push_back(k >= 1048576 ? std::to_string(k / 1048576) + "GB"
                        : k >= 1024  ? std::to_string(k / 1024) + "MB"
                                     : std::to_string(k) + "KB");
    }
    w.key("hugetlb").begin_object();
    for (const auto &sz : sizes) {
        std::string p = d + "/hugetlb." + sz;
        w.key(sz).begin_object();
        if (v == 1) {
            w.kv_u64("usage", number(p + ".usage_in_bytes"));
            w.kv_u64("max", number(p + ".max_usage_in_bytes"));
            w.kv_u64("failcnt", number(p + ".failcnt"));
        } else {
            w.kv_u64("usage", number(p + ".current"));
            w.kv_u64("failcnt", key_values(p + ".events")["max"]);
        }
        w.end_object();
    }
    w.end_object();
}

// The interfaces of the container's network namespace, from its init's
// /proc/PID/net/dev (loopback left out, as runc does).
void write_network(json::Writer &w, const Target &t) {
    w.key("network_interfaces").begin_array();
    for (const auto &d : net_devices(t.pid)) {
        if (d.name == "lo") continue;
        const uint64_t *n = d.counters;
        w.begin_object()
            .kv("name", d.name)
            .kv_u64("rx_bytes", n[0])
            .kv_u64("rx_packets", n[1])
            .kv_u64("rx_errors", n[2])
            .kv_u64("rx_dropped", n[3])
            .kv_u64("tx_bytes", n[8])
            .kv_u64("tx_packets", n[9])
            .kv_u64("tx_errors", n[10])
            .kv_u64("tx_dropped", n[11])
            .end_object();
    }
    w.end_array();
}

std::string stats_event(const Target &t) {
    json::Writer w(false);
    w.begin_object().kv("type", "stats").kv("id", t.id).key("data").begin_object();
    write_cpu(w, t);
    write_memory(w, t);
    write_pids(w, t);
    write_blkio(w, t);
    write_hugetlb(w, t);
    write_network(w, t);
    w.end_object().end_object();
    return std::string(w.view());
}

// OOM kills so far in the container's memory cgroup; none when its file
// cannot be read (the cgroup is gone).
std::optional<uint64_t> oom_kills(const Target &t) {
    int v = 0;
    std::string d = dir_for(t, "memory", &v);
    if (d.empty()) return 0;
    auto kv = key_values(d + (v == 1 ? "/memory.oom_control" : "/memory.events"));
    if (kv.empty()) return std::nullopt;
    return kv["oom_kill"];
}

// Woken at an OOM in the container's memory cgroup, not only at the next
// poll: v1 through an eventfd on memory.oom_control (cgroup.event_control),
// v2 through inotify on memory.events. A cgroup its manager removes as soon
// as it is empty (a systemd scope once the OOM-killed init is gone) must be
// read before it goes. fd() is -1 when neither could be set up (polling then
// does it alone).
class OomNotifier {
  public:
    explicit OomNotifier(const Target &t) {
        int v = 0;
        std::string d = dir_for(t, "memory", &v);
        if (d.empty()) return;
        if (v == 1) {
            int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
            int ofd = ::open((d + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
            int cfd = ::open((d + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
            std::string line = std::to_string(efd) + " " + std::to_string(ofd);
            bool ok = efd >= 0 && ofd >= 0 && cfd >= 0 &&
                      ::write(cfd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
            if (cfd >= 0) ::close(cfd);
            if (ok) {
                fd_ = efd;
                hold_ = ofd;
                v1_file_ = d + "/memory.oom_control";
            } else {
                if (efd >= 0) ::close(efd);
                if (ofd >= 0) ::close(ofd);
            }
        } else {
            int ifd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
            if (ifd >= 0 &&
                ::inotify_add_watch(ifd, (d + "/memory.events").c_str(), IN_MODIFY) >= 0)
                fd_ = ifd;
            else if (ifd >= 0)
                ::close(ifd);
        }
    }
    ~OomNotifier() {
        if (fd_ >= 0) ::close(fd_);
        if (hold_ >= 0) ::close(hold_);
    }
    // Wait up to `ms` for a notification; drains it. True when v1 said the
    // cgroup is out of memory. Its eventfd counts each OOM (at the OOM,
    // before the kill counts) and, once, the cgroup's removal; read late,
    // after a systemd scope's cgroup went with the OOM-killed init, it holds
    // both. So: two or more, or one while the cgroup is still there (as runc
    // reads it), is an OOM; one with the cgroup gone is its removal, unless
    // the removal's own count is still to come (it follows the rmdir).
    bool wait(int ms) {
        if (fd_ < 0) {
            struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
            ::nanosleep(&ts, nullptr);
            return false;
        }
        struct pollfd p = {fd_, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) return false;
        if (v1_file_.empty()) { // v2's inotify: the caller reads memory.events
            char buf[4096];
            while (::read(fd_, buf, sizeof buf) > 0) {
            }
            return false;
        }
        uint64_t n = 0;
        if (::read(fd_, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return false;
        if (n >= 2 || ::access(v1_file_.c_str(), F_OK) == 0) return true;
        p.revents = 0;
        return ::poll(&p, 1, 500) == 1 &&
               ::read(fd_, &n, sizeof n) == static_cast<ssize_t>(sizeof n);
    }

  private:
    int fd_ = -1, hold_ = -1;
    std::string v1_file_;
};

// New whole lines of the network helper's egress log (JSON lines, written
// one line per write), from where the last call stopped.
class EgressTail {
  public:
    explicit EgressTail(std::string path) : path_(std::move(path)) {}
    void emit_new(const std::function<void(const std::string &)> &emit) {
        if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd_ < 0) return;
        char buf[8192];
        ssize_t n;
        while ((n = ::read(fd_, buf, sizeof buf)) > 0)
            partial_.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = partial_.find('\n')) != std::string::npos) {
            emit(partial_.substr(0, nl));
            partial_.erase(0, nl + 1);
        }
    }
    ~EgressTail() {
        if (fd_ >= 0) ::close(fd_);
    }

  private:
    std::string path_, partial_;
    int fd_ = -1;
};

} // namespace

Result<std::string> container_stats_event(const std::string &root, const std::string &id) {
    Target t = OCI_TRY(load_target(root, id));
    return stats_event(t);
}

Status stream_events(const std::string &root, const std::string &id, int interval_ms,
                     const std::function<void(const std::string &)> &emit) {
    Target t = OCI_TRY(load_target(root, id));
    OomNotifier oom(t);
    uint64_t ooms = oom_kills(t).value_or(0);
    int since_stats = interval_ms;
    EgressTail egress(root + "/" + id + "/" + kEgressLog);
    bool v1_oom = false; // told by v1's eventfd, the kill perhaps not counted yet
    auto oom_event = [&] {
        json::Writer w(false);
        w.begin_object().kv("type", "oom").kv("id", t.id).end_object();
        emit(std::string(w.view()));
    };
    // The network helper gone while the init runs: the container has no
    // way out any more (it leaves with the init, which is no event).
    bool helper_gone = t.shim_pid <= 0;
    auto helper_event = [&] {
        if (helper_gone || process_alive(t.shim_pid, t.shim_start_time)) return;
        helper_gone = true;
        if (!process_alive(t.pid, t.start_time)) return;
        json::Writer w(false);
        w.begin_object()
            .kv("type", "helper")
            .kv("id", t.id)
            .kv_i64("pid", t.shim_pid)
            .kv("event", "exited")
            .kv("reason", "the network helper is gone: the container's forwards, published "
                          "ports and proxy no longer answer")
            .end_object();
        emit(std::string(w.view()));
    };
    while (process_alive(t.pid, t.start_time)) {
        egress.emit_new(emit);
        helper_event();
        uint64_t now = oom_kills(t).value_or(ooms);
        if (now > ooms || v1_oom) {
            oom_event();
            // The kill it told of counts when it comes.
            ooms = std::max(now, v1_oom && now <= ooms ? ooms + 1 : now);
            v1_oom = false;
        }
        if (since_stats >= interval_ms) {
            emit(stats_event(t));
            since_stats = 0;
        }
        // (A notification, or 100 ms.)
        auto t0 = std::chrono::steady_clock::now();
        v1_oom = oom.wait(100);
        since_stats += static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - t0)
                                            .count());
    }
    egress.emit_new(emit);
    // A notification that came after the last wait.
    if (!v1_oom) v1_oom = oom.wait(0);
    // An OOM kill that ended the container. A systemd scope's cgroup goes
    // as soon as it is empty, which may be before the kill could be read
    // there: then how systemd saw the unit end says.
    auto last = oom_kills(t);
    bool ended_by_oom = v1_oom || (last && *last > ooms);
    if (!last && t.scope) {
        auto result = scope_result(*t.scope);
        ended_by_oom = ended_by_oom || (result && *result == "oom-kill");
    }
    if (ended_by_oom) oom_event();
    return {};
}

} // namespace ocirun
