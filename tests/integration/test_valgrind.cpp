// The CLI paths under valgrind's memcheck: each command runs as
// `valgrind --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite`
// on the real binary, and the test asserts the exit status is the command's
// own and valgrind's log (one file per process) holds no report.
//
// What is and is not covered, with valgrind 3.19 (Debian 12):
// - Checked: --help, --version, spec, features; start, state, list, ps,
//   events --stats, pause, resume, exec on a running busybox container, kill
//   and delete once it has stopped; create and run refusing a missing
//   bundle, a bad ID and conflicting flags, and the commands refusing an
//   unknown container. For exec, the runtime side and exec's child up to its
//   execve (namespaces joined, identity, capabilities, seccomp) run under
//   memcheck.
// - create, run and exec re-execute from a sealed memfd copy (create and
//   run only where the exec stage cannot be used, runtime/lifecycle/exec_stage.hpp);
//   valgrind 3.19 cannot execveat a memfd (it resolves the fd to
//   "/memfd:... (deleted)" and fails with ENOENT), so the test makes the
//   sealed copy itself and hands valgrind its /proc path: valgrind answers
//   /proc/self/exe with that copy, which oci-run sees sealed (and so takes
//   no exec stage), so the command runs whole under memcheck.
// - Not checked: whatever opens a file through openat2, which 3.19 does not
//   know (ENOSYS): config.json falls back to an openat without symlinks
//   (so a bundle's symlinked config.json is out of reach),
//   and the container's init resolves mounts inside the rootfs with it (so a
//   successful create or run is too: valgrind follows the clone of the
//   init). Those containers are made by oci-run outside valgrind; the ASan
//   suite covers all of it. Nothing after an execve is followed (no
//   --trace-children): the container's processes are busybox, not ours.
// - Not checked: signalling a live init (kill, delete --force of a running
//   container): oci-run signals through a pidfd, and 3.19 does not know
//   pidfd_open (ENOSYS). The container is killed outside valgrind; kill's
//   refusals and delete of the stopped container run under it.
// - The bundle has no process.rlimits: valgrind 3.19 refuses any
//   setrlimit(RLIMIT_NOFILE) whose hard limit is not its own (EPERM), which
//   would stop exec's child before it reaches the code under test.
// - The binary checked is $OCI_RUN_DYNAMIC when set: the build's
//   oci-run-dynamic, the same objects as the static oci-run linked against
//   the shared C library, since memcheck cannot replace malloc in a static
//   binary (a static one is skipped, with that reason). libstdc++ is linked
//   statically into it, so memcheck sees operator new as plain malloc: leaks
//   are found, new/delete mismatches are not.
#include "support/container_env.hpp"
#include "support/elf.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;
using test::oci;

namespace {

constexpr int kValgrindError = 97; // not a status oci-run exits with
constexpr int kTimeoutMs = 180000; // memcheck is slow, more so on a loaded host

// The binary under memcheck (see the header comment).
const std::string &checked_binary() {
    static const std::string path = [] {
        const char *d = std::getenv("OCI_RUN_DYNAMIC");
        return std::string(d && *d ? d : test::oci_run_path());
    }();
    return path;
}

// Skip (with the reason) when the run cannot be made here.
void need_valgrind() {
    if (test::find_in_path("valgrind").empty())
        cr_skip_test("valgrind is not installed (apt-get install valgrind)");
    // valgrind cannot run a binary built with AddressSanitizer; the plain
    // build's run of this suite covers these paths.
    static const std::string bin = test::read_file(checked_binary());
    if (contains(bin, "__asan_init"))
        cr_skip_test("%s is built with AddressSanitizer, which valgrind cannot run",
                     checked_binary().c_str());
    if (!test::elf_has_interpreter(bin))
        cr_skip_test("%s is a static binary, whose malloc memcheck cannot follow: set "
                     "OCI_RUN_DYNAMIC to the build's oci-run-dynamic",
                     checked_binary().c_str());
}

// A sealed memfd copy of the binary under test, as oci-run makes for itself
// (see the header comment); valgrind is given its /proc path.
struct SealedCopy {
    int fd = -1;
    std::string path;
};

const SealedCopy &sealed_copy() {
    static SealedCopy copy;
    if (copy.fd >= 0) return copy;
    int bin = open(checked_binary().c_str(), O_RDONLY | O_CLOEXEC);
    cr_assert(bin >= 0, "open %s: %s", checked_binary().c_str(), strerror(errno));
    struct stat st;
    cr_assert_eq(fstat(bin, &st), 0);
    int mem = memfd_create("oci-run", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert(mem >= 0, "memfd_create: %s", strerror(errno));
    off_t off = 0;
    while (off < st.st_size)
        cr_assert(sendfile(mem, bin, &off, static_cast<size_t>(st.st_size - off)) > 0,
                  "copy the binary: %s", strerror(errno));
    close(bin);
    cr_assert_eq(fcntl(mem, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE),
                 0, "seal: %s", strerror(errno));
    copy.fd = mem;
    copy.path = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(mem);
    return copy;
}

struct Checked {
    int status = -1;
    std::string out, err;
};

// `oci-run args` under memcheck, the binary run from its sealed copy when the
// command re-executes itself. Fails the test on any valgrind report.
// `log_dir`: where valgrind writes its logs ("": a new directory). Each
// process it follows writes vg.PID.log there, exec's inside the container
// (forked in its mount namespace), which needs the directory at that path.
Checked memcheck(const std::vector<std::string> &args, bool sealed = false,
                 const std::string &log_dir = "") {
    std::string logs = log_dir.empty() ? test::track_dir(test::make_temp_dir("vglog")) : log_dir;
    std::vector<std::string> argv{"valgrind",
                                  "-q",
                                  "--error-exitcode=" + std::to_string(kValgrindError),
                                  "--leak-check=full",
                                  "--errors-for-leak-kinds=definite",
                                  "--show-leak-kinds=definite",
                                  "--log-file=" + logs + "/vg.%p.log",
                                  sealed ? sealed_copy().path : checked_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    test::Spawned s = test::spawn_files(argv);
    cr_assert(s.pid > 0, "spawn valgrind");
    Checked c;
    c.status = test::wait_bounded(s.pid, kTimeoutMs);
    c.out = test::read_file(s.out_path);
    c.err = test::read_file(s.err_path);
    std::string what = "oci-run";
    for (const auto &a : args)
        what += " " + a;
    cr_assert_neq(c.status, -1, "%s: valgrind did not finish in %d s", what.c_str(),
                  kTimeoutMs / 1000);
    // valgrind runs the command in its own process: its log carries that pid.
    auto entries = test::dir_entries(logs);
    bool main_log = false;
    for (const auto &name : entries) {
        if (name == "vg." + std::to_string(s.pid) + ".log") main_log = true;
        // With -q, a log holds only reports ("==PID== ..."); "--PID--" lines
        // are valgrind's own notes.
        std::string text = test::read_file(logs + "/" + name);
        size_t at = text.find("==");
        cr_assert(at == std::string::npos, "%s: valgrind reported (%s):\n%s", what.c_str(),
                  name.c_str(), text.substr(at, 4000).c_str());
    }
    cr_assert(main_log, "%s: no valgrind log for pid %d (valgrind did not run the command?)",
              what.c_str(), s.pid);
    cr_assert_neq(c.status, kValgrindError, "%s: valgrind reported errors; stderr: %s",
                  what.c_str(), c.err.c_str());
    return c;
}

// A one-line "oci-run: ..." refusal, exit 1, naming `needle`.
void expect_refusal(const Checked &c, const char *needle) {
    cr_assert_eq(c.status, 1, "exited %d: %s", c.status, c.err.c_str());
    cr_assert(c.err.rfind("oci-run: ", 0) == 0, "%s", c.err.c_str());
    cr_assert(contains(c.err, needle), "\"%s\" not in: %s", needle, c.err.c_str());
}

// A bundle without process.rlimits (see the header comment).
// With `logs`: a log directory for memcheck, bound into the container at
// the same path (exec's process is forked inside the container's mount
// namespace and writes its log there).
Env valgrind_env(const char *tag, const std::vector<std::string> &args,
                 std::string *logs = nullptr) {
    Env e = make_env(tag, args);
    e.b.spec.process->rlimits.clear();
    if (logs) {
        *logs = test::track_dir(test::make_temp_dir("vglog"));
        e.b.spec.mounts.push_back(test::mount_entry(*logs, "bind", *logs, {"rbind"}));
    }
    e.b.save();
    return e;
}

} // namespace

TestSuite(valgrind, .fini = cleanup_all, .timeout = 900);

Test(valgrind, help_version_spec_features) {
    need_valgrind();
    auto h = memcheck({"--help"});
    cr_assert_eq(h.status, 0);
    cr_assert(contains(h.out, "Commands:"), "%s", h.out.c_str());
    auto ch = memcheck({"create", "--help"}, true);
    cr_assert_eq(ch.status, 0);
    cr_assert(contains(ch.out, "Usage: oci-run create"), "%s", ch.out.c_str());
    auto v = memcheck({"--version"});
    cr_assert_eq(v.status, 0);
    cr_assert(contains(v.out, "oci-run version "), "%s", v.out.c_str());
    std::string dir = test::track_dir(test::make_temp_dir("vgspec"));
    auto s = memcheck({"spec", "--bundle", dir});
    cr_assert_eq(s.status, 0, "%s", s.err.c_str());
    cr_assert(contains(test::read_file(dir + "/config.json"), "\"ociVersion\""));
    auto f = memcheck({"features"});
    cr_assert_eq(f.status, 0, "%s", f.err.c_str());
    cr_assert(contains(f.out, "\"namespaces\""), "%s", f.out.c_str());
}

Test(valgrind, lifecycle_commands_on_a_running_container) {
    need_valgrind();
    std::string exec_logs;
    Env e = valgrind_env("vglife", {"sleep", "600"}, &exec_logs);
    auto c = test::create(e);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    const std::string &r = e.root, &id = e.id;

    cr_assert_eq(memcheck({"--root", r, "start", id}).status, 0);
    auto st = memcheck({"--root", r, "state", id});
    cr_assert_eq(st.status, 0, "%s", st.err.c_str());
    cr_assert(contains(st.out, "\"running\""), "%s", st.out.c_str());
    auto ls = memcheck({"--root", r, "list", "--format", "json"});
    cr_assert_eq(ls.status, 0, "%s", ls.err.c_str());
    cr_assert(contains(ls.out, id), "%s", ls.out.c_str());
    auto ps = memcheck({"--root", r, "ps", "--format", "json", id});
    cr_assert_eq(ps.status, 0, "%s", ps.err.c_str());
    auto ev = memcheck({"--root", r, "events", "--stats", id});
    cr_assert_eq(ev.status, 0, "%s", ev.err.c_str());
    cr_assert(contains(ev.out, "\"stats\""), "%s", ev.out.c_str());
    auto x = memcheck({"--root", r, "exec", id, "sh", "-c", "echo in-$(hostname); exit 3"}, true,
                      exec_logs);
    cr_assert_eq(x.status, 3, "exec exited %d: %s", x.status, x.err.c_str());
    cr_assert_str_eq(x.out.c_str(), "in-oci-run\n");
    // Criterion keeps the string's pointer past the full expression: the
    // strings compared must outlive the assertion.
    cr_assert_eq(memcheck({"--root", r, "pause", id}).status, 0);
    std::string paused = test::state_of(r, id).status;
    cr_assert_str_eq(paused.c_str(), "paused");
    cr_assert_eq(memcheck({"--root", r, "resume", id}).status, 0);
    std::string resumed = test::state_of(r, id).status;
    cr_assert_str_eq(resumed.c_str(), "running");
    expect_refusal(memcheck({"--root", r, "kill", id, "SIGBOGUS"}), "unknown signal");
    cr_assert_eq(oci({"--root", r, "kill", id, "KILL"}).status, 0);
    std::string stopped = test::wait_status(r, id, "stopped", 10000);
    cr_assert_str_eq(stopped.c_str(), "stopped");
    expect_refusal(memcheck({"--root", r, "kill", id, "KILL"}), "not running");
    auto del = memcheck({"--root", r, "delete", id});
    cr_assert_eq(del.status, 0, "%s", del.err.c_str());
    cr_assert(!test::exists(r + "/" + id), "delete left the state directory");
}

Test(valgrind, create_and_run_refuse_bad_input) {
    need_valgrind();
    Env e = valgrind_env("vgbad", {"true"});
    std::string missing = e.b.dir + "/nowhere";
    auto nb = memcheck({"--root", e.root, "create", "--bundle", missing, e.id}, true);
    expect_refusal(nb, missing.c_str());
    auto rn = memcheck({"--root", e.root, "run", "--bundle", missing, e.id}, true);
    expect_refusal(rn, missing.c_str());
    auto bad_id = memcheck({"--root", e.root, "create", "--bundle", e.b.dir, "../up"}, true);
    expect_refusal(bad_id, "invalid container ID");
    auto flags =
        memcheck({"--root", e.root, "run", "--keep", "-d", "--bundle", e.b.dir, e.id}, true);
    expect_refusal(flags, "--keep and --detach");
    cr_assert(test::dir_entries(e.root).empty(), "a refused create left state in %s",
              e.root.c_str());
}

Test(valgrind, commands_refuse_an_unknown_container) {
    need_valgrind();
    std::string root = test::track_dir(test::make_root("vgunk"));
    std::string id = test::unique_id("vgunk");
    for (const char *cmd : {"state", "start", "kill", "delete", "pause", "ps"})
        expect_refusal(memcheck({"--root", root, cmd, id}), "does not exist");
    expect_refusal(memcheck({"--root", root, "exec", id, "true"}, true), "does not exist");
}
