#include "cli.hpp"

namespace ocirun::cli {

// oci-run has no CRIU integration; say so instead of pretending.
int cmd_restore(const Globals &, int argc, char **argv) {
    const Command &cmd = *find_command("restore");
    // Flags are not interpreted: whatever was asked, the answer is the same.
    for (int i = 1; i < argc; i++)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h")
            return command_help(cmd);
    return report("restore: CRIU support is not available in oci-run");
}

} // namespace ocirun::cli
