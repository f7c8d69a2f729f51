// What the runtime hands oci-run-exec-stage (src/exec_stage/), the small
// program that execs a container's process from a sealed view, so that no
// process the container can see runs the runtime's own binary
// (CVE-2019-5736; runtime/lifecycle/exec_stage.hpp has the why). Two uses:
//  - the container's init execs it once set up: it waits for `start` and
//    execs the process (kName, Arg);
//  - `exec`'s intermediate execs it once it is in the container's
//    namespaces: it forks the process into the container's PID namespace,
//    which sets its identity and execs (kJoinName, JoinArg).
//
// Everything travels in the stage's argv; the process's environment is the
// stage's environment. This header is shared by both sides and includes
// nothing: the stage is built without a C library.
#pragma once

namespace ocirun::exec_stage {

// argv[0]: a version: a stage from another build refuses to run.
constexpr const char *kName = "oci-run-exec-stage/1";

enum Arg {
    kFifoRead = 1,  // exec fifo, read end: blocks until `start` writes a byte
    kFifoWrite = 2, // its write end, held so the read blocks instead of seeing EOF
    kResult = 3,    // start fifo: "ERRNO TEXT\n" on failure, closed by a good exec
    kFilters = 4,   // -1, or a file of filters to load, each: u32 flags, u32 count,
                    // count struct sock_filter (SECCOMP_SET_MODE_FILTER, in order)
    kProg = 5,      // process.args[0], for the messages
    kPathDirs = 6,  // the PATH searched, or "" when args[0] has a slash
    kCount = 7,     // N: the files to try, in order
    kFirstFile = 8, // N files, then the process's args to the end
};

// `exec`'s use. Numbers are decimal, capability sets hexadecimal; a fd of -1
// is none.
constexpr const char *kJoinName = "oci-run-exec-stage/join/1";

enum JoinArg {
    kJSync = 1,    // the sync socket to the runtime (runtime/lifecycle/sync.hpp packets)
    kJFilters = 2, // -1, or the process's seccomp filters, as kFilters
    kJFiltersEarly =
        3,           // 1: loaded before the identity change (no noNewPrivileges), 2: so, and
                     // by the stage before its fork (CAP_SYS_PTRACE, no user namespace), 0: after
    kJBounding = 4,  // the bounding set to keep
    kJLimit = 5,     // what the stage keeps (effective and permitted) until the identity change
    kJEffective = 6, // the process's effective, permitted, inheritable and ambient sets
    kJPermitted = 7,
    kJInheritable = 8,
    kJAmbient = 9,     // only those also permitted and inheritable
    kJUid = 10,        // process.user
    kJGid = 11,        //
    kJGroups = 12,     // additionalGids, comma-separated, or ""
    kJGroupsMay = 13,  // 1: setgroups is denied in this user namespace, fine when there are none
    kJNoNewPrivs = 14, // 1 or 0
    kJNproc = 15,      // "-", or RLIMIT_NPROC as SOFT:HARD, set by the process itself
    kJTerminal = 16,   // -1, or the pty peer: stdio and controlling terminal
    kJCwd = 17,        // "", or process.cwd to enter after the identity change
    kJDetach = 18,     // 1: the process outlives the runtime (no death signal)
    kJFault = 19,      // "-", "kill" or "delay": the crash tests' exec-child:visible
                       // (delay: the stage's hello, and the process, each 300 ms)
    kJAffinity = 20,   // "-", or the CPU affinity to take once in the container's cgroup:
                       // 64-bit words in hexadecimal, comma-separated, CPU 0 first
    kJProg = 21,       // as kProg, kPathDirs, kCount and kFirstFile
    kJPathDirs = 22,
    kJCount = 23,
    kJFirstFile = 24,
};

// The sync socket's packet (runtime/lifecycle/sync.hpp Packet, whose layout
// exec_stage.cpp checks against this) and the messages the stage sends.
constexpr unsigned kPacketText = 2048;
struct Packet {
    unsigned type;
    int value;
    char text[kPacketText];
    int sender, fd;
};
enum PacketType : unsigned { kProceed = 1, kReady = 2, kError = 3, kHello = 4, kSeccompNotify = 7 };

} // namespace ocirun::exec_stage
