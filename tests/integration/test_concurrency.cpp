// Many commands on one --root at once: a hundred containers taken through
// their whole life in parallel while `list` and `state` read beside them, and
// one ID raced by two `create`s. What must hold: every state a reader sees is
// whole JSON with a valid status, no command waits on a lock for long, every
// container is accounted for, and nothing (state directory, process, cgroup
// in any hierarchy, mount) is left. The containers' cgroups live under a
// parent of this test's own, so only they are checked and removed.
#include "oci/json.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup_host.hpp"
#include "support/container_env.hpp"
#include "support/leftovers.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using test::cgroup_children;
using test::cgroup_parent;
using test::cleanup_all;
using test::contains;
using test::FileRun;
using test::mounts_naming;
using test::oci_files;
using test::processes_with;
using test::read_file;
using test::remove_cgroup_parent;

namespace {

using test::Clock;
using test::seconds_since;

// No single command may take longer: a lock left held shows up as a timeout
// (with a hundred lives at once on two cores, the slowest create took 20 to
// 40 s, alone in the suite or beside another test).
constexpr int kCommandBound = 120000;

ocirun::CgroupHost host() {
    auto h = ocirun::detect_cgroup_host();
    cr_assert(h.has_value(), "%s", h ? "" : h.error().text().c_str());
    return *h;
}

// The parent PID from /proc/PID/stat (the field after the parenthesised name),
// or 0 if the process is gone.
pid_t parent_of(pid_t pid) {
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    auto fields = ocirun::words(std::string_view(stat).substr(close + 1));
    return fields.size() > 1 ? ocirun::number<pid_t>(fields[1]).value_or(0) : 0;
}

bool valid_status(const std::string &s) {
    return s == "creating" || s == "created" || s == "running" || s == "stopped" || s == "paused";
}

// A bundle directory sharing one busybox rootfs (read-only, so sharing is
// safe), its cgroup under `parent`.
std::string bundle_for(const test::Bundle &base, const std::string &dir, const std::string &id,
                       const std::string &parent, const std::vector<std::string> &args) {
    ocirun::oci::Spec spec = base.spec;
    spec.root->path = base.rootfs;
    spec.linux_->cgroups_path = parent + "/" + id;
    spec.process->args = args;
    ::mkdir(dir.c_str(), 0755);
    test::write_file(dir + "/config.json", ocirun::oci::write_spec(spec));
    return dir;
}

// The "status" of a state printed by `state`, or "".
std::string status_in(const std::string &out) {
    auto doc = ocirun::json::Document::parse(out);
    yajl_val st = doc ? ocirun::json::member(doc->root(), "status") : nullptr;
    return st && YAJL_IS_STRING(st) ? st->u.string : "";
}

// The commands of a container's life, in order.
enum Step { kCreate, kState, kStart, kExec, kKill, kDelete, kSteps };
constexpr const char *kStepNames[kSteps] = {"create", "state", "start", "exec", "kill", "delete"};

// What one container's life produced, step by step.
struct Life {
    std::string id, bundle;
    long pid = -1;
    std::string failure;      // "" when every step did what it should
    double took[kSteps] = {}; // seconds per command
};

// create, state, start, exec, kill, wait for stopped, delete: each step
// must succeed; the first that does not is recorded.
void live(Life &l, const std::string &root, const std::string &marker) {
    auto run = [&](Step s, std::vector<std::string> args) {
        args.insert(args.begin(), {"--root", root});
        auto t = Clock::now();
        FileRun r = oci_files(args, -1, kCommandBound);
        l.took[s] = seconds_since(t);
        if (r.status != 0)
            l.failure = std::string(kStepNames[s]) + " exited " + std::to_string(r.status) +
                        (r.status < 0 ? " (timed out)" : "") + ": " + r.err;
        return r;
    };
    if (run(kCreate, {"create", "--bundle", l.bundle, l.id}).status != 0) return;
    auto st = run(kState, {"state", l.id});
    if (st.status != 0) return;
    if (status_in(st.out) != "created") {
        l.failure = "state after create: " + st.out;
        return;
    }
    if (run(kStart, {"start", l.id}).status != 0) return;
    l.pid = test::state_of(root, l.id).pid;
    auto x = run(kExec, {"exec", l.id, "sh", "-c", "echo exec-$0; : " + marker, l.id});
    if (x.status != 0) return;
    if (x.out != "exec-" + l.id + "\n") {
        l.failure = "exec printed [" + x.out + "]";
        return;
    }
    if (run(kKill, {"kill", l.id, "KILL"}).status != 0) return;
    std::string last = test::wait_status(root, l.id, "stopped", kCommandBound);
    if (last != "stopped") {
        l.failure = "still " + last + " after kill";
        return;
    }
    run(kDelete, {"delete", l.id});
}

// What the readers saw: counts, and anything that was not a whole state.
struct Reads {
    std::mutex lock;
    long lists = 0, states = 0, absent = 0;
    double slowest = 0;
    std::string bad;
    void note(const std::string &what) {
        std::lock_guard<std::mutex> hold(lock);
        if (bad.size() < 4000) bad += what + "\n";
    }
};

// `list --format json` must be an array of states, each with a valid status
// and one of our IDs.
void check_list(const FileRun &r, const std::set<std::string> &ids, Reads &reads) {
    if (r.status != 0) return reads.note("list exited " + std::to_string(r.status) + ": " + r.err);
    auto doc = ocirun::json::Document::parse(r.out);
    if (!doc || !YAJL_IS_ARRAY(doc->root())) return reads.note("list printed non-JSON: " + r.out);
    yajl_val arr = doc->root();
    for (size_t i = 0; i < arr->u.array.len; i++) {
        yajl_val e = arr->u.array.values[i];
        yajl_val id = ocirun::json::member(e, "id");
        yajl_val st = ocirun::json::member(e, "status");
        if (!id || !YAJL_IS_STRING(id) || !ids.count(id->u.string) || !st || !YAJL_IS_STRING(st) ||
            !valid_status(st->u.string))
            return reads.note("list entry not whole: " + r.out);
    }
}

// `state ID` is a whole state with a valid status, or (before its create
// has written a record, or after its delete) one line: "does not exist" or
// "is being created".
void check_state(const FileRun &r, const std::string &id, Reads &reads) {
    if (r.status != 0) {
        if (r.status == 1 && test::count_lines(r.err) == 1 &&
            (contains(r.err, "container \"" + id + "\" does not exist") ||
             contains(r.err, "container \"" + id + "\" has no state") ||
             contains(r.err, "container \"" + id + "\" is being created"))) {
            std::lock_guard<std::mutex> hold(reads.lock);
            reads.absent++;
            return;
        }
        return reads.note("state " + id + " exited " + std::to_string(r.status) + ": " + r.err);
    }
    auto doc = ocirun::json::Document::parse(r.out);
    yajl_val st = doc ? ocirun::json::member(doc->root(), "status") : nullptr;
    yajl_val got = doc ? ocirun::json::member(doc->root(), "id") : nullptr;
    if (!st || !YAJL_IS_STRING(st) || !valid_status(st->u.string) || !got || !YAJL_IS_STRING(got) ||
        id != got->u.string)
        reads.note("state " + id + " not whole: " + r.out);
}

} // namespace

TestSuite(concurrency, .fini = cleanup_all, .timeout = 300);

// A hundred containers created, started, exec'd into, killed and deleted in
// parallel on one --root, with `list` and `state` in a loop beside them.
Test(concurrency, hundred_containers_in_parallel_on_one_root) {
    constexpr int kContainers = 100, kParallel = 100;
    std::string marker = "ocirun-stress-" + std::to_string(::getpid());
    std::string parent = cgroup_parent("many");
    std::string root = test::track_dir(test::make_root("many"));
    test::Bundle base = test::make_bundle("many");
    test::track_dir(base.dir);
    std::vector<Life> lives(kContainers);
    std::set<std::string> ids;
    for (int i = 0; i < kContainers; i++) {
        Life &l = lives[static_cast<size_t>(i)];
        l.id = test::unique_id("many");
        l.bundle = bundle_for(base, base.dir + "/b" + std::to_string(i), l.id, parent,
                              {"sh", "-c", "sleep 600; : " + marker});
        test::track(root, l.id);
        ids.insert(l.id);
    }
    size_t mounts_before = mounts_naming(base.dir).size() + mounts_naming(root).size();

    auto t0 = Clock::now();
    std::atomic<bool> done{false};
    Reads reads;
    std::vector<std::thread> readers;
    readers.emplace_back([&] {
        while (!done) {
            auto t = Clock::now();
            auto r = oci_files({"--root", root, "list", "--format", "json"}, -1, kCommandBound);
            double took = seconds_since(t);
            check_list(r, ids, reads);
            std::lock_guard<std::mutex> hold(reads.lock);
            reads.lists++;
            reads.slowest = std::max(reads.slowest, took);
        }
    });
    readers.emplace_back([&] {
        for (size_t n = 0; !done; n++) {
            const std::string &id = lives[(n * 7) % lives.size()].id;
            auto t = Clock::now();
            auto r = oci_files({"--root", root, "state", id}, -1, kCommandBound);
            double took = seconds_since(t);
            check_state(r, id, reads);
            std::lock_guard<std::mutex> hold(reads.lock);
            reads.states++;
            reads.slowest = std::max(reads.slowest, took);
        }
    });
    // A pool of workers, each taking the next container: with kParallel at
    // kContainers, all hundred lives start at once and run their steps side
    // by side (one's create beside another's delete).
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kParallel; w++)
        workers.emplace_back([&] {
            for (size_t i; (i = next++) < lives.size();)
                live(lives[i], root, marker);
        });
    for (auto &w : workers)
        w.join();
    done = true;
    for (auto &r : readers)
        r.join();
    double wall = seconds_since(t0);

    auto final_list = oci_files({"--root", root, "list", "--format", "json"});
    auto left_dirs = test::dir_entries(root);
    auto left_cgroups = cgroup_children(parent);
    auto left_procs = processes_with(marker);
    std::string alive;
    for (const auto &l : lives)
        if (l.pid > 0 && !test::pid_gone_now(l.pid)) alive += std::to_string(l.pid) + " ";
    size_t mounts_after = mounts_naming(base.dir).size() + mounts_naming(root).size();
    cleanup_all();
    std::string parent_left = remove_cgroup_parent(parent);

    std::string failures, slowest;
    int failed = 0;
    double worst[kSteps] = {};
    for (const auto &l : lives) {
        if (!l.failure.empty() && failed++ < 5) failures += l.id + ": " + l.failure + "\n";
        for (int s = 0; s < kSteps; s++)
            worst[s] = std::max(worst[s], l.took[s]);
    }
    for (int s = 0; s < kSteps; s++)
        slowest += std::string(" ") + kStepNames[s] + " " + std::to_string(worst[s]).substr(0, 5);
    std::fprintf(stderr,
                 "concurrency: %d containers, %d at once, in %.1f s, slowest:%s; %ld lists, %ld "
                 "states (%ld absent), slowest read %.2f s\n",
                 kContainers, kParallel, wall, slowest.c_str(), reads.lists, reads.states,
                 reads.absent, reads.slowest);
    cr_assert_eq(failed, 0, "%d of %d lives failed, first:\n%s", failed, kContainers,
                 failures.c_str());
    cr_assert(reads.bad.empty(), "readers saw:\n%s", reads.bad.c_str());
    cr_assert_gt(reads.lists, 0);
    cr_assert_gt(reads.states, 0);
    cr_assert_eq(final_list.status, 0, "%s", final_list.err.c_str());
    cr_assert_str_eq(final_list.out.c_str(), "[]\n");
    cr_assert(left_dirs.empty(), "%zu state directories left, e.g. %s", left_dirs.size(),
              left_dirs.empty() ? "" : left_dirs[0].c_str());
    cr_assert(left_cgroups.empty(), "%zu cgroups left, e.g. %s", left_cgroups.size(),
              left_cgroups.empty() ? "" : left_cgroups[0].c_str());
    cr_assert(left_procs.empty() && alive.empty(), "%zu container processes left; inits alive: %s",
              left_procs.size(), alive.c_str());
    cr_assert_eq(mounts_after, mounts_before,
                 "mounts naming our directories: %zu before, %zu after", mounts_before,
                 mounts_after);
    cr_assert(parent_left.empty(), "%s", parent_left.c_str());
}

// Two `create`s of one ID, the second one 0 to 60 ms after the first (so it
// lands before, during and after the first one's set-up): exactly one wins;
// the loser exits 1 with one clear line and leaves the winner whole (it
// starts, runs, takes an exec) with no second cgroup and no process of its
// own. A create of the running container's ID fails the same way.
Test(concurrency, same_id_raced_by_two_creates) {
    std::string marker = "ocirun-race-" + std::to_string(::getpid());
    std::string parent = cgroup_parent("race");
    std::string root = test::track_dir(test::make_root("race"));
    test::Bundle base = test::make_bundle("race");
    test::track_dir(base.dir);
    std::string failures;
    auto t0 = Clock::now();
    int round = 0;
    for (int delay_ms : {0, 0, 2, 10, 30, 60}) {
        round++;
        std::string id = test::unique_id("race");
        std::string tag = marker + "-" + std::to_string(round);
        test::track(root, id);
        std::string bundle = bundle_for(base, base.dir + "/r" + std::to_string(round), id, parent,
                                        {"sh", "-c", "sleep 600; : " + tag});
        std::vector<std::string> args{"--root", root, "create", "--bundle", bundle, id};
        test::Spawned a = test::spawn_oci(args);
        if (delay_ms) ::usleep(static_cast<useconds_t>(delay_ms) * 1000);
        test::Spawned b = test::spawn_oci(args);
        int sa = test::wait_bounded(a.pid, kCommandBound),
            sb = test::wait_bounded(b.pid, kCommandBound);
        std::string ea = read_file(a.err_path), eb = read_file(b.err_path);
        auto fail = [&](const std::string &what) {
            failures += "round " + std::to_string(round) + " (+" + std::to_string(delay_ms) +
                        " ms): " + what + "\n";
        };
        if (!((sa == 0 && sb == 1) || (sa == 1 && sb == 0))) {
            fail("exits " + std::to_string(sa) + " and " + std::to_string(sb) + ": " + ea + " | " +
                 eb);
            continue;
        }
        const std::string &loser_err = sa == 1 ? ea : eb;
        std::string want = "oci-run: container \"" + id + "\" already exists\n";
        if (loser_err != want) fail("loser said [" + loser_err + "]");
        // The winner: created, one cgroup per hierarchy holding its init alone.
        auto st = test::state_of(root, id);
        if (st.status != "created") fail("winner is " + st.status + ": " + st.err);
        auto children = cgroup_children(parent);
        if (children.size() != host().hierarchies.size())
            fail(std::to_string(children.size()) + " cgroups under the parent for " +
                 std::to_string(host().hierarchies.size()) + " hierarchies");
        for (const auto &c : children) {
            std::string procs = read_file(c + "/cgroup.procs");
            if (c.substr(c.rfind('/') + 1) != id || procs != std::to_string(st.pid) + "\n")
                fail(c + " holds [" + procs + "], the init is " + std::to_string(st.pid));
        }
        if (test::dir_entries(root).size() != 1) fail("more than one state directory");
        auto s = test::oci({"--root", root, "start", id});
        if (s.status != 0) fail("start: " + s.err);
        auto running = test::state_of(root, id);
        auto x = test::oci({"--root", root, "exec", id, "echo", "alive"});
        if (running.status != "running" || running.pid != st.pid || x.out != "alive\n")
            fail("after start: " + running.status + " pid " + std::to_string(running.pid) +
                 ", exec [" + x.out + x.err + "]");
        // The shell forks for `sleep`: until that child execs it carries the
        // tag too, so count only tagged processes that are not the init's children.
        int others = 0;
        bool init_seen = false;
        for (pid_t p : processes_with(tag)) {
            if (p == st.pid)
                init_seen = true;
            else if (parent_of(p) != st.pid)
                others++;
        }
        if (!init_seen || others != 0)
            fail("the init " + std::string(init_seen ? "runs" : "is missing") + " and " +
                 std::to_string(others) + " other processes run the container's command");
        // Late: the ID is taken by a running container.
        auto late = oci_files(args);
        if (late.status != 1 || late.err != want) fail("late create: " + late.err);
        if (test::state_of(root, id).status != "running") fail("the late create harmed the winner");
        auto d = test::oci({"--root", root, "delete", "--force", id});
        if (d.status != 0) fail("delete: " + d.err);
        if (!cgroup_children(parent).empty()) fail("a cgroup is left after delete");
        if (!processes_with(tag).empty()) fail("a process is left after delete");
    }
    double wall = seconds_since(t0);
    auto left_dirs = test::dir_entries(root);
    cleanup_all();
    std::string parent_left = remove_cgroup_parent(parent);
    std::fprintf(stderr, "concurrency: %d create races in %.1f s\n", round, wall);
    cr_assert(failures.empty(), "%s", failures.c_str());
    cr_assert(left_dirs.empty(), "%zu state directories left", left_dirs.size());
    cr_assert(parent_left.empty(), "%s", parent_left.c_str());
}
