#include "cli.hpp"

namespace ocirun::cli {

// oci-run has no CRIU integration; say so instead of pretending.
int cmd_restore(const Globals &, int, char **) {
    return report("restore: CRIU support is not available in oci-run");
}

} // namespace ocirun::cli
