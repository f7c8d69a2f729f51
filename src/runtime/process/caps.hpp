// Capability sets through the raw capset/prctl interface (no libcap).
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

namespace ocirun {

// Apply all five sets exactly: drop the bounding set to `bounding`, set
// effective/permitted/inheritable with capset, then raise each ambient one
// (clearing the rest). Call after setuid with PR_SET_KEEPCAPS on.
Status drop_bounding(const oci::Capabilities &caps);
Status apply_capabilities(const oci::Capabilities &caps);

// Before a process becomes visible to the container: permitted and
// effective cut down to what `caps` will hold (its permitted and effective
// sets) plus `extra` (CAP_* bits the setup still needs), inheritable and
// ambient empty. apply_capabilities sets the final sets later.
Status limit_capabilities(const oci::Capabilities &caps, uint64_t extra);

// The five sets as masks of the capabilities this kernel knows: what
// drop_bounding, limit_capabilities and apply_capabilities apply, and what
// the exec stage is handed to apply the same way. `ambient` holds only those
// also permitted and inheritable (the kernel refuses the others; runc
// leaves them out).
struct CapMasks {
    uint64_t bounding = 0, effective = 0, permitted = 0, inheritable = 0, ambient = 0;
};
CapMasks capability_masks(const oci::Capabilities &caps);

// What the runtime says of a process's capabilities before it starts it
// (`where`: "process.capabilities", "exec"): a warning per name this build
// or kernel does not know (runtime-spec: MUST log, SHOULD NOT fail; nothing
// is granted for it), and at debug each ambient one that is not also
// permitted and inheritable, which the kernel would refuse and is left out
// (as runc).
void capability_notes(const oci::Capabilities &caps, const std::string &where);

} // namespace ocirun
