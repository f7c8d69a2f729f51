// The integration suites' registry of what a test made (support/harness.hpp):
// a test process that ends without its suite's fini, as one that skips
// itself does (Criterion's cr_skip_test exits the process), removes what it
// tracked; a child it forked that exits does not.
#include "support/harness.hpp"

#include <criterion/criterion.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

bool g_forked = false;

} // namespace

// LeakSanitizer's check at exit, skipped in the processes this test forks:
// a fork of a test process that has threads cannot stop them (they are not
// in the fork), and the sanitized suite counts that warning as a report.
extern "C" int __lsan_is_turned_off() {
    return g_forked;
}

namespace {

// A directory the child tracked, after the child exited through exit();
// whether it was still there when a grandchild the child forked had exited.
struct Exited {
    std::string dir;
    bool kept_by_grandchild = false;
};

Exited track_and_exit() {
    int p[2];
    cr_assert(::pipe(p) == 0);
    pid_t child = ::fork();
    cr_assert(child >= 0);
    if (child == 0) {
        g_forked = true;
        ::close(p[0]);
        std::string dir = test::track_dir(test::make_temp_dir("harness"));
        if (dir.empty()) ::_exit(2);
        pid_t grandchild = ::fork();
        if (grandchild == 0) std::exit(0); // inherits the exit handler
        int st;
        ::waitpid(grandchild, &st, 0);
        std::string line = dir + (test::exists(dir) ? " kept" : " gone");
        if (::write(p[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            ::_exit(3);
        std::exit(0); // as cr_skip_test ends a test process
    }
    ::close(p[1]);
    std::string line = test::read_to_eof(p[0]);
    ::close(p[0]);
    int st = 0;
    cr_assert_eq(::waitpid(child, &st, 0), child);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    size_t space = line.rfind(' ');
    cr_assert(space != std::string::npos, "child said: %s", line.c_str());
    return {line.substr(0, space), line.substr(space + 1) == "kept"};
}

} // namespace

Test(harness, a_test_process_that_exits_removes_what_it_tracked) {
    Exited e = track_and_exit();
    bool left = test::exists(e.dir);
    if (left) test::rm_rf(e.dir);
    cr_assert(e.kept_by_grandchild, "a forked child's exit removed %s", e.dir.c_str());
    cr_assert(!left, "%s is left after the test process exited", e.dir.c_str());
}
