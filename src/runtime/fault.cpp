#include "runtime/fault.hpp"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#ifdef OCI_RUN_FAULT_INJECTION
namespace ocirun {

const char *fault_action(const char *phase) {
    const char *want = std::getenv("OCI_RUN_FAULT");
    if (want != nullptr && std::strcmp(want, phase) == 0) return "kill";
    // A comma-separated list of phases.
    const char *slow = std::getenv("OCI_RUN_FAULT_DELAY");
    size_t len = std::strlen(phase);
    for (const char *p = slow; p && *p; p = std::strchr(p, ',') ? std::strchr(p, ',') + 1 : "")
        if (std::strncmp(p, phase, len) == 0 && (p[len] == ',' || p[len] == '\0')) return "delay";
    return "-";
}

void fault_point(const char *phase) {
    const char *action = fault_action(phase);
    if (std::strcmp(action, "delay") == 0) {
        struct timespec ts {
            0, 300 * 1000 * 1000
        };
        ::nanosleep(&ts, nullptr);
    }
    if (std::strcmp(action, "kill") != 0) return;
    ::raise(SIGKILL);
    // The init of a PID namespace ignores its own SIGKILL: leave as abruptly.
    ::_exit(137);
}

} // namespace ocirun
#endif
