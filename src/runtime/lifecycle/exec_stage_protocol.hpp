// What the container's init hands oci-run-exec-stage (src/exec_stage/), the
// small program that waits for `start` and execs the container's process
// from a sealed view, so that the init never execs it from the runtime's own
// binary (CVE-2019-5736; runtime/lifecycle/exec_stage.hpp has the why).
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

} // namespace ocirun::exec_stage
