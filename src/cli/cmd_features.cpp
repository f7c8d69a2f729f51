#include "cli.hpp"
#include "runtime/lifecycle/features.hpp"

#include <cstdio>

namespace ocirun::cli {

int cmd_features(const Globals &, int argc, char **argv) {
    static const struct option opts[] = {{nullptr, 0, nullptr, 0}};
    const Command &cmd = *find_command("features");
    int rc = parse_flags(cmd, argc, argv, opts, false, [](int, const char *) { return 0; });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 0)) >= 0) return rc;
    std::fputs(features_json().c_str(), stdout);
    return 0;
}

} // namespace ocirun::cli
