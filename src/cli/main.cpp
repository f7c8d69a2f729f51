// oci-run: global flags, then one command from the table.
#include "build_config.h"
#include "cli.hpp"
#include "oci/spec_io.hpp"
#include "runtime/lifecycle/sealed_binary.hpp"
#include "runtime/log.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/sandbox_policy.hpp"
#include "version.h"

#include <fcntl.h>
#include <getopt.h>
#include <seccomp.h>
#include <unistd.h>
#include <yajl/yajl_version.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ocirun;

namespace {

void print_version() {
    const scmp_version *v = seccomp_version();
    int y = yajl_version();
    std::printf("oci-run version %s\n"
                "commit: %s\n"
                "spec: %s\n"
                "libseccomp: %u.%u.%u\n"
                "yajl: %d.%d.%d\n",
                OCIRUN_VERSION, OCIRUN_COMMIT, oci::kSpecVersion, v->major, v->minor, v->micro,
                y / 10000, (y / 100) % 100, y % 100);
}

void print_help() {
    std::printf("oci-run: an OCI container runtime that enforces a declared sandbox policy\n"
                "\n"
                "Usage: oci-run [global options] COMMAND [command options] [arguments]\n"
                "\n"
                "Commands:\n");
    static const char *order[] = {"create", "start",  "run",      "state", "kill",       "delete",
                                  "list",   "exec",   "ps",       "pause", "resume",     "events",
                                  "update", "report", "features", "spec",  "checkpoint", "restore"};
    for (const char *name : order) {
        const cli::Command *c = cli::find_command(name);
        std::printf("  %-11s %s\n", c->name, c->summary);
    }
    std::printf(
        "\n"
        "Global options:\n"
        "  --root DIR            state directory (default /run/oci-run as root,\n"
        "                        $XDG_RUNTIME_DIR/oci-run otherwise, and as root of a\n"
        "                        user namespace, as rootless Podman runs it, unless\n"
        "                        USER is root)\n"
        "  --log FILE            append log lines to FILE\n"
        "  --log-format FORMAT   text (default) or json (runc's JSON lines)\n"
        "  --debug               log debug lines (to stderr without --log)\n"
        "  --systemd-cgroup      cgroups as systemd scopes (cgroupsPath slice:prefix:name),\n"
        "                        through D-Bus (an unprivileged user's: its own manager's)\n"
        "  --cgroup-manager M    cgroupfs (the default), systemd (as --systemd-cgroup) or\n"
        "                        disabled: the container gets no cgroup, and a limit in\n"
        "                        linux.resources is refused (crun's option)\n"
        "  --rootless VALUE      true, false or auto (default auto: rootless when not\n"
        "                        root of the host);\n"
        "                        a rootless container gets a cgroup only if it sets limits\n"
        "  --criu PATH           accepted for runc compatibility and ignored (no CRIU)\n"
        "  -v, --version         print versions and exit\n"
        "  -h, --help            print this help, or a command's with COMMAND --help\n"
        "\n"
        "Exit status: 0 on success, 1 on error, the container's status for run.\n");
}

// As runc: root of a user namespace (rootless Podman's) that has
// $XDG_RUNTIME_DIR, and USER unset or not root, is a user, whose directory
// that is.
std::string default_root() {
    const char *xdg = std::getenv("XDG_RUNTIME_DIR");
    const char *user = std::getenv("USER");
    bool user_runtime_dir = xdg && *xdg &&
                            (geteuid() != 0 || (!ocirun::in_initial_user_namespace() &&
                                                (!user || std::string_view(user) != "root")));
    if (user_runtime_dir) return std::string(xdg) + "/oci-run";
    if (geteuid() == 0) return "/run/oci-run";
    return "/tmp/oci-run-" + std::to_string(geteuid());
}

} // namespace

int main(int argc, char **argv) {
    cli::Globals g;
    // The operator's configuration for the name it was installed under.
    ocirun::set_runtime_name(argc > 0 ? argv[0] : nullptr);
    enum { ROOT = 256, LOG, LOG_FORMAT, DEBUG, SYSTEMD, CGROUP_MANAGER, ROOTLESS, CRIU };
    static const struct option opts[] = {
        {"root", required_argument, nullptr, ROOT},
        {"log", required_argument, nullptr, LOG},
        {"log-format", required_argument, nullptr, LOG_FORMAT},
        {"debug", no_argument, nullptr, DEBUG},
        {"systemd-cgroup", no_argument, nullptr, SYSTEMD},
        {"cgroup-manager", required_argument, nullptr, CGROUP_MANAGER},
        {"rootless", required_argument, nullptr, ROOTLESS},
        {"criu", required_argument, nullptr, CRIU},
        {"version", no_argument, nullptr, 'v'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    std::string log_format = "text";
    opterr = 0;
    int c;
    // '+': stop at the command name; options after it are the command's.
    while ((c = getopt_long_only(argc, argv, "+:vh", opts, nullptr)) != -1) {
        switch (c) {
        case ROOT:
            // An empty --root would silently mean the default one.
            if (!*optarg) return cli::usage_error(nullptr, "--root: empty path");
            g.root = optarg;
            break;
        case LOG:
            g.log_path = optarg;
            break;
        case LOG_FORMAT:
            log_format = optarg;
            break;
        case DEBUG:
            g.debug = true;
            break;
        case SYSTEMD:
            g.systemd_cgroup = true;
            break;
        case CGROUP_MANAGER:
            if (std::string_view(optarg) == "systemd")
                g.systemd_cgroup = true;
            else if (std::string_view(optarg) == "disabled")
                g.no_cgroup = true;
            else if (std::string_view(optarg) != "cgroupfs")
                return cli::usage_error(nullptr,
                                        std::string("--cgroup-manager: expected cgroupfs, systemd "
                                                    "or disabled, got \"") +
                                            optarg + "\"");
            break;
        case ROOTLESS:
            g.rootless = optarg;
            break;
        case CRIU:
            break; // accepted for runc compatibility; checkpoint/restore are unavailable
        case 'v':
            print_version();
            return 0;
        case 'h':
            print_help();
            return 0;
        case ':':
            return cli::usage_error(nullptr,
                                    std::string("option ") + argv[optind - 1] + " needs a value");
        default:
            return cli::usage_error(nullptr, std::string("unknown option ") + argv[optind - 1]);
        }
    }
    if (log_format != "text" && log_format != "json")
        return cli::usage_error(nullptr,
                                "--log-format: expected text or json, got \"" + log_format + "\"");
    g.log_json = log_format == "json";
    if (g.systemd_cgroup && g.no_cgroup)
        return cli::usage_error(
            nullptr, "--cgroup-manager disabled: no cgroup, but systemd's was asked for");
    if (g.rootless != "true" && g.rootless != "false" && g.rootless != "auto")
        return cli::usage_error(nullptr, "--rootless: expected true, false or auto, got \"" +
                                             g.rootless + "\"");
    int log_fd = -1;
    if (!g.log_path.empty()) {
        log_fd = open(g.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (log_fd < 0) return cli::report(Error{errno, "--log: open " + g.log_path});
    }
    log::configure(log_fd, g.log_json ? log::Format::json : log::Format::text, g.debug);
    if (g.root.empty())
        g.root = default_root();
    else if (g.root[0] != '/') {
        char *abs = realpath(".", nullptr);
        if (abs) {
            g.root = std::string(abs) + "/" + g.root;
            free(abs);
        }
    }

    // A usage error is one line on stderr and exit 1, as for a command's own
    // flags; the help text is for --help and `help`.
    if (optind >= argc) return cli::usage_error(nullptr, "missing command (see oci-run --help)");
    auto unknown = [](const char *name) {
        return cli::usage_error(nullptr, std::string("unknown command \"") + name +
                                             "\" (see oci-run --help)");
    };
    const char *name = argv[optind];
    if (std::strcmp(name, "help") == 0) {
        if (optind + 1 < argc) {
            const cli::Command *cmd = cli::find_command(argv[optind + 1]);
            return cmd ? cli::command_help(*cmd) : unknown(argv[optind + 1]);
        }
        print_help();
        return 0;
    }
    const cli::Command *cmd = cli::find_command(name);
    if (!cmd) return unknown(name);
    if (cmd->enters_container) {
        g.sealed = running_sealed();
        g.argv = argv;
        if (!g.sealed && !cmd->seals_late) return cli::report(reexec_sealed(argv));
    }
    // The command sees argv[0] = its name.
    int cargc = argc - optind;
    char **cargv = argv + optind;
    optind = 0; // re-initialise getopt for the command's flags
    return cmd->run(g, cargc, cargv);
}
