#include "fs_policy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>

namespace ocirun {

int open_in_root(int root, const std::string &path, int flags, uint64_t resolve) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve;
    const char *rel = path.c_str();
    while (*rel == '/')
        rel++;
    return static_cast<int>(::syscall(SYS_openat2, root, *rel ? rel : ".", &how, sizeof how));
}

namespace {

std::vector<std::string> components(const std::string &path) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string::npos) j = path.size();
        if (j > i) out.push_back(path.substr(i, j - i));
        i = j + 1;
    }
    return out;
}

bool under_any_rule(const std::string &path, const std::vector<FsRule> &rules) {
    for (const auto &r : rules)
        if (path_under(path, r.resolved)) return true;
    return false;
}

// `at` seen through mount `m`, or hidden there by a mount on the way (one
// below m's point on the path, or one stacked on m).
bool hidden(const std::vector<MountEntry> &mounts, const MountEntry &m, const std::string &at) {
    for (const auto &n : mounts) {
        if (n.id == m.id || !path_under(at, n.point)) continue;
        if (n.point != m.point && path_under(n.point, m.point)) return true;
        if (n.point == m.point && n.parent == m.id) return true;
    }
    return false;
}

std::string shown_by(const MountEntry &m) {
    return "the mount at " + m.point + " (" + m.fstype + ", " + m.source + ":" + m.root + ")";
}

} // namespace

const char *fs_rule_kind(MountOpKind k) {
    return k == MountOpKind::pin ? "deny-rename" : mount_op_name(k);
}

std::vector<FsWay> mount_ways(const std::vector<MountEntry> &mounts,
                              const std::vector<FsRule> &rules) {
    std::vector<FsWay> out;
    for (size_t i = 0; i < rules.size(); i++) {
        const FsRule &r = rules[i];
        if (r.kind == MountOpKind::pin) continue;
        // The object, then each mount below it (what "part of it" reaches).
        std::vector<std::pair<FsRegion, std::string>> parts{{r.region, ""}};
        for (const auto &b : r.below)
            parts.push_back({b, " (part of it, mounted below it)"});
        for (const auto &m : mounts) {
            if (path_under(m.point, r.resolved)) continue; // the rule covers it
            if (r.kind == MountOpKind::deny_write && m.readonly) continue;
            FsRegion shown = region_of(m);
            for (const auto &[part, note] : parts) {
                std::string at;
                switch (overlap(shown, part)) {
                case Overlap::same:
                case Overlap::contains:
                    at = path_join(m.point,
                                   m.root == "/" ? part.path : part.path.substr(m.root.size()));
                    break;
                case Overlap::inside:
                    at = m.point;
                    break;
                case Overlap::none:
                    continue;
                }
                if (path_under(at, r.resolved) || hidden(mounts, m, at)) continue;
                out.push_back({i, at, shown_by(m) + " shows it" + note});
            }
        }
    }
    return out;
}

Result<Fd> resolve_in_root(int root, int procfs, const std::string &path, bool make,
                           std::vector<std::string> *made, const std::string &what) {
    std::string want = path;
    for (int hops = 0; hops < 40; hops++) {
        Fd fd(open_in_root(root, want, O_PATH));
        if (fd.valid()) return fd;
        if (errno != ENOENT) return fail_errno(what + ": open " + want);
        if (!make) return Fd();
        // Down to the first missing component: a dangling symlink there is
        // followed to where it points; anything else missing is made.
        std::vector<std::string> parts = components(want);
        Fd parent(open_in_root(root, "/", O_PATH | O_DIRECTORY));
        if (!parent.valid()) return fail_errno(what + ": open /");
        std::string sofar;
        bool follow = false;
        for (size_t i = 0; i < parts.size() && !follow; i++) {
            std::string next = sofar + "/" + parts[i];
            Fd child(open_in_root(root, next, O_PATH));
            if (!child.valid()) {
                if (errno != ENOENT) return fail_errno(what + ": open " + next);
                struct stat st;
                if (::fstatat(parent.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode)) {
                    char buf[4096];
                    ssize_t n = ::readlinkat(parent.get(), parts[i].c_str(), buf, sizeof buf - 1);
                    if (n <= 0) return fail_errno(what + ": readlink " + next);
                    std::string target(buf, static_cast<size_t>(n)), rest;
                    for (size_t j = i + 1; j < parts.size(); j++)
                        rest += "/" + parts[j];
                    want = (target[0] == '/' ? target : sofar + "/" + target) + rest;
                    follow = true;
                    break;
                }
                if (::mkdirat(parent.get(), parts[i].c_str(), 0755) == 0) {
                    // Named by where it is (its parent's path may have gone
                    // through a symlink).
                    std::string at = OCI_TRY(path_of_fd(parent.get(), procfs));
                    if (made) made->push_back(path_join(at, parts[i]));
                } else if (errno != EEXIST) {
                    return fail_errno(what + ": make the placeholder " + next);
                }
                child = Fd(open_in_root(root, next, O_PATH));
                if (!child.valid()) return fail_errno(what + ": open " + next);
            }
            parent = std::move(child);
            sofar = next;
        }
    }
    return fail_code(ELOOP, what + ": " + path + ": too many symlinks");
}

namespace {

struct LinkedFile {
    size_t rule = 0;
    nlink_t links = 0, seen = 0;
    std::string path;
    bool found_elsewhere = false;
};
using FileKey = std::pair<dev_t, ino_t>;

// Depth-first below the directory `top` (at container path `top_path`):
// each entry to `visit(dirfd, name, st, path)`; a directory is entered when
// `enter(path, st)` says so. False when the budget ran out.
template <class Visit, class Enter>
bool walk(int top, const std::string &top_path, size_t &budget, Visit visit, Enter enter) {
    struct Level {
        DIR *d;
        std::string path;
    };
    std::vector<Level> stack;
    int dup = ::fcntl(top, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? ::fdopendir(dup) : nullptr;
    if (!d) {
        if (dup >= 0) ::close(dup);
        return true; // not a readable directory: nothing below it
    }
    stack.push_back({d, top_path == "/" ? "" : top_path});
    bool ok = true;
    while (!stack.empty()) {
        Level &l = stack.back();
        struct dirent *e = ::readdir(l.d);
        if (!e) {
            ::closedir(l.d);
            stack.pop_back();
            continue;
        }
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        if (budget == 0) {
            ok = false;
            break;
        }
        budget--;
        struct stat st;
        if (::fstatat(::dirfd(l.d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        std::string path = l.path + "/" + name;
        visit(st, path);
        if (S_ISDIR(st.st_mode) && stack.size() < 256 && enter(path, st)) {
            int fd = ::openat(::dirfd(l.d), name.c_str(),
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            DIR *sub = fd >= 0 ? ::fdopendir(fd) : nullptr;
            if (!sub && fd >= 0) ::close(fd);
            if (sub) stack.push_back({sub, path});
        }
    }
    for (auto &l : stack)
        ::closedir(l.d);
    return ok;
}

// Files in the objects with more links than the objects hold, and where
// else in the container their other links are.
void hard_link_ways(int root, const std::vector<MountEntry> &mounts, FsPlan &fp) {
    std::map<FileKey, LinkedFile> files;
    size_t budget = kHardLinkBudget;
    std::vector<bool> cut(fp.rules.size(), false);
    for (size_t i = 0; i < fp.rules.size(); i++) {
        const FsRule &r = fp.rules[i];
        if (r.kind == MountOpKind::pin) continue;
        auto note = [&](const struct stat &st, const std::string &path) {
            if (!S_ISREG(st.st_mode) || st.st_nlink < 2) return;
            LinkedFile &f = files[{st.st_dev, st.st_ino}];
            if (f.seen == 0) f = {i, st.st_nlink, 0, path, false};
            f.seen++;
        };
        struct stat st;
        if (::fstat(fp.objects[i].get(), &st) < 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            note(st, r.resolved);
            continue;
        }
        Fd dir(open_in_root(root, r.resolved, O_RDONLY | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
        if (dir.valid() && !walk(dir.get(), r.resolved, budget, note,
                                 [](const std::string &, const struct stat &) { return true; }))
            cut[i] = true;
    }
    std::map<dev_t, size_t> wanted; // per filesystem, links still to find
    for (const auto &[key, f] : files)
        if (f.seen < f.links) wanted[key.first] += f.links - f.seen;
    bool short_of_budget = false;
    for (const auto &m : mounts) {
        if (wanted.empty() || short_of_budget) break;
        if (under_any_rule(m.point, fp.rules)) continue;
        Fd top(open_in_root(root, m.point, O_RDONLY | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
        struct stat st;
        if (!top.valid() || ::fstat(top.get(), &st) < 0 || !wanted.count(st.st_dev)) continue;
        dev_t dev = st.st_dev;
        auto visit = [&](const struct stat &s, const std::string &path) {
            if (!S_ISREG(s.st_mode) || s.st_nlink < 2) return;
            auto it = files.find({s.st_dev, s.st_ino});
            if (it == files.end() || under_any_rule(path, fp.rules)) return;
            it->second.found_elsewhere = true;
            fp.ways.push_back({it->second.rule, path, "a hard link of " + it->second.path});
        };
        auto enter = [&](const std::string &path, const struct stat &s) {
            return s.st_dev == dev && !under_any_rule(path, fp.rules);
        };
        if (!walk(top.get(), m.point, budget, visit, enter)) short_of_budget = true;
    }
    for (size_t i = 0; i < fp.rules.size(); i++) {
        bool open_question = cut[i];
        for (const auto &[key, f] : files)
            if (f.rule == i && f.seen < f.links && !f.found_elsewhere && short_of_budget)
                open_question = true;
        if (open_question)
            fp.ways.push_back({i, "",
                               "cannot tell: more than " + std::to_string(kHardLinkBudget) +
                                   " entries to search for other hard links of its files"});
    }
}

} // namespace

Result<FsPlan> prepare_fs_rules(int root, int procfs, const std::vector<MountOp> &plan) {
    FsPlan fp;
    std::vector<std::string> made;
    for (const MountOp &op : plan) {
        if (op.kind != MountOpKind::deny && op.kind != MountOpKind::deny_write &&
            op.kind != MountOpKind::pin)
            continue;
        FsRule r;
        r.kind = op.kind;
        r.what = op.what;
        r.path = op.dest;
        size_t before = made.size();
        Fd fd = OCI_TRY(
            resolve_in_root(root, procfs, op.dest, op.kind != MountOpKind::pin, &made, op.what));
        if (!fd.valid()) return fail_code(ENOENT, op.what + ": no such directory to pin");
        r.made = made.size() > before;
        r.resolved = OCI_TRY(path_of_fd(fd.get(), procfs));
        struct stat st;
        if (::fstat(fd.get(), &st) < 0) return fail_errno(op.what + ": fstat " + r.resolved);
        r.dir = S_ISDIR(st.st_mode);
        if (op.kind == MountOpKind::pin && !r.dir)
            return fail(op.what + ": " + r.resolved + " is not a directory");
        fp.rules.push_back(std::move(r));
        fp.objects.push_back(std::move(fd));
    }
    std::vector<MountEntry> mounts = OCI_TRY(own_mounts(procfs));
    for (size_t i = 0; i < fp.rules.size(); i++) {
        FsRule &r = fp.rules[i];
        auto region = region_of(fp.objects[i].get(), mounts, procfs);
        if (!region) return forward(std::move(region.error()), r.what);
        r.region = *region;
        for (const MountEntry *m : mounts_below(mounts, r.resolved))
            r.below.push_back(region_of(*m));
    }
    for (const auto &p : made) {
        Fd fd(open_in_root(root, p, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
        struct stat st;
        if (!fd.valid() || ::fstat(fd.get(), &st) < 0) return fail_errno("placeholder " + p);
        auto region = region_of(fd.get(), mounts, procfs);
        if (!region) return forward(std::move(region.error()), "placeholder " + p);
        fp.made.push_back({p, *region, st.st_ino});
    }
    fp.ways = mount_ways(mounts, fp.rules);
    hard_link_ways(root, mounts, fp);
    return fp;
}

} // namespace ocirun
