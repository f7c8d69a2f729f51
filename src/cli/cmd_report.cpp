#include "cli.hpp"
#include "runtime/security/report.hpp"

#include <cstdio>

namespace ocirun::cli {

int cmd_report(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("report");
    static const struct option opts[] = {{"format", required_argument, nullptr, 'f'},
                                         {"bundle", required_argument, nullptr, 'b'},
                                         {nullptr, 0, nullptr, 0}};
    std::string format = "table", bundle;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *v) {
        (c == 'b' ? bundle : format) = v;
        return 0;
    });
    if (rc >= 0) return rc;
    if (format != "table" && format != "json")
        return usage_error(cmd.name, "--format: expected table or json, got \"" + format + "\"");
    if ((rc = expect_args(cmd, argc, argv, bundle.empty() ? 1 : 0)) >= 0) return rc;
    auto rows = bundle.empty() ? container_report(g.root, argv[optind]) : bundle_report(bundle);
    if (!rows) return report(rows.error());
    std::printf("%s%s", format == "json" ? report_json(*rows).c_str() : report_table(*rows).c_str(),
                format == "json" ? "\n" : "");
    return 0;
}

} // namespace ocirun::cli
