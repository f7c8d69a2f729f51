#include "runtime/filesystem/fs_probe.hpp"

#include "oci/fd.hpp"
#include "oci/text.hpp"
#include "runtime/lifecycle/exec.hpp"
#include "runtime/process/process_setup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace ocirun {

namespace {

bool mount_root(const std::string &path) {
    struct statx stx {};
    return ::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, 0, &stx) ==
               0 &&
           (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
           (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

// The runtime's mask: the null device, or an empty read-only tmpfs mounted
// right there.
bool masked(int fd) {
    struct stat st;
    if (::fstat(fd, &st) < 0) return false;
    if (S_ISCHR(st.st_mode)) return st.st_rdev == makedev(1, 3);
    if (!S_ISDIR(st.st_mode)) return false;
    struct statfs fs;
    struct statvfs vfs;
    if (::fstatfs(fd, &fs) < 0 || fs.f_type != TMPFS_MAGIC || ::fstatvfs(fd, &vfs) < 0 ||
        !(vfs.f_flag & ST_RDONLY))
        return false;
    Fd dir(::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    DIR *d = dir.valid() ? ::fdopendir(dir.release()) : nullptr;
    if (!d) return false;
    bool empty = true;
    while (struct dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    ::closedir(d);
    return empty;
}

// A failed try that shows nothing is reached: not there, or refused to the
// container's strongest root (this probe). Anything else cannot tell, which
// counts as reached.
std::pair<bool, std::string> refused(int e) {
    if (e == ENOENT || e == ENOTDIR || e == EACCES)
        return {false, std::string("not reached: ") + std::strerror(e)};
    return {true, std::string("cannot tell: ") + std::strerror(e)};
}

// One way tried, in the container's namespaces: reached, and what was seen.
std::pair<bool, std::string> try_way(const FsRuleRecord &r, const std::string &path) {
    if (r.kind == "deny") {
        Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
        if (!fd.valid()) return refused(errno);
        if (masked(fd.get())) return {false, "masked"};
        return {true, "readable"};
    }
    if (r.kind == "deny-write") {
        if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0) return {true, "writable"};
        if (errno == EROFS) return {false, "read-only"};
        return refused(errno);
    }
    // deny-rename: the directory and each ancestor a mount point.
    for (std::string p = path; p.size() > 1; p = p.substr(0, p.rfind('/') ? p.rfind('/') : 1))
        if (!mount_root(p)) return {true, p + " can be renamed (not a mount point)"};
    return {false, "pinned"};
}

[[noreturn]] void probe_child(const std::vector<NamespaceFd> &ns,
                              const std::vector<FsRuleRecord> &rules, int out) {
    // (`out` moves to fd 3 below.)
    auto line = [&](const std::string &s) { (void)!::write(out, s.data(), s.size()); };
    if (!set_death_signal(SIGKILL) || !set_dumpable(false)) ::_exit(2);
    bool userns = false;
    for (const auto &n : ns) {
        if (n.flag != CLONE_NEWUSER && n.flag != CLONE_NEWNS) continue;
        if (::setns(n.fd.get(), n.flag) < 0) {
            line(std::string("error\tsetns: ") + std::strerror(errno) + "\n");
            ::_exit(1);
        }
        if (n.flag == CLONE_NEWUSER) userns = true;
    }
    if (userns && (::setresgid(0, 0, 0) < 0 || ::setresuid(0, 0, 0) < 0)) {
        line(std::string("error\tbecome root in the container's user namespace: ") +
             std::strerror(errno) + "\n");
        ::_exit(1);
    }
    // Not dumpable after the credential change either, and nothing of the
    // runtime's open here but the answer pipe (now fd 3).
    if (!set_dumpable(false) || ::dup2(out, 3) < 0 || ::syscall(SYS_close_range, 4U, ~0U, 0U) < 0) {
        line(std::string("error\tprobe set-up: ") + std::strerror(errno) + "\n");
        ::_exit(1);
    }
    out = 3;
    for (size_t i = 0; i < rules.size(); i++) {
        const FsRuleRecord &r = rules[i];
        std::vector<std::string> ways{r.resolved};
        for (const auto &w : r.ways)
            if (!w.path.empty()) ways.push_back(w.path);
        for (size_t j = 0; j < ways.size(); j++) {
            auto [reached, seen] = try_way(r, ways[j]);
            // A placeholder's parents must be pinned too.
            if (!reached && j == 0 && r.made && r.kind != "deny-rename") {
                FsRuleRecord parents = r;
                parents.kind = "deny-rename";
                std::string up = ways[j].substr(0, ways[j].rfind('/'));
                if (!up.empty()) {
                    auto [renamable, why] = try_way(parents, up);
                    if (renamable) {
                        reached = true;
                        seen = "its placeholder's parent " + why;
                    }
                }
            }
            // One line per way: what was seen may hold a name of the
            // container's, with tabs or newlines in it.
            for (char &ch : seen)
                if (ch == '\t' || ch == '\n') ch = ' ';
            line(std::to_string(i) + "\t" + std::to_string(j) + "\t" + (reached ? "1" : "0") +
                 "\t" + seen + "\n");
        }
    }
    ::_exit(0);
}

} // namespace

bool RuleTried::enforced() const {
    for (const auto &w : ways)
        if (w.reached) return false;
    // A way the init could not search to the end holds nothing up.
    for (const auto &w : rule->ways)
        if (w.path.empty()) return false;
    return true;
}

std::string RuleTried::detail() const {
    std::string d = "at " + rule->resolved;
    for (const auto &w : ways)
        if (w.reached)
            d += "; reachable at " + w.path + (w.how.empty() ? "" : " (" + w.how + ")") + ": " +
                 w.seen;
    for (const auto &w : rule->ways)
        if (w.path.empty()) d += "; " + w.how;
    return d;
}

Result<std::vector<RuleTried>> probe_fs_rules(pid_t init, const oci::Linux &lx, bool nested,
                                              const std::vector<FsRuleRecord> &rules) {
    std::vector<RuleTried> out;
    for (const auto &r : rules) {
        RuleTried t;
        t.rule = &r;
        t.ways.push_back({r.resolved, "", false, "not tried"});
        for (const auto &w : r.ways)
            if (!w.path.empty()) t.ways.push_back({w.path, w.how, false, "not tried"});
        out.push_back(std::move(t));
    }
    if (rules.empty()) return out;
    std::vector<NamespaceFd> ns = OCI_TRY(container_namespaces(init, lx, nested));
    int p[2];
    if (::pipe2(p, O_CLOEXEC) < 0) return fail_errno("report: pipe");
    Fd rd(p[0]), wr(p[1]);
    pid_t child = ::fork();
    if (child < 0) return fail_errno("report: fork");
    if (child == 0) {
        rd.reset();
        probe_child(ns, rules, wr.get());
    }
    wr.reset();
    std::string said;
    for (;;) {
        struct pollfd pfd = {rd.get(), POLLIN, 0};
        int n = ::poll(&pfd, 1, 5000);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        char buf[4096];
        ssize_t r = ::read(rd.get(), buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        said.append(buf, static_cast<size_t>(r));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    std::string failure;
    for_each_line(said, [&](std::string_view l) {
        auto f = split(l, '\t');
        if (f.size() == 2 && f[0] == "error") failure = f[1];
        if (f.size() < 4) return;
        auto i = number<size_t>(f[0]), j = number<size_t>(f[1]);
        if (!i || !j || *i >= out.size() || *j >= out[*i].ways.size()) return;
        WayTried &w = out[*i].ways[*j];
        w.reached = f[2] == "1";
        w.seen = f[3];
    });
    if (!failure.empty()) return fail("report: the probe in the container: " + failure);
    for (const auto &t : out)
        for (const auto &w : t.ways)
            if (w.seen == "not tried")
                return fail("report: the probe in the container did not answer for " + w.path);
    return out;
}

} // namespace ocirun
