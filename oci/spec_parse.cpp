// config.json -> Spec: one pass over the document's tree (json::Document),
// each field read with its type, range and enumeration checked and any error
// naming its JSON path.
#include "json.hpp"
#include "names.hpp"
#include "spec_io.hpp"

#include <algorithm>
#include <climits>

namespace ocirun::oci {

using json::Path;

namespace {

constexpr int64_t kI32Max = INT32_MAX;
constexpr uint64_t kU16 = UINT16_MAX, kU32 = UINT32_MAX, kU64 = UINT64_MAX;
constexpr int64_t kI64Min = INT64_MIN, kI64Max = INT64_MAX;

std::string quoted(std::string_view s) {
    std::string q = "\"";
    q += s;
    q += '"';
    return q;
}

// A string member that must be one of an enumeration.
template <class Pred>
Status get_enum(yajl_val obj, const Path &p, const char *key, std::string &out, Pred valid,
                const char *what, bool required) {
    OCI_CHECK(json::get_string(obj, p, key, out, required));
    if (!out.empty() && !valid(out))
        return json::fail_at(p.field(key), std::string("unknown ") + what + " " + quoted(out));
    if (required && out.empty()) return json::fail_at(p.field(key), "must not be empty");
    return {};
}

// The cross-field rules of process.scheduler (sched_setattr(2); as runc's
// validator, plus what the kernel would refuse with a bare EINVAL).
Status check_scheduler(const Scheduler &s, const Path &p) {
    bool rt = s.policy == "SCHED_FIFO" || s.policy == "SCHED_RR";
    if (s.policy == "SCHED_ISO")
        return json::fail_at(p.field("policy"), "SCHED_ISO is not a Linux scheduling policy");
    if (rt && s.priority < 1)
        return json::fail_at(p.field("priority"), "must be 1 to 99 for " + s.policy);
    if (!rt && s.priority != 0)
        return json::fail_at(p.field("priority"),
                             "only SCHED_FIFO and SCHED_RR have a priority, not " + s.policy);
    if (s.policy != "SCHED_DEADLINE" && (s.runtime || s.deadline || s.period))
        return json::fail_at(p, "runtime, deadline and period are for SCHED_DEADLINE only");
    return {};
}

// set_mempolicy(2)'s rules, so that what the kernel would refuse with a
// bare EINVAL is named before anything is created: MPOL_DEFAULT and
// MPOL_LOCAL take no nodes and no node flags, the other modes but
// MPOL_PREFERRED need nodes, MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES
// exclude each other, MPOL_F_NUMA_BALANCING is for MPOL_BIND and
// MPOL_PREFERRED_MANY. Nodes are a list as cpusets write them, below 4096
// (as runc).
Status check_memory_policy(const MemoryPolicy &m, const Path &p) {
    auto has = [&](const char *flag) {
        return std::find(m.flags.begin(), m.flags.end(), flag) != m.flags.end();
    };
    auto nodes = parse_cpu_list(m.nodes);
    if (!nodes)
        return json::fail_at(p.field("nodes"),
                             "\"" + m.nodes + "\" is not a list of nodes (\"0-3,7\")");
    for (unsigned n : *nodes)
        if (n >= 4096)
            return json::fail_at(p.field("nodes"), "node " + std::to_string(n) + " is above 4095");
    bool none = m.mode == "MPOL_DEFAULT" || m.mode == "MPOL_LOCAL";
    if (none && !nodes->empty()) return json::fail_at(p.field("nodes"), m.mode + " takes no nodes");
    if (none && (has("MPOL_F_STATIC_NODES") || has("MPOL_F_RELATIVE_NODES")))
        return json::fail_at(p.field("flags"), m.mode + " takes no node flags");
    if (!none && m.mode != "MPOL_PREFERRED" && nodes->empty())
        return json::fail_at(p.field("nodes"), m.mode + " needs at least one node");
    if (has("MPOL_F_STATIC_NODES") && has("MPOL_F_RELATIVE_NODES"))
        return json::fail_at(p.field("flags"),
                             "MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other");
    if (has("MPOL_F_NUMA_BALANCING") && m.mode != "MPOL_BIND" && m.mode != "MPOL_PREFERRED_MANY")
        return json::fail_at(
            p.field("flags"),
            "MPOL_F_NUMA_BALANCING is for MPOL_BIND and MPOL_PREFERRED_MANY, not " + m.mode);
    return {};
}

template <class Pred>
Status get_enum_list(yajl_val obj, const Path &p, const char *key, std::vector<std::string> &out,
                     Pred valid, const char *what) {
    OCI_CHECK(json::get_strings(obj, p, key, out));
    Path kp = p.field(key);
    for (size_t i = 0; i < out.size(); i++)
        if (!valid(out[i]))
            return json::fail_at(kp.at(i), std::string("unknown ") + what + " " + quoted(out[i]));
    return {};
}

Result<yajl_val> object_member(yajl_val obj, const Path &p, const char *key) {
    yajl_val v = json::member(obj, key);
    if (!v) return nullptr;
    return json::as_object(v, p.field(key));
}

Status parse_id_mappings(yajl_val obj, const Path &p, const char *key,
                         std::vector<IdMapping> &out) {
    json::reserve_for(obj, key, out);
    return json::each(obj, p, key, [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        IdMapping m;
        OCI_CHECK(json::get_uint(v, ip, "containerID", m.container_id, kU32, true));
        OCI_CHECK(json::get_uint(v, ip, "hostID", m.host_id, kU32, true));
        OCI_CHECK(json::get_uint(v, ip, "size", m.size, kU32, true));
        if (m.size == 0) return json::fail_at(ip.field("size"), "must be greater than 0");
        if (uint64_t(m.container_id) + m.size - 1 > kU32 || uint64_t(m.host_id) + m.size - 1 > kU32)
            return json::fail_at(ip.field("size"), "range overflows 32-bit ids");
        out.push_back(m);
        return {};
    });
}

Status parse_capabilities(yajl_val obj, const Path &p, Capabilities &c) {
    // Names this build does not know are kept (runtime-spec config.md
    // "capabilities": the runtime MUST log a warning and SHOULD NOT fail);
    // the runtime warns (capability_notes) and grants nothing for them.
    OCI_CHECK(json::get_strings(obj, p, "bounding", c.bounding));
    OCI_CHECK(json::get_strings(obj, p, "effective", c.effective));
    OCI_CHECK(json::get_strings(obj, p, "inheritable", c.inheritable));
    OCI_CHECK(json::get_strings(obj, p, "permitted", c.permitted));
    OCI_CHECK(json::get_strings(obj, p, "ambient", c.ambient));
    return {};
}

Status parse_process(yajl_val obj, const Path &p, Process &proc) {
    OCI_CHECK(json::get_bool(obj, p, "terminal", proc.terminal));
    if (yajl_val cs = OCI_TRY(object_member(obj, p, "consoleSize"))) {
        Path cp = p.field("consoleSize");
        Box b;
        OCI_CHECK(json::get_uint(cs, cp, "height", b.height, kU16, true));
        OCI_CHECK(json::get_uint(cs, cp, "width", b.width, kU16, true));
        proc.console_size = b;
    }
    if (yajl_val u = OCI_TRY(object_member(obj, p, "user"))) {
        Path up = p.field("user");
        OCI_CHECK(json::get_uint(u, up, "uid", proc.user.uid, kU32));
        OCI_CHECK(json::get_uint(u, up, "gid", proc.user.gid, kU32));
        OCI_CHECK(json::get_uint_opt(u, up, "umask", proc.user.umask, 0777));
        OCI_CHECK(
            json::each(u, up, "additionalGids", [&](yajl_val v, const Path &ip, size_t) -> Status {
                proc.user.additional_gids.push_back(
                    static_cast<uint32_t>(OCI_TRY(json::to_uint(v, ip, kU32))));
                return {};
            }));
        OCI_CHECK(json::get_string(u, up, "username", proc.user.username));
    }
    OCI_CHECK(json::get_strings(obj, p, "args", proc.args));
    OCI_CHECK(json::get_string(obj, p, "commandLine", proc.command_line));
    OCI_CHECK(json::get_strings(obj, p, "env", proc.env));
    {
        Path ep = p.field("env");
        for (size_t i = 0; i < proc.env.size(); i++)
            if (proc.env[i].find('=') == std::string::npos || proc.env[i][0] == '=')
                return json::fail_at(ep.at(i), "expected KEY=VALUE, got " + quoted(proc.env[i]));
    }
    OCI_CHECK(json::get_string(obj, p, "cwd", proc.cwd, true));
    if (yajl_val c = OCI_TRY(object_member(obj, p, "capabilities"))) {
        Capabilities caps;
        OCI_CHECK(parse_capabilities(c, p.field("capabilities"), caps));
        proc.capabilities = std::move(caps);
    }
    json::reserve_for(obj, "rlimits", proc.rlimits);
    OCI_CHECK(json::each(obj, p, "rlimits", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        Rlimit r;
        OCI_CHECK(json::get_string(v, ip, "type", r.type, true));
        auto res = rlimit_from_name(r.type);
        if (!res) return json::fail_at(ip.field("type"), "unknown rlimit " + quoted(r.type));
        r.resource = *res;
        OCI_CHECK(json::get_uint(v, ip, "hard", r.hard, kU64, true));
        OCI_CHECK(json::get_uint(v, ip, "soft", r.soft, kU64, true));
        if (r.soft > r.hard) return json::fail_at(ip.field("soft"), "is greater than hard");
        proc.rlimits.push_back(std::move(r));
        return {};
    }));
    OCI_CHECK(json::get_bool(obj, p, "noNewPrivileges", proc.no_new_privileges));
    OCI_CHECK(json::get_string(obj, p, "apparmorProfile", proc.apparmor_profile));
    OCI_CHECK(json::get_int_opt(obj, p, "oomScoreAdj", proc.oom_score_adj, -1000, 1000));
    if (yajl_val s = OCI_TRY(object_member(obj, p, "scheduler"))) {
        Path sp = p.field("scheduler");
        Scheduler sch;
        OCI_CHECK(
            get_enum(s, sp, "policy", sch.policy, is_scheduler_policy, "scheduler policy", true));
        OCI_CHECK(json::get_int(s, sp, "nice", sch.nice, -20, 19));
        OCI_CHECK(json::get_int(s, sp, "priority", sch.priority, 0, 99));
        OCI_CHECK(get_enum_list(s, sp, "flags", sch.flags, is_scheduler_flag, "scheduler flag"));
        OCI_CHECK(json::get_uint(s, sp, "runtime", sch.runtime, kU64));
        OCI_CHECK(json::get_uint(s, sp, "deadline", sch.deadline, kU64));
        OCI_CHECK(json::get_uint(s, sp, "period", sch.period, kU64));
        OCI_CHECK(check_scheduler(sch, sp));
        proc.scheduler = std::move(sch);
    }
    OCI_CHECK(json::get_string(obj, p, "selinuxLabel", proc.selinux_label));
    if (yajl_val io = OCI_TRY(object_member(obj, p, "ioPriority"))) {
        Path ip = p.field("ioPriority");
        IoPriority prio;
        OCI_CHECK(get_enum(io, ip, "class", prio.klass, is_io_priority_class, "I/O priority class",
                           true));
        OCI_CHECK(json::get_int(io, ip, "priority", prio.priority, 0, 7));
        proc.io_priority = std::move(prio);
    }
    if (yajl_val a = OCI_TRY(object_member(obj, p, "execCPUAffinity"))) {
        Path ap = p.field("execCPUAffinity");
        CpuAffinity aff;
        OCI_CHECK(json::get_string(a, ap, "initial", aff.initial));
        OCI_CHECK(json::get_string(a, ap, "final", aff.final));
        for (const char *key : {"initial", "final"}) {
            const std::string &list = std::string_view(key) == "initial" ? aff.initial : aff.final;
            if (auto cpus = parse_cpu_list(list); !cpus)
                return json::fail_at(ap.field(key), cpus.error().msg);
        }
        proc.exec_cpu_affinity = std::move(aff);
    }
    return {};
}

Status parse_mounts(yajl_val obj, const Path &p, std::vector<Mount> &out) {
    json::reserve_for(obj, "mounts", out);
    return json::each(obj, p, "mounts", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        Mount m;
        OCI_CHECK(json::get_string(v, ip, "destination", m.destination, true));
        if (m.destination.empty())
            return json::fail_at(ip.field("destination"), "must not be empty");
        // config.md: a relative destination (deprecated, for old tools) MUST
        // be read as relative to "/".
        if (m.destination[0] != '/') m.destination.insert(0, "/");
        OCI_CHECK(json::get_string(v, ip, "type", m.type));
        OCI_CHECK(json::get_string(v, ip, "source", m.source));
        OCI_CHECK(json::get_strings(v, ip, "options", m.options));
        OCI_CHECK(parse_id_mappings(v, ip, "uidMappings", m.uid_mappings));
        OCI_CHECK(parse_id_mappings(v, ip, "gidMappings", m.gid_mappings));
        out.push_back(std::move(m));
        return {};
    });
}

Status parse_hook_list(yajl_val obj, const Path &p, const char *key, std::vector<Hook> &out) {
    json::reserve_for(obj, key, out);
    return json::each(obj, p, key, [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        Hook h;
        OCI_CHECK(json::get_string(v, ip, "path", h.path, true));
        OCI_CHECK(json::get_strings(v, ip, "args", h.args));
        OCI_CHECK(json::get_strings(v, ip, "env", h.env));
        OCI_CHECK(json::get_int_opt(v, ip, "timeout", h.timeout, 1, kI32Max));
        out.push_back(std::move(h));
        return {};
    });
}

Status parse_hooks(yajl_val obj, const Path &p, Hooks &h) {
    OCI_CHECK(parse_hook_list(obj, p, "prestart", h.prestart));
    OCI_CHECK(parse_hook_list(obj, p, "createRuntime", h.create_runtime));
    OCI_CHECK(parse_hook_list(obj, p, "createContainer", h.create_container));
    OCI_CHECK(parse_hook_list(obj, p, "startContainer", h.start_container));
    OCI_CHECK(parse_hook_list(obj, p, "poststart", h.poststart));
    OCI_CHECK(parse_hook_list(obj, p, "poststop", h.poststop));
    return {};
}

bool valid_device_type(const std::string &t) {
    return t == "c" || t == "b" || t == "u" || t == "p";
}

Status parse_devices(yajl_val obj, const Path &p, std::vector<Device> &out) {
    json::reserve_for(obj, "devices", out);
    return json::each(obj, p, "devices", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        Device d;
        OCI_CHECK(json::get_string(v, ip, "path", d.path, true));
        OCI_CHECK(get_enum(v, ip, "type", d.type, valid_device_type, "device type", true));
        bool need_numbers = d.type != "p";
        OCI_CHECK(json::get_int(v, ip, "major", d.major, 0, 4095, need_numbers));
        OCI_CHECK(json::get_int(v, ip, "minor", d.minor, 0, 1048575, need_numbers));
        // Podman (as Go's os.FileMode) sends the file-type bits too
        // (S_IFCHR | 0666 = 8630), which runc accepts: only the permission
        // bits are kept; the type comes from `type`.
        OCI_CHECK(json::get_uint_opt(v, ip, "fileMode", d.file_mode, 0177777));
        if (d.file_mode) *d.file_mode &= 07777;
        OCI_CHECK(json::get_uint_opt(v, ip, "uid", d.uid, kU32));
        OCI_CHECK(json::get_uint_opt(v, ip, "gid", d.gid, kU32));
        out.push_back(std::move(d));
        return {};
    });
}

Status parse_memory(yajl_val m, const Path &p, Memory &mem) {
    OCI_CHECK(json::get_int_opt(m, p, "limit", mem.limit, -1, kI64Max));
    OCI_CHECK(json::get_int_opt(m, p, "reservation", mem.reservation, -1, kI64Max));
    OCI_CHECK(json::get_int_opt(m, p, "swap", mem.swap, -1, kI64Max));
    OCI_CHECK(json::get_int_opt(m, p, "kernel", mem.kernel, -1, kI64Max));
    OCI_CHECK(json::get_int_opt(m, p, "kernelTCP", mem.kernel_tcp, -1, kI64Max));
    OCI_CHECK(json::get_uint_opt(m, p, "swappiness", mem.swappiness, 100));
    OCI_CHECK(json::get_bool_opt(m, p, "disableOOMKiller", mem.disable_oom_killer));
    OCI_CHECK(json::get_bool_opt(m, p, "useHierarchy", mem.use_hierarchy));
    OCI_CHECK(json::get_bool_opt(m, p, "checkBeforeUpdate", mem.check_before_update));
    return {};
}

Status parse_cpu(yajl_val c, const Path &p, Cpu &cpu) {
    OCI_CHECK(json::get_uint_opt(c, p, "shares", cpu.shares, kU64));
    OCI_CHECK(json::get_int_opt(c, p, "quota", cpu.quota, -1, kI64Max));
    OCI_CHECK(json::get_uint_opt(c, p, "burst", cpu.burst, kU64));
    OCI_CHECK(json::get_uint_opt(c, p, "period", cpu.period, kU64));
    OCI_CHECK(json::get_int_opt(c, p, "realtimeRuntime", cpu.realtime_runtime, kI64Min, kI64Max));
    OCI_CHECK(json::get_uint_opt(c, p, "realtimePeriod", cpu.realtime_period, kU64));
    OCI_CHECK(json::get_string(c, p, "cpus", cpu.cpus));
    OCI_CHECK(json::get_string(c, p, "mems", cpu.mems));
    OCI_CHECK(json::get_int_opt(c, p, "idle", cpu.idle, kI64Min, kI64Max));
    return {};
}

Status parse_throttle(yajl_val obj, const Path &p, const char *key,
                      std::vector<ThrottleDevice> &out) {
    json::reserve_for(obj, key, out);
    return json::each(obj, p, key, [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        ThrottleDevice t;
        OCI_CHECK(json::get_int(v, ip, "major", t.major, 0, kI64Max, true));
        OCI_CHECK(json::get_int(v, ip, "minor", t.minor, 0, kI64Max, true));
        OCI_CHECK(json::get_uint(v, ip, "rate", t.rate, kU64, true));
        out.push_back(t);
        return {};
    });
}

Status parse_block_io(yajl_val b, const Path &p, BlockIo &bio) {
    OCI_CHECK(json::get_uint_opt(b, p, "weight", bio.weight, kU16));
    OCI_CHECK(json::get_uint_opt(b, p, "leafWeight", bio.leaf_weight, kU16));
    OCI_CHECK(json::each(b, p, "weightDevice", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        WeightDevice w;
        OCI_CHECK(json::get_int(v, ip, "major", w.major, 0, kI64Max, true));
        OCI_CHECK(json::get_int(v, ip, "minor", w.minor, 0, kI64Max, true));
        OCI_CHECK(json::get_uint_opt(v, ip, "weight", w.weight, kU16));
        OCI_CHECK(json::get_uint_opt(v, ip, "leafWeight", w.leaf_weight, kU16));
        bio.weight_device.push_back(w);
        return {};
    }));
    OCI_CHECK(parse_throttle(b, p, "throttleReadBpsDevice", bio.throttle_read_bps));
    OCI_CHECK(parse_throttle(b, p, "throttleWriteBpsDevice", bio.throttle_write_bps));
    OCI_CHECK(parse_throttle(b, p, "throttleReadIOPSDevice", bio.throttle_read_iops));
    OCI_CHECK(parse_throttle(b, p, "throttleWriteIOPSDevice", bio.throttle_write_iops));
    return {};
}

bool valid_access(const std::string &a) {
    return a.find_first_not_of("rwm") == std::string::npos;
}
bool valid_rule_type(const std::string &t) {
    return t == "a" || t == "b" || t == "c";
}

Status parse_resources(yajl_val r, const Path &p, Resources &res) {
    json::reserve_for(r, "devices", res.devices);
    OCI_CHECK(json::each(r, p, "devices", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        DeviceRule d;
        if (!json::member(v, "allow"))
            return json::fail_at(ip.field("allow"), "required field is missing");
        OCI_CHECK(json::get_bool(v, ip, "allow", d.allow));
        OCI_CHECK(get_enum(v, ip, "type", d.type, valid_rule_type, "device type", false));
        OCI_CHECK(json::get_int_opt(v, ip, "major", d.major, -1, kI64Max));
        OCI_CHECK(json::get_int_opt(v, ip, "minor", d.minor, -1, kI64Max));
        OCI_CHECK(json::get_string(v, ip, "access", d.access));
        if (!valid_access(d.access))
            return json::fail_at(ip.field("access"),
                                 "must be a combination of r, w, m, got " + quoted(d.access));
        res.devices.push_back(std::move(d));
        return {};
    }));
    if (yajl_val m = OCI_TRY(object_member(r, p, "memory")))
        OCI_CHECK(parse_memory(m, p.field("memory"), res.memory.emplace()));
    if (yajl_val c = OCI_TRY(object_member(r, p, "cpu")))
        OCI_CHECK(parse_cpu(c, p.field("cpu"), res.cpu.emplace()));
    if (yajl_val pi = OCI_TRY(object_member(r, p, "pids"))) {
        Pids pids;
        OCI_CHECK(json::get_int_opt(pi, p.field("pids"), "limit", pids.limit, kI64Min, kI64Max));
        res.pids = pids;
    }
    if (yajl_val b = OCI_TRY(object_member(r, p, "blockIO")))
        OCI_CHECK(parse_block_io(b, p.field("blockIO"), res.block_io.emplace()));
    OCI_CHECK(json::each(r, p, "hugepageLimits", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        HugepageLimit h;
        OCI_CHECK(json::get_string(v, ip, "pageSize", h.page_size, true));
        OCI_CHECK(json::get_uint(v, ip, "limit", h.limit, kU64, true));
        res.hugepage_limits.push_back(std::move(h));
        return {};
    }));
    if (yajl_val n = OCI_TRY(object_member(r, p, "network"))) {
        Path np = p.field("network");
        Network net;
        OCI_CHECK(json::get_uint_opt(n, np, "classID", net.class_id, kU32));
        OCI_CHECK(
            json::each(n, np, "priorities", [&](yajl_val v, const Path &ip, size_t) -> Status {
                OCI_CHECK(json::as_object(v, ip));
                InterfacePriority ipr;
                OCI_CHECK(json::get_string(v, ip, "name", ipr.name, true));
                OCI_CHECK(json::get_uint(v, ip, "priority", ipr.priority, kU32, true));
                net.priorities.push_back(std::move(ipr));
                return {};
            }));
        res.network = std::move(net);
    }
    OCI_CHECK(
        json::each_member(r, p, "rdma", [&](const char *k, yajl_val v, const Path &mp) -> Status {
            OCI_CHECK(json::as_object(v, mp));
            Rdma rd;
            OCI_CHECK(json::get_uint_opt(v, mp, "hcaHandles", rd.hca_handles, kU32));
            OCI_CHECK(json::get_uint_opt(v, mp, "hcaObjects", rd.hca_objects, kU32));
            res.rdma[k] = rd;
            return {};
        }));
    OCI_CHECK(json::get_string_map(r, p, "unified", res.unified));
    return {};
}

Status parse_seccomp(yajl_val s, const Path &p, Seccomp &sc) {
    OCI_CHECK(get_enum(s, p, "defaultAction", sc.default_action, is_seccomp_action,
                       "seccomp action", true));
    OCI_CHECK(json::get_uint_opt(s, p, "defaultErrnoRet", sc.default_errno_ret, 4095));
    OCI_CHECK(get_enum_list(s, p, "architectures", sc.architectures, is_seccomp_arch,
                            "seccomp architecture"));
    OCI_CHECK(get_enum_list(s, p, "flags", sc.flags, is_seccomp_flag, "seccomp flag"));
    OCI_CHECK(json::get_string(s, p, "listenerPath", sc.listener_path));
    OCI_CHECK(json::get_string(s, p, "listenerMetadata", sc.listener_metadata));
    json::reserve_for(s, "syscalls", sc.syscalls);
    OCI_CHECK(json::each(s, p, "syscalls", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        Syscall sys;
        OCI_CHECK(json::get_strings(v, ip, "names", sys.names, true));
        if (sys.names.empty()) return json::fail_at(ip.field("names"), "must not be empty");
        OCI_CHECK(get_enum(v, ip, "action", sys.action, is_seccomp_action, "seccomp action", true));
        OCI_CHECK(json::get_uint_opt(v, ip, "errnoRet", sys.errno_ret, 4095));
        if (yajl_val inc = json::member(v, "includes"); inc && !YAJL_IS_NULL(inc)) {
            OCI_CHECK(json::as_object(inc, ip.field("includes")));
            OCI_CHECK(get_enum_list(
                inc, ip.field("includes"), "caps", sys.includes_caps,
                [](std::string_view c) { return capability_from_name(c).has_value(); },
                "capability"));
        }
        OCI_CHECK(json::each(v, ip, "args", [&](yajl_val a, const Path &ap, size_t) -> Status {
            OCI_CHECK(json::as_object(a, ap));
            SeccompArg arg;
            OCI_CHECK(json::get_uint(a, ap, "index", arg.index, 5, true));
            OCI_CHECK(json::get_uint(a, ap, "value", arg.value, kU64, true));
            OCI_CHECK(json::get_uint(a, ap, "valueTwo", arg.value_two, kU64));
            OCI_CHECK(get_enum(a, ap, "op", arg.op, is_seccomp_operator, "seccomp operator", true));
            sys.args.push_back(std::move(arg));
            return {};
        }));
        sc.syscalls.push_back(std::move(sys));
        return {};
    }));
    return {};
}

Status parse_linux(yajl_val l, const Path &p, Linux &lx) {
    json::reserve_for(l, "namespaces", lx.namespaces);
    OCI_CHECK(json::each(l, p, "namespaces", [&](yajl_val v, const Path &ip, size_t) -> Status {
        OCI_CHECK(json::as_object(v, ip));
        std::string type;
        OCI_CHECK(json::get_string(v, ip, "type", type, true));
        auto t = ns_type_from_name(type);
        if (!t) return json::fail_at(ip.field("type"), "unknown namespace " + quoted(type));
        Namespace ns{*t, {}};
        OCI_CHECK(json::get_string(v, ip, "path", ns.path));
        lx.namespaces.push_back(std::move(ns));
        return {};
    }));
    OCI_CHECK(parse_id_mappings(l, p, "uidMappings", lx.uid_mappings));
    OCI_CHECK(parse_id_mappings(l, p, "gidMappings", lx.gid_mappings));
    OCI_CHECK(json::each_member(
        l, p, "timeOffsets", [&](const char *k, yajl_val v, const Path &mp) -> Status {
            std::string clock = k;
            if (clock != "monotonic" && clock != "boottime")
                return json::fail_at(mp, "unknown clock " + quoted(clock) +
                                             " (expected monotonic or boottime)");
            OCI_CHECK(json::as_object(v, mp));
            TimeOffset off;
            OCI_CHECK(json::get_int(v, mp, "secs", off.secs, kI64Min, kI64Max));
            OCI_CHECK(json::get_uint(v, mp, "nanosecs", off.nanosecs, 999999999));
            lx.time_offsets[clock] = off;
            return {};
        }));
    OCI_CHECK(parse_devices(l, p, lx.devices));
    OCI_CHECK(json::get_string(l, p, "cgroupsPath", lx.cgroups_path));
    if (yajl_val r = OCI_TRY(object_member(l, p, "resources")))
        OCI_CHECK(parse_resources(r, p.field("resources"), lx.resources.emplace()));
    if (yajl_val r = OCI_TRY(object_member(l, p, "intelRdt"))) {
        Path rp = p.field("intelRdt");
        IntelRdt rdt;
        OCI_CHECK(json::get_string(r, rp, "closID", rdt.clos_id));
        OCI_CHECK(json::get_string(r, rp, "l3CacheSchema", rdt.l3_cache_schema));
        OCI_CHECK(json::get_string(r, rp, "memBwSchema", rdt.mem_bw_schema));
        OCI_CHECK(json::get_strings(r, rp, "schemata", rdt.schemata));
        // runtime-spec 1.3: one line each, memBwSchema an "MB:" line.
        if (rdt.mem_bw_schema.find('\n') != std::string::npos ||
            (!rdt.mem_bw_schema.empty() && !rdt.mem_bw_schema.starts_with("MB:")))
            return json::fail_at(rp.field("memBwSchema"), "must be one line starting with MB:");
        if (rdt.l3_cache_schema.find('\n') != std::string::npos)
            return json::fail_at(rp.field("l3CacheSchema"), "must be one line");
        Path sp = rp.field("schemata");
        for (size_t i = 0; i < rdt.schemata.size(); i++)
            if (rdt.schemata[i].find('\n') != std::string::npos)
                return json::fail_at(sp.at(i), "must be one line");
        OCI_CHECK(json::get_bool(r, rp, "enableCMT", rdt.enable_cmt));
        OCI_CHECK(json::get_bool(r, rp, "enableMBM", rdt.enable_mbm));
        OCI_CHECK(json::get_bool(r, rp, "enableMonitoring", rdt.enable_monitoring));
        lx.intel_rdt = std::move(rdt);
    }
    OCI_CHECK(json::get_string_map(l, p, "sysctl", lx.sysctl));
    if (yajl_val s = OCI_TRY(object_member(l, p, "seccomp")))
        OCI_CHECK(parse_seccomp(s, p.field("seccomp"), lx.seccomp.emplace()));
    OCI_CHECK(get_enum(l, p, "rootfsPropagation", lx.rootfs_propagation, is_rootfs_propagation,
                       "rootfs propagation", false));
    OCI_CHECK(json::get_strings(l, p, "maskedPaths", lx.masked_paths));
    OCI_CHECK(json::get_strings(l, p, "readonlyPaths", lx.readonly_paths));
    OCI_CHECK(json::get_string(l, p, "mountLabel", lx.mount_label));
    if (yajl_val mp = OCI_TRY(object_member(l, p, "memoryPolicy"))) {
        Path pp = p.field("memoryPolicy");
        MemoryPolicy mem;
        OCI_CHECK(
            get_enum(mp, pp, "mode", mem.mode, is_memory_policy_mode, "memory policy mode", true));
        OCI_CHECK(json::get_string(mp, pp, "nodes", mem.nodes));
        OCI_CHECK(
            get_enum_list(mp, pp, "flags", mem.flags, is_memory_policy_flag, "memory policy flag"));
        OCI_CHECK(check_memory_policy(mem, pp));
        lx.memory_policy = std::move(mem);
    }
    if (yajl_val per = OCI_TRY(object_member(l, p, "personality"))) {
        Path pp = p.field("personality");
        Personality pers;
        OCI_CHECK(get_enum(per, pp, "domain", pers.domain, is_personality_domain,
                           "personality domain", true));
        OCI_CHECK(
            get_enum_list(per, pp, "flags", pers.flags, is_personality_flag, "personality flag"));
        lx.personality = std::move(pers);
    }
    OCI_CHECK(json::each_member(l, p, "netDevices",
                                [&](const char *k, yajl_val v, const Path &mp) -> Status {
                                    OCI_CHECK(json::as_object(v, mp));
                                    NetDevice nd;
                                    OCI_CHECK(json::get_string(v, mp, "name", nd.name));
                                    lx.net_devices[k] = std::move(nd);
                                    return {};
                                }));
    return {};
}

Result<Spec> spec_from(const json::Document &doc) {
    Path root;
    yajl_val top = doc.root();
    if (!YAJL_IS_OBJECT(top)) return fail("expected a JSON object at the top level");
    Spec spec;
    OCI_CHECK(json::get_string(top, root, "ociVersion", spec.oci_version, true));
    if (yajl_val pr = OCI_TRY(object_member(top, root, "process")))
        OCI_CHECK(parse_process(pr, root.field("process"), spec.process.emplace()));
    if (yajl_val r = OCI_TRY(object_member(top, root, "root"))) {
        Root rt;
        OCI_CHECK(json::get_string(r, root.field("root"), "path", rt.path, true));
        OCI_CHECK(json::get_bool(r, root.field("root"), "readonly", rt.readonly));
        spec.root = std::move(rt);
    }
    OCI_CHECK(json::get_string(top, root, "hostname", spec.hostname));
    OCI_CHECK(json::get_string(top, root, "domainname", spec.domainname));
    OCI_CHECK(parse_mounts(top, root, spec.mounts));
    if (yajl_val h = OCI_TRY(object_member(top, root, "hooks")))
        OCI_CHECK(parse_hooks(h, root.field("hooks"), spec.hooks.emplace()));
    OCI_CHECK(json::get_string_map(top, root, "annotations", spec.annotations));
    if (yajl_val l = OCI_TRY(object_member(top, root, "linux")))
        OCI_CHECK(parse_linux(l, root.field("linux"), spec.linux_.emplace()));
    if (spec.linux_ && spec.linux_->resources)
        normalise_pids_limit(*spec.linux_->resources, spec.oci_version);
    return spec;
}

} // namespace

Result<Spec> parse_spec(std::string_view text) {
    return spec_from(OCI_TRY(json::Document::parse(text)));
}

Result<Spec> parse_spec(const std::string &text) {
    return spec_from(OCI_TRY(json::Document::parse(text)));
}

} // namespace ocirun::oci

namespace ocirun::oci {

Result<Resources> parse_resources(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    if (!YAJL_IS_OBJECT(doc.root())) return fail("expected a JSON object at the top level");
    Resources r;
    OCI_CHECK(parse_resources(doc.root(), Path{}, r));
    return r;
}

Result<Process> parse_process(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    if (!YAJL_IS_OBJECT(doc.root())) return fail("expected a JSON object at the top level");
    Process p;
    OCI_CHECK(parse_process(doc.root(), Path{}, p));
    if (p.args.empty()) return fail("args: must contain at least the program to run");
    if (p.cwd.empty() || p.cwd[0] != '/')
        return fail("cwd: must be an absolute path, got \"" + p.cwd + "\"");
    return p;
}

std::vector<unsigned long> bit_mask(const std::vector<unsigned> &bits) {
    constexpr unsigned kBits = sizeof(unsigned long) * 8;
    std::vector<unsigned long> words;
    for (unsigned b : bits) {
        if (words.size() <= b / kBits) words.resize(b / kBits + 1);
        words[b / kBits] |= 1ul << (b % kBits);
    }
    return words;
}

Result<std::vector<unsigned>> parse_cpu_list(std::string_view list, EmptyItems empty) {
    std::vector<unsigned> cpus;
    auto bad = [&] {
        return fail("\"" + std::string(list) + "\" is not a list of CPUs (\"0-3,7\")");
    };
    auto number = [](std::string_view t, unsigned &out) {
        if (t.empty() || t.size() > 5) return false;
        unsigned v = 0;
        for (char c : t) {
            if (c < '0' || c > '9') return false;
            v = v * 10 + unsigned(c - '0');
        }
        out = v;
        return v < kMaxCpus;
    };
    size_t at = 0;
    while (at < list.size()) {
        size_t comma = list.find(',', at);
        std::string_view item =
            list.substr(at, comma == std::string_view::npos ? list.npos : comma - at);
        if (item.empty() && empty == EmptyItems::skip) {
            if (comma == std::string_view::npos) break;
            at = comma + 1;
            continue;
        }
        size_t dash = item.find('-');
        unsigned lo = 0, hi = 0;
        if (!number(item.substr(0, dash), lo)) return bad();
        hi = lo;
        if (dash != std::string_view::npos && !number(item.substr(dash + 1), hi)) return bad();
        if (hi < lo) return bad();
        for (unsigned c = lo; c <= hi; c++)
            cpus.push_back(c);
        if (comma == std::string_view::npos) break;
        at = comma + 1;
        if (at == list.size() && empty == EmptyItems::refuse) return bad();
    }
    return cpus;
}

bool version_at_least(std::string_view version, unsigned major, unsigned minor) {
    unsigned v[2] = {0, 0};
    size_t at = 0;
    for (unsigned &part : v) {
        size_t digits = 0;
        while (at < version.size() && version[at] >= '0' && version[at] <= '9' && digits < 6) {
            part = part * 10 + unsigned(version[at++] - '0');
            digits++;
        }
        if (at < version.size() && version[at] == '.')
            at++;
        else
            break;
    }
    return v[0] != major ? v[0] > major : v[1] >= minor;
}

void normalise_pids_limit(Resources &r, std::string_view oci_version) {
    // Before 1.3 the spec said a limit of 0 (or less) meant no limit, and
    // clients still write 0 for that (Podman 4's --pids-limit -1); 1.3 made
    // 0 a real limit.
    if (r.pids && r.pids->limit == 0 && !version_at_least(oci_version, 1, 3)) r.pids->limit = -1;
}

} // namespace ocirun::oci
