// Commands whose issue has not landed yet. Each answers with an error and
// exit 1 rather than pretending to succeed; a command moves to its own file
// when it is implemented.
#include "cli.hpp"

#include <string_view>

namespace ocirun::cli {

namespace {
int pending(const char *name, int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h")
            return command_help(*find_command(name));
    return report(std::string(name) + ": not implemented yet");
}
} // namespace

int cmd_events(const Globals &, int argc, char **argv) {
    return pending("events", argc, argv);
}
int cmd_update(const Globals &, int argc, char **argv) {
    return pending("update", argc, argv);
}

} // namespace ocirun::cli
