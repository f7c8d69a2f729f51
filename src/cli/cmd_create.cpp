#include "create_flags.hpp"

namespace ocirun::cli {

int cmd_create(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("create");
    static const struct option opts[] = {OCIRUN_CREATE_OPTIONS, {nullptr, 0, nullptr, 0}};
    CreateOptions o = create_options(g);
    int rc = parse_flags(cmd, argc, argv, opts, false,
                         [&](int c, const char *arg) { return create_flag(cmd, o, c, arg); });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    if ((rc = check_systemd_cgroup(g, cmd)) >= 0) return rc;
    o.id = argv[optind];
    auto pid = create_container(o);
    return pid ? 0 : report(pid.error());
}

} // namespace ocirun::cli
