#include "cli.hpp"
#include "oci/json.hpp"
#include "runtime/lifecycle/container.hpp"

#include <cstdio>
#include <string_view>

namespace ocirun::cli {

int cmd_list(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("list");
    static const struct option opts[] = {{"format", required_argument, nullptr, 'f'},
                                         {"quiet", no_argument, nullptr, 'q'},
                                         {nullptr, 0, nullptr, 0}};
    std::string format = "table";
    bool quiet = false;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *arg) {
        if (c == 'f')
            format = arg;
        else
            quiet = true;
        return 0;
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 0)) >= 0) return rc;
    if (format != "table" && format != "json")
        return usage_error(cmd.name, "--format: expected table or json, got \"" + format + "\"");
    auto list = list_containers(g.root);
    if (!list) return report(list.error());
    if (quiet) {
        for (const auto &c : *list)
            std::printf("%s\n", c.state.id.c_str());
        return 0;
    }
    if (format == "json") {
        json::Writer w(false);
        w.begin_array();
        for (const auto &c : *list) {
            w.begin_object()
                .kv("ociVersion", c.state.oci_version)
                .kv("id", c.state.id)
                .kv_i64("pid", c.state.pid)
                .kv("status", oci::status_name(c.state.status))
                .kv("bundle", c.state.bundle)
                .kv("created", c.created)
                .kv_u64("owner", c.owner);
            w.opt_map("annotations", c.state.annotations);
            w.end_object();
        }
        w.end_array();
        std::printf("%.*s\n", static_cast<int>(w.view().size()), w.view().data());
        return 0;
    }
    std::printf("%-20s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
                "OWNER");
    for (const auto &c : *list)
        std::printf("%-20s %-8d %-10s %-40s %-30s %u\n", c.state.id.c_str(), c.state.pid,
                    oci::status_name(c.state.status), c.state.bundle.c_str(), c.created.c_str(),
                    c.owner);
    return 0;
}

} // namespace ocirun::cli
