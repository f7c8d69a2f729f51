// `update`: new resource limits for a container that exists, merged into its
// saved configuration (so later updates and stats see them) and written to
// its cgroup.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <string>

namespace ocirun {

// Fields set in `delta` replace the container's; device rules cannot change.
Status update_container(const std::string &root, const std::string &id,
                        const oci::Resources &delta);

// Merge `delta` into `into` field by field (exposed for unit tests).
void merge_resources(oci::Resources &into, const oci::Resources &delta);

} // namespace ocirun
