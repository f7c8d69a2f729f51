#include "cli.hpp"
#include "runtime/lifecycle/container.hpp"

namespace ocirun::cli {

int cmd_start(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("start");
    static const struct option opts[] = {{nullptr, 0, nullptr, 0}};
    int rc = parse_flags(cmd, argc, argv, opts, false, [](int, const char *) { return 0; });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    auto r = start_container(g.root, argv[optind]);
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
