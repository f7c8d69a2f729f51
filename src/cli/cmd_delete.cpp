#include "cli.hpp"
#include "runtime/lifecycle/container.hpp"

namespace ocirun::cli {

int cmd_delete(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("delete");
    static const struct option opts[] = {{"force", no_argument, nullptr, 'f'},
                                         {nullptr, 0, nullptr, 0}};
    bool force = false;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int, const char *) {
        force = true;
        return 0;
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    auto r = delete_container(g.root, argv[optind], force);
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
