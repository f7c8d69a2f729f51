// Spec -> config.json, and the default configuration of `oci-run spec`.
#include "json.hpp"
#include "names.hpp"
#include "spec_io.hpp"

#include <sys/resource.h>

namespace ocirun::oci {

using json::Writer;

namespace {

void write_id_mappings(Writer &w, const char *key, const std::vector<IdMapping> &maps) {
    if (maps.empty()) return;
    w.key(key).begin_array();
    for (const auto &m : maps)
        w.begin_object()
            .kv_u64("containerID", m.container_id)
            .kv_u64("hostID", m.host_id)
            .kv_u64("size", m.size)
            .end_object();
    w.end_array();
}

void write_process(Writer &w, const Process &p) {
    w.key("process").begin_object();
    if (p.terminal) w.kv_bool("terminal", true);
    if (p.console_size)
        w.key("consoleSize")
            .begin_object()
            .kv_u64("height", p.console_size->height)
            .kv_u64("width", p.console_size->width)
            .end_object();
    w.key("user").begin_object().kv_u64("uid", p.user.uid).kv_u64("gid", p.user.gid);
    w.opt_int("umask", p.user.umask);
    if (!p.user.additional_gids.empty()) {
        w.key("additionalGids").begin_array();
        for (auto g : p.user.additional_gids)
            w.u64(g);
        w.end_array();
    }
    w.opt_str("username", p.user.username);
    w.end_object();
    w.opt_strings("args", p.args);
    w.opt_str("commandLine", p.command_line);
    w.opt_strings("env", p.env);
    w.kv("cwd", p.cwd);
    if (p.capabilities) {
        const auto &c = *p.capabilities;
        w.key("capabilities").begin_object();
        w.opt_strings("bounding", c.bounding);
        w.opt_strings("effective", c.effective);
        w.opt_strings("inheritable", c.inheritable);
        w.opt_strings("permitted", c.permitted);
        w.opt_strings("ambient", c.ambient);
        w.end_object();
    }
    if (!p.rlimits.empty()) {
        w.key("rlimits").begin_array();
        for (const auto &r : p.rlimits)
            w.begin_object()
                .kv("type", r.type)
                .kv_u64("hard", r.hard)
                .kv_u64("soft", r.soft)
                .end_object();
        w.end_array();
    }
    if (p.no_new_privileges) w.kv_bool("noNewPrivileges", true);
    w.opt_str("apparmorProfile", p.apparmor_profile);
    w.opt_int("oomScoreAdj", p.oom_score_adj);
    if (p.scheduler) {
        const auto &s = *p.scheduler;
        w.key("scheduler").begin_object().kv("policy", s.policy);
        if (s.nice) w.kv_i64("nice", s.nice);
        if (s.priority) w.kv_i64("priority", s.priority);
        w.opt_strings("flags", s.flags);
        if (s.runtime) w.kv_u64("runtime", s.runtime);
        if (s.deadline) w.kv_u64("deadline", s.deadline);
        if (s.period) w.kv_u64("period", s.period);
        w.end_object();
    }
    w.opt_str("selinuxLabel", p.selinux_label);
    if (p.io_priority)
        w.key("ioPriority")
            .begin_object()
            .kv("class", p.io_priority->klass)
            .kv_i64("priority", p.io_priority->priority)
            .end_object();
    if (p.exec_cpu_affinity) {
        w.key("execCPUAffinity").begin_object();
        w.opt_str("initial", p.exec_cpu_affinity->initial);
        w.opt_str("final", p.exec_cpu_affinity->final);
        w.end_object();
    }
    w.end_object();
}

void write_hooks(Writer &w, const char *key, const std::vector<Hook> &hooks) {
    if (hooks.empty()) return;
    w.key(key).begin_array();
    for (const auto &h : hooks) {
        w.begin_object().kv("path", h.path);
        w.opt_strings("args", h.args);
        w.opt_strings("env", h.env);
        w.opt_int("timeout", h.timeout);
        w.end_object();
    }
    w.end_array();
}

void write_throttle(Writer &w, const char *key, const std::vector<ThrottleDevice> &v) {
    if (v.empty()) return;
    w.key(key).begin_array();
    for (const auto &t : v)
        w.begin_object()
            .kv_i64("major", t.major)
            .kv_i64("minor", t.minor)
            .kv_u64("rate", t.rate)
            .end_object();
    w.end_array();
}

void write_resources(Writer &w, const Resources &r) {
    w.key("resources").begin_object();
    if (!r.devices.empty()) {
        w.key("devices").begin_array();
        for (const auto &d : r.devices) {
            w.begin_object().kv_bool("allow", d.allow);
            w.opt_str("type", d.type);
            w.opt_int("major", d.major);
            w.opt_int("minor", d.minor);
            w.opt_str("access", d.access);
            w.end_object();
        }
        w.end_array();
    }
    if (r.memory) {
        const auto &m = *r.memory;
        w.key("memory").begin_object();
        w.opt_int("limit", m.limit).opt_int("reservation", m.reservation).opt_int("swap", m.swap);
        w.opt_int("kernel", m.kernel).opt_int("kernelTCP", m.kernel_tcp);
        w.opt_int("swappiness", m.swappiness);
        w.opt_bool("disableOOMKiller", m.disable_oom_killer);
        w.opt_bool("useHierarchy", m.use_hierarchy);
        w.opt_bool("checkBeforeUpdate", m.check_before_update);
        w.end_object();
    }
    if (r.cpu) {
        const auto &c = *r.cpu;
        w.key("cpu").begin_object();
        w.opt_int("shares", c.shares).opt_int("quota", c.quota).opt_int("burst", c.burst);
        w.opt_int("period", c.period).opt_int("realtimeRuntime", c.realtime_runtime);
        w.opt_int("realtimePeriod", c.realtime_period);
        w.opt_str("cpus", c.cpus).opt_str("mems", c.mems);
        w.opt_int("idle", c.idle);
        w.end_object();
    }
    if (r.pids) {
        w.key("pids").begin_object();
        if (r.pids->limit) w.kv_i64("limit", *r.pids->limit);
        w.end_object();
    }
    if (r.block_io) {
        const auto &b = *r.block_io;
        w.key("blockIO").begin_object();
        w.opt_int("weight", b.weight).opt_int("leafWeight", b.leaf_weight);
        if (!b.weight_device.empty()) {
            w.key("weightDevice").begin_array();
            for (const auto &d : b.weight_device) {
                w.begin_object().kv_i64("major", d.major).kv_i64("minor", d.minor);
                w.opt_int("weight", d.weight).opt_int("leafWeight", d.leaf_weight);
                w.end_object();
            }
            w.end_array();
        }
        write_throttle(w, "throttleReadBpsDevice", b.throttle_read_bps);
        write_throttle(w, "throttleWriteBpsDevice", b.throttle_write_bps);
        write_throttle(w, "throttleReadIOPSDevice", b.throttle_read_iops);
        write_throttle(w, "throttleWriteIOPSDevice", b.throttle_write_iops);
        w.end_object();
    }
    if (!r.hugepage_limits.empty()) {
        w.key("hugepageLimits").begin_array();
        for (const auto &h : r.hugepage_limits)
            w.begin_object().kv("pageSize", h.page_size).kv_u64("limit", h.limit).end_object();
        w.end_array();
    }
    if (r.network) {
        w.key("network").begin_object();
        w.opt_int("classID", r.network->class_id);
        if (!r.network->priorities.empty()) {
            w.key("priorities").begin_array();
            for (const auto &p : r.network->priorities)
                w.begin_object().kv("name", p.name).kv_u64("priority", p.priority).end_object();
            w.end_array();
        }
        w.end_object();
    }
    if (!r.rdma.empty()) {
        w.key("rdma").begin_object();
        for (const auto &[name, rd] : r.rdma) {
            w.key(name).begin_object();
            w.opt_int("hcaHandles", rd.hca_handles).opt_int("hcaObjects", rd.hca_objects);
            w.end_object();
        }
        w.end_object();
    }
    w.opt_map("unified", r.unified);
    w.end_object();
}

void write_seccomp(Writer &w, const Seccomp &s) {
    w.key("seccomp").begin_object().kv("defaultAction", s.default_action);
    w.opt_int("defaultErrnoRet", s.default_errno_ret);
    w.opt_strings("architectures", s.architectures);
    w.opt_strings("flags", s.flags);
    w.opt_str("listenerPath", s.listener_path);
    w.opt_str("listenerMetadata", s.listener_metadata);
    if (!s.syscalls.empty()) {
        w.key("syscalls").begin_array();
        for (const auto &sc : s.syscalls) {
            w.begin_object().kv_strings("names", sc.names).kv("action", sc.action);
            w.opt_int("errnoRet", sc.errno_ret);
            if (!sc.includes_caps.empty()) {
                w.key("includes").begin_object();
                w.kv_strings("caps", sc.includes_caps);
                w.end_object();
            }
            if (!sc.args.empty()) {
                w.key("args").begin_array();
                for (const auto &a : sc.args) {
                    w.begin_object().kv_u64("index", a.index).kv_u64("value", a.value);
                    if (a.value_two) w.kv_u64("valueTwo", a.value_two);
                    w.kv("op", a.op).end_object();
                }
                w.end_array();
            }
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
}

void write_linux(Writer &w, const Linux &l) {
    w.key("linux").begin_object();
    write_id_mappings(w, "uidMappings", l.uid_mappings);
    write_id_mappings(w, "gidMappings", l.gid_mappings);
    w.opt_map("sysctl", l.sysctl);
    if (l.resources) write_resources(w, *l.resources);
    w.opt_str("cgroupsPath", l.cgroups_path);
    if (!l.namespaces.empty()) {
        w.key("namespaces").begin_array();
        for (const auto &ns : l.namespaces) {
            w.begin_object().kv("type", ns_type_name(ns.type));
            w.opt_str("path", ns.path);
            w.end_object();
        }
        w.end_array();
    }
    if (!l.time_offsets.empty()) {
        w.key("timeOffsets").begin_object();
        for (const auto &[clock, off] : l.time_offsets)
            w.key(clock)
                .begin_object()
                .kv_i64("secs", off.secs)
                .kv_u64("nanosecs", off.nanosecs)
                .end_object();
        w.end_object();
    }
    if (!l.devices.empty()) {
        w.key("devices").begin_array();
        for (const auto &d : l.devices) {
            w.begin_object().kv("path", d.path).kv("type", d.type);
            w.kv_i64("major", d.major).kv_i64("minor", d.minor);
            w.opt_int("fileMode", d.file_mode).opt_int("uid", d.uid).opt_int("gid", d.gid);
            w.end_object();
        }
        w.end_array();
    }
    if (l.seccomp) write_seccomp(w, *l.seccomp);
    w.opt_str("rootfsPropagation", l.rootfs_propagation);
    w.opt_strings("maskedPaths", l.masked_paths);
    w.opt_strings("readonlyPaths", l.readonly_paths);
    w.opt_str("mountLabel", l.mount_label);
    if (l.intel_rdt) {
        const auto &r = *l.intel_rdt;
        w.key("intelRdt").begin_object();
        w.opt_str("closID", r.clos_id).opt_str("l3CacheSchema", r.l3_cache_schema);
        w.opt_str("memBwSchema", r.mem_bw_schema).opt_strings("schemata", r.schemata);
        if (r.enable_cmt) w.kv_bool("enableCMT", true);
        if (r.enable_mbm) w.kv_bool("enableMBM", true);
        if (r.enable_monitoring) w.kv_bool("enableMonitoring", true);
        w.end_object();
    }
    if (l.memory_policy) {
        w.key("memoryPolicy").begin_object().kv("mode", l.memory_policy->mode);
        w.opt_str("nodes", l.memory_policy->nodes).opt_strings("flags", l.memory_policy->flags);
        w.end_object();
    }
    if (l.personality) {
        w.key("personality").begin_object().kv("domain", l.personality->domain);
        w.opt_strings("flags", l.personality->flags);
        w.end_object();
    }
    if (!l.net_devices.empty()) {
        w.key("netDevices").begin_object();
        for (const auto &[name, nd] : l.net_devices) {
            w.key(name).begin_object();
            w.opt_str("name", nd.name);
            w.end_object();
        }
        w.end_object();
    }
    w.end_object();
}

} // namespace

std::string write_spec(const Spec &spec, bool pretty) {
    Writer w(pretty);
    write_spec(w, spec);
    std::string out(w.view());
    if (pretty && (out.empty() || out.back() != '\n')) out += '\n';
    return out;
}

void write_spec(Writer &w, const Spec &spec) {
    w.begin_object().kv("ociVersion", spec.oci_version);
    if (spec.process) write_process(w, *spec.process);
    if (spec.root) {
        w.key("root").begin_object().kv("path", spec.root->path);
        if (spec.root->readonly) w.kv_bool("readonly", true);
        w.end_object();
    }
    w.opt_str("hostname", spec.hostname);
    w.opt_str("domainname", spec.domainname);
    if (!spec.mounts.empty()) {
        w.key("mounts").begin_array();
        for (const auto &m : spec.mounts) {
            w.begin_object().kv("destination", m.destination);
            w.opt_str("type", m.type).opt_str("source", m.source);
            w.opt_strings("options", m.options);
            write_id_mappings(w, "uidMappings", m.uid_mappings);
            write_id_mappings(w, "gidMappings", m.gid_mappings);
            w.end_object();
        }
        w.end_array();
    }
    if (spec.hooks) {
        const Hooks &h = *spec.hooks;
        w.key("hooks").begin_object();
        write_hooks(w, "prestart", h.prestart);
        write_hooks(w, "createRuntime", h.create_runtime);
        write_hooks(w, "createContainer", h.create_container);
        write_hooks(w, "startContainer", h.start_container);
        write_hooks(w, "poststart", h.poststart);
        write_hooks(w, "poststop", h.poststop);
        w.end_object();
    }
    w.opt_map("annotations", spec.annotations);
    if (spec.linux_) write_linux(w, *spec.linux_);
    w.end_object();
}

Spec default_spec(bool rootless, uint32_t euid, uint32_t egid) {
    Spec s;
    s.oci_version = kSpecVersion;
    Process p;
    p.terminal = true;
    p.args = {"sh"};
    p.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"};
    p.cwd = "/";
    // runc's defaults; inheritable and ambient stay empty (CVE-2022-29162).
    std::vector<std::string> caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    p.capabilities = Capabilities{caps, caps, {}, caps, {}};
    p.rlimits.push_back(Rlimit{"RLIMIT_NOFILE", static_cast<int>(RLIMIT_NOFILE), 1024, 1024});
    p.no_new_privileges = true;
    s.process = std::move(p);
    s.root = Root{"rootfs", true};
    s.hostname = "oci-run";
    s.mounts = {
        {"/proc", "proc", "proc", {}, {}, {}},
        {"/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}, {}, {}},
        {"/dev/pts",
         "devpts",
         "devpts",
         {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"},
         {},
         {}},
        {"/dev/shm",
         "tmpfs",
         "shm",
         {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"},
         {},
         {}},
        {"/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}, {}, {}},
        {"/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}, {}, {}},
        {"/sys/fs/cgroup",
         "cgroup",
         "cgroup",
         {"nosuid", "noexec", "nodev", "relatime", "ro"},
         {},
         {}},
    };
    Linux l;
    Resources r;
    r.devices.push_back(DeviceRule{false, {}, {}, {}, "rwm"});
    l.resources = std::move(r);
    l.namespaces = {{NsType::pid, {}}, {NsType::network, {}}, {NsType::ipc, {}},
                    {NsType::uts, {}}, {NsType::mount, {}},   {NsType::cgroup, {}}};
    l.masked_paths = {"/proc/acpi",
                      "/proc/asound",
                      "/proc/kcore",
                      "/proc/keys",
                      "/proc/latency_stats",
                      "/proc/timer_list",
                      "/proc/timer_stats",
                      "/proc/sched_debug",
                      "/sys/firmware",
                      "/proc/scsi",
                      "/sys/devices/virtual/powercap"};
    l.readonly_paths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};
    if (rootless) {
        // As runc spec --rootless: a user namespace mapping the caller to root, no
        // network namespace of its own (sysfs is then bound from the host), no
        // resources (an unprivileged user cannot set cgroup limits without delegation),
        // and no gid= on devpts (gid 5 is not mapped).
        std::vector<Namespace> ns;
        for (const auto &n : l.namespaces)
            if (n.type != NsType::network && n.type != NsType::user) ns.push_back(n);
        ns.push_back({NsType::user, {}});
        l.namespaces = std::move(ns);
        l.uid_mappings = {{0, euid, 1}};
        l.gid_mappings = {{0, egid, 1}};
        l.resources.reset();
        std::vector<Mount> mounts;
        for (auto &m : s.mounts) {
            if (m.destination == "/sys") {
                mounts.push_back(
                    {"/sys", "none", "/sys", {"rbind", "nosuid", "noexec", "nodev", "ro"}, {}, {}});
                continue;
            }
            std::vector<std::string> opts;
            for (auto &o : m.options)
                if (o.rfind("gid=", 0) != 0) opts.push_back(o);
            m.options = std::move(opts);
            mounts.push_back(std::move(m));
        }
        s.mounts = std::move(mounts);
    }
    s.linux_ = std::move(l);
    return s;
}

} // namespace ocirun::oci
