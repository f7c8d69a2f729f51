// Fault injection for the crash tests (tests/integration/test_crash.cpp):
// built only with -Dfault_injection=true (contrib/dev.sh's build). With
// OCI_RUN_FAULT=PHASE in its environment, the process that reaches
// fault_point(PHASE) dies there at once, as if SIGKILLed: no destructor, no
// cleanup, exactly what a crash or an OOM kill at that step would leave.
// With OCI_RUN_FAULT_DELAY=PHASE[,PHASE...] it waits 300 ms at each listed
// phase instead, to widen a window a test wants to look into; a phase in
// both is waited at, then died at (a process slow to die while the ones it
// talks to go on).
// Without the option fault_point is an empty inline function.
#pragma once

namespace ocirun {

#ifdef OCI_RUN_FAULT_INJECTION
void fault_point(const char *phase);
// What fault_point(phase) would do, for a program that keeps the point
// itself (the exec stage): "kill", "delay" or "-".
const char *fault_action(const char *phase);
#else
inline void fault_point(const char *) {}
inline const char *fault_action(const char *) {
    return "-";
}
#endif

} // namespace ocirun
