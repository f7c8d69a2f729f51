// The command line: runc's global flags and command table. Each command lives
// in its own file, parses its own flags and makes one library call.
#pragma once

#include "oci/error.hpp"

#include <string>

namespace ocirun::cli {

struct Globals {
    std::string root;     // --root
    std::string log_path; // --log
    bool log_json = false;
    bool debug = false;
    bool systemd_cgroup = false;
    bool no_cgroup = false;        // --cgroup-manager disabled
    std::string rootless = "auto"; // true | false | auto
    // Commands that enter a container: whether this process runs from a
    // sealed view, and the arguments to re-execute it with.
    bool sealed = false;
    char **argv = nullptr;
};

struct Command {
    const char *name;
    const char *summary;
    const char *usage; // after "oci-run NAME "
    const char *help;  // option lines, already indented
    int (*run)(const Globals &g, int argc, char **argv);
    bool enters_container = false; // runs from a sealed copy (runtime/lifecycle/sealed_binary.hpp)
    bool seals_late = false;       // ... unless the init can use the exec stage, which the
                                   // command finds out (runtime/lifecycle/exec_stage.hpp)
};

// Print "oci-run: <context>: <error>" on stderr and in the log; returns 1.
int report(const Error &e);
int report(const std::string &msg);

// Print the command's help (usage, summary, options) to stdout; returns 0.
int command_help(const Command &c);

// A usage error: one line naming the problem and where to look; returns 1.
int usage_error(const char *command, const std::string &what);

const Command *find_command(const char *name);

// Per-command entry points.
int cmd_create(const Globals &, int, char **);
int cmd_start(const Globals &, int, char **);
int cmd_run(const Globals &, int, char **);
int cmd_state(const Globals &, int, char **);
int cmd_kill(const Globals &, int, char **);
int cmd_delete(const Globals &, int, char **);
int cmd_list(const Globals &, int, char **);
int cmd_exec(const Globals &, int, char **);
int cmd_ps(const Globals &, int, char **);
int cmd_pause(const Globals &, int, char **);
int cmd_resume(const Globals &, int, char **);
int cmd_events(const Globals &, int, char **);
int cmd_update(const Globals &, int, char **);
int cmd_features(const Globals &, int, char **);
int cmd_report(const Globals &, int, char **);
int cmd_spec(const Globals &, int, char **);
int cmd_checkpoint(const Globals &, int, char **);
int cmd_restore(const Globals &, int, char **);

} // namespace ocirun::cli

#include <getopt.h>

namespace ocirun::cli {

// getopt_long_only over a command's flags, with -h/--help handled for every
// command. `stop_at_arg` stops at the first positional argument (exec, run:
// what follows belongs to the container). on_flag(id, optarg) returns 0 to
// go on or an exit code. Returns -1 when parsing finished (positionals start
// at optind), or an exit code to return.
template <class F>
int parse_flags(const Command &cmd, int argc, char **argv, const struct option *opts,
                bool stop_at_arg, F &&on_flag) {
    std::string shorts = stop_at_arg ? "+:h" : ":h";
    for (const struct option *o = opts; o->name; o++)
        if (o->val > 0 && o->val < 128 && o->val != 'h') {
            shorts += static_cast<char>(o->val);
            if (o->has_arg == required_argument) shorts += ':';
        }
    struct option all[64];
    int n = 0;
    for (const struct option *o = opts; o->name && n < 62; o++)
        all[n++] = *o;
    all[n++] = {"help", no_argument, nullptr, 'h'};
    all[n] = {nullptr, 0, nullptr, 0};
    opterr = 0;
    optind = 0;
    int c;
    while ((c = getopt_long_only(argc, argv, shorts.c_str(), all, nullptr)) != -1) {
        if (c == 'h') return command_help(cmd);
        if (c == ':')
            return usage_error(cmd.name,
                               std::string("option ") + argv[optind - 1] + " needs a value");
        if (c == '?')
            return usage_error(cmd.name, std::string("unknown option ") + argv[optind - 1]);
        int rc = on_flag(c, optarg);
        if (rc != 0) return rc;
    }
    return -1;
}

// Exactly `n` positional arguments remain (or at least `n` with `at_least`).
int expect_args(const Command &cmd, int argc, char **argv, int n, bool at_least = false);

} // namespace ocirun::cli
