// Bad surroundings rather than bad fields: a bundle its user cannot read, a
// config.json that is a FIFO, a symlink out of the bundle or 100 MB, a rootfs
// on a read-only filesystem, a --root on a full filesystem. Each either works
// or ends in exit 1 with one "oci-run: ..." line naming the path and the
// cause, and leaves nothing: no state under --root, no cgroup, no process, no
// mount, no runtime file in /tmp.
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "support/bundle.hpp"
#include "support/container_env.hpp"
#include "support/harness.hpp"
#include "support/host_snapshot.hpp"
#include "support/process.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using test::contains;
using test::count_lines;

namespace {

constexpr uid_t kNobody = 65534;

// tmpfs mounts made by a test in its private mount namespace: unmounted
// before the harness removes the directories they sit in.
std::vector<std::string> g_mounts;

void fini() {
    for (const auto &m : g_mounts)
        umount2(m.c_str(), MNT_DETACH);
    g_mounts.clear();
    test::cleanup_all();
}

// The one-line refusal every case must give: exit 1, "oci-run: " and each
// needle on one stderr line, nothing on stdout.
void expect_one_line(const test::FileRun &o, const std::vector<std::string> &needles) {
    cr_assert_eq(o.status, 1, "exit %d; stderr: %s", o.status, o.err.c_str());
    cr_assert_eq(count_lines(o.err), 1u, "stderr is not one line: %s", o.err.c_str());
    cr_assert(o.err.rfind("oci-run: ", 0) == 0, "%s", o.err.c_str());
    for (const auto &n : needles)
        cr_assert(contains(o.err, n), "\"%s\" not in: %s", n.c_str(), o.err.c_str());
    cr_assert(o.out.empty(), "stdout: %s", o.out.c_str());
}

void expect_nothing_left(const test::HostSnapshot &before, const std::string &root,
                         const std::string &id) {
    std::string left = test::left_behind(before, root, id);
    cr_assert(left.empty(), "left behind:\n%s", left.c_str());
}

// Every test runs in a mount namespace of its own (see host_snapshot.hpp):
// what it mounts is gone with it even if it dies mid-way, and the mount
// count is not disturbed by tests running beside it.
test::Env env(const char *tag, const std::vector<std::string> &args = {"true"}) {
    test::private_mount_namespace();
    test::become_subreaper();
    test::Env e = test::make_env(tag, args);
    e.b.save();
    return e;
}

// ---- as an unprivileged user ----

std::vector<std::string> as_nobody(std::vector<std::string> argv) {
    std::vector<std::string> out{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

// A copy of oci-run that nobody can reach (the build tree may not be).
std::string runtime_copy() {
    std::string dir = test::track_dir(test::make_temp_dir("bhbin"));
    ::chmod(dir.c_str(), 0755);
    std::string bin = dir + "/oci-run";
    test::write_file(bin, test::read_file(test::oci_run_path()));
    ::chmod(bin.c_str(), 0755);
    return bin;
}

// nobody's bundle (from its own `spec --rootless`) and --root, both owned by
// nobody; the rootfs is an empty directory (never reached).
struct NobodyBundle {
    std::string bin, dir, root, id;
};

NobodyBundle nobody_bundle(const char *tag) {
    test::private_mount_namespace();
    test::become_subreaper();
    NobodyBundle n;
    n.bin = runtime_copy();
    n.dir = test::track_dir(test::make_temp_dir(tag));
    n.root = test::track_dir(test::make_root(tag));
    n.id = test::unique_id(tag);
    test::track(n.root, n.id);
    ::chown(n.dir.c_str(), kNobody, kNobody);
    ::chown(n.root.c_str(), kNobody, kNobody);
    auto s = test::run(as_nobody({n.bin, "spec", "--rootless", "--bundle", n.dir}));
    cr_assert_eq(s.status, 0, "spec --rootless as nobody: %s", s.err.c_str());
    // No terminal, so no --console-socket is needed.
    std::string cfg = n.dir + "/config.json";
    auto spec = ocirun::oci::parse_spec(test::read_file(cfg));
    cr_assert(spec.has_value());
    spec->process->terminal = false;
    test::write_file(cfg, ocirun::oci::write_spec(*spec));
    ::mkdir((n.dir + "/rootfs").c_str(), 0755);
    return n;
}

test::FileRun create_as_nobody(const NobodyBundle &n) {
    return test::run_files(as_nobody({n.bin, "--root", n.root, "create", "--bundle", n.dir, n.id}),
                           -1, 10000);
}

} // namespace

TestSuite(bad_host, .fini = fini, .timeout = 60);

// ---- the bundle ---------------------------------------------------------------------

Test(bad_host, bundle_directory_the_user_cannot_enter) {
    NobodyBundle n = nobody_bundle("bh000");
    // The control: nobody's own bundle is accepted (it fails later, on the
    // empty rootfs, but not on reading config.json).
    auto ok = create_as_nobody(n);
    test::oci_files({"--root", n.root, "delete", "--force", n.id});
    cr_assert(!contains(ok.err, "config.json"), "the control: %s", ok.err.c_str());
    ::chmod(n.dir.c_str(), 0);
    auto before = test::snapshot_host();
    auto o = create_as_nobody(n);
    ::chmod(n.dir.c_str(), 0755);
    expect_one_line(o, {n.dir + "/config.json", "Permission denied"});
    expect_nothing_left(before, n.root, n.id);
}

Test(bad_host, config_json_the_user_cannot_read) {
    NobodyBundle n = nobody_bundle("bhcfg");
    std::string cfg = n.dir + "/config.json";
    ::chown(cfg.c_str(), 0, 0);
    ::chmod(cfg.c_str(), 0600);
    auto before = test::snapshot_host();
    auto o = create_as_nobody(n);
    expect_one_line(o, {"config.json: open " + cfg, "Permission denied"});
    expect_nothing_left(before, n.root, n.id);
}

// A FIFO as config.json is refused without being opened for reading: an
// open can act (a FIFO's writer sees a reader; a device's driver runs), so
// only the O_PATH descriptor ever refers to it. inotify reports every real
// open of the FIFO, and must report none.
Test(bad_host, fifo_config_is_refused_without_being_opened) {
    test::Env e = env("bhfifo");
    std::string cfg = e.b.dir + "/config.json";
    unlink(cfg.c_str());
    cr_assert_eq(mkfifo(cfg.c_str(), 0600), 0);
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    cr_assert(in >= 0);
    cr_assert(inotify_add_watch(in, cfg.c_str(), IN_OPEN) >= 0);
    auto before = test::snapshot_host();
    auto o = test::create(e);
    char buf[4096];
    ssize_t events = read(in, buf, sizeof buf);
    close(in);
    expect_one_line(o, {cfg, "not a regular file"});
    expect_nothing_left(before, e.root, e.id);
    cr_assert(events < 0, "oci-run opened the FIFO (%zd bytes of inotify events)", events);
}

// config.json as a symlink to a complete, valid config outside the bundle:
// refused (runc would read it), so what the bundle holds is what runs.
Test(bad_host, config_symlink_out_of_the_bundle_is_refused) {
    test::Env e = env("bhlink");
    std::string outside = test::track_dir(test::make_temp_dir("bhlink-out"));
    std::string cfg = e.b.dir + "/config.json";
    cr_assert_eq(rename(cfg.c_str(), (outside + "/config.json").c_str()), 0);
    cr_assert_eq(symlink((outside + "/config.json").c_str(), cfg.c_str()), 0);
    auto before = test::snapshot_host();
    auto o = test::create(e);
    expect_one_line(o, {cfg, "symlink that leads out of the bundle"});
    expect_nothing_left(before, e.root, e.id);
    // The same through "..", and to a host file.
    unlink(cfg.c_str());
    cr_assert_eq(symlink(("../" + outside.substr(outside.rfind('/') + 1) + "/config.json").c_str(),
                         cfg.c_str()),
                 0);
    auto dotdot = test::create(e);
    unlink(cfg.c_str());
    cr_assert_eq(symlink("/etc/passwd", cfg.c_str()), 0);
    auto host_file = test::create(e);
    expect_one_line(dotdot, {cfg, "symlink that leads out of the bundle"});
    expect_one_line(host_file, {cfg, "symlink that leads out of the bundle"});
    expect_nothing_left(before, e.root, e.id);
}

// A symlink to another file inside the bundle is followed: the container is
// created from it.
Test(bad_host, config_symlink_inside_the_bundle_is_followed) {
    test::Env e = env("bhin");
    std::string cfg = e.b.dir + "/config.json";
    ::mkdir((e.b.dir + "/configs").c_str(), 0755);
    cr_assert_eq(rename(cfg.c_str(), (e.b.dir + "/configs/v1.json").c_str()), 0);
    cr_assert_eq(symlink("configs/v1.json", cfg.c_str()), 0);
    auto o = test::create(e);
    auto st = test::state_of(e.root, e.id);
    test::cleanup_all();
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert_str_eq(st.status.c_str(), "created");
}

// 100 MB of config.json: refused on its size before a byte is read (the file
// is sparse: reading it would still cost 100 MB of memory), within a second.
Test(bad_host, huge_config_is_refused_on_size) {
    test::Env e = env("bhbig");
    std::string cfg = e.b.dir + "/config.json";
    std::string text = test::read_file(cfg);
    int fd = open(cfg.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    cr_assert_eq(ftruncate(fd, 100 << 20), 0);
    close(fd);
    auto before = test::snapshot_host();
    auto t0 = std::chrono::steady_clock::now();
    auto o = test::create(e);
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    expect_one_line(o, {cfg, "larger than 16 MiB"});
    expect_nothing_left(before, e.root, e.id);
    cr_assert(ms < 1000, "took %lld ms", static_cast<long long>(ms));
}

// exec --process and update --resources read a file the caller names, which
// may never end (/dev/zero): each stops at 16 MiB with one line, and the
// container is not touched.
Test(bad_host, endless_process_and_resources_files_are_refused) {
    test::Env e = env("bhendless", {"sleep", "60"});
    auto before = test::snapshot_host();
    auto run = test::oci_files({"--root", e.root, "run", "--detach", "--bundle", e.b.dir, e.id}, -1,
                               10000);
    cr_assert_eq(run.status, 0, "run -d: %s", run.err.c_str());
    auto x = test::oci_files({"--root", e.root, "exec", "--process", "/dev/zero", e.id}, -1, 10000);
    auto upd =
        test::oci_files({"--root", e.root, "update", "--resources", "/dev/zero", e.id}, -1, 10000);
    auto alive = test::oci({"--root", e.root, "exec", e.id, "echo", "alive"});
    auto del = test::oci_files({"--root", e.root, "delete", "--force", e.id});
    expect_one_line(x, {"--process", "/dev/zero", "larger than 16777216 bytes"});
    expect_one_line(upd, {"/dev/zero", "larger than 16777216 bytes"});
    cr_assert_str_eq(alive.out.c_str(), "alive\n", "%s", alive.err.c_str());
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
    expect_nothing_left(before, e.root, e.id);
}

// ---- a read-only rootfs -------------------------------------------------------------

// The rootfs on a read-only mount, root.readonly false: as with runc, the
// container runs (nothing in the default configuration writes to the rootfs)
// and sees its root read-only; the rootfs is unchanged.
Test(bad_host, readonly_rootfs_runs_and_stays_readonly) {
    test::Env e = env("bhro", {"sh", "-c", "touch /probe; echo touch=$?"});
    e.b.spec.root->readonly = false;
    e.b.save();
    cr_assert_eq(mount(e.b.rootfs.c_str(), e.b.rootfs.c_str(), nullptr, MS_BIND, nullptr), 0);
    g_mounts.push_back(e.b.rootfs);
    cr_assert_eq(
        mount(nullptr, e.b.rootfs.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr), 0);
    auto before = test::snapshot_host();
    auto o = test::oci_files({"--root", e.root, "run", "--bundle", e.b.dir, e.id}, -1, 10000);
    cr_assert_eq(o.status, 0, "run: %s", o.err.c_str());
    cr_assert(contains(o.out, "touch=1"), "%s", o.out.c_str());
    cr_assert(contains(o.out + o.err, "Read-only file system"), "%s%s", o.out.c_str(),
              o.err.c_str());
    cr_assert(!test::exists(e.b.rootfs + "/probe"));
    expect_nothing_left(before, e.root, e.id);
}

// What needs the rootfs written (a mount point that is not there) fails with
// one line naming the mount and EROFS, and leaves nothing half made.
Test(bad_host, readonly_rootfs_missing_mountpoint_fails_cleanly) {
    test::Env e = env("bhromp");
    e.b.spec.root->readonly = false;
    size_t i = e.b.spec.mounts.size();
    e.b.spec.mounts.push_back(
        test::mount_entry("/oci-run-missing/dir", "tmpfs", "tmpfs", {"nosuid", "size=64k"}));
    e.b.save();
    cr_assert_eq(mount(e.b.rootfs.c_str(), e.b.rootfs.c_str(), nullptr, MS_BIND, nullptr), 0);
    g_mounts.push_back(e.b.rootfs);
    cr_assert_eq(
        mount(nullptr, e.b.rootfs.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr), 0);
    auto before = test::snapshot_host();
    auto o = test::create(e);
    expect_one_line(o, {"mounts[" + std::to_string(i) + "]", "Read-only file system"});
    expect_nothing_left(before, e.root, e.id);
    cr_assert(!test::exists(e.b.rootfs + "/oci-run-missing"));
}

// ---- a full --root ------------------------------------------------------------------

namespace {

// --root on a 64 KiB tmpfs of its own (in this test's mount namespace).
std::string small_root(const test::Env &e) {
    std::string root = e.root + "/small";
    ::mkdir(root.c_str(), 0700);
    cr_assert_eq(mount("tmpfs", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700"),
                 0, "mount tmpfs: %m");
    g_mounts.push_back(root);
    test::track(root, e.id);
    return root;
}

// Fill the filesystem under `dir`: one file of everything that is left.
std::string fill(const std::string &dir) {
    std::string path = dir + "/filler";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert(fd >= 0);
    std::string block(4096, 'x');
    while (write(fd, block.data(), block.size()) > 0) {
    }
    // The last partial page, byte by byte.
    while (write(fd, "x", 1) > 0) {
    }
    close(fd);
    return path;
}

} // namespace

Test(bad_host, create_on_a_full_root_fails_cleanly) {
    test::Env e = env("bhfull");
    std::string root = small_root(e);
    std::string filler = fill(root);
    auto before = test::snapshot_host();
    auto o = test::oci_files({"--root", root, "create", "--bundle", e.b.dir, e.id}, -1, 10000);
    expect_one_line(o, {root + "/" + e.id, "No space left on device"});
    std::string left = test::left_behind(before, root, e.id, {"filler"});
    cr_assert(left.empty(), "left behind:\n%s", left.c_str());
    // And once there is room again, the same ID is created normally.
    unlink(filler.c_str());
    auto again = test::oci_files({"--root", root, "create", "--bundle", e.b.dir, e.id}, -1, 10000);
    // Deleted here, while the small --root is mounted: the suite's fini
    // unmounts it before it removes the test's directories (a cleanup_all
    // here found the mount in the way and left the --root directory behind).
    auto del = test::oci_files({"--root", root, "delete", "--force", e.id});
    cr_assert_eq(again.status, 0, "%s", again.err.c_str());
    cr_assert_eq(del.status, 0, "delete --force: %s", del.err.c_str());
}

// Containers made before the filesystem filled up can still be inspected,
// killed and deleted: delete must never need room to free it.
Test(bad_host, delete_on_a_full_root_still_works) {
    test::Env e = env("bhfulldel", {"sleep", "60"});
    std::string root = small_root(e);
    std::string created_id = e.id + "-c";
    test::track(root, created_id);
    auto before = test::snapshot_host();
    auto run =
        test::oci_files({"--root", root, "run", "--detach", "--bundle", e.b.dir, e.id}, -1, 10000);
    cr_assert_eq(run.status, 0, "run -d: %s", run.err.c_str());
    auto c =
        test::oci_files({"--root", root, "create", "--bundle", e.b.dir, created_id}, -1, 10000);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    long pid = test::state_of(root, e.id).pid;
    long created_pid = test::state_of(root, created_id).pid;
    fill(root);
    auto st = test::oci_files({"--root", root, "state", e.id});
    auto ls = test::oci_files({"--root", root, "list"});
    auto kill = test::oci_files({"--root", root, "kill", e.id, "KILL"});
    bool stopped = test::pid_gone(pid);
    auto del = test::oci_files({"--root", root, "delete", e.id});
    auto del_created = test::oci_files({"--root", root, "delete", "--force", created_id});
    bool created_gone = test::pid_gone(created_pid);
    cr_assert_eq(st.status, 0, "state: %s", st.err.c_str());
    cr_assert_eq(ls.status, 0, "list: %s", ls.err.c_str());
    cr_assert_eq(kill.status, 0, "kill: %s", kill.err.c_str());
    cr_assert(stopped);
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
    cr_assert_eq(del_created.status, 0, "delete --force: %s", del_created.err.c_str());
    cr_assert(created_gone);
    std::string left = test::left_behind(before, root, e.id, {"filler"});
    left += test::left_behind(before, root, created_id, {"filler"});
    cr_assert(left.empty(), "left behind:\n%s", left.c_str());
}

// update on a full --root: its record (config.json) cannot be written, so it
// fails before it changes the cgroup: limits applied but not recorded would
// be undone by the next update, and are not what `report` reads.
Test(bad_host, update_on_a_full_root_changes_nothing) {
    test::Env e = env("bhfullupd", {"sleep", "60"});
    auto &res = e.b.spec.linux_->resources ? *e.b.spec.linux_->resources
                                           : e.b.spec.linux_->resources.emplace();
    res.pids.emplace().limit = 100;
    e.b.save();
    std::string root = small_root(e);
    auto before = test::snapshot_host();
    auto run =
        test::oci_files({"--root", root, "run", "--detach", "--bundle", e.b.dir, e.id}, -1, 10000);
    cr_assert_eq(run.status, 0, "run -d: %s", run.err.c_str());
    std::string pids_max;
    // (The pids hierarchy's, v1 or v2: the one of its directories that has it.)
    for (const auto &d : test::default_cgroups_of(e.id))
        if (test::exists(d + "/pids.max")) pids_max = d + "/pids.max";
    cr_assert(!pids_max.empty(), "no pids.max for the container");
    std::string config = root + "/" + e.id + "/config.json";
    std::string config_before = test::read_file(config);
    fill(root);
    auto upd = test::oci_files({"--root", root, "update", "--pids-limit", "42", e.id});
    std::string limit = test::read_file(pids_max);
    std::string config_after = test::read_file(config);
    auto entries = test::dir_entries(root + "/" + e.id);
    unlink((root + "/filler").c_str());
    auto del = test::oci_files({"--root", root, "delete", "--force", e.id});
    expect_one_line(upd, {"update", config, "No space left on device"});
    cr_assert_str_eq(limit.c_str(), "100\n");
    cr_assert(config_after == config_before, "config.json changed");
    for (const auto &n : entries)
        cr_assert(n.rfind(".tmp-", 0) != 0, "temp file %s left", n.c_str());
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
    expect_nothing_left(before, root, e.id);
}

// start on a full --root: the running record is written before the init is
// released, so start fails with the container still created and its process
// not run; with room again, start runs it.
Test(bad_host, start_on_a_full_root_does_not_run_the_process) {
    test::Env e = env("bhfullstart", {"sh", "-c", "echo started > /started; sleep 60"});
    std::string root = small_root(e);
    auto before = test::snapshot_host();
    auto c = test::oci_files({"--root", root, "create", "--bundle", e.b.dir, e.id}, -1, 10000);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    std::string filler = fill(root);
    auto st = test::oci_files({"--root", root, "start", e.id});
    std::string status = test::state_of(root, e.id).status;
    bool ran = test::exists(e.b.rootfs + "/started");
    auto entries = test::dir_entries(root + "/" + e.id);
    unlink(filler.c_str());
    auto again = test::oci_files({"--root", root, "start", e.id});
    std::string status_again = test::wait_status(root, e.id, "running");
    auto del = test::oci_files({"--root", root, "delete", "--force", e.id});
    expect_one_line(st, {"start", root + "/" + e.id, "No space left on device"});
    cr_assert_str_eq(status.c_str(), "created");
    cr_assert(!ran, "the process ran although start failed");
    for (const auto &n : entries)
        cr_assert(n.rfind(".tmp-", 0) != 0, "temp file %s left", n.c_str());
    cr_assert_eq(again.status, 0, "start with room: %s", again.err.c_str());
    cr_assert_str_eq(status_again.c_str(), "running");
    cr_assert_eq(del.status, 0, "delete: %s", del.err.c_str());
    expect_nothing_left(before, root, e.id);
}

// ---- a privileged call that fails ----

namespace {

// oci-run ARGS under tests/helpers/fail_syscall.cpp: NAME fails with ERRNO
// when its first argument is ARG0 (any: always).
test::FileRun failing(const std::string &name, const std::string &arg0, int err,
                      std::vector<std::string> args) {
    const char *helper = std::getenv("OCI_RUN_FAIL_SYSCALL");
    std::vector<std::string> argv{helper, name, arg0, std::to_string(err), test::oci_run_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_files(argv);
}

void need_fail_syscall() {
    const char *helper = std::getenv("OCI_RUN_FAIL_SYSCALL");
    if (!helper || access(helper, X_OK) != 0) cr_skip_test("no fail-syscall helper");
#if !defined(__x86_64__)
    cr_skip_test("fail-syscall filters x86_64 system calls only");
#endif
}

} // namespace

// Every privileged call of the container's init, the hook child, exec's
// child and the network helper is checked: made to fail (a seccomp filter
// around oci-run), each ends the command with one line naming the call and
// its errno, and leaves nothing behind.
Test(bad_host, failing_privileged_calls_end_the_command_with_their_errno) {
    need_fail_syscall();
    struct Case {
        const char *what, *call, *arg0;
        int err;
        const char *needle;
    } cases[] = {
        {"init: non-dumpable", "prctl", "4", EPERM,
         "prctl PR_SET_DUMPABLE 0: Operation not permitted"},
        {"init: death signal", "prctl", "1", EPERM,
         "prctl PR_SET_PDEATHSIG 9: Operation not permitted"},
        {"init: new session", "setsid", "any", EPERM, "setsid: Operation not permitted"},
        {"init: close-on-exec", "close_range", "any", ENOSYS,
         "close_range: Function not implemented"},
    };
    std::string failures;
    for (const auto &c : cases) {
        test::Env e = env("badcall");
        auto before = test::snapshot_host();
        auto o =
            failing(c.call, c.arg0, c.err, {"--root", e.root, "run", "--bundle", e.b.dir, e.id});
        std::string left = test::left_behind(before, e.root, e.id);
        if (o.status != 1 || count_lines(o.err) != 1 || !contains(o.err, c.needle) || !left.empty())
            failures += std::string(c.what) + ": exit " + std::to_string(o.status) + ": " + o.err +
                        (left.empty() ? "" : " left: " + left) + "\n";
    }
    cr_assert(failures.empty(), "%s", failures.c_str());
}

Test(bad_host, failing_privileged_calls_of_exec_hooks_and_the_helper) {
    need_fail_syscall();
    // exec: its child's non-dumpable setting.
    test::Env x = env("badcallx", {"sleep", "30"});
    auto c = test::create(x);
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    auto s = test::oci({"--root", x.root, "start", x.id});
    cr_assert_eq(s.status, 0, "start: %s", s.err.c_str());
    auto ex = failing("prctl", "4", EPERM, {"--root", x.root, "exec", x.id, "true"});
    expect_one_line(ex, {"prctl PR_SET_DUMPABLE 0: Operation not permitted"});
    cr_assert_eq(test::leftover_children().size(), 1u, "exec left a process");
    test::cleanup_all();

    // A hook's child closes every fd of the runtime's before its exec.
    test::Env h = env("badcallh");
    ocirun::oci::Hooks hooks;
    hooks.prestart.push_back({"/bin/true", {"true"}, {}, {}});
    h.b.spec.hooks = hooks;
    h.b.save();
    auto before = test::snapshot_host();
    auto ho =
        failing("close_range", "3", ENOSYS, {"--root", h.root, "run", "--bundle", h.b.dir, h.id});
    cr_assert_eq(ho.status, 1, "%s", ho.err.c_str());
    cr_assert(contains(ho.err, "close_range: Function not implemented"), "%s", ho.err.c_str());
    expect_nothing_left(before, h.root, h.id);

    // The network helper drops its bounding set (a container holding every
    // capability, so that the init drops none first).
    test::Env n = env("badcalln");
    auto &caps = *n.b.spec.process->capabilities;
    caps.bounding.clear();
    for (const auto &cap : ocirun::oci::capability_names())
        caps.bounding.push_back(cap.name);
    n.b.spec.annotations["dev.ocirun.local-ports"] = "18080";
    n.b.save();
    before = test::snapshot_host();
    auto no = failing("prctl", "24", EPERM, {"--root", n.root, "run", "--bundle", n.b.dir, n.id});
    expect_one_line(no, {"network helper", "drop capability 0 from the bounding set: "
                                           "Operation not permitted"});
    expect_nothing_left(before, n.root, n.id);
}
