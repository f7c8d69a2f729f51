// One container per test: a busybox bundle, its own --root and a unique ID,
// all registered with the harness so cleanup_all removes them; and the
// oci-run calls most tests make on it.
#pragma once

#include "bundle.hpp"
#include "harness.hpp"
#include "process.hpp"

#include <sys/types.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace test {

struct Env {
    Bundle b;
    std::string root;
    std::string id;
};

Env make_env(const char *tag, const std::vector<std::string> &args = {});

// Give the container a user namespace mapping 0..65535 to host 100000..,
// and make the bundle directory reachable for that root.
void use_user_namespace(Env &e);

// Add capabilities to the bounding, effective and permitted sets.
void add_capabilities(Env &e, std::initializer_list<const char *> caps);
// Every capability this test process may hand on (its bounding set), in the
// bounding, effective and permitted sets.
void add_all_capabilities(Env &e);

// A config.json mount.
ocirun::oci::Mount mount_entry(const std::string &dest, const std::string &type,
                               const std::string &source, std::vector<std::string> options);

// A linux.resources.devices rule (major, minor: nullopt for any).
ocirun::oci::DeviceRule device_rule(bool allow, const char *type, std::optional<int64_t> major,
                                    std::optional<int64_t> minor, const char *access);

// A disk whose raw bytes hold a file the rules on files guard: a loop
// device with an ext4 filesystem, mounted at `mnt` (in the test's private
// mount namespace, which make_loop_disk enters), holding secret/data (0644,
// its one line `marker`), all below `dir` (0755). `failure` says what could
// not be set up ("" when all was). The test is skipped where no loop device
// can be had. remove() unmounts it, detaches the device and tracks `dir`
// (only then: a cleanup_all before would find the mount busy).
struct LoopDisk {
    std::string dir, mnt, loop, marker, failure;
    dev_t rdev = 0; // the loop device's
    void remove();
};
LoopDisk make_loop_disk(const char *tag);

// `oci-run create` (stdio on files, bounded) with `extra` flags.
FileRun create(const Env &e, std::vector<std::string> extra = {});
// `oci-run run` in the foreground after saving the bundle's spec.
Output run(const Env &e, std::vector<std::string> extra = {});

struct StateInfo {
    int exit = -1;
    std::string status;
    long pid = -1;
    std::string err;
};

StateInfo state_of(const std::string &root, const std::string &id);
// Poll the state until it says `want` (bounded); returns the last status seen.
std::string wait_status(const std::string &root, const std::string &id, const char *want,
                        int timeout_ms = 5000);

// Where a helper process (the network helper, strace) must be: in the
// helpers' cgroup (oci-run-helper) under the container's, in the v2
// hierarchy and the v1 memory and pids ones. "" when it is, else what
// differs, from the helper's and the init's /proc/PID/cgroup.
std::string helper_cgroup_mismatch(const std::string &helper_cgroup,
                                   const std::string &init_cgroup);

// A process that no longer runs: absent, or a zombie nobody reaped yet.
bool pid_gone_now(long pid);
bool pid_gone(long pid, int timeout_ms = 2000);

// What an i386 system call (int $0x80 from an x86-64 process) answers on
// this machine, outside any container: the syscall-probe helper's
// "NAME=VALUE" value for `want` where the machine has that entry point,
// "fault" where it has none (a kernel without IA32 emulation, a hypervisor
// that does not pass int $0x80 on). Asked once.
std::string i386_answer(const std::string &want);

} // namespace test
