#include "cli.hpp"
#include "runtime/lifecycle/container.hpp"

#include <cstdio>

namespace ocirun::cli {

int cmd_state(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("state");
    static const struct option opts[] = {{nullptr, 0, nullptr, 0}};
    int rc = parse_flags(cmd, argc, argv, opts, false, [](int, const char *) { return 0; });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    auto st = container_state(g.root, argv[optind]);
    if (!st) return report(st.error());
    std::printf("%s\n", oci::write_state(*st, true).c_str());
    return 0;
}

} // namespace ocirun::cli
