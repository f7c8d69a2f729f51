// linux.seccomp: compiled to BPF programs with libseccomp in the runtime,
// before the init exists (one compile per create or exec), and loaded by the
// init with the seccomp(2) system call as late as it can be: right before
// exec with no_new_privs; before the capabilities are dropped without it
// (loading then needs CAP_SYS_ADMIN); before `ready` when an action is
// SCMP_ACT_NOTIFY, so that the runtime can pass the notify fd to the
// listener at listenerPath.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"

#include <linux/filter.h>
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

struct SeccompFilter {
    // Loaded in this order, each with the same flags. One program, or (a
    // profile for several architectures, compile_seccomp) a gate that
    // refuses the architectures the profile does not name, then one program
    // per architecture that decides for its own and lets the others through:
    // the kernel takes the strictest answer of all, which is then the one
    // program's of that architecture. libseccomp lays a program out in time
    // that grows with the square of its length: three short programs take
    // a third of the time of one long one.
    std::vector<std::vector<struct sock_filter>> programs;
    unsigned int flags = 0;           // SECCOMP_FILTER_FLAG_*
    bool notify = false;              // some rule is SCMP_ACT_NOTIFY: load returns a listener fd
    std::vector<std::string> skipped; // syscall names libseccomp does not know here
    // The flags seccomp(2) gets: `flags`, and NEW_LISTENER with `notify`
    // (load_seccomp; the exec stage is handed the same).
    unsigned int load_flags() const;
};

// The BPF stub compile_seccomp puts in front of a profile whose default
// refuses: for each architecture (AUDIT_ARCH value -> the largest number of
// a system call the profile names there), a call numbered above it answers
// ENOSYS; everything else goes on to the profile. Exposed for unit tests.
std::vector<struct sock_filter> enosys_stub(const std::map<uint32_t, uint32_t> &largest);

// `caps`: the process's bounding set, for rules with "includes": {"caps"}.
// Architectures this kernel cannot run (arm64 on x86-64 and the reverse) are
// left out: no system call can come from them. `per_arch` false: one
// program for all (the unit tests compare the two forms); a profile with
// SCMP_ACT_NOTIFY always gets one (a listener belongs to one filter).
Result<SeccompFilter> compile_seccomp(const oci::Seccomp &s, const std::vector<std::string> &caps,
                                      bool per_arch = true);

// A compiled filter kept as bytes in the container's state directory, for
// the execs after the first (containerd's kind of default profile: 6 ms each;
// the sandbox guard likewise),
// and read back. The key holds what the compile depended on besides the
// profile, which is config.json's there and never changes: this runtime's
// build, libseccomp's version and the process's bounding set. A document
// with another key, or malformed in any way, is not taken (nullopt): it is
// compiled again.
std::string seccomp_cache_key(const std::vector<std::string> &caps);
std::string write_compiled(const SeccompFilter &f, const std::string &key);
std::optional<SeccompFilter> read_compiled(std::string_view data, const std::string &key);

// SECCOMP_FILTER_FLAG_* by its OCI name (0 when unknown), and whether this
// kernel accepts it.
unsigned int seccomp_flag_bit(const std::string &name);
bool seccomp_flag_supported(unsigned int bit);

// Load into the calling thread, every program. Returns the notify fd, or -1
// without NOTIFY.
Result<int> load_seccomp(const SeccompFilter &f);

// load_seccomp, then a notify fd goes to the runtime over the sync socket
// (Msg::seccomp_notify), which hands it to the listener.
Status load_seccomp_and_pass(int sync_fd, const SeccompFilter &f);

// Connect to listenerPath and send the notify fd with the container process
// state (runtime-spec "Container Process State"), SCM_RIGHTS.
Status send_seccomp_listener(const oci::Seccomp &s, int notify_fd, pid_t pid,
                             const oci::State &state);

} // namespace ocirun
