#include "cli.hpp"
#include "runtime/lifecycle/container.hpp"

namespace ocirun::cli {

namespace {
int freeze_command(const Globals &g, int argc, char **argv, const char *name) {
    const Command &cmd = *find_command(name);
    static const struct option opts[] = {{nullptr, 0, nullptr, 0}};
    int rc = parse_flags(cmd, argc, argv, opts, false, [](int, const char *) { return 0; });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    auto r = std::string_view(name) == "pause" ? pause_container(g.root, argv[optind])
                                               : resume_container(g.root, argv[optind]);
    return r ? 0 : report(r.error());
}
} // namespace

int cmd_pause(const Globals &g, int argc, char **argv) {
    return freeze_command(g, argc, argv, "pause");
}

int cmd_resume(const Globals &g, int argc, char **argv) {
    return freeze_command(g, argc, argv, "resume");
}

} // namespace ocirun::cli
