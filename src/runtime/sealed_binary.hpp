// CVE-2019-5736: a process in the container must never reach the runtime's
// binary on the host, neither through /proc/PID/exe of a runtime process that
// is inside the container's namespaces (the init before exec, `exec`'s child)
// nor by exec'ing /proc/self/exe from there (a `#!/proc/self/exe` entry point).
// The commands that put a process into a container therefore re-execute
// themselves from a sealed memfd copy: /proc/self/exe is then that copy, which
// cannot be written (F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK, F_SEAL_SEAL) and
// is not the host file anyway.
#pragma once

#include "oci/error.hpp"

namespace ocirun {

// The seals a copy made by reexec_sealed carries.
int sealed_binary_seals();

// True when this process already runs from such a sealed copy.
bool running_sealed();

// Copy /proc/self/exe into a sealed memfd and execute it with `argv` and the
// current environment. Returns only on failure.
Error reexec_sealed(char *const argv[]);

} // namespace ocirun
