#include "cli.hpp"
#include "oci/names.hpp"
#include "runtime/lifecycle/container.hpp"

#include <csignal>

namespace ocirun::cli {

int cmd_kill(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("kill");
    static const struct option opts[] = {{"all", no_argument, nullptr, 'a'},
                                         {nullptr, 0, nullptr, 0}};
    bool all = false;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int, const char *) {
        all = true;
        return 0;
    });
    if (rc >= 0) return rc;
    int have = argc - optind;
    if (have < 1 || have > 2) return expect_args(cmd, argc, argv, have < 1 ? 1 : 2);
    int sig = SIGTERM;
    if (have == 2) {
        auto s = oci::signal_from_name(argv[optind + 1]);
        if (!s)
            return usage_error(cmd.name,
                               std::string("unknown signal \"") + argv[optind + 1] + "\"");
        sig = *s;
    }
    auto r = kill_container(g.root, argv[optind], sig, all);
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
