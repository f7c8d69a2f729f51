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

int cmd_create(const Globals &, int argc, char **argv) { return pending("create", argc, argv); }
int cmd_start(const Globals &, int argc, char **argv) { return pending("start", argc, argv); }
int cmd_run(const Globals &, int argc, char **argv) { return pending("run", argc, argv); }
int cmd_state(const Globals &, int argc, char **argv) { return pending("state", argc, argv); }
int cmd_kill(const Globals &, int argc, char **argv) { return pending("kill", argc, argv); }
int cmd_delete(const Globals &, int argc, char **argv) { return pending("delete", argc, argv); }
int cmd_list(const Globals &, int argc, char **argv) { return pending("list", argc, argv); }
int cmd_exec(const Globals &, int argc, char **argv) { return pending("exec", argc, argv); }
int cmd_ps(const Globals &, int argc, char **argv) { return pending("ps", argc, argv); }
int cmd_pause(const Globals &, int argc, char **argv) { return pending("pause", argc, argv); }
int cmd_resume(const Globals &, int argc, char **argv) { return pending("resume", argc, argv); }
int cmd_events(const Globals &, int argc, char **argv) { return pending("events", argc, argv); }
int cmd_update(const Globals &, int argc, char **argv) { return pending("update", argc, argv); }

} // namespace ocirun::cli
