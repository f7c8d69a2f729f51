#include "runtime/fault.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#ifdef OCI_RUN_FAULT_INJECTION
namespace ocirun {

namespace {

// Whether `phase` is in the comma-separated list in environment variable `var`.
bool listed(const char *var, const char *phase) {
    const char *list = std::getenv(var);
    size_t len = std::strlen(phase);
    for (const char *p = list; p && *p; p = std::strchr(p, ',') ? std::strchr(p, ',') + 1 : "")
        if (std::strncmp(p, phase, len) == 0 && (p[len] == ',' || p[len] == '\0')) return true;
    return false;
}

// Whether OCI_RUN_FAULT names `phase`.
bool killed_at(const char *phase) {
    const char *want = std::getenv("OCI_RUN_FAULT");
    return want != nullptr && std::strcmp(want, phase) == 0;
}

} // namespace

const char *fault_action(const char *phase) {
    if (killed_at(phase)) return "kill";
    return listed("OCI_RUN_FAULT_DELAY", phase) ? "delay" : "-";
}

void fault_point(const char *phase) {
    // Listed in both: the wait comes first (a process slow to die, while
    // the others it talks to go on).
    if (listed("OCI_RUN_FAULT_DELAY", phase)) {
        struct timespec ts {
            0, 300 * 1000 * 1000
        };
        ::nanosleep(&ts, nullptr);
    }
    if (!killed_at(phase)) return;
    ::raise(SIGKILL);
    // The init of a PID namespace ignores its own SIGKILL: leave as abruptly.
    ::_exit(137);
}

} // namespace ocirun
#endif
