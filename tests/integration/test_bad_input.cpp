// Bad input to the real binary: every bad config.json, bundle or invocation
// ends in exit 1 with exactly one "oci-run: ..." line on stderr naming the
// field or path, and leaves nothing behind (no state directory for the ID,
// no new mount on the host).
#include "oci/spec_io.hpp"
#include "support/bundle.hpp"
#include "support/console.hpp"
#include "support/container_env.hpp"
#include "support/harness.hpp"
#include "support/process.hpp"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using test::cleanup_all;
using test::contains;
using test::count_lines;
using test::dir_entries;
using test::oci;
using test::track_dir;

namespace {

// A create that wrongly succeeds hands its stdio to a waiting init, and a
// FIFO config must not hang the test: stdio on files, bounded at 5 s.
test::FileRun oci_bounded(const std::vector<std::string> &args) {
    return test::oci_files(args, -1, 5000);
}

// A bundle whose config.json is the real `oci-run spec` output (terminal off) and whose
// rootfs is an empty directory: enough for everything refused before the
// container's init runs, and much cheaper than a busybox rootfs.
struct Cfg {
    std::string dir;
    std::string text;       // config.json as `oci-run spec` wrote it
    ocirun::oci::Spec spec; // the same, parsed
    std::string root, id;
};

Cfg make_cfg(const char *tag) {
    Cfg c;
    c.dir = track_dir(test::make_temp_dir(tag));
    auto o = oci({"spec", "--bundle", c.dir});
    cr_assert_eq(o.status, 0, "spec: %s", o.err.c_str());
    mkdir((c.dir + "/rootfs").c_str(), 0755);
    auto spec = ocirun::oci::parse_spec(test::read_file(c.dir + "/config.json"));
    cr_assert(spec.has_value(), "default config does not parse");
    c.spec = std::move(*spec);
    // As make-bundle.sh does: no terminal, so no --console-socket is needed.
    c.spec.process->terminal = false;
    c.text = ocirun::oci::write_spec(c.spec);
    test::write_file(c.dir + "/config.json", c.text);
    c.root = track_dir(test::make_root(tag));
    c.id = test::unique_id(tag);
    test::track(c.root, c.id);
    return c;
}

void write_config(const Cfg &c, const std::string &text) {
    test::write_file(c.dir + "/config.json", text);
}

void save_spec(const Cfg &c) {
    write_config(c, ocirun::oci::write_spec(c.spec));
}

// `text` with `from` replaced by `to` (which must occur).
std::string replaced(const std::string &text, const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    cr_assert(at != std::string::npos, "\"%s\" not in the default config", from.c_str());
    std::string s = text;
    s.replace(at, from.size(), to);
    return s;
}

// Run `create` on the bundle and check the refusal: exit 1, one line
// "oci-run: ..." containing every needle, no state directory, no new mount.
void expect_refused(const std::string &root, const std::string &id, const std::string &bundle,
                    const std::vector<std::string> &needles) {
    auto mounts = test::mount_ids();
    auto o = oci_bounded({"--root", root, "create", "--bundle", bundle, id});
    std::string leaked = test::new_mounts(mounts, {root, bundle, id});
    bool left = test::exists(root + "/" + id);
    auto entries = dir_entries(root);
    cleanup_all();
    cr_assert_neq(o.status, -1, "create did not finish within 5 s");
    cr_assert_eq(o.status, 1, "create exited %d; err: %s", o.status, o.err.c_str());
    cr_assert_eq(count_lines(o.err), 1u, "stderr is not one line: %s", o.err.c_str());
    cr_assert(o.err.back() == '\n');
    cr_assert(o.err.rfind("oci-run: ", 0) == 0, "%s", o.err.c_str());
    for (const auto &n : needles)
        cr_assert(contains(o.err, n), "\"%s\" not in: %s", n.c_str(), o.err.c_str());
    cr_assert_str_eq(o.out.c_str(), "");
    cr_assert(!left, "create left %s/%s", root.c_str(), id.c_str());
    cr_assert(entries.empty(), "root has %s", entries.empty() ? "" : entries[0].c_str());
    cr_assert(leaked.empty(), "mounts left: %s", leaked.c_str());
}

void expect_refused(const Cfg &c, const std::vector<std::string> &needles) {
    expect_refused(c.root, c.id, c.dir, needles);
}

// A one-line usage/lookup error from any command.
void expect_error(const std::vector<std::string> &args, const std::vector<std::string> &needles) {
    auto o = oci_bounded(args);
    cleanup_all();
    cr_assert_eq(o.status, 1, "exited %d; err: %s", o.status, o.err.c_str());
    cr_assert_eq(count_lines(o.err), 1u, "stderr is not one line: %s", o.err.c_str());
    cr_assert(o.err.rfind("oci-run: ", 0) == 0, "%s", o.err.c_str());
    for (const auto &n : needles)
        cr_assert(contains(o.err, n), "\"%s\" not in: %s", n.c_str(), o.err.c_str());
}

size_t ns_index(const ocirun::oci::Spec &s, ocirun::oci::NsType t) {
    const auto &ns = s.linux_->namespaces;
    for (size_t i = 0; i < ns.size(); i++)
        if (ns[i].type == t) return i;
    cr_assert_fail("namespace not in the default config");
    return 0;
}

} // namespace

TestSuite(bad_input, .fini = cleanup_all, .timeout = 30);

// ---- config.json -------------------------------------------------------------------

Test(bad_input, sanity_default_config_is_accepted) {
    // The control: the same bundle, unedited, gets past config.json (it then
    // fails on the empty rootfs at exec, or is created). Either way no
    // config.json error is reported.
    Cfg c = make_cfg("sane");
    auto o = oci_bounded({"--root", c.root, "create", "--bundle", c.dir, c.id});
    cleanup_all();
    cr_assert(!contains(o.err, "config.json"), "%s", o.err.c_str());
}

Test(bad_input, malformed_json) {
    Cfg c = make_cfg("badjson");
    write_config(c, c.text.substr(0, c.text.size() / 2));
    expect_refused(c, {"config.json", "line", "column"});
}

Test(bad_input, garbage_json) {
    Cfg c = make_cfg("garbage");
    write_config(c, "{\n  \"ociVersion\": \"1.2.1\",\n  process: {}\n}\n");
    expect_refused(c, {"config.json", "line 3", "column"});
}

Test(bad_input, empty_config) {
    Cfg c = make_cfg("empty");
    write_config(c, "");
    expect_refused(c, {"config.json"});
}

Test(bad_input, wrong_type) {
    Cfg c = make_cfg("type");
    write_config(c, replaced(c.text, "\"readonly\": true", "\"readonly\": \"yes\""));
    expect_refused(c, {"root.readonly"});
}

Test(bad_input, wrong_type_array) {
    Cfg c = make_cfg("type2");
    write_config(c, replaced(c.text, "\"args\": [", "\"args\": \"sh\", \"x\": ["));
    expect_refused(c, {"process.args"});
}

Test(bad_input, unknown_namespace) {
    Cfg c = make_cfg("ns");
    size_t n = ns_index(c.spec, ocirun::oci::NsType::pid);
    write_config(c, replaced(c.text, "\"type\": \"pid\"", "\"type\": \"pidd\""));
    expect_refused(
        c, {"linux.namespaces[" + std::to_string(n) + "].type: unknown namespace \"pidd\""});
}

Test(bad_input, missing_process_cwd) {
    Cfg c = make_cfg("cwd");
    write_config(c, replaced(c.text, "\"cwd\": \"/\",", ""));
    expect_refused(c, {"process.cwd"});
}

Test(bad_input, relative_cwd) {
    Cfg c = make_cfg("relcwd");
    c.spec.process->cwd = "tmp";
    save_spec(c);
    expect_refused(c, {"process.cwd", "absolute"});
}

// (A relative destination is relative to "/", config.md's MAY; an empty
// one is refused.)
Test(bad_input, empty_mount_destination) {
    Cfg c = make_cfg("mntrel");
    cr_assert(!c.spec.mounts.empty());
    size_t i = c.spec.mounts.size() - 1;
    c.spec.mounts[i].destination = "";
    save_spec(c);
    expect_refused(c, {"mounts[" + std::to_string(i) + "].destination", "must not be empty"});
}

Test(bad_input, duplicate_namespace) {
    Cfg c = make_cfg("dupns");
    size_t i = c.spec.linux_->namespaces.size();
    c.spec.linux_->namespaces.push_back({ocirun::oci::NsType::ipc, ""});
    save_spec(c);
    expect_refused(c, {"linux.namespaces[" + std::to_string(i) + "]", "duplicate"});
}

Test(bad_input, uid_out_of_range) {
    Cfg c = make_cfg("uid");
    write_config(c, replaced(c.text, "\"uid\": 0", "\"uid\": 4294967296"));
    expect_refused(c, {"process.user.uid"});
}

Test(bad_input, negative_gid) {
    Cfg c = make_cfg("gid");
    write_config(c, replaced(c.text, "\"gid\": 0", "\"gid\": -1"));
    expect_refused(c, {"process.user.gid"});
}

Test(bad_input, fractional_uid) {
    Cfg c = make_cfg("uidf");
    write_config(c, replaced(c.text, "\"uid\": 0", "\"uid\": 0.5"));
    expect_refused(c, {"process.user.uid"});
}

Test(bad_input, unknown_rlimit) {
    Cfg c = make_cfg("rlim");
    write_config(c, replaced(c.text, "\"RLIMIT_NOFILE\"", "\"RLIMIT_BOGUS\""));
    expect_refused(c, {"process.rlimits[0].type", "RLIMIT_BOGUS"});
}

Test(bad_input, hostname_without_uts_namespace) {
    Cfg c = make_cfg("uts");
    std::erase_if(c.spec.linux_->namespaces,
                  [](const auto &n) { return n.type == ocirun::oci::NsType::uts; });
    cr_assert(!c.spec.hostname.empty());
    save_spec(c);
    expect_refused(c, {"hostname", "UTS"});
}

Test(bad_input, user_namespace_without_mappings) {
    Cfg c = make_cfg("nomap");
    c.spec.linux_->namespaces.push_back({ocirun::oci::NsType::user, ""});
    save_spec(c);
    expect_refused(c, {"linux.uidMappings"});
}

Test(bad_input, missing_args) {
    Cfg c = make_cfg("noargs");
    c.spec.process->args.clear();
    save_spec(c);
    expect_refused(c, {"process.args"});
}

// The network namespace's path set to `path`: create refuses it naming the
// entry and `needles`.
void expect_netns_path_refused(const char *tag, const std::string &path,
                               const std::vector<std::string> &needles) {
    Cfg c = make_cfg(tag);
    size_t n = ns_index(c.spec, ocirun::oci::NsType::network);
    c.spec.linux_->namespaces[n].path = path;
    save_spec(c);
    std::vector<std::string> all = {"linux.namespaces[" + std::to_string(n) + "].path"};
    all.insert(all.end(), needles.begin(), needles.end());
    expect_refused(c, all);
}

Test(bad_input, namespace_path_missing) {
    // Refused after the state directory exists: it must still go away.
    expect_netns_path_refused("nspath", "/nonexistent/oci-run-test/netns",
                              {"/nonexistent/oci-run-test/netns", "No such file or directory"});
}

// Attack: a namespace path that is not a namespace is refused without being
// opened: a FIFO would hold create forever (no writer comes), and opening a
// device can act (a watchdog starts counting). Before this, create blocked.
Test(bad_input, attack_namespace_path_to_a_fifo_is_not_opened) {
    std::string dir = test::track_dir(test::make_temp_dir("nsfifo"));
    std::string fifo = dir + "/netns";
    cr_assert_eq(::mkfifo(fifo.c_str(), 0600), 0, "mkfifo: %s", std::strerror(errno));
    expect_netns_path_refused("nsfifo", fifo, {fifo, "not a namespace"});
}

// A namespace of another type than the entry's is refused naming both.
Test(bad_input, namespace_path_of_another_type) {
    expect_netns_path_refused("nstype", "/proc/self/ns/uts",
                              {"a uts namespace, not a network one"});
}

// ---- the bundle itself --------------------------------------------------------------

Test(bad_input, missing_bundle_dir) {
    Cfg c = make_cfg("nobundle");
    expect_refused(c.root, c.id, "/nonexistent/oci-run-test-bundle",
                   {"/nonexistent/oci-run-test-bundle", "No such file or directory"});
}

Test(bad_input, missing_config_json) {
    Cfg c = make_cfg("noconfig");
    unlink((c.dir + "/config.json").c_str());
    expect_refused(c, {c.dir + "/config.json", "No such file or directory"});
}

Test(bad_input, config_is_a_fifo) {
    Cfg c = make_cfg("fifo");
    unlink((c.dir + "/config.json").c_str());
    cr_assert_eq(mkfifo((c.dir + "/config.json").c_str(), 0600), 0);
    expect_refused(c, {c.dir + "/config.json", "not a regular file"});
}

Test(bad_input, config_is_a_symlink_to_a_directory) {
    Cfg c = make_cfg("cfgdir");
    unlink((c.dir + "/config.json").c_str());
    mkdir((c.dir + "/somedir").c_str(), 0755);
    cr_assert_eq(symlink("somedir", (c.dir + "/config.json").c_str()), 0);
    expect_refused(c, {c.dir + "/config.json"});
}

Test(bad_input, missing_rootfs) {
    Cfg c = make_cfg("norootfs");
    rmdir((c.dir + "/rootfs").c_str());
    expect_refused(c, {"root.path", c.dir + "/rootfs", "No such file or directory"});
}

// The mount fails inside the container's init, after clone: the runtime must
// report the init's error and remove the state it had written.
Test(bad_input, mount_source_missing) {
    test::Bundle b = test::make_bundle("mntsrc", {"true"});
    track_dir(b.dir);
    std::string root = track_dir(test::make_root("mntsrc"));
    std::string id = test::unique_id("mntsrc");
    test::track(root, id);
    ocirun::oci::Mount m;
    m.destination = "/mnt/data";
    m.type = "bind";
    m.source = "/nonexistent/oci-run-test-src";
    m.options = {"rbind", "ro"};
    size_t i = b.spec.mounts.size();
    b.spec.mounts.push_back(m);
    b.save();
    bool stray_before = test::exists(b.rootfs + "/mnt/data");
    expect_refused(root, id, b.dir,
                   {"mounts[" + std::to_string(i) + "]", "/nonexistent/oci-run-test-src"});
    cr_assert(!stray_before);
}

// ---- command-line usage ----------------------------------------------------------------

Test(bad_input, create_without_id) {
    Cfg c = make_cfg("noid");
    expect_error({"--root", c.root, "create", "--bundle", c.dir}, {"missing container ID"});
}

Test(bad_input, create_with_two_ids) {
    Cfg c = make_cfg("twoid");
    expect_error({"--root", c.root, "create", "--bundle", c.dir, "a", "b"},
                 {"unexpected argument \"b\""});
}

Test(bad_input, bad_preserve_fds) {
    Cfg c = make_cfg("pfd");
    expect_error({"--root", c.root, "create", "--preserve-fds", "x", "--bundle", c.dir, c.id},
                 {"--preserve-fds"});
}

Test(bad_input, kill_unknown_signal) {
    std::string root = track_dir(test::make_root("sigfoo"));
    expect_error({"--root", root, "kill", "any", "SIGFOO"}, {"unknown signal \"SIGFOO\""});
}

Test(bad_input, nonexistent_container) {
    std::string root = track_dir(test::make_root("noent"));
    for (const char *cmd : {"state", "start", "kill", "delete"})
        expect_error({"--root", root, cmd, "no-such-container"},
                     {"container \"no-such-container\" does not exist"});
    // As runc (Podman calls it after a failed create): nothing to delete.
    auto o = test::oci({"--root", root, "delete", "--force", "no-such-container"});
    cr_assert_eq(o.status, 0, "%s", o.err.c_str());
    cr_assert(o.err.empty(), "%s", o.err.c_str());
    // A bad ID is still an error.
    expect_error({"--root", root, "delete", "--force", "../x"}, {"invalid container ID"});
}

Test(bad_input, list_format_xml) {
    std::string root = track_dir(test::make_root("xml"));
    expect_error({"--root", root, "list", "--format", "xml"}, {"--format", "xml"});
}

// A --root that another user owns, or that others may write to, could have
// its state swapped under the runtime: refused before anything is written.
Test(bad_input, state_root_of_another_user_or_world_writable) {
    test::Env e = test::make_env("badroot", {"true"});
    e.b.save();
    chown(e.root.c_str(), 65534, 65534);
    auto other = test::create(e);
    auto left_other = dir_entries(e.root);
    chown(e.root.c_str(), 0, 0);
    chmod(e.root.c_str(), 0777);
    auto world = test::create(e);
    auto left_world = dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(other.status, 1);
    cr_assert(contains(other.err, "owned by uid 65534, not by this user (0)"), "%s",
              other.err.c_str());
    cr_assert(left_other.empty());
    cr_assert_eq(world.status, 1);
    cr_assert(contains(world.err, ": writable by group or others"), "%s", world.err.c_str());
    cr_assert(left_world.empty());
}

// A mount namespace joined by path is someone else's: a configuration that
// would mount in it is refused before anything is created, naming the field.
Test(bad_input, mounts_in_a_joined_mount_namespace_are_refused) {
    test::Env e = test::make_env("badmntns", {"true"});
    for (auto &ns : e.b.spec.linux_->namespaces)
        if (ns.type == ocirun::oci::NsType::mount) ns.path = "/proc/self/ns/mnt";
    auto o = test::run(e);
    auto left = dir_entries(e.root);
    cleanup_all();
    cr_assert_eq(o.status, 1);
    cr_assert(contains(o.err, "config.json: mounts[0] /proc: needs a mount namespace of the "
                              "container's own (linux.namespaces joins one by path)"),
              "%s", o.err.c_str());
    cr_assert(left.empty());
}

// Every refusal comes before the first side effect (runc's validate pass):
// a bundle refused for its mounts, its sandbox policy or its netDevices has
// not connected to the caller's --console-socket, and leaves no state.
Test(bad_input, refused_before_the_console_socket_is_touched) {
    struct Case {
        const char *tag, *want;
        void (*set)(test::Env &);
    } cases[] = {
        {"badcs0", "unknown mount option",
         [](test::Env &e) {
             e.b.spec.mounts.push_back(
                 test::mount_entry("/mnt", "bind", "/tmp", {"rbind", "noexce"}));
         }},
        {"badcs1", "linux.netDevices",
         [](test::Env &e) {
             e.b.spec.annotations["dev.ocirun.network"] = "none";
             e.b.spec.linux_->net_devices["lo"] = {};
         }},
        {"badcs2", "dev.ocirun.deny",
         [](test::Env &e) { e.b.spec.annotations["dev.ocirun.deny"] = "relative/path"; }},
    };
    for (const auto &k : cases) {
        test::Env e = test::make_env(k.tag, {"true"});
        e.b.spec.process->terminal = true;
        k.set(e);
        e.b.save();
        test::ConsoleSocket cs = test::make_console_socket();
        auto o = oci(
            {"--root", e.root, "create", "--bundle", e.b.dir, "--console-socket", cs.path, e.id});
        struct pollfd p = {cs.listen_fd, POLLIN, 0};
        int connected = ::poll(&p, 1, 200);
        ::close(cs.listen_fd);
        auto left = dir_entries(e.root);
        cleanup_all();
        cr_assert_neq(o.status, 0, "%s: created", k.tag);
        cr_assert(contains(o.err, k.want), "%s: %s", k.tag, o.err.c_str());
        cr_assert_eq(connected, 0, "%s: the console socket was connected to", k.tag);
        cr_assert(left.empty(), "%s: state left", k.tag);
    }
}
