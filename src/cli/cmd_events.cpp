#include "cli.hpp"
#include "runtime/events.hpp"

#include <cstdio>
#include <cstdlib>

namespace ocirun::cli {

namespace {

// "5s", "500ms", "1m", "2" (seconds), as runc's --interval (Go durations).
bool parse_interval(const std::string &s, int &ms) {
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || v <= 0) return false;
    std::string unit = end;
    double mult = unit.empty() || unit == "s" ? 1000 : unit == "ms" ? 1 : unit == "m" ? 60000 : -1;
    if (mult < 0) return false;
    ms = static_cast<int>(v * mult);
    return ms >= 100;
}

} // namespace

int cmd_events(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("events");
    static const struct option opts[] = {{"stats", no_argument, nullptr, 's'},
                                         {"interval", required_argument, nullptr, 'i'},
                                         {nullptr, 0, nullptr, 0}};
    bool once = false;
    int interval = 5000;
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *v) -> int {
        if (c == 's') {
            once = true;
            return 0;
        }
        if (!parse_interval(v, interval))
            return usage_error(cmd.name, std::string("--interval: expected a duration of at "
                                                     "least 100ms (5s, 500ms), got \"") +
                                             v + "\"");
        return 0;
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    if (once) {
        auto ev = container_stats_event(g.root, argv[optind]);
        if (!ev) return report(ev.error());
        std::printf("%s\n", ev->c_str());
        return 0;
    }
    auto r = stream_events(g.root, argv[optind], interval, [](const std::string &line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    });
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
