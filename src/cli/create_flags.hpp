// Flags shared by create and run.
#pragma once

#include "cli.hpp"
#include "runtime/lifecycle/container.hpp"
#include "runtime/lifecycle/sealed_binary.hpp"
#include "runtime/process/userns.hpp"

#include <cstdlib>
#include <unistd.h>

namespace ocirun::cli {

enum CreateFlag {
    F_BUNDLE = 'b',
    F_PID_FILE = 300,
    F_CONSOLE,
    F_NO_PIVOT,
    F_NO_KEYRING,
    F_PRESERVE
};

#define OCIRUN_CREATE_OPTIONS                                                                      \
    {"bundle", required_argument, nullptr, F_BUNDLE},                                              \
        {"pid-file", required_argument, nullptr, F_PID_FILE},                                      \
        {"console-socket", required_argument, nullptr, F_CONSOLE},                                 \
        {"no-pivot", no_argument, nullptr, F_NO_PIVOT},                                            \
        {"no-new-keyring", no_argument, nullptr, F_NO_KEYRING}, {                                  \
        "preserve-fds", required_argument, nullptr, F_PRESERVE                                     \
    }

// --systemd-cgroup: systemd must be running (never a fall back to cgroupfs).
inline int check_systemd_cgroup(const Globals &g, const Command &cmd) {
    if (!g.systemd_cgroup) return -1;
    if (::access("/run/systemd/system", F_OK) != 0)
        return report(std::string(cmd.name) +
                      ": --systemd-cgroup: systemd is not running on this host "
                      "(/run/systemd/system is missing)");
    return -1;
}

// What create and run share beyond the flags: the state directory, rootless
// mode, and how to run sealed (runtime/lifecycle/exec_stage.hpp).
inline CreateOptions create_options(const Globals &g) {
    CreateOptions o;
    o.root = g.root;
    o.rootless = g.rootless == "true" || (g.rootless == "auto" && !ocirun::host_root());
    o.systemd_cgroup = g.systemd_cgroup;
    o.no_cgroup = g.no_cgroup;
    o.sealed = g.sealed;
    char **argv = g.argv;
    o.reseal = [argv] { return reexec_sealed(argv); };
    return o;
}

// Returns 0 when handled, -1 when `c` is not a create flag, or an exit code.
inline int create_flag(const Command &cmd, CreateOptions &o, int c, const char *arg) {
    switch (c) {
    case F_BUNDLE:
        o.bundle = arg;
        return 0;
    case F_PID_FILE:
        o.pid_file = arg;
        return 0;
    case F_CONSOLE:
        o.console_socket = arg;
        return 0;
    case F_NO_PIVOT:
        o.no_pivot = true;
        return 0;
    case F_NO_KEYRING:
        o.no_new_keyring = true;
        return 0;
    case F_PRESERVE: {
        char *end;
        long n = std::strtol(arg, &end, 10);
        if (end == arg || *end || n < 0 || n > 1000)
            return usage_error(cmd.name, std::string("--preserve-fds: expected 0..1000, got \"") +
                                             arg + "\"");
        o.preserve_fds = static_cast<int>(n);
        return 0;
    }
    }
    return -1;
}

} // namespace ocirun::cli
