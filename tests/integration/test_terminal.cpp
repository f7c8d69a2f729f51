// Terminals: process.terminal with --console-socket (the master goes to the
// caller over SCM_RIGHTS, as runc does) and, for run and exec in the
// foreground without one, a pty the runtime relays to its own terminal.
#include "support/console.hpp"
#include "support/container_env.hpp"

#include <criterion/criterion.h>

#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poll.h>

#include <string>

using test::cleanup_all;
using test::contains;
using test::create;
using test::Env;
using test::make_env;
using test::oci;
using test::read_file;
using test::read_until;
using test::wait_status;

TestSuite(terminal, .fini = cleanup_all, .timeout = 60);

Test(terminal, detached_create_needs_console_socket) {
    Env e = make_env("tty0", {"true"});
    e.b.spec.process->terminal = true;
    e.b.save();
    auto c = create(e);
    auto entries = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(c.status, 1);
    cr_assert(contains(c.err, "--console-socket"), "%s", c.err.c_str());
    cr_assert(entries.empty(), "left %s", entries.empty() ? "" : entries[0].c_str());
}

Test(terminal, master_through_console_socket) {
    Env e = make_env("tty", {"sh", "-c", "tty; stty size; echo done"});
    e.b.spec.process->terminal = true;
    e.b.spec.process->console_size = ocirun::oci::Box{30, 100};
    e.b.save();
    test::ConsoleCreate cr = test::create_with_console_socket(e.root, e.b.dir, e.id);
    int master = cr.master, create_status = cr.status;
    std::string create_err = cr.err;
    auto st = oci({"--root", e.root, "start", e.id});
    std::string seen = master >= 0 ? read_until(master, "done") : "";
    if (master >= 0) close(master);
    cleanup_all();
    cr_assert_geq(master, 0, "no pty master received; create: %s", create_err.c_str());
    cr_assert_eq(create_status, 0, "create: %s", create_err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(contains(seen, "/dev/pts/0"), "saw: %s", seen.c_str());
    cr_assert(contains(seen, "30 100"), "consoleSize not applied; saw: %s", seen.c_str());
    cr_assert(contains(seen, "done"), "saw: %s", seen.c_str());
}

// `run` on a terminal without --console-socket: the container's process has
// a pty of its own, sized like ours, and what we type reaches it.
Test(terminal, run_in_the_foreground_relays_the_terminal) {
    Env e = make_env("ttyrun", {"sh", "-c", "tty; stty size; read x; echo got-$x; exit 3"});
    e.b.spec.process->terminal = true;
    e.b.save();
    test::PtyChild c =
        test::spawn_oci_on_pty({"--root", e.root, "run", "--bundle", e.b.dir, e.id}, 33, 77);
    std::string first = read_until(c.master, "33 77");
    (void)!write(c.master, "hello\r", 6);
    std::string rest = read_until(c.master, "got-hello");
    int status = test::wait_bounded(c.pid, 5000);
    close(c.master);
    cleanup_all();
    cr_assert(contains(first, "/dev/pts/0"), "saw: %s", first.c_str());
    cr_assert(contains(first, "33 77"), "saw: %s", first.c_str());
    cr_assert(contains(rest, "got-hello"), "saw: %s", rest.c_str());
    cr_assert_eq(status, 3, "status %d", status);
}

Test(terminal, exec_tty_in_the_foreground_relays_the_terminal) {
    Env e = make_env("ttyexec", {"sleep", "30"});
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    test::PtyChild x = test::spawn_oci_on_pty({"--root", e.root, "exec", "--tty", e.id, "sh", "-c",
                                               "tty; stty size; read x; echo got-$x; exit 4"},
                                              40, 90);
    std::string first = read_until(x.master, "40 90");
    (void)!write(x.master, "there\r", 6);
    std::string rest = read_until(x.master, "got-there");
    int status = test::wait_bounded(x.pid, 5000);
    close(x.master);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(contains(first, "/dev/pts/"), "saw: %s", first.c_str());
    cr_assert(contains(first, "40 90"), "saw: %s", first.c_str());
    cr_assert(contains(rest, "got-there"), "saw: %s", rest.c_str());
    cr_assert_eq(status, 4, "status %d", status);
}

Test(terminal, exec_tty_through_console_socket) {
    Env e = make_env("ttyexecs", {"sleep", "30"});
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    test::ConsoleSocket sock = test::make_console_socket();
    test::Spawned x =
        test::spawn_oci({"--root", e.root, "exec", "--tty", "--console-socket", sock.path,
                         "--detach", e.id, "sh", "-c", "tty; echo exec-done"});
    int master = test::receive_master(sock);
    int xs = test::wait_bounded(x.pid, 5000);
    std::string seen = master >= 0 ? read_until(master, "exec-done") : "";
    if (master >= 0) close(master);
    std::string xerr = test::read_file(x.err_path);
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert_eq(xs, 0, "exec: %s", xerr.c_str());
    cr_assert_geq(master, 0, "no master");
    cr_assert(contains(seen, "/dev/pts/"), "saw: %s", seen.c_str());
    cr_assert(contains(seen, "exec-done"), "saw: %s", seen.c_str());
}

Test(terminal, exec_tty_detached_needs_console_socket) {
    Env e = make_env("ttyexecd", {"sleep", "30"});
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    auto x = oci({"--root", e.root, "exec", "--tty", "--detach", e.id, "true"});
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(x.status, 1);
    cr_assert(contains(x.err, "a terminal with --detach needs --console-socket"), "%s",
              x.err.c_str());
}

// CVE-2025-52565: /dev/console is a symlink to a host file. In the
// container's own /dev (the rootfs's, no tmpfs over it) the runtime replaces
// it and binds the pty onto it through fds: what the container writes to
// /dev/console reaches the pty, never the host file. In a /dev bound from
// elsewhere, which the runtime does not change (as runc), it is refused:
// the symlink stays, the host file is not written.
Test(terminal, console_symlink_to_a_host_file_is_replaced) {
    std::string host = test::track_dir(test::make_temp_dir("conhost"));
    test::write_file(host + "/canary", "host\n");
    std::string outputs[2], links[2];
    int statuses[2];
    for (int bound : {0, 1}) {
        Env e =
            make_env(bound ? "ttyconsb" : "ttycons",
                     {"sh", "-c", "echo via-console > /dev/console; ls -l /dev/console; echo end"});
        e.b.spec.process->terminal = true;
        std::string dev = e.b.rootfs + "/dev";
        if (bound) {
            // The bundle's /dev over the default tmpfs, with a devpts on it.
            dev = test::track_dir(test::make_temp_dir("condev"));
            ::mkdir((dev + "/pts").c_str(), 0755);
            ::symlink("pts/ptmx", (dev + "/ptmx").c_str());
            for (auto &m : e.b.spec.mounts)
                if (m.destination == "/dev") m = test::mount_entry("/dev", "bind", dev, {"rbind"});
        } else {
            std::erase_if(e.b.spec.mounts,
                          [](const ocirun::oci::Mount &m) { return m.destination == "/dev"; });
        }
        ::symlink((host + "/canary").c_str(), (dev + "/console").c_str());
        e.b.save();
        test::PtyChild c =
            test::spawn_oci_on_pty({"--root", e.root, "run", "--bundle", e.b.dir, e.id});
        outputs[bound] = read_until(c.master, "end");
        statuses[bound] = test::wait_bounded(c.pid, 5000);
        close(c.master);
        char buf[256] = {};
        (void)!::readlink((dev + "/console").c_str(), buf, sizeof buf - 1);
        links[bound] = buf;
    }
    std::string canary = test::read_file(host + "/canary");
    cleanup_all();
    cr_assert_str_eq(canary.c_str(), "host\n", "the host file was written");
    cr_assert_eq(statuses[0], 0, "status %d: %s", statuses[0], outputs[0].c_str());
    cr_assert(contains(outputs[0], "via-console"), "%s", outputs[0].c_str());
    cr_assert(contains(outputs[0], "136,"), "/dev/console is not the pty: %s", outputs[0].c_str());
    cr_assert_neq(statuses[1], 0, "%s", outputs[1].c_str());
    cr_assert(contains(outputs[1], "/dev/console: /dev is a bind mount"), "%s", outputs[1].c_str());
    std::string canary_path = host + "/canary";
    cr_assert_str_eq(links[1].c_str(), canary_path.c_str());
}

// The exec intermediate opens the pty with the host's privileges before it
// is in the container's cgroup. The container (root, with CAP_MKNOD as
// Docker and Podman grant by default) has put a device the device rules refuse (1:11,
// /dev/kmsg) at /dev/ptmx: `exec --tty` must open the devpts's own
// multiplexer and never that node. Watched from the host through the init's
// /proc/PID/root, an open of the node shows as IN_OPEN.
Test(terminal, exec_tty_never_opens_what_the_rootfs_put_at_dev_ptmx) {
    Env e =
        make_env("ttyptmx", {"sh", "-c",
                             "rm -f /dev/ptmx; mknod /dev/ptmx c 1 11 || exit 9; "
                             "if (: < /dev/ptmx) 2>/dev/null; then r=opened; else r=refused; fi; "
                             "echo $r > /dev/shm/ready; sleep 30"});
    test::add_capabilities(e, {"CAP_MKNOD"});
    e.b.save();
    auto c = create(e);
    auto st = oci({"--root", e.root, "start", e.id});
    long pid = test::state_of(e.root, e.id).pid;
    std::string dev = "/proc/" + std::to_string(pid) + "/root/dev";
    bool ready = false;
    for (int i = 0; i < 200 && !ready; i++) {
        ready = ::access((dev + "/shm/ready").c_str(), F_OK) == 0;
        if (!ready) ::usleep(20000);
    }
    struct stat node {};
    ::stat((dev + "/ptmx").c_str(), &node);
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    int wd = inotify_add_watch(in, (dev + "/ptmx").c_str(), IN_OPEN);
    test::ConsoleSocket sock = test::make_console_socket();
    test::Spawned x =
        test::spawn_oci({"--root", e.root, "exec", "--tty", "--console-socket", sock.path,
                         "--detach", e.id, "sh", "-c", "tty; echo exec-done"});
    int master = test::receive_master(sock, 3000);
    int xs = test::wait_bounded(x.pid, 5000);
    std::string seen = master >= 0 ? read_until(master, "exec-done") : "";
    if (master >= 0) close(master);
    std::string xerr = test::read_file(x.err_path);
    char events[4096];
    ssize_t got = ::read(in, events, sizeof events);
    ::close(in);
    std::string in_container = test::read_file(dev + "/shm/ready");
    cleanup_all();
    cr_assert_eq(c.status, 0, "create: %s", c.err.c_str());
    cr_assert_eq(st.status, 0, "start: %s", st.err.c_str());
    cr_assert(ready, "the container did not replace /dev/ptmx");
    cr_assert(S_ISCHR(node.st_mode) && node.st_rdev == makedev(1, 11), "not the planted node");
    cr_assert_geq(wd, 0, "inotify watch on %s/ptmx", dev.c_str());
    cr_assert(got <= 0, "the runtime opened the device the container put at /dev/ptmx");
    cr_assert_eq(xs, 0, "exec: %s", xerr.c_str());
    cr_assert(contains(seen, "/dev/pts/"), "saw: %s", seen.c_str());
    cr_assert(contains(seen, "exec-done"), "saw: %s", seen.c_str());
    cr_assert_str_eq(in_container.c_str(), "refused\n", "the device rules are not in force");
}
