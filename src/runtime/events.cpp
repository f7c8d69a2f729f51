#include "events.hpp"

#include "cgroup.hpp"
#include "oci/json.hpp"
#include "oci/state.hpp"
#include "proc.hpp"
#include "store.hpp"

#include <time.h>
#include <unistd.h>

#include <map>
#include <sstream>

namespace ocirun {

namespace {

struct Target {
    std::string id;
    CgroupHost host;
    std::vector<std::string> dirs;
    pid_t pid = 0;
    uint64_t start_time = 0;
};

Result<Target> load_target(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    oci::ContainerRecord rec = OCI_TRY(dir.load());
    if (rec.cgroup_dirs.empty()) return fail("events: container \"" + id + "\" has no cgroup");
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("events: container \"" + id + "\" is not running");
    Target t;
    t.id = id;
    t.host = OCI_TRY(detect_cgroup_host());
    t.dirs = rec.cgroup_dirs;
    t.pid = rec.state.pid;
    t.start_time = rec.init_start_time;
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
    std::istringstream in(text(path));
    std::string k;
    uint64_t v;
    while (in >> k >> v)
        kv[k] = v;
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
        std::istringstream in(text(acct + "/cpuacct.usage_percpu"));
        uint64_t n;
        while (in >> n)
            w.u64(n);
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

std::string stats_event(const Target &t) {
    json::Writer w(false);
    w.begin_object().kv("type", "stats").kv("id", t.id).key("data").begin_object();
    write_cpu(w, t);
    write_memory(w, t);
    write_pids(w, t);
    w.end_object().end_object();
    return std::string(w.view());
}

// OOM kills so far in the container's memory cgroup.
uint64_t oom_kills(const Target &t) {
    int v = 0;
    std::string d = dir_for(t, "memory", &v);
    if (d.empty()) return 0;
    return key_values(d + (v == 1 ? "/memory.oom_control" : "/memory.events"))["oom_kill"];
}

} // namespace

Result<std::string> container_stats_event(const std::string &root, const std::string &id) {
    Target t = OCI_TRY(load_target(root, id));
    return stats_event(t);
}

Status stream_events(const std::string &root, const std::string &id, int interval_ms,
                     const std::function<void(const std::string &)> &emit) {
    Target t = OCI_TRY(load_target(root, id));
    uint64_t ooms = oom_kills(t);
    int since_stats = interval_ms;
    while (process_alive(t.pid, t.start_time)) {
        uint64_t now = oom_kills(t);
        if (now > ooms) {
            json::Writer w(false);
            w.begin_object().kv("type", "oom").kv("id", t.id).end_object();
            emit(std::string(w.view()));
            ooms = now;
        }
        if (since_stats >= interval_ms) {
            emit(stats_event(t));
            since_stats = 0;
        }
        struct timespec ts = {0, 100 * 1000000};
        ::nanosleep(&ts, nullptr);
        since_stats += 100;
    }
    // An OOM kill that ended the container.
    if (oom_kills(t) > ooms) {
        json::Writer w(false);
        w.begin_object().kv("type", "oom").kv("id", t.id).end_object();
        emit(std::string(w.view()));
    }
    return {};
}

} // namespace ocirun
