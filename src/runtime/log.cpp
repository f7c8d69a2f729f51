#include "runtime/log.hpp"

#include "oci/json.hpp"
#include "oci/state.hpp"

#include <cerrno>
#include <string>
#include <unistd.h>

namespace ocirun::log {

namespace {

int g_fd = -1;
Format g_format = Format::text;
bool g_debug = false;

const char *level_name(Level l) {
    switch (l) {
    case Level::debug:
        return "debug";
    case Level::info:
        return "info";
    case Level::warning:
        return "warning";
    case Level::error:
        return "error";
    }
    return "error";
}

void write_all(int fd, std::string_view s) {
    while (!s.empty()) {
        ssize_t n = ::write(fd, s.data(), s.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; // the log is best effort; the error still reaches stderr
        s.remove_prefix(static_cast<size_t>(n));
    }
}

} // namespace

void configure(int fd, Format format, bool debug) {
    g_fd = fd;
    g_format = format;
    g_debug = debug;
}

bool debug_enabled() {
    return g_debug;
}

void write(Level level, std::string_view msg) {
    int saved = errno;
    int fd = g_fd;
    // Without a log file, debug lines (--debug) and warnings go to stderr;
    // errors reach it through the CLI.
    if (fd < 0) {
        if (level != Level::debug && level != Level::warning) return;
        fd = STDERR_FILENO;
    }
    std::string line;
    if (g_format == Format::json) {
        json::Writer w(false);
        w.begin_object()
            .kv("level", level_name(level))
            .kv("msg", msg)
            .kv("time", oci::rfc3339_now())
            .end_object();
        line = w.view();
    } else {
        line = oci::rfc3339_now();
        line += ' ';
        line += level_name(level);
        line += ": ";
        line += msg;
    }
    line += '\n';
    write_all(fd, line);
    errno = saved;
}

} // namespace ocirun::log
