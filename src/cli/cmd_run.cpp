#include "create_flags.hpp"

namespace ocirun::cli {

int cmd_run(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("run");
    enum { DETACH = 'd', KEEP = 400 };
    static const struct option opts[] = {OCIRUN_CREATE_OPTIONS,
                                         {"detach", no_argument, nullptr, DETACH},
                                         {"keep", no_argument, nullptr, KEEP},
                                         {nullptr, 0, nullptr, 0}};
    CreateOptions o = create_options(g);
    bool detach = false, keep = false;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *arg) {
        if (c == DETACH)
            detach = true;
        else if (c == KEEP)
            keep = true;
        else
            return create_flag(cmd, o, c, arg);
        return 0;
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    if (detach && keep) return usage_error(cmd.name, "--keep and --detach cannot be used together");
    if ((rc = check_systemd_cgroup(g, cmd)) >= 0) return rc;
    o.id = argv[optind];
    auto status = run_container(o, detach, keep);
    return status ? *status : report(status.error());
}

} // namespace ocirun::cli
