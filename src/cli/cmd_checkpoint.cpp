#include "cli.hpp"

namespace ocirun::cli {

// oci-run has no CRIU integration; say so instead of pretending.
int cmd_checkpoint(const Globals &, int, char **) {
    return report("checkpoint: CRIU support is not available in oci-run");
}

} // namespace ocirun::cli
