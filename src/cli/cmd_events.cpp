#include "cli.hpp"
#include "runtime/lifecycle/events.hpp"

#include <cstdio>
#include <cstdlib>

namespace ocirun::cli {

namespace {

// "5s", "500ms", "1.5m", "2" (seconds), as runc's --interval (Go durations),
// from 100ms to a day. Plain decimals only: strtod alone would also take
// "0x10", "1e300", "inf" and "nan".
bool parse_interval(const std::string &s, int &ms) {
    size_t digits = s.find_first_not_of("0123456789.");
    std::string number = s.substr(0, digits);
    if (number.empty() || number.find_first_of("0123456789") == std::string::npos ||
        number.find('.') != number.rfind('.') || number.size() > 12)
        return false;
    double v = std::strtod(number.c_str(), nullptr);
    std::string unit = digits == std::string::npos ? "" : s.substr(digits);
    double mult = unit.empty() || unit == "s" ? 1000 : unit == "ms" ? 1 : unit == "m" ? 60000 : -1;
    if (mult < 0 || v * mult < 100 || v * mult > 86400000) return false;
    ms = static_cast<int>(v * mult);
    return true;
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
            return usage_error(cmd.name, std::string("--interval: expected a duration from "
                                                     "100ms to 24h (5s, 500ms, 1.5m), got \"") +
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
