// A systemd node for the systemd cgroup driver's tests: systemd (the host's,
// /usr bound read-only) booted as PID 1 of a container that oci-run (the
// build under test, cgroupfs driver) runs, the way kind runs a Kubernetes
// node: its own PID, mount, UTS, IPC, network (loopback only) and cgroup
// namespaces, its cgroup hierarchy writable below its own cgroup, /run and
// /tmp on tmpfs, a small /etc of its own. The tests then run oci-run inside
// it (nsenter) with --systemd-cgroup, as on a host whose PID 1 is systemd.
#pragma once

#include "process.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace test {

// The node's unprivileged user ("ocitest", home /home/ocitest).
constexpr uid_t kNodeUser = 1000;

struct SystemdNode {
    std::string dir;   // the node's bundle, state and shared directory
    std::string share; // bound at the same path inside: bundles, --root dirs
    std::string id, root;
    long pid = -1;       // the node's systemd, on the host
    std::string skip;    // why no node can be booted here
    std::string failure; // why booting it failed
    int reaper_fd = -1;  // closed: the reaper deletes the node (start_reaper)
    pid_t reaper = -1;
    SystemdNode() = default;
    SystemdNode(const SystemdNode &) = delete;
    SystemdNode &operator=(const SystemdNode &) = delete;
    ~SystemdNode();
    // Delete the node (everything in it with it) and its directory.
    void tear_down();
};

// Boot it and wait (60 s at most) until systemd says the system is running
// (or degraded). `binds` (the build tree, the sources) are bound read-only
// at the same paths. `legacy`: the v1 hierarchies only (the unified one
// unmounted before systemd starts, so it runs in its legacy mode), on a
// host that has v1 ones. On failure `skip` or `failure` says why.
void boot_node(SystemdNode &n, const std::vector<std::string> &binds, bool legacy = false);

// `argv` inside the node, in a cgroup of the node's own (oci-run-tests) in
// every hierarchy, with the test's environment.
Output in_node(const SystemdNode &n, const std::vector<std::string> &argv,
               const std::string &input = "");

// The D-Bus object path of systemd unit `unit` (its name escaped as
// systemd's bus_label_escape does).
std::string unit_object_path(const std::string &unit);

// A property of a unit of the node's systemd over D-Bus (busctl), as busctl
// prints it ("t 32\n"), or "" when there is no such unit.
std::string unit_property(const SystemdNode &n, const std::string &unit, const char *iface,
                          const char *prop);

} // namespace test
