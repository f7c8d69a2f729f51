// The runtime's view of processes (runtime/process/proc.hpp) on real ones:
// signal_pidns_members reaches the members of an init's own PID namespace
// only while that init is the process the caller recorded (as root: a PID
// namespace is made).
#include "runtime/process/proc.hpp"
#include "unit_support.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

using namespace ocirun;

namespace {

// A child that is PID 1 of a new PID namespace with one member sleeping;
// the member's host PID read from the init's children.
struct PidNs {
    pid_t init = -1, member = -1;
};

PidNs make_pidns() {
    PidNs ns;
    int ready[2];
    cr_assert(::pipe2(ready, O_CLOEXEC) == 0);
    ns.init = static_cast<pid_t>(::syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr));
    cr_assert(ns.init >= 0, "clone: %s", std::strerror(errno));
    if (ns.init == 0) {
        if (::fork() == 0) {
            ::pause();
            ::_exit(0);
        }
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char c;
    cr_assert_eq(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    std::string path =
        "/proc/" + std::to_string(ns.init) + "/task/" + std::to_string(ns.init) + "/children";
    ns.member = static_cast<pid_t>(std::stol(unit::must_read(path)));
    return ns;
}

} // namespace

Test(proc, pidns_members_are_signalled_only_for_the_recorded_init) {
    if (::geteuid() != 0) cr_skip_test("a PID namespace needs root");
    PidNs ns = make_pidns();
    uint64_t start = process_start_time(ns.init);
    // Another start time: the PID is not the recorded init's (any more).
    signal_pidns_members(ns.init, start + 1, SIGTERM);
    // SIGKILL is left to the init's: PID 1's exit kills the rest.
    signal_pidns_members(ns.init, start, SIGKILL);
    ::usleep(50000);
    bool spared = process_alive(ns.member, process_start_time(ns.member));
    signal_pidns_members(ns.init, start, SIGTERM);
    bool killed = false;
    for (int i = 0; i < 200 && !killed; i++, ::usleep(10000)) {
        char st = process_state(ns.member);
        killed = st == 0 || st == 'Z' || st == 'X';
    }
    ::kill(ns.init, SIGKILL);
    ::waitpid(ns.init, nullptr, 0);
    cr_assert(start > 0);
    cr_assert(spared, "a member was signalled for an init with another start time, or SIGKILLed");
    cr_assert(killed, "the member of the recorded init's namespace was not signalled");
}

// A line's value, by its whole key: "Seccomp" is not "Seccomp_filters", and
// the white space after the colon is not part of it.
Test(proc, status_field_reads_a_line_by_its_key) {
    std::string status = "Name:\tsh\nSeccomp_filters:\t3\nSeccomp:\t2\nNSpid:\t4242\t7\t1\n"
                         "TracerPid:\t0\n";
    cr_assert(status_field(status, "Seccomp") == "2");
    cr_assert(status_field(status, "Seccomp_filters") == "3");
    cr_assert(status_field(status, "NSpid") == "4242\t7\t1");
    cr_assert(status_field(status, "Name") == "sh");
    cr_assert(status_field(status, "Uid") == "");
    cr_assert(status_field(status, "Tracer") == "");
    cr_assert(status_field(status, "TracerPid") == "0");
}
