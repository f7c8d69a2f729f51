// The runtime's log: lines to the --log file (text or runc's JSON lines, which
// the containerd shim parses); without --log, warnings and --debug lines go
// to stderr (errors reach it through the CLI). Library code
// logs through here and never prints or exits on its own.
#pragma once

#include <string_view>

namespace ocirun::log {

enum class Level { debug, info, warning, error };
enum class Format { text, json };

// Configure once, from the CLI's global flags. fd < 0 means no log file.
void configure(int fd, Format format, bool debug);
bool debug_enabled();

void write(Level level, std::string_view msg);

inline void debug(std::string_view msg) {
    if (debug_enabled()) write(Level::debug, msg);
}
inline void info(std::string_view msg) {
    write(Level::info, msg);
}
inline void warning(std::string_view msg) {
    write(Level::warning, msg);
}
inline void error(std::string_view msg) {
    write(Level::error, msg);
}

} // namespace ocirun::log
