#include "names.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <string>
#include <sys/resource.h>

namespace ocirun::oci {

namespace {

constexpr NamedValue kCaps[] = {
    {"CAP_CHOWN", 0},
    {"CAP_DAC_OVERRIDE", 1},
    {"CAP_DAC_READ_SEARCH", 2},
    {"CAP_FOWNER", 3},
    {"CAP_FSETID", 4},
    {"CAP_KILL", 5},
    {"CAP_SETGID", 6},
    {"CAP_SETUID", 7},
    {"CAP_SETPCAP", 8},
    {"CAP_LINUX_IMMUTABLE", 9},
    {"CAP_NET_BIND_SERVICE", 10},
    {"CAP_NET_BROADCAST", 11},
    {"CAP_NET_ADMIN", 12},
    {"CAP_NET_RAW", 13},
    {"CAP_IPC_LOCK", 14},
    {"CAP_IPC_OWNER", 15},
    {"CAP_SYS_MODULE", 16},
    {"CAP_SYS_RAWIO", 17},
    {"CAP_SYS_CHROOT", 18},
    {"CAP_SYS_PTRACE", 19},
    {"CAP_SYS_PACCT", 20},
    {"CAP_SYS_ADMIN", 21},
    {"CAP_SYS_BOOT", 22},
    {"CAP_SYS_NICE", 23},
    {"CAP_SYS_RESOURCE", 24},
    {"CAP_SYS_TIME", 25},
    {"CAP_SYS_TTY_CONFIG", 26},
    {"CAP_MKNOD", 27},
    {"CAP_LEASE", 28},
    {"CAP_AUDIT_WRITE", 29},
    {"CAP_AUDIT_CONTROL", 30},
    {"CAP_SETFCAP", 31},
    {"CAP_MAC_OVERRIDE", 32},
    {"CAP_MAC_ADMIN", 33},
    {"CAP_SYSLOG", 34},
    {"CAP_WAKE_ALARM", 35},
    {"CAP_BLOCK_SUSPEND", 36},
    {"CAP_AUDIT_READ", 37},
    {"CAP_PERFMON", 38},
    {"CAP_BPF", 39},
    {"CAP_CHECKPOINT_RESTORE", 40},
};

constexpr NamedValue kRlimits[] = {
    {"RLIMIT_CPU", RLIMIT_CPU},           {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_DATA", RLIMIT_DATA},         {"RLIMIT_STACK", RLIMIT_STACK},
    {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},   {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},       {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},     {"RLIMIT_RTTIME", RLIMIT_RTTIME},
};

constexpr NamedValue kSignals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"IOT", SIGIOT},       {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH},   {"IO", SIGIO},     {"POLL", SIGPOLL},     {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

constexpr const char *kNsNames[] = {"pid", "network", "mount",  "ipc",
                                    "uts", "user",    "cgroup", "time"};

constexpr const char *kPropagation[] = {"private",  "shared",  "slave",  "unbindable",
                                        "rprivate", "rshared", "rslave", "runbindable"};

constexpr const char *kSeccompActions[] = {
    "SCMP_ACT_KILL",  "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
    "SCMP_ACT_TRAP",  "SCMP_ACT_ERRNO",        "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW", "SCMP_ACT_LOG",          "SCMP_ACT_NOTIFY",
};

constexpr const char *kSeccompOps[] = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ",
};

constexpr const char *kSeccompArchs[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",
};

constexpr const char *kSeccompFlags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

constexpr const char *kPersonalityDomains[] = {"LINUX", "LINUX32"};
constexpr const char *kMemoryPolicyModes[] = {
    "MPOL_DEFAULT",   "MPOL_BIND",           "MPOL_INTERLEAVE", "MPOL_WEIGHTED_INTERLEAVE",
    "MPOL_PREFERRED", "MPOL_PREFERRED_MANY", "MPOL_LOCAL"};
constexpr const char *kMemoryPolicyFlags[] = {"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                              "MPOL_F_STATIC_NODES"};
constexpr const char *kIoClasses[] = {"IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE"};
constexpr const char *kSchedPolicies[] = {"SCHED_OTHER",   "SCHED_FIFO", "SCHED_RR",
                                          "SCHED_BATCH",   "SCHED_ISO",  "SCHED_IDLE",
                                          "SCHED_DEADLINE"};
constexpr const char *kSchedFlags[] = {
    "SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",     "SCHED_FLAG_DL_OVERRUN",
    "SCHED_FLAG_KEEP_POLICY",    "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
    "SCHED_FLAG_UTIL_CLAMP_MAX",
};

template <size_t N> bool in(const char *const (&table)[N], std::string_view s) {
    return std::any_of(std::begin(table), std::end(table), [&](const char *t) { return s == t; });
}

std::optional<int> lookup(std::span<const NamedValue> table, std::string_view name) {
    for (const auto &e : table)
        if (name == e.name) return e.value;
    return std::nullopt;
}

} // namespace

std::span<const NamedValue> capability_names() {
    return kCaps;
}
std::span<const NamedValue> rlimit_names() {
    return kRlimits;
}
std::span<const NamedValue> signal_names() {
    return kSignals;
}

std::optional<int> capability_from_name(std::string_view name) {
    return lookup(kCaps, name);
}
std::optional<int> rlimit_from_name(std::string_view name) {
    return lookup(kRlimits, name);
}

std::optional<int> signal_from_name(std::string_view name) {
    if (name.empty()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(name[0]))) {
        int n = 0;
        for (char c : name) {
            if (!std::isdigit(static_cast<unsigned char>(c)) || n > 1000) return std::nullopt;
            n = n * 10 + (c - '0');
        }
        if (n <= 0 || n > SIGRTMAX) return std::nullopt;
        return n;
    }
    std::string up;
    for (char c : name)
        up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string_view s = up;
    if (s.rfind("SIG", 0) == 0) s.remove_prefix(3);
    if (s.rfind("RTMIN", 0) == 0 || s.rfind("RTMAX", 0) == 0) {
        bool min = s[2] == 'M' && s[3] == 'I';
        std::string_view rest = s.substr(5);
        int off = 0;
        if (!rest.empty()) {
            if (rest[0] != '+' && rest[0] != '-') return std::nullopt;
            std::string_view num = rest.substr(1);
            if (num.empty() || num.size() > 3) return std::nullopt;
            for (char c : num) {
                if (c < '0' || c > '9') return std::nullopt;
                off = off * 10 + (c - '0');
            }
            if (rest[0] == '-') off = -off;
        }
        int sig = (min ? SIGRTMIN : SIGRTMAX) + off;
        if (sig < SIGRTMIN || sig > SIGRTMAX) return std::nullopt;
        return sig;
    }
    return lookup(kSignals, s);
}

const char *ns_type_name(NsType t) {
    return kNsNames[static_cast<int>(t)];
}

std::optional<NsType> ns_type_from_name(std::string_view name) {
    for (int i = 0; i < kNsTypeCount; i++)
        if (name == kNsNames[i]) return static_cast<NsType>(i);
    return std::nullopt;
}

bool is_rootfs_propagation(std::string_view s) {
    return in(kPropagation, s);
}
bool is_seccomp_action(std::string_view s) {
    return in(kSeccompActions, s);
}
bool is_seccomp_operator(std::string_view s) {
    return in(kSeccompOps, s);
}
bool is_seccomp_arch(std::string_view s) {
    return in(kSeccompArchs, s);
}
bool is_seccomp_flag(std::string_view s) {
    return in(kSeccompFlags, s);
}
bool is_personality_domain(std::string_view s) {
    return in(kPersonalityDomains, s);
}
bool is_personality_flag(std::string_view) {
    // The spec defines no personality flags yet; any value is refused.
    return false;
}
bool is_io_priority_class(std::string_view s) {
    return in(kIoClasses, s);
}
bool is_scheduler_policy(std::string_view s) {
    return in(kSchedPolicies, s);
}
bool is_scheduler_flag(std::string_view s) {
    return in(kSchedFlags, s);
}

std::span<const char *const> seccomp_actions() {
    return kSeccompActions;
}
std::span<const char *const> seccomp_operators() {
    return kSeccompOps;
}
std::span<const char *const> seccomp_archs() {
    return kSeccompArchs;
}
std::span<const char *const> seccomp_flags() {
    return kSeccompFlags;
}
bool is_memory_policy_mode(std::string_view s) {
    return in(kMemoryPolicyModes, s);
}
bool is_memory_policy_flag(std::string_view s) {
    return in(kMemoryPolicyFlags, s);
}
std::span<const char *const> memory_policy_modes() {
    return kMemoryPolicyModes;
}
std::span<const char *const> memory_policy_flags() {
    return kMemoryPolicyFlags;
}

} // namespace ocirun::oci
