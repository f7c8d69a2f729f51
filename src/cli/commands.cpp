// The command table and the CLI's shared output helpers.
#include "cli.hpp"
#include "runtime/log.hpp"

#include <cstdio>
#include <cstring>

namespace ocirun::cli {

namespace {

const Command kCommands[] = {
    {"create", "create a container from a bundle, its process waiting for start", "[options] ID",
     "  -b, --bundle DIR        bundle directory (default: current directory)\n"
     "  --pid-file FILE         write the container's init PID to FILE\n"
     "  --console-socket PATH   UNIX socket that receives the terminal master\n"
     "  --no-pivot              MS_MOVE + chroot instead of pivot_root\n"
     "  --no-new-keyring        keep the caller's session keyring\n"
     "  --preserve-fds N        pass N extra fds (from 3) to the container\n",
     cmd_create, true, true},
    {"start", "run the user process of a created container", "ID", "", cmd_start},
    {"run", "create and start a container", "[options] ID",
     "  -b, --bundle DIR        bundle directory (default: current directory)\n"
     "  -d, --detach            return once started; the container runs on\n"
     "  --keep                  keep the container's state after it exits (not with -d)\n"
     "  --pid-file FILE         write the container's init PID to FILE\n"
     "  --console-socket PATH   UNIX socket that receives the terminal master\n"
     "                          (in the foreground without it, oci-run relays\n"
     "                          the terminal to its own)\n"
     "  --no-pivot              MS_MOVE + chroot instead of pivot_root\n"
     "  --no-new-keyring        keep the caller's session keyring\n"
     "  --preserve-fds N        pass N extra fds (from 3) to the container\n",
     cmd_run, true, true},
    {"state", "print a container's state as JSON", "ID", "", cmd_state},
    {"kill", "send a signal to a container's init", "[options] ID [SIGNAL]",
     "  -a, --all               signal every process in the container: its cgroup, or\n"
     "                          without one its PID namespace (refused if it is ours)\n"
     "  SIGNAL is a name (TERM, SIGTERM) or number; default SIGTERM\n",
     cmd_kill},
    {"delete", "remove a container and everything it holds", "[options] ID",
     "  -f, --force             kill a running container first\n", cmd_delete},
    {"list", "list containers", "[options]",
     "  -f, --format FORMAT     table (default) or json\n"
     "  -q, --quiet             print IDs only\n",
     cmd_list},
    {"exec", "run a process in a running container", "[options] ID [COMMAND [ARG...]]",
     "  -p, --process FILE      process.json describing the process\n"
     "  -t, --tty               allocate a terminal\n"
     "  --console-socket PATH   UNIX socket that receives the terminal master\n"
     "                          (in the foreground without it, oci-run relays\n"
     "                          the terminal to its own)\n"
     "  -d, --detach            return once started\n"
     "  --pid-file FILE         write the process's PID to FILE\n"
     "  -e, --env K=V           add an environment variable (repeatable)\n"
     "  --cwd DIR               working directory inside the container\n"
     "  -u, --user UID[:GID]    user to run as\n"
     "  -c, --cap CAP           add a capability (repeatable)\n"
     "  --no-new-privs          set no_new_privs\n"
     "  --preserve-fds N        pass N extra fds (from 3)\n"
     "  -g, --additional-gids G add a supplementary group (repeatable)\n"
     "  --ignore-paused         exec into a paused container (the process waits\n"
     "                          frozen until resume)\n",
     cmd_exec, true, true},
    {"ps", "list the processes of a container", "[options] ID [PS-ARGS...]",
     "  -f, --format FORMAT     table (default) or json (PIDs)\n", cmd_ps},
    {"pause", "freeze every process of a container", "ID", "", cmd_pause},
    {"resume", "thaw a paused container", "ID", "", cmd_resume},
    {"events", "stream a container's events (stats, oom, egress, helper) as JSON lines",
     "[options] ID",
     "  --stats                 print statistics once and exit\n"
     "  --interval DURATION     statistics interval (default 5s)\n",
     cmd_events},
    {"update", "change a container's resource limits", "[options] ID",
     "  -r, --resources FILE    linux.resources JSON (- for stdin); flags below win\n"
     "  --pids-limit N          -1: unlimited (0: as the container's ociVersion reads it)\n"
     "  --memory BYTES          also --memory-reservation, --memory-swap,\n"
     "                          --kernel-memory, --kernel-memory-tcp (k/m/g suffixes)\n"
     "  --cpu-share N, --cpu-quota N, --cpu-period N, --cpu-rt-period N,\n"
     "  --cpu-rt-runtime N, --cpuset-cpus LIST, --cpuset-mems LIST\n"
     "  --blkio-weight N        10..1000\n",
     cmd_update},
    {"report", "what a running container is held to, as measured", "[options] ID | --bundle DIR",
     "  -f, --format FORMAT     table (default) or json\n"
     "  -b, --bundle DIR        before create: what the bundle asks for (declared)\n",
     cmd_report},
    {"features", "print the features this build implements, as JSON", "", "", cmd_features},
    {"spec", "write a default config.json", "[options]",
     "  -b, --bundle DIR        where to write config.json (default: current directory)\n"
     "  --rootless              a configuration for an unprivileged user\n",
     cmd_spec},
    {"checkpoint", "checkpoint a running container (needs CRIU)", "[options] ID", "",
     cmd_checkpoint},
    {"restore", "restore a container from a checkpoint (needs CRIU)", "[options] ID", "",
     cmd_restore},
};

} // namespace

const Command *find_command(const char *name) {
    for (const auto &c : kCommands)
        if (std::strcmp(c.name, name) == 0) return &c;
    return nullptr;
}

int report(const std::string &msg) {
    log::error(msg);
    std::fprintf(stderr, "oci-run: %s\n", msg.c_str());
    return 1;
}

int report(const Error &e) {
    return report(e.text());
}

int usage_error(const char *command, const std::string &what) {
    std::string msg = command ? std::string(command) + ": " + what : what;
    if (command) msg += " (see oci-run " + std::string(command) + " --help)";
    return report(msg);
}

int command_help(const Command &c) {
    std::printf("Usage: oci-run %s %s\n\n%s\n", c.name, c.usage, c.summary);
    if (c.help[0]) std::printf("\nOptions:\n%s", c.help);
    std::printf("  -h, --help              print this help\n");
    return 0;
}

int expect_args(const Command &cmd, int argc, char **argv, int n, bool at_least) {
    int have = argc - optind;
    if (have == n || (at_least && have > n)) return -1;
    if (have < n)
        return usage_error(cmd.name,
                           n - have == 1 && n == 1 ? "missing container ID" : "missing arguments");
    return usage_error(cmd.name, std::string("unexpected argument \"") + argv[optind + n] + "\"");
}

} // namespace ocirun::cli
