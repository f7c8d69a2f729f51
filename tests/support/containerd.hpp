// What the containerd suites (tests/clients: ctr and CRI) share: an OCI
// image archive made from a rootfs, and a containerd of the test's own.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace test {

// Every cgroup (v1 and v2) mount point, from /proc/self/mountinfo.
std::vector<std::string> cgroup_mounts();

// The size of a file, or -1.
off_t size_of(const std::string &path);

// An OCI archive (a tar of an OCI image layout) of `rootfs`: one
// uncompressed layer, named `ref`, whose config runs `cmd_json` (a JSON
// array), written under `work`. "" and `why` on failure.
std::string oci_archive(const std::string &work, const std::string &rootfs, const std::string &ref,
                        const std::string &cmd_json, std::string &why);

// A containerd config (version 2) with root, state, sockets and opt under
// `dir`, the snapshotters that cannot work here disabled (and the CRI
// plugin, unless `cri`), then `rest` (more TOML, "@" standing for `dir`).
std::string containerd_config(const std::string &dir, bool cri, const std::string &rest = "");

// containerd with `config`, in a private mount namespace with a tmpfs on
// /run (what it and its shims put there stays there), stdout and stderr on
// `log`, dying with the calling process.
pid_t start_containerd(const std::string &config, const std::string &log);

} // namespace test
