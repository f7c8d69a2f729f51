// write_spec <-> parse_spec: the default configs and a config that sets every
// field of spec.hpp survive a round trip, byte for byte and value for value.
#include "oci/spec_io.hpp"

#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <sys/resource.h>
#include <yajl/yajl_tree.h>

#include <cstdint>
#include <map>
#include <string>

using namespace ocirun::oci;
using namespace unit;

namespace {

Spec parse_ok(const std::string &json) {
    auto r = parse_spec(json);
    cr_assert(r.has_value(), "parse_spec failed: %s\non:\n%s", r ? "" : r.error().text().c_str(),
              json.c_str());
    return std::move(*r);
}

void validate_ok(const Spec &s) {
    auto v = validate_spec(s);
    cr_assert(v.has_value(), "validate_spec failed: %s", v ? "" : v.error().text().c_str());
}

// Flatten a JSON document to path -> typed leaf, so that two documents can be
// compared for meaning regardless of member order and whitespace.
void flatten(yajl_val v, const std::string &path, std::map<std::string, std::string> &out) {
    if (YAJL_IS_OBJECT(v)) {
        if (v->u.object.len == 0) out[path] = "{}";
        for (size_t i = 0; i < v->u.object.len; i++)
            flatten(v->u.object.values[i], path + "." + v->u.object.keys[i], out);
    } else if (YAJL_IS_ARRAY(v)) {
        if (v->u.array.len == 0) out[path] = "[]";
        for (size_t i = 0; i < v->u.array.len; i++)
            flatten(v->u.array.values[i], path + "[" + std::to_string(i) + "]", out);
    } else if (YAJL_IS_STRING(v)) {
        out[path] = std::string("s:") + v->u.string;
    } else if (YAJL_IS_NUMBER(v)) {
        out[path] = std::string("n:") + v->u.number.r;
    } else if (YAJL_IS_TRUE(v)) {
        out[path] = "true";
    } else if (YAJL_IS_FALSE(v)) {
        out[path] = "false";
    } else {
        out[path] = "null";
    }
}

std::map<std::string, std::string> flat(const std::string &json) {
    char err[256] = {0};
    yajl_val v = yajl_tree_parse(json.c_str(), err, sizeof err);
    cr_assert(v != nullptr, "yajl: %s", err);
    std::map<std::string, std::string> out;
    flatten(v, "", out);
    yajl_tree_free(v);
    return out;
}

// Every leaf of `want` is in `got` with the same value, and vice versa.
void expect_same_json(const std::string &got, const std::string &want) {
    auto g = flat(got), w = flat(want);
    for (const auto &[k, v] : w) {
        auto it = g.find(k);
        cr_assert(it != g.end(), "%s (= %s) was dropped", k.c_str(), v.c_str());
        cr_assert_str_eq(it->second.c_str(), v.c_str(), "%s differs", k.c_str());
    }
    for (const auto &[k, v] : g)
        cr_assert(w.count(k), "%s (= %s) was added", k.c_str(), v.c_str());
}

// A config that sets every field of spec.hpp to a non-default value (so the
// writer, which omits defaults, must write every one of them back). Member
// order deliberately differs from the writer's.
const char *kRich = R"JSON({
  "linux": {
    "personality": {"domain": "LINUX32"},
    "memoryPolicy": {"mode": "MPOL_INTERLEAVE", "nodes": "2-3", "flags": ["MPOL_F_STATIC_NODES"]},
    "netDevices": {"eth1": {"name": "ceth1"}, "eth2": {"name": "ceth2"}},
    "namespaces": [
      {"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"},
      {"type": "mount"}, {"type": "cgroup"}, {"type": "user"}, {"type": "time"}
    ],
    "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
    "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 65536},
                    {"containerID": 70000, "hostID": 300000, "size": 10}],
    "timeOffsets": {"monotonic": {"secs": -3600, "nanosecs": 999999999},
                    "boottime": {"secs": 86400, "nanosecs": 1}},
    "devices": [
      {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438, "uid": 0, "gid": 5},
      {"path": "/dev/sda", "type": "b", "major": 8, "minor": 1048575, "fileMode": 4095, "uid": 7, "gid": 4294967295}
    ],
    "cgroupsPath": "/oci-run/rich",
    "resources": {
      "devices": [
        {"allow": false, "access": "rwm"},
        {"allow": true, "type": "c", "major": 1, "minor": -1, "access": "rw"},
        {"allow": true, "type": "a", "major": -1, "minor": 3, "access": "m"}
      ],
      "memory": {"limit": 536870912, "reservation": 268435456, "swap": -1, "kernel": 1048576,
                 "kernelTCP": 2097152, "swappiness": 100, "disableOOMKiller": true,
                 "useHierarchy": false, "checkBeforeUpdate": true},
      "cpu": {"shares": 1024, "quota": 50000, "burst": 10000, "period": 100000,
              "realtimeRuntime": -9223372036854775808, "realtimePeriod": 1000000,
              "cpus": "0-3,7", "mems": "0", "idle": 1},
      "pids": {"limit": -1},
      "blockIO": {
        "weight": 500, "leafWeight": 65535,
        "weightDevice": [{"major": 8, "minor": 0, "weight": 100, "leafWeight": 200},
                         {"major": 8, "minor": 16, "weight": 10}],
        "throttleReadBpsDevice": [{"major": 8, "minor": 0, "rate": 18446744073709551615}],
        "throttleWriteBpsDevice": [{"major": 8, "minor": 1, "rate": 2000}],
        "throttleReadIOPSDevice": [{"major": 8, "minor": 2, "rate": 300}],
        "throttleWriteIOPSDevice": [{"major": 8, "minor": 3, "rate": 400}]
      },
      "hugepageLimits": [{"pageSize": "2MB", "limit": 209715200}, {"pageSize": "1GB", "limit": 0}],
      "network": {"classID": 1048577, "priorities": [{"name": "eth0", "priority": 500},
                                                     {"name": "eth1", "priority": 1000}]},
      "rdma": {"mlx5_1": {"hcaHandles": 3, "hcaObjects": 10000}, "mlx4_0": {"hcaHandles": 1}},
      "unified": {"memory.high": "max", "io.weight": "default 100"}
    },
    "intelRdt": {"closID": "guaranteed", "l3CacheSchema": "L3:0=7f0;1=1f",
                 "memBwSchema": "MB:0=20;1=70", "schemata": ["L2:0=ff", "L2:1=0f"],
                 "enableCMT": true, "enableMBM": true, "enableMonitoring": true},
    "sysctl": {"net.ipv4.ip_forward": "1", "kernel.shmmax": "4294967296", "fs.mqueue.msg_max": "100"},
    "seccomp": {
      "defaultAction": "SCMP_ACT_ERRNO",
      "defaultErrnoRet": 38,
      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      "flags": ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"],
      "listenerPath": "/run/seccomp-agent.sock",
      "listenerMetadata": "meta=1",
      "syscalls": [
        {"names": ["read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 4294967295, "valueTwo": 18446744073709551615, "op": "SCMP_CMP_MASKED_EQ"},
                  {"index": 5, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
        {"names": ["ptrace"], "action": "SCMP_ACT_NOTIFY"}
      ]
    },
    "rootfsPropagation": "rslave",
    "maskedPaths": ["/proc/kcore", "/sys/firmware"],
    "readonlyPaths": ["/proc/sys", "/proc/sysrq-trigger"],
    "mountLabel": "system_u:object_r:container_file_t:s0:c1,c2"
  },
  "annotations": {"org.example.key": "value", "com.example.quote": "a \"quoted\" \\ value\n"},
  "hooks": {
    "poststop": [{"path": "/usr/bin/cleanup", "args": ["cleanup", "-v"], "env": ["A=1"], "timeout": 60}],
    "prestart": [{"path": "/usr/bin/net-setup", "args": ["net-setup"], "env": ["X=y", "Z=w"], "timeout": 5}],
    "createRuntime": [{"path": "/bin/cr", "timeout": 1}, {"path": "/bin/cr2", "args": ["cr2"]}],
    "createContainer": [{"path": "/bin/cc", "timeout": 2147483647}],
    "startContainer": [{"path": "/bin/sc", "env": ["PATH=/bin"], "timeout": 3}],
    "poststart": [{"path": "/bin/ps", "args": ["ps", "--notify"], "timeout": 4}]
  },
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/data", "type": "none", "source": "/srv/data", "options": ["rbind", "ro", "idmap"],
     "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 1000}],
     "gidMappings": [{"containerID": 0, "hostID": 200000, "size": 1000}]},
    {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "size=64m"]}
  ],
  "domainname": "example.org",
  "hostname": "rich",
  "root": {"readonly": true, "path": "/var/lib/rootfs"},
  "process": {
    "execCPUAffinity": {"initial": "0-1", "final": "2-3"},
    "ioPriority": {"class": "IOPRIO_CLASS_RT", "priority": 3},
    "selinuxLabel": "system_u:system_r:container_t:s0:c1,c2",
    "scheduler": {"policy": "SCHED_DEADLINE", "nice": -5,
                  "flags": ["SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM"],
                  "runtime": 10000000, "deadline": 20000000, "period": 30000000},
    "oomScoreAdj": -999,
    "apparmorProfile": "oci-run-default",
    "noNewPrivileges": true,
    "rlimits": [
      {"type": "RLIMIT_NOFILE", "hard": 4096, "soft": 1024},
      {"type": "RLIMIT_CORE", "hard": 18446744073709551615, "soft": 18446744073709551615},
      {"type": "RLIMIT_RTTIME", "hard": 100, "soft": 1}
    ],
    "capabilities": {
      "bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_CHECKPOINT_RESTORE"],
      "effective": ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "inheritable": ["CAP_NET_BIND_SERVICE", "CAP_KILL"],
      "permitted": ["CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_CHOWN"],
      "ambient": ["CAP_NET_BIND_SERVICE"]
    },
    "cwd": "/home/app",
    "env": ["PATH=/usr/bin:/bin", "EMPTY=", "EQ=a=b"],
    "commandLine": "app.exe --flag",
    "args": ["/usr/bin/app", "--flag", "with space", ""],
    "user": {"uid": 1000, "gid": 1001, "umask": 18, "additionalGids": [5, 27, 4294967295],
             "username": "alice"},
    "consoleSize": {"height": 50, "width": 65535},
    "terminal": true
  },
  "ociVersion": "1.2.1"
})JSON";

} // namespace

// ---------------------------------------------------------------------------
// default_spec

Test(spec_roundtrip, default_spec_parses_and_validates) {
    std::string text = write_spec(default_spec(false, 0, 0));
    Spec s = parse_ok(text);
    validate_ok(s);
    cr_assert_str_eq(s.oci_version.c_str(), kSpecVersion);
    cr_assert_eq(s.process->args.size(), 1u);
    cr_assert_str_eq(s.process->args[0].c_str(), "sh");
    cr_assert_str_eq(s.process->cwd.c_str(), "/");
    cr_assert(s.process->terminal);
    cr_assert(s.process->no_new_privileges);
    cr_assert_eq(s.process->rlimits.size(), 1u);
    cr_assert_str_eq(s.process->rlimits[0].type.c_str(), "RLIMIT_NOFILE");
    cr_assert_eq(s.process->rlimits[0].hard, 1024u);
    cr_assert(s.process->capabilities->inheritable.empty());
    cr_assert(s.process->capabilities->ambient.empty());
    cr_assert(s.root->readonly);
    cr_assert_eq(s.mounts.size(), 7u);
}

Test(spec_roundtrip, default_spec_rootless_parses_and_validates) {
    Spec s = parse_ok(write_spec(default_spec(true, 1000, 1000)));
    validate_ok(s);
}

Test(spec_roundtrip, default_spec_write_parse_write_identical) {
    std::string a = write_spec(default_spec(false, 0, 0));
    std::string b = write_spec(parse_ok(a));
    expect_eq(b, a);
}

Test(spec_roundtrip, default_spec_rootless_write_parse_write_identical) {
    std::string a = write_spec(default_spec(true, 1000, 1000));
    std::string b = write_spec(parse_ok(a));
    expect_eq(b, a);
}

Test(spec_roundtrip, default_spec_namespaces_and_resources) {
    Spec s = parse_ok(write_spec(default_spec(false, 0, 0)));
    const Linux &lx = *s.linux_;
    cr_assert_eq(lx.namespaces.size(), 6u);
    for (NsType t :
         {NsType::pid, NsType::network, NsType::ipc, NsType::uts, NsType::mount, NsType::cgroup})
        cr_assert(lx.find_namespace(t) != nullptr, "missing %s namespace", ns_type_name(t));
    cr_assert(lx.find_namespace(NsType::user) == nullptr);
    cr_assert(lx.uid_mappings.empty());
    cr_assert(lx.resources.has_value());
    cr_assert_eq(lx.resources->devices.size(), 1u);
    cr_assert(!lx.resources->devices[0].allow);
    cr_assert_str_eq(lx.resources->devices[0].access.c_str(), "rwm");
    cr_assert(!lx.masked_paths.empty());
    cr_assert(!lx.readonly_paths.empty());
    // The non-rootless devpts mount keeps gid=5.
    bool found = false;
    for (const auto &m : s.mounts)
        if (m.destination == "/dev/pts")
            for (const auto &o : m.options)
                found = found || o == "gid=5";
    cr_assert(found, "gid=5 missing from /dev/pts");
}

Test(spec_roundtrip, default_spec_rootless_shape) {
    Spec s = parse_ok(write_spec(default_spec(true, 1234, 4321)));
    const Linux &lx = *s.linux_;
    cr_assert(lx.find_namespace(NsType::user) != nullptr, "no user namespace");
    cr_assert(lx.find_namespace(NsType::network) == nullptr, "rootless has a network namespace");
    cr_assert(lx.find_namespace(NsType::pid) != nullptr);
    cr_assert(lx.find_namespace(NsType::mount) != nullptr);
    cr_assert_eq(lx.uid_mappings.size(), 1u);
    cr_assert_eq(lx.uid_mappings[0].container_id, 0u);
    cr_assert_eq(lx.uid_mappings[0].host_id, 1234u);
    cr_assert_eq(lx.uid_mappings[0].size, 1u);
    cr_assert_eq(lx.gid_mappings.size(), 1u);
    cr_assert_eq(lx.gid_mappings[0].host_id, 4321u);
    cr_assert(!lx.resources.has_value(), "rootless sets cgroup resources");
    for (const auto &m : s.mounts)
        for (const auto &o : m.options)
            cr_assert(o.rfind("gid=", 0) != 0, "mount %s has %s", m.destination.c_str(), o.c_str());
}

Test(spec_roundtrip, default_spec_rootless_sys_is_bind) {
    Spec s = parse_ok(write_spec(default_spec(true, 1000, 1000)));
    const Mount *sys = nullptr;
    for (const auto &m : s.mounts)
        if (m.destination == "/sys") sys = &m;
    cr_assert(sys != nullptr, "no /sys mount");
    cr_assert(sys->type != "sysfs", "/sys is still sysfs");
    cr_assert_str_eq(sys->source.c_str(), "/sys");
    bool bind = false, ro = false;
    for (const auto &o : sys->options) {
        bind = bind || o == "bind" || o == "rbind";
        ro = ro || o == "ro";
    }
    cr_assert(bind, "/sys is not a bind mount");
    cr_assert(ro, "/sys bind is not read-only");
}

// ---------------------------------------------------------------------------
// The rich config.

Test(spec_roundtrip, rich_parses_and_validates) {
    Spec s = parse_ok(kRich);
    validate_ok(s);
}

Test(spec_roundtrip, rich_write_is_stable) {
    std::string once = write_spec(parse_ok(kRich));
    std::string twice = write_spec(parse_ok(once));
    expect_eq(twice, once);
}

Test(spec_roundtrip, rich_keeps_every_field) {
    // Same meaning after write_spec(parse_spec(x)): nothing dropped, added or changed.
    expect_same_json(write_spec(parse_ok(kRich)), kRich);
}

Test(spec_roundtrip, rich_compact_equals_pretty) {
    Spec s = parse_ok(kRich);
    std::string compact = write_spec(s, false);
    cr_assert(compact.find('\n') == std::string::npos, "compact output has newlines");
    cr_assert(compact.find('\t') == std::string::npos, "compact output has tabs");
    expect_eq(write_spec(parse_ok(compact)), write_spec(s));
}

Test(spec_roundtrip, pretty_uses_tabs_and_final_newline) {
    std::string text = write_spec(parse_ok(kRich));
    cr_assert(!text.empty());
    cr_assert_eq(text.back(), '\n');
    cr_assert(text.find("\n\t\"ociVersion\"") != std::string::npos, "not tab-indented: %.60s",
              text.c_str());
}

Test(spec_roundtrip, rich_typed_process) {
    Spec s = parse_ok(write_spec(parse_ok(kRich)));
    const Process &p = *s.process;
    cr_assert(p.terminal);
    cr_assert_eq(p.console_size->height, 50u);
    cr_assert_eq(p.console_size->width, 65535u);
    cr_assert_eq(p.user.uid, 1000u);
    cr_assert_eq(p.user.gid, 1001u);
    cr_assert_eq(*p.user.umask, 022u);
    cr_assert_eq(p.user.additional_gids.size(), 3u);
    cr_assert_eq(p.user.additional_gids[2], UINT32_MAX);
    cr_assert_str_eq(p.user.username.c_str(), "alice");
    cr_assert_eq(p.args.size(), 4u);
    cr_assert_str_eq(p.args[2].c_str(), "with space");
    cr_assert(p.args[3].empty());
    cr_assert_str_eq(p.command_line.c_str(), "app.exe --flag");
    cr_assert_str_eq(p.env[2].c_str(), "EQ=a=b");
    cr_assert_eq(p.capabilities->bounding.size(), 4u);
    cr_assert_str_eq(p.capabilities->ambient[0].c_str(), "CAP_NET_BIND_SERVICE");
    cr_assert_eq(p.rlimits.size(), 3u);
    cr_assert_eq(p.rlimits[1].hard, UINT64_MAX);
    cr_assert_eq(p.rlimits[1].soft, 18446744073709551615ull);
    cr_assert_eq(p.rlimits[1].resource, static_cast<int>(RLIMIT_CORE));
    cr_assert_eq(*p.oom_score_adj, -999);
    cr_assert_str_eq(p.scheduler->policy.c_str(), "SCHED_DEADLINE");
    cr_assert_eq(p.scheduler->nice, -5);
    cr_assert_eq(p.scheduler->priority, 0);
    cr_assert_eq(p.scheduler->flags.size(), 2u);
    cr_assert_eq(p.scheduler->runtime, 10000000u);
    cr_assert_eq(p.scheduler->deadline, 20000000u);
    cr_assert_eq(p.scheduler->period, 30000000u);
    cr_assert_str_eq(p.io_priority->klass.c_str(), "IOPRIO_CLASS_RT");
    cr_assert_eq(p.io_priority->priority, 3);
    cr_assert_str_eq(p.exec_cpu_affinity->initial.c_str(), "0-1");
    cr_assert_str_eq(p.exec_cpu_affinity->final.c_str(), "2-3");
    cr_assert_str_eq(p.apparmor_profile.c_str(), "oci-run-default");
    cr_assert_str_eq(p.selinux_label.c_str(), "system_u:system_r:container_t:s0:c1,c2");
}

Test(spec_roundtrip, rich_typed_mounts_hooks_annotations) {
    Spec s = parse_ok(write_spec(parse_ok(kRich)));
    cr_assert_str_eq(s.root->path.c_str(), "/var/lib/rootfs");
    cr_assert(s.root->readonly);
    cr_assert_str_eq(s.hostname.c_str(), "rich");
    cr_assert_str_eq(s.domainname.c_str(), "example.org");
    cr_assert_eq(s.mounts.size(), 3u);
    const Mount &m = s.mounts[1];
    cr_assert_str_eq(m.destination.c_str(), "/data");
    cr_assert_eq(m.options.size(), 3u);
    cr_assert_eq(m.uid_mappings.size(), 1u);
    cr_assert_eq(m.uid_mappings[0].host_id, 100000u);
    cr_assert_eq(m.gid_mappings[0].host_id, 200000u);
    cr_assert_eq(m.gid_mappings[0].size, 1000u);
    const Hooks &h = *s.hooks;
    cr_assert_eq(h.prestart.size(), 1u);
    cr_assert_eq(h.create_runtime.size(), 2u);
    cr_assert_eq(h.create_container.size(), 1u);
    cr_assert_eq(h.start_container.size(), 1u);
    cr_assert_eq(h.poststart.size(), 1u);
    cr_assert_eq(h.poststop.size(), 1u);
    cr_assert_eq(*h.prestart[0].timeout, 5);
    cr_assert_eq(h.prestart[0].env.size(), 2u);
    cr_assert_eq(*h.create_runtime[0].timeout, 1);
    cr_assert(!h.create_runtime[1].timeout.has_value());
    cr_assert_eq(*h.create_container[0].timeout, INT32_MAX);
    cr_assert_str_eq(h.start_container[0].env[0].c_str(), "PATH=/bin");
    cr_assert_str_eq(h.poststart[0].args[1].c_str(), "--notify");
    cr_assert_eq(*h.poststop[0].timeout, 60);
    cr_assert_str_eq(s.annotations.at("com.example.quote").c_str(), "a \"quoted\" \\ value\n");
}

Test(spec_roundtrip, rich_typed_linux) {
    Spec s = parse_ok(write_spec(parse_ok(kRich)));
    const Linux &lx = *s.linux_;
    cr_assert_eq(lx.namespaces.size(), 8u);
    cr_assert_eq(lx.namespaces[7].type, NsType::time);
    cr_assert_eq(lx.gid_mappings.size(), 2u);
    cr_assert_eq(lx.gid_mappings[1].container_id, 70000u);
    cr_assert_eq(lx.time_offsets.at("monotonic").secs, -3600);
    cr_assert_eq(lx.time_offsets.at("monotonic").nanosecs, 999999999u);
    cr_assert_eq(lx.time_offsets.at("boottime").secs, 86400);
    cr_assert_eq(lx.devices.size(), 2u);
    cr_assert_eq(*lx.devices[0].file_mode, 0666u);
    cr_assert_eq(lx.devices[1].minor, 1048575);
    cr_assert_eq(*lx.devices[1].gid, UINT32_MAX);
    cr_assert_str_eq(lx.cgroups_path.c_str(), "/oci-run/rich");
    cr_assert_eq(lx.sysctl.size(), 3u);
    cr_assert_str_eq(lx.sysctl.at("kernel.shmmax").c_str(), "4294967296");
    cr_assert_str_eq(lx.rootfs_propagation.c_str(), "rslave");
    cr_assert_eq(lx.masked_paths.size(), 2u);
    cr_assert_str_eq(lx.readonly_paths[1].c_str(), "/proc/sysrq-trigger");
    cr_assert_str_eq(lx.mount_label.c_str(), "system_u:object_r:container_file_t:s0:c1,c2");
    cr_assert_str_eq(lx.personality->domain.c_str(), "LINUX32");
    cr_assert_str_eq(lx.memory_policy->mode.c_str(), "MPOL_INTERLEAVE");
    cr_assert_str_eq(lx.memory_policy->nodes.c_str(), "2-3");
    cr_assert_str_eq(lx.memory_policy->flags.at(0).c_str(), "MPOL_F_STATIC_NODES");
    cr_assert_eq(lx.net_devices.size(), 2u);
    cr_assert_str_eq(lx.net_devices.at("eth1").name.c_str(), "ceth1");
    const IntelRdt &rdt = *lx.intel_rdt;
    cr_assert_str_eq(rdt.clos_id.c_str(), "guaranteed");
    cr_assert_str_eq(rdt.l3_cache_schema.c_str(), "L3:0=7f0;1=1f");
    cr_assert_str_eq(rdt.mem_bw_schema.c_str(), "MB:0=20;1=70");
    cr_assert_eq(rdt.schemata.size(), 2u);
    cr_assert_str_eq(rdt.schemata[1].c_str(), "L2:1=0f");
    cr_assert(rdt.enable_cmt && rdt.enable_mbm && rdt.enable_monitoring);
}

Test(spec_roundtrip, rich_typed_resources) {
    Spec s = parse_ok(write_spec(parse_ok(kRich)));
    const Resources &r = *s.linux_->resources;
    cr_assert_eq(r.devices.size(), 3u);
    cr_assert(!r.devices[0].allow);
    cr_assert(r.devices[0].type.empty());
    cr_assert(!r.devices[0].major.has_value());
    cr_assert_eq(*r.devices[1].minor, -1);
    cr_assert_str_eq(r.devices[2].access.c_str(), "m");
    const Memory &m = *r.memory;
    cr_assert_eq(*m.limit, 536870912);
    cr_assert_eq(*m.reservation, 268435456);
    cr_assert_eq(*m.swap, -1);
    cr_assert_eq(*m.kernel, 1048576);
    cr_assert_eq(*m.kernel_tcp, 2097152);
    cr_assert_eq(*m.swappiness, 100u);
    cr_assert(*m.disable_oom_killer);
    cr_assert(m.use_hierarchy.has_value() && !*m.use_hierarchy);
    cr_assert(*m.check_before_update);
    const Cpu &c = *r.cpu;
    cr_assert_eq(*c.shares, 1024u);
    cr_assert_eq(*c.quota, 50000);
    cr_assert_eq(*c.burst, 10000u);
    cr_assert_eq(*c.period, 100000u);
    cr_assert_eq(*c.realtime_runtime, INT64_MIN);
    cr_assert_eq(*c.realtime_period, 1000000u);
    cr_assert_str_eq(c.cpus.c_str(), "0-3,7");
    cr_assert_str_eq(c.mems.c_str(), "0");
    cr_assert_eq(*c.idle, 1);
    cr_assert_eq(r.pids->limit, -1);
    const BlockIo &b = *r.block_io;
    cr_assert_eq(*b.weight, 500);
    cr_assert_eq(*b.leaf_weight, 65535);
    cr_assert_eq(b.weight_device.size(), 2u);
    cr_assert_eq(*b.weight_device[0].leaf_weight, 200);
    cr_assert(!b.weight_device[1].leaf_weight.has_value());
    cr_assert_eq(b.throttle_read_bps[0].rate, UINT64_MAX);
    cr_assert_eq(b.throttle_write_bps[0].minor, 1);
    cr_assert_eq(b.throttle_read_iops[0].rate, 300u);
    cr_assert_eq(b.throttle_write_iops[0].rate, 400u);
    cr_assert_eq(r.hugepage_limits.size(), 2u);
    cr_assert_str_eq(r.hugepage_limits[1].page_size.c_str(), "1GB");
    cr_assert_eq(r.hugepage_limits[0].limit, 209715200u);
    cr_assert_eq(*r.network->class_id, 1048577u);
    cr_assert_eq(r.network->priorities[1].priority, 1000u);
    cr_assert_eq(r.rdma.size(), 2u);
    cr_assert_eq(*r.rdma.at("mlx5_1").hca_objects, 10000u);
    cr_assert(!r.rdma.at("mlx4_0").hca_objects.has_value());
    cr_assert_str_eq(r.unified.at("io.weight").c_str(), "default 100");
}

Test(spec_roundtrip, rich_typed_seccomp) {
    Spec s = parse_ok(write_spec(parse_ok(kRich)));
    const Seccomp &sc = *s.linux_->seccomp;
    cr_assert_str_eq(sc.default_action.c_str(), "SCMP_ACT_ERRNO");
    cr_assert_eq(*sc.default_errno_ret, 38u);
    cr_assert_eq(sc.architectures.size(), 3u);
    cr_assert_eq(sc.flags.size(), 2u);
    cr_assert_str_eq(sc.listener_path.c_str(), "/run/seccomp-agent.sock");
    cr_assert_str_eq(sc.listener_metadata.c_str(), "meta=1");
    cr_assert_eq(sc.syscalls.size(), 4u);
    cr_assert_eq(sc.syscalls[0].names.size(), 3u);
    const Syscall &p = sc.syscalls[1];
    cr_assert_eq(p.args.size(), 2u);
    cr_assert_eq(p.args[0].index, 0u);
    cr_assert_eq(p.args[0].value, 4294967295u);
    cr_assert_eq(p.args[0].value_two, UINT64_MAX);
    cr_assert_str_eq(p.args[0].op.c_str(), "SCMP_CMP_MASKED_EQ");
    cr_assert_eq(p.args[1].index, 5u);
    cr_assert_eq(p.args[1].value_two, 0u);
    cr_assert_eq(*sc.syscalls[2].errno_ret, 1u);
    cr_assert(!sc.syscalls[3].errno_ret.has_value());
    cr_assert_str_eq(sc.syscalls[3].action.c_str(), "SCMP_ACT_NOTIFY");
}

// ---------------------------------------------------------------------------
// Unset vs zero, and strings that need escaping.

Test(spec_roundtrip, zero_values_survive) {
    // 1.3: pids.limit 0 is a limit (earlier versions meant none by it).
    const char *doc = R"({"ociVersion": "1.3.0", "root": {"path": "r"},
        "process": {"cwd": "/", "args": ["sh"], "user": {"uid": 0, "gid": 0, "umask": 0},
                    "oomScoreAdj": 0},
        "linux": {"resources": {"memory": {"limit": 0, "swappiness": 0, "disableOOMKiller": false},
                                "cpu": {"shares": 0}, "pids": {"limit": 0}}}})";
    Spec s = parse_ok(write_spec(parse_ok(doc)));
    cr_assert(s.process->user.umask.has_value());
    cr_assert_eq(*s.process->user.umask, 0u);
    cr_assert(s.process->oom_score_adj.has_value());
    cr_assert_eq(*s.process->oom_score_adj, 0);
    const Memory &m = *s.linux_->resources->memory;
    cr_assert(m.limit.has_value() && *m.limit == 0);
    cr_assert(m.swappiness.has_value() && *m.swappiness == 0);
    cr_assert(m.disable_oom_killer.has_value() && !*m.disable_oom_killer);
    cr_assert(!m.reservation.has_value());
    cr_assert(s.linux_->resources->cpu->shares.has_value());
    cr_assert(s.linux_->resources->pids->limit.has_value());
    cr_assert_eq(*s.linux_->resources->pids->limit, 0);
}

Test(spec_roundtrip, unset_values_stay_unset) {
    const char *doc = R"({"ociVersion": "1.2.1", "root": {"path": "r"},
        "process": {"cwd": "/", "args": ["sh"]}, "linux": {}})";
    std::string text = write_spec(parse_ok(doc));
    Spec s = parse_ok(text);
    cr_assert(!s.process->user.umask.has_value());
    cr_assert(!s.process->oom_score_adj.has_value());
    cr_assert(!s.process->capabilities.has_value());
    cr_assert(!s.process->scheduler.has_value());
    cr_assert(!s.hooks.has_value());
    cr_assert(!s.linux_->resources.has_value());
    cr_assert(!s.linux_->seccomp.has_value());
    cr_assert(text.find("umask") == std::string::npos);
    cr_assert(text.find("oomScoreAdj") == std::string::npos);
    cr_assert(text.find("resources") == std::string::npos);
}

Test(spec_roundtrip, strings_with_escapes_and_utf8) {
    const char *doc = R"({"ociVersion": "1.2.1", "root": {"path": "r"},
        "process": {"cwd": "/", "args": ["echo", "tab\there", "nl\nx", "q\"b\\s", "\u00e9\u4e2d\ud83d\ude00", "\u0001"]},
        "annotations": {"k\"ey": "v/al", "\u00fc": "\u00fc"}, "linux": {}})";
    Spec a = parse_ok(doc);
    Spec b = parse_ok(write_spec(a));
    cr_assert_eq(b.process->args.size(), 6u);
    for (size_t i = 0; i < a.process->args.size(); i++)
        expect_eq(b.process->args[i], a.process->args[i]);
    cr_assert_str_eq(b.process->args[1].c_str(), "tab\there");
    cr_assert_str_eq(b.process->args[4].c_str(), "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
    cr_assert_str_eq(b.process->args[5].c_str(), "\x01");
    cr_assert_str_eq(b.annotations.at("k\"ey").c_str(), "v/al");
    cr_assert_str_eq(b.annotations.at("\xc3\xbc").c_str(), "\xc3\xbc");
}

Test(spec_roundtrip, hand_built_spec_round_trips) {
    Spec s = default_spec(false, 0, 0);
    s.process->rlimits.push_back(Rlimit{"RLIMIT_CORE", RLIMIT_CORE, UINT64_MAX, UINT64_MAX});
    s.process->oom_score_adj = 500;
    s.linux_->resources->memory = Memory{};
    s.linux_->resources->memory->limit = INT64_MAX;
    s.linux_->seccomp = Seccomp{};
    s.linux_->seccomp->default_action = "SCMP_ACT_ALLOW";
    Syscall sys;
    sys.names = {"kill"};
    sys.action = "SCMP_ACT_ERRNO";
    sys.args.push_back(SeccompArg{1, 9, 18446744073709551615ull, "SCMP_CMP_NE"});
    s.linux_->seccomp->syscalls.push_back(sys);
    Spec back = parse_ok(write_spec(s));
    validate_ok(back);
    cr_assert_eq(back.process->rlimits[1].soft, UINT64_MAX);
    cr_assert_eq(*back.process->oom_score_adj, 500);
    cr_assert_eq(*back.linux_->resources->memory->limit, INT64_MAX);
    cr_assert_eq(back.linux_->seccomp->syscalls[0].args[0].value, 9u);
    cr_assert_eq(back.linux_->seccomp->syscalls[0].args[0].value_two, UINT64_MAX);
    expect_eq(write_spec(back), write_spec(s));
}
