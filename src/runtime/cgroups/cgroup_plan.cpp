#include "runtime/cgroups/cgroup_plan.hpp"

namespace ocirun {

namespace {

std::string dev(int64_t major, int64_t minor) {
    return std::to_string(major) + ":" + std::to_string(minor);
}

std::string num(int64_t v) {
    return std::to_string(v);
}

} // namespace

std::string pids_max_value(int64_t limit) {
    return limit < 0 ? "max" : std::to_string(limit);
}

namespace {

class Planner {
  public:
    Planner(const CgroupHost &host) : host_(host), v2_only_(host.pure_v2()) {}

    std::vector<CgroupWrite> out;

    // Is `controller` on v1 here (else v2, else missing)?
    int version_of(const char *controller) const {
        const Hierarchy *h = host_.for_controller(controller);
        return h ? h->version : 0;
    }
    Status need(const char *controller, const std::string &field) const {
        if (version_of(controller)) return {};
        return fail(field + ": the " + std::string(controller) +
                    " cgroup controller is not available on this host");
    }
    void add(const char *controller, std::string file, std::string value, std::string field,
             std::string alt = "") {
        CgroupWrite w;
        w.controller = version_of(controller) == 2 ? "" : controller;
        w.file = std::move(file);
        w.value = std::move(value);
        w.field = std::move(field);
        w.alt_file = std::move(alt);
        out.push_back(std::move(w));
    }
    bool v2_only() const { return v2_only_; }

  private:
    const CgroupHost &host_;
    bool v2_only_;
};

constexpr const char *kRes = "linux.resources.";

Status plan_pids(Planner &p, const oci::Pids &pids) {
    if (!pids.limit) return {};
    std::string f = std::string(kRes) + "pids.limit";
    OCI_CHECK(p.need("pids", f));
    p.add("pids", "pids.max", pids_max_value(*pids.limit), f);
    return {};
}

Status plan_memory(Planner &p, const oci::Memory &m) {
    std::string base = std::string(kRes) + "memory";
    OCI_CHECK(p.need("memory", base));
    if (p.version_of("memory") == 1) {
        if (m.limit) {
            p.add("memory", "memory.limit_in_bytes", num(*m.limit), base + ".limit");
            if (m.swap) p.out.back().retry_after_next = true;
        }
        if (m.swap) p.add("memory", "memory.memsw.limit_in_bytes", num(*m.swap), base + ".swap");
        if (m.reservation)
            p.add("memory", "memory.soft_limit_in_bytes", num(*m.reservation),
                  base + ".reservation");
        if (m.kernel)
            p.add("memory", "memory.kmem.limit_in_bytes", num(*m.kernel), base + ".kernel");
        if (m.kernel_tcp)
            p.add("memory", "memory.kmem.tcp.limit_in_bytes", num(*m.kernel_tcp),
                  base + ".kernelTCP");
        if (m.swappiness) {
            if (*m.swappiness > 100)
                return fail(base + ".swappiness: " + std::to_string(*m.swappiness) +
                            " is out of range [0, 100]");
            p.add("memory", "memory.swappiness", std::to_string(*m.swappiness),
                  base + ".swappiness");
        }
        if (m.disable_oom_killer)
            p.add("memory", "memory.oom_control", *m.disable_oom_killer ? "1" : "0",
                  base + ".disableOOMKiller");
        if (m.use_hierarchy)
            p.add("memory", "memory.use_hierarchy", *m.use_hierarchy ? "1" : "0",
                  base + ".useHierarchy");
        return {};
    }
    // cgroup v2
    if (m.limit)
        p.add("memory", "memory.max", *m.limit < 0 ? "max" : num(*m.limit), base + ".limit");
    if (m.swap || (m.limit && *m.limit == -1)) {
        int64_t swap = m.swap.value_or(0), limit = m.limit.value_or(0);
        std::string v;
        if (limit == -1 && swap == 0)
            v = "max";
        else if (swap == -1)
            v = "max";
        else if (swap != 0) {
            if (limit <= 0)
                return fail(base + ".swap: a swap limit needs a memory limit on cgroup v2");
            if (swap < limit)
                return fail(base + ".swap: " + num(swap) + " is below memory.limit " + num(limit) +
                            " (swap is memory+swap)");
            v = num(swap - limit);
        }
        if (!v.empty()) p.add("memory", "memory.swap.max", v, base + ".swap");
    }
    if (m.reservation)
        p.add("memory", "memory.low", *m.reservation < 0 ? "max" : num(*m.reservation),
              base + ".reservation");
    if (m.kernel) return fail(base + ".kernel: not available on cgroup v2");
    if (m.kernel_tcp) return fail(base + ".kernelTCP: not available on cgroup v2");
    if (m.swappiness) return fail(base + ".swappiness: not available on cgroup v2");
    if (m.disable_oom_killer && *m.disable_oom_killer)
        return fail(base + ".disableOOMKiller: not available on cgroup v2");
    if (m.use_hierarchy && !*m.use_hierarchy)
        return fail(base + ".useHierarchy: cgroup v2 is always hierarchical");
    return {};
}

Status plan_cpu(Planner &p, const oci::Cpu &c) {
    std::string base = std::string(kRes) + "cpu";
    bool cpu_fields = c.shares || c.quota || c.period || c.burst || c.realtime_runtime ||
                      c.realtime_period || c.idle;
    if (cpu_fields) OCI_CHECK(p.need("cpu", base));
    if (!c.cpus.empty() || !c.mems.empty()) OCI_CHECK(p.need("cpuset", base + ".cpus"));
    if (cpu_fields && p.version_of("cpu") == 1) {
        if (c.shares) p.add("cpu", "cpu.shares", std::to_string(*c.shares), base + ".shares");
        if (c.period) {
            p.add("cpu", "cpu.cfs_period_us", std::to_string(*c.period), base + ".period");
            if (c.quota) p.out.back().retry_after_next = true;
        }
        if (c.quota) p.add("cpu", "cpu.cfs_quota_us", num(*c.quota), base + ".quota");
        if (c.burst) p.add("cpu", "cpu.cfs_burst_us", std::to_string(*c.burst), base + ".burst");
        if (c.realtime_period)
            p.add("cpu", "cpu.rt_period_us", std::to_string(*c.realtime_period),
                  base + ".realtimePeriod");
        if (c.realtime_runtime)
            p.add("cpu", "cpu.rt_runtime_us", num(*c.realtime_runtime), base + ".realtimeRuntime");
        if (c.idle) p.add("cpu", "cpu.idle", num(*c.idle), base + ".idle");
    } else if (cpu_fields) {
        if (c.realtime_period || c.realtime_runtime)
            return fail(base + ".realtimeRuntime: realtime scheduling limits are not available "
                               "on cgroup v2");
        if (c.shares && *c.shares != 0)
            p.add("cpu", "cpu.weight", std::to_string(cpu_shares_to_weight(*c.shares)),
                  base + ".shares");
        if (c.quota || c.period) {
            std::string v = c.quota && *c.quota > 0 ? num(*c.quota) : "max";
            v += " " + std::to_string(c.period && *c.period ? *c.period : 100000);
            p.add("cpu", "cpu.max", v, base + ".quota");
        }
        if (c.burst) p.add("cpu", "cpu.max.burst", std::to_string(*c.burst), base + ".burst");
        if (c.idle) p.add("cpu", "cpu.idle", num(*c.idle), base + ".idle");
    }
    if (!c.cpus.empty()) p.add("cpuset", "cpuset.cpus", c.cpus, base + ".cpus");
    if (!c.mems.empty()) p.add("cpuset", "cpuset.mems", c.mems, base + ".mems");
    return {};
}

Status plan_block_io(Planner &p, const oci::BlockIo &b) {
    std::string base = std::string(kRes) + "blockIO";
    if (!p.version_of("blkio")) OCI_CHECK(p.need("io", base));
    bool v1 = p.version_of("blkio") == 1;
    const char *ctl = v1 ? "blkio" : "io";
    if (b.weight) {
        if (v1)
            p.add(ctl, "blkio.weight", std::to_string(*b.weight), base + ".weight",
                  "blkio.bfq.weight");
        else
            p.add(ctl, "io.weight",
                  "default " + std::to_string(blkio_weight_to_io_weight(*b.weight)),
                  base + ".weight");
    }
    if (b.leaf_weight) {
        if (!v1) return fail(base + ".leafWeight: not available on cgroup v2");
        p.add(ctl, "blkio.leaf_weight", std::to_string(*b.leaf_weight), base + ".leafWeight");
    }
    for (size_t i = 0; i < b.weight_device.size(); i++) {
        const auto &d = b.weight_device[i];
        std::string f = base + ".weightDevice[" + std::to_string(i) + "]";
        if (d.weight) {
            if (v1)
                p.add(ctl, "blkio.weight_device",
                      dev(d.major, d.minor) + " " + std::to_string(*d.weight), f,
                      "blkio.bfq.weight_device");
            else
                p.add(ctl, "io.weight",
                      dev(d.major, d.minor) + " " +
                          std::to_string(blkio_weight_to_io_weight(*d.weight)),
                      f);
        }
        if (d.leaf_weight) {
            if (!v1) return fail(f + ".leafWeight: not available on cgroup v2");
            p.add(ctl, "blkio.leaf_weight_device",
                  dev(d.major, d.minor) + " " + std::to_string(*d.leaf_weight), f);
        }
    }
    struct Throttle {
        const std::vector<oci::ThrottleDevice> &list;
        const char *name, *v1file, *v2key;
    } throttles[] = {
        {b.throttle_read_bps, "throttleReadBpsDevice", "blkio.throttle.read_bps_device", "rbps"},
        {b.throttle_write_bps, "throttleWriteBpsDevice", "blkio.throttle.write_bps_device", "wbps"},
        {b.throttle_read_iops, "throttleReadIOPSDevice", "blkio.throttle.read_iops_device",
         "riops"},
        {b.throttle_write_iops, "throttleWriteIOPSDevice", "blkio.throttle.write_iops_device",
         "wiops"},
    };
    for (const auto &t : throttles)
        for (size_t i = 0; i < t.list.size(); i++) {
            const auto &d = t.list[i];
            std::string f = base + "." + t.name + "[" + std::to_string(i) + "]";
            if (v1)
                p.add(ctl, t.v1file, dev(d.major, d.minor) + " " + std::to_string(d.rate), f);
            else
                p.add(ctl, "io.max",
                      dev(d.major, d.minor) + " " + t.v2key + "=" +
                          (d.rate ? std::to_string(d.rate) : "max"),
                      f);
        }
    return {};
}

Status plan_hugetlb(Planner &p, const std::vector<oci::HugepageLimit> &limits) {
    for (size_t i = 0; i < limits.size(); i++) {
        const auto &l = limits[i];
        std::string f = std::string(kRes) + "hugepageLimits[" + std::to_string(i) + "]";
        OCI_CHECK(p.need("hugetlb", f));
        if (l.page_size.empty() || l.page_size.find('/') != std::string::npos ||
            l.page_size.find('.') != std::string::npos)
            return fail(f + ".pageSize: invalid page size \"" + l.page_size + "\"");
        std::string file =
            "hugetlb." + l.page_size + (p.version_of("hugetlb") == 1 ? ".limit_in_bytes" : ".max");
        p.add("hugetlb", file, std::to_string(l.limit), f);
    }
    return {};
}

Status plan_network(Planner &p, const oci::Network &n) {
    std::string base = std::string(kRes) + "network";
    if (n.class_id) {
        if (p.version_of("net_cls") != 1)
            return fail(base + ".classID: needs the cgroup v1 net_cls controller, which this "
                               "host does not have");
        p.add("net_cls", "net_cls.classid", std::to_string(*n.class_id), base + ".classID");
    }
    for (size_t i = 0; i < n.priorities.size(); i++) {
        std::string f = base + ".priorities[" + std::to_string(i) + "]";
        if (p.version_of("net_prio") != 1)
            return fail(f + ": needs the cgroup v1 net_prio controller, which this host does "
                            "not have");
        p.add("net_prio", "net_prio.ifpriomap",
              n.priorities[i].name + " " + std::to_string(n.priorities[i].priority), f);
    }
    return {};
}

Status plan_rdma(Planner &p, const std::map<std::string, oci::Rdma> &rdma) {
    for (const auto &[device, r] : rdma) {
        std::string f = std::string(kRes) + "rdma." + device;
        OCI_CHECK(p.need("rdma", f));
        std::string v = device +
                        " hca_handle=" + (r.hca_handles ? std::to_string(*r.hca_handles) : "max") +
                        " hca_object=" + (r.hca_objects ? std::to_string(*r.hca_objects) : "max");
        p.add("rdma", "rdma.max", v, f);
    }
    return {};
}

Status plan_unified(Planner &p, const CgroupHost &host, const oci::StringMap &unified) {
    const Hierarchy *u = host.unified();
    for (const auto &[key, value] : unified) {
        std::string f = std::string(kRes) + "unified." + key;
        if (!u) return fail(f + ": this host has no cgroup v2 hierarchy");
        if (key.empty() || key.find('/') != std::string::npos || key[0] == '.' ||
            key.find('.') == std::string::npos)
            return fail(f + ": not a cgroup file name");
        std::string controller = key.substr(0, key.find('.'));
        // Of the core files only the limits: the others are the runtime's
        // (cgroup.procs and cgroup.threads move any process on the host into
        // the container's cgroup, where delete kills it; subtree_control,
        // type, freeze and kill change what the cgroup is).
        if (controller == "cgroup" && key != "cgroup.max.depth" && key != "cgroup.max.descendants")
            return fail(f + ": refused: of the cgroup.* files only cgroup.max.depth and "
                            "cgroup.max.descendants may be set");
        if (controller != "cgroup" && !u->has(controller))
            return fail(f + ": the " + controller +
                        " controller is not available in this host's cgroup v2 hierarchy");
        CgroupWrite w;
        w.file = key;
        w.value = value;
        w.field = f;
        p.out.push_back(std::move(w));
    }
    return {};
}

std::string device_rule(const std::string &type, std::optional<int64_t> major,
                        std::optional<int64_t> minor, const std::string &access) {
    std::string t = type.empty() ? "a" : type;
    if (t == "a") return "a";
    auto part = [](std::optional<int64_t> v) {
        return v && *v >= 0 ? std::to_string(*v) : std::string("*");
    };
    return t + " " + part(major) + ":" + part(minor) + " " + (access.empty() ? "rwm" : access);
}

// The devices every container may use, as runc allows them after the
// configuration's rules: mknod of any node, the standard character devices,
// ptys and /dev/net/tun.
struct DefaultDevice {
    const char *type;
    int64_t major, minor; // -1: any
    const char *access;
};
constexpr DefaultDevice kDefaultDevices[] = {
    {"c", -1, -1, "m"}, {"b", -1, -1, "m"},    {"c", 1, 3, "rwm"}, {"c", 1, 8, "rwm"},
    {"c", 1, 7, "rwm"}, {"c", 5, 0, "rwm"},    {"c", 1, 5, "rwm"}, {"c", 1, 9, "rwm"},
    {"c", 5, 1, "rwm"}, {"c", 136, -1, "rwm"}, {"c", 5, 2, "rwm"}, {"c", 10, 200, "rwm"},
};

oci::DeviceRule rule(bool allow, const std::string &type, int64_t major, int64_t minor,
                     const std::string &access) {
    oci::DeviceRule r;
    r.allow = allow;
    r.type = type;
    if (major >= 0) r.major = major;
    if (minor >= 0) r.minor = minor;
    r.access = access;
    return r;
}

} // namespace

namespace {

// f(rule, i) for each rule of effective_device_rules, in its order: i is the
// rule's index in `spec_rules`, or npos for a default.
template <class F> void each_device_rule(const std::vector<oci::DeviceRule> &spec_rules, F f) {
    for (size_t i = 0; i < spec_rules.size(); i++)
        f(spec_rules[i], i);
    for (const auto &d : kDefaultDevices)
        f(rule(true, d.type, d.major, d.minor, d.access), std::string::npos);
}

} // namespace

std::vector<oci::DeviceRule>
effective_device_rules(const std::vector<oci::DeviceRule> &spec_rules) {
    std::vector<oci::DeviceRule> rules;
    rules.reserve(spec_rules.size() + std::size(kDefaultDevices));
    each_device_rule(spec_rules, [&](const oci::DeviceRule &r, size_t) { rules.push_back(r); });
    return rules;
}

namespace {

Status plan_devices(Planner &p, const std::vector<oci::DeviceRule> &spec_rules) {
    std::string base = std::string(kRes) + "devices";
    if (spec_rules.empty()) return {};
    if (!p.version_of("devices") && !p.v2_only())
        return fail(base + ": this host has no devices cgroup controller");
    // The configuration's rules, then the runtime's defaults. linux.devices
    // adds nodes, never an allow rule: a device the rules deny stays denied
    // (as runc; clients such as Podman allow what they add, in
    // resources.devices).
    if (p.version_of("devices") == 1) {
        p.out.reserve(p.out.size() + spec_rules.size() + std::size(kDefaultDevices));
        each_device_rule(spec_rules, [&](const oci::DeviceRule &r, size_t i) {
            p.add("devices", r.allow ? "devices.allow" : "devices.deny",
                  device_rule(r.type, r.major, r.minor, r.access),
                  i != std::string::npos ? base + "[" + std::to_string(i) + "]"
                                         : base + " (default devices)");
        });
        return {};
    }
    CgroupWrite w;
    w.file = kDeviceProgram;
    w.field = base;
    w.device_rules = effective_device_rules(spec_rules);
    p.out.push_back(std::move(w));
    return {};
}

} // namespace

uint64_t cpu_shares_to_weight(uint64_t shares) {
    if (shares < 2) shares = 2;
    if (shares > 262144) shares = 262144;
    return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t blkio_weight_to_io_weight(uint64_t weight) {
    if (weight < 10) weight = 10;
    if (weight > 1000) weight = 1000;
    return 1 + (weight - 10) * 9999 / 990;
}

bool sets_cpuset(const std::optional<oci::Resources> &r) {
    return r && r->cpu && (!r->cpu->cpus.empty() || !r->cpu->mems.empty());
}

const Hierarchy *hierarchy_for(const CgroupWrite &w, const CgroupHost &host) {
    return w.controller.empty() ? host.unified() : host.for_controller(w.controller);
}

Result<std::vector<CgroupWrite>> plan_device_update(const std::vector<oci::DeviceRule> &current,
                                                    const std::vector<oci::DeviceRule> &target,
                                                    const CgroupHost &host) {
    Planner now(host), next(host);
    OCI_CHECK(plan_devices(now, current));
    OCI_CHECK(plan_devices(next, target));
    if (next.out.size() == 1 && next.out[0].file == kDeviceProgram) {
        next.out[0].replace_programs = true;
        return std::move(next.out);
    }
    // v1: "deny a" then allows only, on both sides?
    auto deny_all_then_allows = [](const std::vector<CgroupWrite> &w) {
        if (w.empty() || w[0].file != "devices.deny" || w[0].value != "a") return false;
        for (size_t i = 1; i < w.size(); i++)
            if (w[i].file != "devices.allow") return false;
        return true;
    };
    if (!deny_all_then_allows(now.out) || !deny_all_then_allows(next.out))
        return std::move(next.out);
    std::vector<CgroupWrite> out;
    auto has = [](const std::vector<CgroupWrite> &w, const std::string &value) {
        for (size_t i = 1; i < w.size(); i++)
            if (w[i].value == value) return true;
        return false;
    };
    for (size_t i = 1; i < next.out.size(); i++)
        if (!has(now.out, next.out[i].value)) out.push_back(next.out[i]);
    // An entry dropped: denied as it was allowed (v1 removes it from the
    // list), then what the target allows of the same node again.
    bool dropped = false;
    for (size_t i = 1; i < now.out.size(); i++)
        if (!has(next.out, now.out[i].value)) {
            CgroupWrite d = now.out[i];
            d.file = "devices.deny";
            d.field = std::string(kRes) + "devices (a rule the update drops)";
            out.push_back(std::move(d));
            dropped = true;
        }
    if (dropped)
        for (size_t i = 1; i < next.out.size(); i++)
            out.push_back(next.out[i]);
    return out;
}

Result<std::vector<CgroupWrite>> plan_resources(const oci::Resources &r, const CgroupHost &host) {
    Planner p(host);
    OCI_CHECK(plan_devices(p, r.devices));
    if (r.pids) OCI_CHECK(plan_pids(p, *r.pids));
    if (r.memory) OCI_CHECK(plan_memory(p, *r.memory));
    if (r.cpu) OCI_CHECK(plan_cpu(p, *r.cpu));
    if (r.block_io) OCI_CHECK(plan_block_io(p, *r.block_io));
    OCI_CHECK(plan_hugetlb(p, r.hugepage_limits));
    if (r.network) OCI_CHECK(plan_network(p, *r.network));
    OCI_CHECK(plan_rdma(p, r.rdma));
    OCI_CHECK(plan_unified(p, host, r.unified));
    return std::move(p.out);
}

} // namespace ocirun
