#include "harness.hpp"

#include "leftovers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <utility>

extern char **environ;

namespace test {

namespace {
// Tests that drive many containers from threads (the concurrency suite)
// spawn through here at once: the registry is shared.
std::mutex g_lock;
std::vector<std::pair<std::string, std::string>> g_containers; // root, id
std::vector<std::string> g_dirs;
std::vector<std::string> g_cgroup_parents;
pid_t g_exit_owner = 0;

void cleanup_at_exit() {
    // Only in the process that registered it: a child forked from a test
    // that calls exit() inherits the handler, not the test's containers.
    if (::getpid() == g_exit_owner) cleanup_all();
}

// With g_lock held. A test that skips itself (cr_skip_test) ends its
// process without running its suite's fini, so cleanup_all also runs at
// the test process's exit (a no-op once the fini or the test has run it).
void arm_exit_cleanup() {
    if (g_exit_owner == ::getpid()) return;
    g_exit_owner = ::getpid();
    std::atexit(cleanup_at_exit);
}
} // namespace

void track(const std::string &root, const std::string &id) {
    std::lock_guard<std::mutex> hold(g_lock);
    arm_exit_cleanup();
    g_containers.emplace_back(root, id);
}

std::string track_dir(const std::string &dir) {
    std::lock_guard<std::mutex> hold(g_lock);
    arm_exit_cleanup();
    g_dirs.push_back(dir);
    return dir;
}

void track_cgroup_parent(const std::string &parent) {
    std::lock_guard<std::mutex> hold(g_lock);
    arm_exit_cleanup();
    if (std::find(g_cgroup_parents.begin(), g_cgroup_parents.end(), parent) ==
        g_cgroup_parents.end())
        g_cgroup_parents.push_back(parent);
}

void cleanup_all() {
    std::lock_guard<std::mutex> hold(g_lock);
    for (const auto &[root, id] : g_containers)
        if (exists(root + "/" + id)) oci({"--root", root, "delete", "--force", id});
    g_containers.clear();
    // Once their containers' cgroups are gone (a parent the test removed
    // itself is ENOENT here).
    for (const auto &p : g_cgroup_parents)
        (void)remove_cgroup_parent(p);
    g_cgroup_parents.clear();
    for (const auto &d : g_dirs)
        rm_rf(d);
    g_dirs.clear();
}

Spawned spawn_oci(const std::vector<std::string> &args, int fd3) {
    std::vector<std::string> argv{oci_run_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawn_files(argv, fd3);
}

Spawned spawn_files(const std::vector<std::string> &argv, int fd3) {
    Spawned s;
    std::string io = track_dir(make_temp_dir("io"));
    s.out_path = io + "/stdout";
    s.err_path = io + "/stderr";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, s.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, s.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (fd3 >= 0) {
        if (fd3 == 3) {
            // dup2 onto itself would keep FD_CLOEXEC; make sure it is inheritable.
            fcntl(3, F_SETFD, 0);
        } else {
            posix_spawn_file_actions_adddup2(&fa, fd3, 3);
        }
    }
    std::vector<char *> cargv;
    for (const auto &a : argv)
        cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    if (posix_spawnp(&s.pid, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) s.pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return s;
}

int wait_bounded(pid_t pid, int timeout_ms) {
    if (pid <= 0) return -1;
    for (int waited = 0;; waited += 5) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR) return -1;
        if (waited >= timeout_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(5000);
    }
}

FileRun oci_files(const std::vector<std::string> &args, int fd3, int timeout_ms) {
    std::vector<std::string> argv{oci_run_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_files(argv, fd3, timeout_ms);
}

FileRun run_files(const std::vector<std::string> &argv, int fd3, int timeout_ms) {
    Spawned s = spawn_files(argv, fd3);
    FileRun r;
    r.status = wait_bounded(s.pid, timeout_ms);
    r.out = read_file(s.out_path);
    r.err = read_file(s.err_path);
    r.out_path = s.out_path;
    return r;
}

bool contains(const std::string &hay, const std::string &needle) {
    return hay.find(needle) != std::string::npos;
}

std::string skip_reason(const std::string &s) {
    std::string r = s.substr(0, s.find('\n'));
    for (char &c : r)
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
    return r;
}

size_t count_lines(const std::string &s) {
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

std::vector<std::string> dir_entries(const std::string &path) {
    std::vector<std::string> out;
    DIR *d = opendir(path.c_str());
    if (!d) return out;
    while (struct dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
    return out;
}

std::vector<std::string> mount_ids() {
    std::vector<std::string> out;
    std::istringstream in(read_file("/proc/self/mountinfo"));
    for (std::string line; std::getline(in, line);)
        out.push_back(line.substr(0, line.find(' ')));
    std::sort(out.begin(), out.end());
    return out;
}

std::string new_mounts(const std::vector<std::string> &before,
                       const std::vector<std::string> &needles) {
    std::string out;
    std::istringstream in(read_file("/proc/self/mountinfo"));
    for (std::string line; std::getline(in, line);) {
        if (std::binary_search(before.begin(), before.end(), line.substr(0, line.find(' '))))
            continue;
        for (const auto &n : needles)
            if (!n.empty() && line.find(n) != std::string::npos) {
                out += line + "\n";
                break;
            }
    }
    return out;
}

} // namespace test
