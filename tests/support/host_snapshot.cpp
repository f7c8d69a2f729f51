#include "host_snapshot.hpp"

#include "harness.hpp"
#include "process.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace test {

void become_subreaper() {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void private_mount_namespace() {
    static bool done = false;
    if (done) return;
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr))
        std::abort();
    done = true;
}

std::vector<pid_t> leftover_children() {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::vector<pid_t> out;
    pid_t self = getpid();
    for (const auto &name : dir_entries("/proc")) {
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string stat = read_file("/proc/" + name + "/stat");
        auto paren = stat.rfind(')');
        if (paren == std::string::npos) continue;
        std::istringstream rest(stat.substr(paren + 1));
        std::string state;
        long ppid = 0;
        rest >> state >> ppid;
        if (ppid == self && state != "Z")
            out.push_back(static_cast<pid_t>(std::atol(name.c_str())));
    }
    return out;
}

std::vector<std::string> default_cgroups_of(const std::string &id) {
    // Our own path in each hierarchy, and its parent (cgroup v2 places a
    // relative cgroupsPath beside the caller's cgroup).
    std::vector<std::string> bases{""};
    std::istringstream in(read_file("/proc/self/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
        auto colon = line.find(':', line.find(':') + 1);
        if (colon == std::string::npos) continue;
        std::string own = line.substr(colon + 1);
        while (!own.empty() && own.back() == '/')
            own.pop_back();
        bases.push_back(own);
        auto slash = own.rfind('/');
        bases.push_back(slash == std::string::npos ? "" : own.substr(0, slash));
    }
    std::sort(bases.begin(), bases.end());
    bases.erase(std::unique(bases.begin(), bases.end()), bases.end());
    std::vector<std::string> out;
    for (const auto &h : dir_entries("/sys/fs/cgroup"))
        for (const auto &b : bases) {
            std::string dir = "/sys/fs/cgroup/" + h + b + "/oci-run/" + id;
            if (exists(dir)) out.push_back(dir);
        }
    return out;
}

std::vector<std::string> runtime_tmp_entries() {
    std::vector<std::string> out;
    // Only names oci-run itself makes: the default --root of a user without
    // XDG_RUNTIME_DIR (oci-run-UID) and write_file_atomic's temp files. Other
    // tools' oci-run-* files come and go beside these tests.
    for (const auto &e : dir_entries("/tmp"))
        if ((e.rfind("oci-run-", 0) == 0 && e.size() > 8 &&
             e.find_first_not_of("0123456789", 8) == std::string::npos) ||
            e.rfind(".tmp-", 0) == 0)
            out.push_back(e);
    std::sort(out.begin(), out.end());
    return out;
}

HostSnapshot snapshot_host() {
    return {mount_ids(), runtime_tmp_entries()};
}

std::string left_behind(const HostSnapshot &before, const std::string &root, const std::string &id,
                        const std::vector<std::string> &keep, pid_t keep_pid) {
    std::string out;
    for (const auto &e : dir_entries(root))
        if (std::find(keep.begin(), keep.end(), e) == keep.end())
            out += "state entry " + root + "/" + e + "\n";
    if (keep_pid < 0)
        for (const auto &c : default_cgroups_of(id))
            out += "cgroup " + c + "\n";
    for (pid_t pid : leftover_children()) {
        if (pid == keep_pid) continue;
        std::string cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
        std::replace(cmd.begin(), cmd.end(), '\0', ' ');
        out += "process " + std::to_string(pid) + " (" + cmd + ")\n";
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    out += new_mounts(before.mount_ids, {root, id});
    for (const auto &e : runtime_tmp_entries())
        if (!std::binary_search(before.tmp.begin(), before.tmp.end(), e))
            out += "temp file /tmp/" + e + "\n";
    return out;
}

} // namespace test
