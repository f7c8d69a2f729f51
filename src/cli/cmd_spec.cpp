#include "cli.hpp"
#include "runtime/lifecycle/bundle.hpp"

namespace ocirun::cli {

int cmd_spec(const Globals &, int argc, char **argv) {
    std::string bundle = ".";
    bool rootless = false;
    static const struct option opts[] = {{"bundle", required_argument, nullptr, 'b'},
                                         {"rootless", no_argument, nullptr, 'R'},
                                         {nullptr, 0, nullptr, 0}};
    const Command &cmd = *find_command("spec");
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *arg) {
        if (c == 'b')
            bundle = arg;
        else
            rootless = true;
        return 0;
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 0)) >= 0) return rc;
    auto r = write_default_spec(bundle, rootless);
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
