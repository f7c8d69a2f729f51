// Commands whose issue has not landed yet. Each answers with an error and
// exit 1 rather than pretending to succeed; a command moves to its own file
// when it is implemented.
#include "cli.hpp"

namespace ocirun::cli {

namespace {
int pending(const char *name) { return report(std::string(name) + ": not implemented yet"); }
} // namespace

int cmd_create(const Globals &, int, char **) { return pending("create"); }
int cmd_start(const Globals &, int, char **) { return pending("start"); }
int cmd_run(const Globals &, int, char **) { return pending("run"); }
int cmd_state(const Globals &, int, char **) { return pending("state"); }
int cmd_kill(const Globals &, int, char **) { return pending("kill"); }
int cmd_delete(const Globals &, int, char **) { return pending("delete"); }
int cmd_list(const Globals &, int, char **) { return pending("list"); }
int cmd_exec(const Globals &, int, char **) { return pending("exec"); }
int cmd_ps(const Globals &, int, char **) { return pending("ps"); }
int cmd_pause(const Globals &, int, char **) { return pending("pause"); }
int cmd_resume(const Globals &, int, char **) { return pending("resume"); }
int cmd_events(const Globals &, int, char **) { return pending("events"); }
int cmd_update(const Globals &, int, char **) { return pending("update"); }

} // namespace ocirun::cli
