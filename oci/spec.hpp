// The OCI runtime-spec 1.2 configuration (config.json) as typed data.
// Field names follow the JSON keys; optional JSON values are std::optional so
// that "unset" and "zero" stay different, as the spec requires.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ocirun::oci {

using StringMap = std::map<std::string, std::string>;

struct Box {
    uint32_t height = 0;
    uint32_t width = 0;
};

struct User {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::optional<uint32_t> umask;
    std::vector<uint32_t> additional_gids;
    std::string username; // windows only; kept for round trips
};

struct Capabilities {
    std::vector<std::string> bounding, effective, inheritable, permitted, ambient;
};

struct Rlimit {
    std::string type;  // "RLIMIT_NOFILE"
    int resource = -1; // resolved RLIMIT_* value
    uint64_t hard = 0;
    uint64_t soft = 0;
};

struct IoPriority {
    std::string klass; // IOPRIO_CLASS_RT | _BE | _IDLE
    int32_t priority = 0;
};

struct Scheduler {
    std::string policy; // SCHED_*
    int32_t nice = 0;
    int32_t priority = 0;
    std::vector<std::string> flags;
    uint64_t runtime = 0, deadline = 0, period = 0;
};

struct CpuAffinity {
    std::string initial, final;
};

struct Process {
    bool terminal = false;
    std::optional<Box> console_size;
    User user;
    std::vector<std::string> args;
    std::string command_line;
    std::vector<std::string> env;
    std::string cwd;
    std::optional<Capabilities> capabilities;
    std::vector<Rlimit> rlimits;
    bool no_new_privileges = false;
    std::string apparmor_profile;
    std::optional<int32_t> oom_score_adj;
    std::optional<Scheduler> scheduler;
    std::string selinux_label;
    std::optional<IoPriority> io_priority;
    std::optional<CpuAffinity> exec_cpu_affinity;
};

struct Root {
    std::string path;
    bool readonly = false;
};

struct IdMapping {
    uint32_t container_id = 0;
    uint32_t host_id = 0;
    uint32_t size = 0;
};

struct Mount {
    std::string destination;
    std::string type;
    std::string source;
    std::vector<std::string> options;
    std::vector<IdMapping> uid_mappings, gid_mappings;
};

struct Hook {
    std::string path;
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::optional<int32_t> timeout; // seconds, > 0
};

struct Hooks {
    std::vector<Hook> prestart, create_runtime, create_container, start_container, poststart,
        poststop;
    bool empty() const {
        return prestart.empty() && create_runtime.empty() && create_container.empty() &&
               start_container.empty() && poststart.empty() && poststop.empty();
    }
};

enum class NsType { pid, network, mount, ipc, uts, user, cgroup, time };
inline constexpr int kNsTypeCount = 8;

struct Namespace {
    NsType type = NsType::pid;
    std::string path; // join instead of create when set
};

struct TimeOffset {
    int64_t secs = 0;
    uint32_t nanosecs = 0;
};

struct Device {
    std::string path;
    std::string type; // c, b, u, p
    int64_t major = 0, minor = 0;
    std::optional<uint32_t> file_mode;
    std::optional<uint32_t> uid, gid;
};

struct DeviceRule {
    bool allow = false;
    std::string type; // a, c, b ("" = a)
    std::optional<int64_t> major, minor;
    std::string access; // subset of "rwm"
};

struct Memory {
    std::optional<int64_t> limit, reservation, swap, kernel, kernel_tcp;
    std::optional<uint64_t> swappiness;
    std::optional<bool> disable_oom_killer, use_hierarchy, check_before_update;
};

struct Cpu {
    std::optional<uint64_t> shares;
    std::optional<int64_t> quota;
    std::optional<uint64_t> burst;
    std::optional<uint64_t> period;
    std::optional<int64_t> realtime_runtime;
    std::optional<uint64_t> realtime_period;
    std::string cpus, mems;
    std::optional<int64_t> idle;
};

struct Pids {
    // runtime-spec 1.3: unset writes nothing, -1 (any negative) is "max",
    // 0 and up are written as they are. A config of an earlier version with
    // 0 gets -1 at parse (normalise_pids_limit).
    std::optional<int64_t> limit;
};

struct WeightDevice {
    int64_t major = 0, minor = 0;
    std::optional<uint16_t> weight, leaf_weight;
};

struct ThrottleDevice {
    int64_t major = 0, minor = 0;
    uint64_t rate = 0;
};

struct BlockIo {
    std::optional<uint16_t> weight, leaf_weight;
    std::vector<WeightDevice> weight_device;
    std::vector<ThrottleDevice> throttle_read_bps, throttle_write_bps, throttle_read_iops,
        throttle_write_iops;
};

struct HugepageLimit {
    std::string page_size;
    uint64_t limit = 0;
};

struct InterfacePriority {
    std::string name;
    uint32_t priority = 0;
};

struct Network {
    std::optional<uint32_t> class_id;
    std::vector<InterfacePriority> priorities;
};

struct Rdma {
    std::optional<uint32_t> hca_handles, hca_objects;
};

struct Resources {
    std::vector<DeviceRule> devices;
    std::optional<Memory> memory;
    std::optional<Cpu> cpu;
    std::optional<Pids> pids;
    std::optional<BlockIo> block_io;
    std::vector<HugepageLimit> hugepage_limits;
    std::optional<Network> network;
    std::map<std::string, Rdma> rdma;
    StringMap unified;
};

struct IntelRdt {
    std::string clos_id, l3_cache_schema, mem_bw_schema;
    std::vector<std::string> schemata; // runtime-spec 1.3: one line each
    bool enable_cmt = false, enable_mbm = false, enable_monitoring = false;
};

struct SeccompArg {
    uint32_t index = 0;
    uint64_t value = 0;
    uint64_t value_two = 0;
    std::string op; // SCMP_CMP_*
};

struct Syscall {
    std::vector<std::string> names;
    std::string action; // SCMP_ACT_*
    std::optional<uint32_t> errno_ret;
    std::vector<SeccompArg> args;
    // Not in the OCI schema: "includes": {"caps": [...]} as the profiles of
    // containers/common (Podman) write it; the rule applies only when the
    // process's bounding set holds every one of these capabilities.
    std::vector<std::string> includes_caps;
};

struct Seccomp {
    std::string default_action;
    std::optional<uint32_t> default_errno_ret;
    std::vector<std::string> architectures;
    std::vector<std::string> flags;
    std::string listener_path;
    std::string listener_metadata;
    std::vector<Syscall> syscalls;
};

struct Personality {
    std::string domain; // LINUX | LINUX32
    std::vector<std::string> flags;
};

// runtime-spec 1.3 linux.memoryPolicy: set_mempolicy(2) for the container.
struct MemoryPolicy {
    std::string mode;  // MPOL_*
    std::string nodes; // "0-3,7"
    std::vector<std::string> flags;
};

struct NetDevice {
    std::string name; // name inside the container ("" = keep)
};

struct Linux {
    std::vector<Namespace> namespaces;
    std::vector<IdMapping> uid_mappings, gid_mappings;
    std::map<std::string, TimeOffset> time_offsets; // "monotonic", "boottime"
    std::vector<Device> devices;
    std::string cgroups_path;
    std::optional<Resources> resources;
    std::optional<IntelRdt> intel_rdt;
    StringMap sysctl;
    std::optional<Seccomp> seccomp;
    std::string rootfs_propagation;
    std::vector<std::string> masked_paths;
    std::vector<std::string> readonly_paths;
    std::string mount_label;
    std::optional<Personality> personality;
    std::optional<MemoryPolicy> memory_policy;
    std::map<std::string, NetDevice> net_devices;

    const Namespace *find_namespace(NsType t) const {
        for (const auto &ns : namespaces)
            if (ns.type == t) return &ns;
        return nullptr;
    }
};

struct Spec {
    std::string oci_version;
    std::optional<Process> process;
    std::optional<Root> root;
    std::string hostname;
    std::string domainname;
    std::vector<Mount> mounts;
    std::optional<Hooks> hooks;
    StringMap annotations;
    std::optional<Linux> linux_; // "linux" is a predefined macro in GNU mode
};

const char *ns_type_name(NsType t);

} // namespace ocirun::oci
