// oci-run-bench-startup: start-up latency, exec latency, memory and scaling
// of oci-run side by side with runc and crun (where installed), on the same
// busybox bundle, interleaved (A B C A B C ...), with the unshare floor.
//
//   startup [--iterations N] [--scale N] [--scale-rounds N] [--json] [--no-heap] [--heap-lib PATH]
//           [--oci-run PATH] [--oci-run-heap PATH] [--runc PATH|none]
//           [--crun PATH|none] [--settle-ms N] [--bundle-maker PATH]
//           [--state-dir DIR] [--seccomp-profile FILE]
//
// --scale N, --scale-rounds N: N containers created at once, then deleted at
// once (100), in N interleaved rounds (10), after a pause of at least 100 ms.
// --state-dir: the runtimes' --root directories go in a new directory under
// DIR (a tmpfs, as /run is on most systems; by default they are in the
// temporary directory with the bundles). --seccomp-profile: the "+seccomp"
// row runs the base bundle with that profile as linux.seccomp (the build
// passes seccomp-profiles/default.json).
//
// The heap count preloads a library into the runtime, which a static binary
// does not load: --oci-run-heap names the same code linked dynamically (the
// build's oci-run-dynamic) for that row.
//
// Figures, not assertions: medians and p90 in milliseconds, ratios to crun.
// crun 1.8 refuses a hybrid cgroup host; there it runs in a private mount
// namespace with an empty file over /sys/fs/cgroup/unified/cgroup.controllers
// (nothing changes outside that namespace), and the output says so.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    int iterations = 30;
    int scale = 100;
    int scale_rounds = 10;
    bool json = false;
    bool heap = true;
    std::string heap_lib;     // bench/heap_count.cpp, built as a shared library
    std::string oci_run_heap; // oci-run linked dynamically, for the heap count
    std::string oci_run, runc = "runc", crun = "crun", bundle_maker;
    std::string state_dir; // where the runtimes' --root directories go (default: the temp dir)
    std::string seccomp;   // an OCI seccomp profile for the +seccomp rows (none: no such rows)
};

struct Runtime {
    std::string name, path;
    bool private_mnt = false; // run inside the prepared mount namespace (crun on hybrid)
    std::string root;         // its --root
};

int g_mntns = -1; // the private mount namespace for crun, or -1

[[noreturn]] void die(const std::string &msg) {
    std::fprintf(stderr, "bench: %s\n", msg.c_str());
    std::exit(1);
}

bool executable(const std::string &p) {
    return !p.empty() && ::access(p.c_str(), X_OK) == 0;
}
bool executable_or_file(const std::string &p) {
    return !p.empty() && ::access(p.c_str(), R_OK) == 0;
}

std::string which(const std::string &name) {
    if (name.find('/') != std::string::npos) return executable(name) ? name : "";
    const char *path = std::getenv("PATH");
    std::stringstream in(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    std::string dir;
    while (std::getline(in, dir, ':'))
        if (executable(dir + "/" + name)) return dir + "/" + name;
    return "";
}

struct Result {
    int status = -1;
    double ms = 0;
    long maxrss_kib = 0;
    std::string err;
};

// The pause before each timed command (--settle-ms): the kernel finishes a
// runtime's cgroup and namespace teardown in the background (workqueues, RCU
// callbacks), and whatever ran next paid for it: the heavier the previous
// runtime (runc's Go runtime and its cgroups), the more. Every runtime and
// the floor get the same pause.
int g_settle_ms = 25;

// Run argv (stdio on /dev/null, stderr kept in a file when `capture_err`:
// not a pipe, since `create` hands its stdio to the container's init, which
// would hold a pipe open), optionally in the private mount namespace; time
// it and take its rusage.
Result run(const std::vector<std::string> &argv, bool private_mnt = false,
           bool capture_err = false) {
    if (g_settle_ms > 0) ::usleep(static_cast<useconds_t>(g_settle_ms) * 1000);
    int errfd = -1;
    if (capture_err) {
        char path[] = "/tmp/oci-run-bench-err-XXXXXX";
        errfd = ::mkstemp(path);
        if (errfd < 0) die("mkstemp");
        ::unlink(path);
    }
    auto t0 = Clock::now();
    pid_t pid = ::fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(capture_err ? errfd : null, 2);
        if (private_mnt && ::setns(g_mntns, CLONE_NEWNS) < 0) ::_exit(126);
        std::vector<char *> a;
        for (const auto &s : argv)
            a.push_back(const_cast<char *>(s.c_str()));
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    Result r;
    int st = 0;
    struct rusage ru {};
    while (::wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    r.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.maxrss_kib = ru.ru_maxrss;
    if (capture_err) {
        char buf[4096];
        ssize_t n;
        ::lseek(errfd, 0, SEEK_SET);
        while ((n = ::read(errfd, buf, sizeof buf)) > 0)
            r.err.append(buf, static_cast<size_t>(n));
        ::close(errfd);
    }
    return r;
}

// Reap whatever was reparented to us (we are a subreaper: container inits
// whose runtime exited).
void reap_orphans() {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
}

// Wait until `pid` (a container init reparented to us, the subreaper) has
// exited.
void wait_exit(pid_t pid) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    reap_orphans();
}

pid_t read_pid(const std::string &path) {
    std::ifstream in(path);
    long p = 0;
    in >> p;
    return static_cast<pid_t>(p);
}

std::vector<std::string> rt_args(const Runtime &rt, std::initializer_list<std::string> tail) {
    std::vector<std::string> a = {rt.path, "--root", rt.root};
    a.insert(a.end(), tail);
    return a;
}

struct Series {
    std::vector<double> v;
    double median() const { return pct(0.5); }
    double p90() const { return pct(0.9); }
    double pct(double q) const {
        if (v.empty()) return 0;
        std::vector<double> s = v;
        std::sort(s.begin(), s.end());
        size_t i = static_cast<size_t>(q * static_cast<double>(s.size() - 1) + 0.5);
        return s[std::min(i, s.size() - 1)];
    }
};

// Table rows, in order: name -> runtime -> series.
struct Table {
    std::vector<std::string> order;
    std::map<std::string, std::string> unit;
    std::map<std::string, std::map<std::string, Series>> rows;
    void add(const std::string &row, const std::string &u, const std::string &rt, double v) {
        if (!rows.count(row)) {
            order.push_back(row);
            unit[row] = u;
        }
        rows[row][rt].v.push_back(v);
    }
};

std::string sh_quote(const std::string &s) {
    return "'" + s + "'";
}

// Bundles: base (pid, ipc, uts, mount), +userns (0 -> 100000, 65536; with a
// netns too, which sysfs in a user namespace needs), +netns,
// and a long-running one for exec.
void make_bundles(const Options &o, const std::string &dir) {
    std::string base = dir + "/base";
    std::string cmd = sh_quote(o.bundle_maker) + " --oci-run " + sh_quote(o.oci_run) + " " +
                      sh_quote(base) + " /bin/true >/dev/null";
    if (std::system(cmd.c_str()) != 0) die("make-bundle.sh failed: " + cmd);
    const char *jq_base =
        ".linux.namespaces = [{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"
        "{\"type\":\"mount\"}] | .root.path = \"%s/rootfs\" | .root.readonly = true"
        " | .ociVersion = \"1.0.2\"";
    char filter[512];
    std::snprintf(filter, sizeof filter, jq_base, base.c_str());
    struct V {
        const char *name, *extra;
    } vs[] = {
        {"base", ""},
        {"userns", " | .linux.namespaces += [{\"type\":\"user\"},{\"type\":\"network\"}] | "
                   ".linux.uidMappings = "
                   "[{\"containerID\":0,\"hostID\":100000,\"size\":65536}] | .linux.gidMappings = "
                   "[{\"containerID\":0,\"hostID\":100000,\"size\":65536}]"},
        {"netns", " | .linux.namespaces += [{\"type\":\"network\"}]"},
        {"sleep", " | .process.args = [\"sleep\", \"100000\"]"},
        {"seccomp", " | .linux.seccomp = $profile[0]"},
    };
    for (const auto &v : vs) {
        if (std::string(v.name) == "seccomp" && o.seccomp.empty()) continue;
        std::string d = dir + "/" + v.name;
        ::mkdir(d.c_str(), 0755);
        std::string profile = std::string(v.name) == "seccomp"
                                  ? "--slurpfile profile " + sh_quote(o.seccomp) + " "
                                  : "";
        std::string c = "jq " + profile + sh_quote(std::string(filter) + v.extra) + " " +
                        sh_quote(base + "/config.json") + " > " + sh_quote(d + "/config.json.new") +
                        " && mv " + sh_quote(d + "/config.json.new") + " " +
                        sh_quote(d + "/config.json");
        if (std::system(c.c_str()) != 0) die("jq failed: " + c);
    }
}

// crun 1.8 on a hybrid host: a mount namespace where the unified
// hierarchy's cgroup.controllers reads empty. Kept alive by a child.
bool prepare_private_mnt(const std::string &dir) {
    const char *ctl = "/sys/fs/cgroup/unified/cgroup.controllers";
    std::ifstream in(ctl);
    std::string content;
    if (!in || !std::getline(in, content) || content.empty()) return false;
    std::string empty = dir + "/empty";
    std::ofstream(empty).close();
    int ready[2];
    if (::pipe(ready) < 0) die("pipe");
    pid_t keeper = ::fork();
    if (keeper == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::unshare(CLONE_NEWNS) < 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0 ||
            ::mount(empty.c_str(), ctl, nullptr, MS_BIND, nullptr) < 0)
            ::_exit(1);
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char c;
    if (::read(ready[0], &c, 1) != 1) die("could not prepare the private mount namespace for crun");
    ::close(ready[0]);
    g_mntns = ::open(("/proc/" + std::to_string(keeper) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC);
    return g_mntns >= 0;
}

double fmt_ratio(double v, double crun) {
    return crun > 0 ? v / crun : 0;
}

void print_table(const Table &t, const std::vector<std::string> &names, bool have_crun) {
    std::printf("%-30s", "");
    for (const auto &n : names)
        std::printf("%28s", n.c_str());
    std::printf("\n");
    for (const auto &row : t.order) {
        std::printf("%-30s", row.c_str());
        const auto &cols = t.rows.at(row);
        double crun = have_crun && cols.count("crun") ? cols.at("crun").median() : 0;
        for (const auto &n : names) {
            char cell[64] = "-";
            if (cols.count(n)) {
                const Series &s = cols.at(n);
                const std::string &u = t.unit.at(row);
                if (u == "ms")
                    std::snprintf(cell, sizeof cell, "%.2f (p90 %.2f)", s.median(), s.p90());
                else
                    std::snprintf(cell, sizeof cell, "%.0f %s", s.median(), u.c_str());
                if (crun > 0 && n != "crun" && n != "floor") {
                    size_t l = std::strlen(cell);
                    std::snprintf(cell + l, sizeof cell - l, " x%.2f", fmt_ratio(s.median(), crun));
                }
            }
            std::printf("%28s", cell);
        }
        std::printf("\n");
    }
}

void print_json(const Table &t, const Options &o, const std::vector<Runtime> &rts) {
    std::printf("{\"iterations\":%d,\"scale\":%d,\"scaleRounds\":%d,\"settleMs\":%d,"
                "\"runtimes\":[",
                o.iterations, o.scale, o.scale_rounds, g_settle_ms);
    for (size_t i = 0; i < rts.size(); i++)
        std::printf("%s{\"name\":\"%s\",\"path\":\"%s\",\"privateMountNamespace\":%s}",
                    i ? "," : "", rts[i].name.c_str(), rts[i].path.c_str(),
                    rts[i].private_mnt ? "true" : "false");
    std::printf("],\"rows\":[");
    bool first = true;
    for (const auto &row : t.order) {
        std::printf("%s{\"name\":\"%s\",\"unit\":\"%s\",\"values\":{", first ? "" : ",",
                    row.c_str(), t.unit.at(row).c_str());
        first = false;
        const auto &cols = t.rows.at(row);
        double crun = cols.count("crun") ? cols.at("crun").median() : 0;
        bool f2 = true;
        for (const auto &[n, s] : cols) {
            std::printf("%s\"%s\":{\"median\":%.3f,\"p90\":%.3f", f2 ? "" : ",", n.c_str(),
                        s.median(), s.p90());
            if (crun > 0) std::printf(",\"ratioToCrun\":%.3f", fmt_ratio(s.median(), crun));
            std::printf("}");
            f2 = false;
        }
        std::printf("}}");
    }
    std::printf("]}\n");
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) die(a + ": missing value");
            return argv[++i];
        };
        if (a == "--iterations")
            o.iterations = std::max(1, std::atoi(value().c_str()));
        else if (a == "--scale")
            o.scale = std::max(1, std::atoi(value().c_str()));
        else if (a == "--scale-rounds")
            o.scale_rounds = std::max(1, std::atoi(value().c_str()));
        else if (a == "--json")
            o.json = true;
        else if (a == "--no-heap")
            o.heap = false;
        else if (a == "--heap-lib")
            o.heap_lib = value();
        else if (a == "--oci-run")
            o.oci_run = value();
        else if (a == "--oci-run-heap")
            o.oci_run_heap = value();
        else if (a == "--settle-ms")
            g_settle_ms = std::max(0, std::atoi(value().c_str()));
        else if (a == "--runc")
            o.runc = value();
        else if (a == "--crun")
            o.crun = value();
        else if (a == "--bundle-maker")
            o.bundle_maker = value();
        else if (a == "--state-dir")
            o.state_dir = value();
        else if (a == "--seccomp-profile")
            o.seccomp = value();
        else if (a == "-h" || a == "--help") {
            std::printf("usage: startup [--iterations N] [--scale N] [--scale-rounds N] [--json] "
                        "[--no-heap] "
                        "[--heap-lib PATH] "
                        "[--oci-run PATH] [--oci-run-heap PATH] [--runc PATH|none] "
                        "[--crun PATH|none] [--settle-ms N] "
                        "[--bundle-maker PATH] [--state-dir DIR] [--seccomp-profile FILE]\n");
            return 0;
        } else
            die("unknown argument " + a);
    }
    if (o.oci_run.empty()) o.oci_run = std::getenv("OCI_RUN") ? std::getenv("OCI_RUN") : "";
    if (o.bundle_maker.empty())
        o.bundle_maker =
            std::getenv("OCI_RUN_BUNDLE_MAKER") ? std::getenv("OCI_RUN_BUNDLE_MAKER") : "";
    if (!executable(o.oci_run)) die("--oci-run PATH (or $OCI_RUN) is required");
    if (!executable(o.bundle_maker))
        die("--bundle-maker PATH (or $OCI_RUN_BUNDLE_MAKER) is required");
    if (::geteuid() != 0) die("run as root");
    // LD_PRELOAD takes the library's path as given, relative to the
    // runtime's working directory, and crun's is / (setns into the private
    // mount namespace moves it there): its heap was not counted ("-").
    if (!o.heap_lib.empty() && o.heap_lib[0] != '/') {
        char *abs = ::realpath(o.heap_lib.c_str(), nullptr);
        if (!abs) die("--heap-lib " + o.heap_lib + ": " + std::strerror(errno));
        o.heap_lib = abs;
        std::free(abs);
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);

    char tmpl[] = "/tmp/oci-run-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) die("mkdtemp");
    std::string dir = tmpl;
    ::chmod(dir.c_str(), 0755); // the user-namespace variant's root must reach the rootfs
    make_bundles(o, dir);
    std::string roots = dir;
    if (!o.state_dir.empty()) {
        char rt[] = "oci-run-bench-roots-XXXXXX";
        roots = o.state_dir + "/" + rt;
        std::vector<char> buf(roots.begin(), roots.end());
        buf.push_back('\0');
        if (!::mkdtemp(buf.data())) die("--state-dir " + o.state_dir + ": " + std::strerror(errno));
        roots = buf.data();
    }

    std::vector<Runtime> rts;
    rts.push_back({"oci-run", o.oci_run, false, roots + "/root-oci-run"});
    std::string note;
    if (o.runc != "none" && !which(o.runc).empty())
        rts.push_back({"runc", which(o.runc), false, roots + "/root-runc"});
    if (o.crun != "none" && !which(o.crun).empty()) {
        bool priv = prepare_private_mnt(dir);
        rts.push_back({"crun", which(o.crun), priv, roots + "/root-crun"});
        if (priv)
            note = "crun runs in a private mount namespace with an empty file over "
                   "/sys/fs/cgroup/unified/cgroup.controllers (crun 1.8 refuses hybrid hosts; "
                   "nothing changes outside that namespace)";
    }
    for (const auto &rt : rts)
        ::mkdir(rt.root.c_str(), 0700);

    Table t;
    int seq = 0;
    auto id = [&](const Runtime &rt) { return "b" + rt.name.substr(0, 2) + std::to_string(seq++); };
    auto failed = [&](const Runtime &rt, const char *what, const Result &r) {
        die(rt.name + " " + what + " failed (exit " + std::to_string(r.status) + ")" +
            (r.err.empty() ? "" : ": " + r.err));
    };

    // 1-3: run, and the split, for each bundle variant; interleaved. The
    // order of the runtimes and the floor turns by one each iteration: what
    // one leaves behind (a cgroup the kernel is still freeing, RCU callbacks)
    // slows whatever comes next, so no one may always come after the same one.
    for (int i = 0; i < o.iterations; i++) {
        for (const char *variant : {"base", "userns", "netns", "seccomp"}) {
            if (std::string(variant) == "seccomp" && o.seccomp.empty()) continue;
            std::string b = dir + "/" + variant;
            std::string suffix = std::string(variant) == "base"     ? ""
                                 : std::string(variant) == "userns" ? " +userns+netns"
                                 : std::string(variant) == "netns"  ? " +netns"
                                                                    : " +seccomp";
            const size_t n = rts.size() + 1; // the runtimes, then the floor
            for (size_t k = 0; k < n; k++) {
                size_t which = (k + static_cast<size_t>(i)) % n;
                if (which < rts.size()) {
                    const Runtime &rt = rts[which];
                    Result r =
                        run(rt_args(rt, {"run", "--bundle", b, id(rt)}), rt.private_mnt, true);
                    if (r.status != 0) failed(rt, "run", r);
                    t.add("run /bin/true" + suffix, "ms", rt.name, r.ms);
                    reap_orphans();
                    continue;
                }
                // The floor: unshare of the same namespaces.
                std::vector<std::string> floor = {"unshare", "--fork", "--pid",
                                                  "--ipc",   "--uts",  "--mount"};
                if (std::string(variant) == "userns")
                    floor.insert(floor.end(), {"--user", "--net"});
                if (std::string(variant) == "netns") floor.push_back("--net");
                floor.push_back("/bin/true");
                t.add("run /bin/true" + suffix, "ms", "floor", run(floor).ms);
            }
        }
        for (size_t k = 0; k < rts.size(); k++) {
            const Runtime &rt = rts[(k + static_cast<size_t>(i)) % rts.size()];
            std::string cid = id(rt), pidf = dir + "/pid";
            Result c =
                run(rt_args(rt, {"create", "--bundle", dir + "/base", "--pid-file", pidf, cid}),
                    rt.private_mnt, true);
            if (c.status != 0) failed(rt, "create", c);
            pid_t init = read_pid(pidf);
            Result s = run(rt_args(rt, {"start", cid}), rt.private_mnt, true);
            if (s.status != 0) failed(rt, "start", s);
            wait_exit(init);
            Result d = run(rt_args(rt, {"delete", cid}), rt.private_mnt, true);
            if (d.status != 0) failed(rt, "delete", d);
            t.add("create", "ms", rt.name, c.ms);
            t.add("start", "ms", rt.name, s.ms);
            t.add("delete", "ms", rt.name, d.ms);
            t.add("peak RSS (create)", "KiB", rt.name, static_cast<double>(c.maxrss_kib));
        }
    }

    // 4: exec into a running container; the floor is nsenter into all of
    // oci-run's container's namespaces.
    std::map<std::string, std::string> running;
    pid_t sleeper = 0;
    for (const auto &rt : rts) {
        std::string cid = "bx" + rt.name, pidf = dir + "/pid-" + rt.name;
        Result r = run(
            rt_args(rt, {"run", "--detach", "--pid-file", pidf, "--bundle", dir + "/sleep", cid}),
            rt.private_mnt, true);
        if (r.status != 0) failed(rt, "run --detach", r);
        running[rt.name] = cid;
        if (rt.name == "oci-run") sleeper = read_pid(pidf);
    }
    for (int i = 0; i < o.iterations; i++) {
        for (const auto &rt : rts) {
            Result r =
                run(rt_args(rt, {"exec", running[rt.name], "/bin/true"}), rt.private_mnt, true);
            if (r.status != 0) failed(rt, "exec", r);
            t.add("exec /bin/true", "ms", rt.name, r.ms);
        }
        t.add("exec /bin/true", "ms", "floor",
              run({"nsenter", "-a", "-t", std::to_string(sleeper), "/bin/true"}).ms);
    }
    for (const auto &rt : rts) {
        run(rt_args(rt, {"delete", "--force", running[rt.name]}), rt.private_mnt);
        reap_orphans();
    }

    // 5b: heap bytes `create` asks of malloc & co (bench/heap_count.cpp,
    // preloaded: runtimes linked against glibc's malloc; not runc, whose Go
    // heap is its own).
    if (o.heap && executable_or_file(o.heap_lib)) {
        for (const auto &rt : rts) {
            if (rt.name == "runc") continue;
            for (int i = 0; i < std::min(o.iterations, 5); i++) {
                std::string cid = id(rt), log = dir + "/heap.log";
                ::unlink(log.c_str());
                ::setenv("LD_PRELOAD", o.heap_lib.c_str(), 1);
                ::setenv("OCI_RUN_BENCH_HEAP_LOG", log.c_str(), 1);
                Runtime counted = rt;
                if (rt.name == "oci-run" && !o.oci_run_heap.empty()) counted.path = o.oci_run_heap;
                Result r = run(rt_args(counted, {"create", "--bundle", dir + "/base", cid}),
                               rt.private_mnt, true);
                ::unsetenv("LD_PRELOAD");
                ::unsetenv("OCI_RUN_BENCH_HEAP_LOG");
                if (r.status != 0) failed(rt, "create (heap)", r);
                double bytes = 0;
                std::ifstream in(log);
                long pid;
                double b, calls;
                while (in >> pid >> b >> calls)
                    bytes += b;
                if (bytes > 0) t.add("heap asked (create)", "bytes", rt.name, bytes);
                run(rt_args(rt, {"delete", "--force", cid}), rt.private_mnt);
                reap_orphans();
            }
        }
    }

    // 6: scaling: `scale` creates at once, then as many deletes at once, in
    // --scale-rounds rounds whose order turns as above (the first runtimes
    // to allocate after a burst of deletes pay for them on some filesystems:
    // ext4 without a journal scans past each inode freed in the last
    // minutes).
    for (int round = 0; round < o.scale_rounds; round++) {
        for (size_t k = 0; k < rts.size(); k++) {
            const Runtime &rt = rts[(k + static_cast<size_t>(round)) % rts.size()];
            std::vector<std::string> ids;
            for (int j = 0; j < o.scale; j++)
                ids.push_back("bs" + rt.name.substr(0, 2) + std::to_string(j));
            auto all = [&](const char *verb) {
                // (A burst's teardown takes longer than one command's.)
                ::usleep(static_cast<useconds_t>(std::max(g_settle_ms, 100)) * 1000);
                auto t0 = Clock::now();
                std::vector<pid_t> pids;
                for (const auto &cid : ids) {
                    pid_t p = ::fork();
                    if (p == 0) {
                        int null = ::open("/dev/null", O_RDWR);
                        ::dup2(null, 0);
                        ::dup2(null, 1);
                        ::dup2(null, 2);
                        if (rt.private_mnt && ::setns(g_mntns, CLONE_NEWNS) < 0) ::_exit(126);
                        if (std::string(verb) == "create")
                            ::execl(rt.path.c_str(), rt.path.c_str(), "--root", rt.root.c_str(),
                                    "create", "--bundle", (dir + "/base").c_str(), cid.c_str(),
                                    nullptr);
                        else
                            ::execl(rt.path.c_str(), rt.path.c_str(), "--root", rt.root.c_str(),
                                    "delete", "--force", cid.c_str(), nullptr);
                        ::_exit(127);
                    }
                    pids.push_back(p);
                }
                int bad = 0;
                for (pid_t p : pids) {
                    int st = 0;
                    ::waitpid(p, &st, 0);
                    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
                }
                reap_orphans();
                double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                if (bad)
                    std::fprintf(stderr, "bench: %s: %d of %d %s failed\n", rt.name.c_str(), bad,
                                 o.scale, verb);
                return ms;
            };
            t.add(std::to_string(o.scale) + " concurrent create", "ms", rt.name, all("create"));
            t.add(std::to_string(o.scale) + " concurrent delete", "ms", rt.name, all("delete"));
        }
    }

    std::vector<std::string> names;
    for (const auto &rt : rts)
        names.push_back(rt.name);
    names.push_back("floor");
    bool have_crun = false;
    for (const auto &rt : rts)
        have_crun = have_crun || rt.name == "crun";
    if (o.json) {
        print_json(t, o, rts);
    } else {
        std::printf("oci-run start-up benchmark: %d iterations (%d rounds of %d concurrent), "
                    "interleaved; median (p90) in ms, xN = ratio to crun's median\n",
                    o.iterations, o.scale_rounds, o.scale);
        if (!note.empty()) std::printf("note: %s\n", note.c_str());
        if (o.heap && !o.oci_run_heap.empty())
            std::printf("note: oci-run's heap is counted on %s, the same code linked dynamically "
                        "(a preloaded counter cannot reach a static binary)\n",
                        o.oci_run_heap.c_str());
        std::printf("floor: unshare --fork of the same namespaces running /bin/true\n");
        std::printf("each timed command starts after a %d ms pause (--settle-ms), in a turning "
                    "order\n\n",
                    g_settle_ms);
        if (roots != dir) std::printf("state directories (--root) under %s\n", roots.c_str());
        print_table(t, names, have_crun);
    }
    if (roots != dir) std::system(("rm -rf " + sh_quote(roots)).c_str());
    std::system(("rm -rf " + sh_quote(dir)).c_str());
    return 0;
}
