// The operator's runtime configuration: the sandbox policy every container
// gets (the baseline) and which dev.ocirun.* keys a bundle may set, which
// may only tighten it. In a cluster the pod's author writes the
// annotations; the node's operator writes this file, so a pod cannot loosen
// what the operator set. One file per name oci-run is run as
// ($sysconfdir/oci-run/NAME.json, NAME the basename of argv[0]: a
// RuntimeClass's BinaryName or a Podman runtime's path, a symlink to
// oci-run), else $sysconfdir/oci-run/default.json, else none (no baseline;
// every key a bundle's). A JSON object:
//
//   { "policy": { "dev.ocirun.network": "https",
//                 "dev.ocirun.domains": "pypi.org,*.pythonhosted.org",
//                 "dev.ocirun.deny": "/root/.ssh" },
//     "bundleKeys": [ "dev.ocirun.deny", "dev.ocirun.network",
//                     "dev.ocirun.domains" ] }
//
// "policy": annotations as a bundle writes them, checked like a bundle's.
// "bundleKeys": the keys a bundle may set (an entry ending in "." is a
// prefix: "dev.ocirun." is every key, the default); [] lets a bundle set
// none. `oci-run features` lists them as potentiallyUnsafeConfigAnnotations.
//
// Pure code: the runtime reads the file (runtime/security/sandbox_policy.hpp).
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

struct RuntimeConfig {
    std::string path;      // the file read; "" for none
    oci::StringMap policy; // the baseline: dev.ocirun.* annotations
    std::vector<std::string> bundle_keys = {"dev.ocirun."};
};

// The file's text; errors name `path` and the member.
Result<RuntimeConfig> parse_runtime_config(std::string_view text, const std::string &path);

// The annotations a container's sandbox policy is parsed from: `bundle`'s,
// with the baseline's dev.ocirun.* keys under them. A bundle key the
// configuration does not let a bundle set is refused, and so is a value
// that loosens the baseline, each naming the key: the path lists
// (deny, deny-write, deny-rename, protected) add to the baseline's; strict
// enforcement and trace cannot be turned off; the network keys may ask for
// less (a smaller need, fewer domains or ports, more deny-domains, lower
// limits) but not more.
Result<oci::StringMap> apply_runtime_config(const RuntimeConfig &config,
                                            const oci::StringMap &bundle);

} // namespace ocirun
