#include "runtime/filesystem/fs_policy.hpp"
#include "runtime/filesystem/tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <set>

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

// `path` is hidden, or kept read-only, for an object of a rule of kind
// `kind` by some rule: a deny hides it from everything, a deny-write keeps
// it from being written (which is all a deny-write object needs).
bool covered(const std::string &path, MountOpKind kind, const std::vector<FsRule> &rules) {
    for (const auto &r : rules)
        if (path_under(path, r.resolved) &&
            (r.kind == MountOpKind::deny ||
             (r.kind == MountOpKind::deny_write && kind == MountOpKind::deny_write)))
            return true;
    return false;
}

// `n` is mounted on `m`, or on a mount on it, ...
bool mounted_on(const std::vector<MountEntry> &mounts, const MountEntry &n, const MountEntry &m) {
    int id = n.parent;
    for (size_t hops = 0; hops < mounts.size() && id != 0; hops++) {
        if (id == m.id) return true;
        const MountEntry *up = find_mount(mounts, id);
        if (!up || up->id == up->parent) return false;
        id = up->parent;
    }
    return false;
}

// `at` seen through mount `m`, or hidden there by a mount on top of m's
// tree along that path (at or below m's point, mounted on m or on one of
// its own; one m was mounted over hides nothing of m).
bool hidden(const std::vector<MountEntry> &mounts, const MountEntry &m, const std::string &at) {
    for (const auto &n : mounts)
        if (n.id != m.id && path_under(at, n.point) && path_under(n.point, m.point) &&
            mounted_on(mounts, n, m))
            return true;
    return false;
}

std::string shown_by(const MountEntry &m) {
    return "the mount at " + m.point + " (" + m.fstype + ", " + m.source + ":" + m.root + ")";
}

// An entry with other names to look for: a hard link (of any kind but a
// directory: a FIFO, a socket or a device node is as reachable).
bool has_other_names(const struct stat &st) {
    return !S_ISDIR(st.st_mode) && st.st_nlink >= 2;
}

// Where a view of `shown` at `point` (a mount, an overlay's layer) shows
// `part`: the part's own path there, the point where the view is inside the
// part, nothing where they do not overlap.
std::optional<std::string> shown_at(const FsRegion &shown, const std::string &point,
                                    const FsRegion &part) {
    switch (overlap(shown, part)) {
    case Overlap::same:
    case Overlap::contains:
        return path_in_view(point, shown.path, part.path);
    case Overlap::inside:
        return point;
    case Overlap::none:
        break;
    }
    return std::nullopt;
}

} // namespace

const char *fs_rule_kind(MountOpKind k) {
    return k == MountOpKind::pin ? "deny-rename" : mount_op_name(k);
}

std::vector<FsWay> mount_ways(const std::vector<MountEntry> &mounts,
                              const std::vector<FsRule> &rules,
                              const std::vector<OverlayLayer> &layers) {
    std::vector<FsWay> out;
    for (size_t i = 0; i < rules.size(); i++) {
        const FsRule &r = rules[i];
        if (r.kind == MountOpKind::pin) continue;
        // The object, then each mount below it (what "part of it" reaches).
        std::vector<std::pair<FsRegion, std::string>> parts{{r.region, ""}};
        for (const auto &b : r.below)
            parts.push_back({b, " (part of it, mounted below it)"});
        // An object on an overlay of the container's is held by its layers:
        // each layer's copy of it is the object too (a lower layer's shows
        // its content, an upper layer's is what a write changes).
        for (const auto &m : mounts) {
            if (m.fstype != "overlay" || m.major != r.region.major || m.minor != r.region.minor)
                continue;
            for (const auto &l : layers)
                if (l.point == m.point)
                    parts.push_back(
                        {{l.region.major, l.region.minor, path_join(l.region.path, r.region.path)},
                         " (its copy in " + l.what + ")"});
        }
        for (const auto &m : mounts) {
            if (path_under(m.point, r.resolved)) continue; // the rule covers it
            if (r.kind == MountOpKind::deny_write && m.readonly) continue;
            for (const auto &[part, note] : parts) {
                auto at = shown_at(region_of(m), m.point, part);
                if (!at || path_under(*at, r.resolved) || hidden(mounts, m, *at)) continue;
                out.push_back({i, *at, shown_by(m) + " shows it" + note});
            }
        }
        for (const auto &l : layers) {
            if (path_under(l.point, r.resolved)) continue; // the rule covers it
            if (r.kind == MountOpKind::deny_write && !l.writable) continue;
            for (const auto &[part, note] : parts) {
                auto at = shown_at(l.region, l.point, part);
                if (!at || path_under(*at, r.resolved)) continue;
                out.push_back(
                    {i, *at, "the overlay at " + l.point + " shows it: " + l.what + note});
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
                    if (n < 0) return fail_errno(what + ": readlink " + next);
                    if (n == 0) return fail(what + ": readlink " + next + ": an empty symlink");
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
    nlink_t links = 0;
    std::set<std::string> seen; // its names in the objects
    std::string path;
    bool found_elsewhere = false;
};
using FileKey = std::pair<dev_t, ino_t>;

// Files in the objects with more links than the objects hold, and where
// else in the container their other links are. Whatever the walks could not
// look at (an unreadable directory, past the budget or 256 levels, a
// filesystem no mount shows) leaves the question open: a "cannot tell" way.
void hard_link_ways(int root, const std::vector<MountEntry> &mounts, FsPlan &fp) {
    std::map<FileKey, LinkedFile> files;
    size_t budget = kHardLinkBudget;
    bool incomplete = false;
    std::vector<bool> cut(fp.rules.size(), false);
    for (size_t i = 0; i < fp.rules.size(); i++) {
        const FsRule &r = fp.rules[i];
        if (r.kind == MountOpKind::pin) continue;
        auto note = [&](const struct stat &st, const std::string &path) {
            if (!has_other_names(st)) return;
            LinkedFile &f = files[{st.st_dev, st.st_ino}];
            if (f.seen.empty()) {
                f.rule = i;
                f.links = st.st_nlink;
                f.path = path;
            }
            f.seen.insert(path);
        };
        struct stat st;
        if (::fstat(fp.objects[i].get(), &st) < 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            note(st, r.resolved);
            continue;
        }
        Fd dir(open_in_root(root, r.resolved, O_RDONLY | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
        bool walk_incomplete = !dir.valid();
        if (dir.valid() &&
            !walk_tree(dir.get(), r.resolved, budget, walk_incomplete, note,
                       [](const std::string &, const struct stat &) { return true; }))
            cut[i] = true;
        if (walk_incomplete) cut[i] = true;
    }
    std::map<dev_t, size_t> wanted; // per filesystem, links still to find
    for (const auto &[key, f] : files)
        if (f.seen.size() < f.links) wanted[key.first] += f.links - f.seen.size();
    std::set<dev_t> searched;
    bool short_of_budget = false;
    for (const auto &m : mounts) {
        if (wanted.empty() || short_of_budget) break;
        // What a deny hides needs no search.
        bool hidden_all = false;
        for (const auto &r : fp.rules)
            if (r.kind == MountOpKind::deny && path_under(m.point, r.resolved)) hidden_all = true;
        if (hidden_all) continue;
        Fd top(open_in_root(root, m.point, O_RDONLY | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
        struct stat st;
        if (!top.valid() || ::fstat(top.get(), &st) < 0 || !wanted.count(st.st_dev)) continue;
        dev_t dev = st.st_dev;
        searched.insert(dev);
        auto visit = [&](const struct stat &s, const std::string &path) {
            if (!has_other_names(s)) return;
            auto it = files.find({s.st_dev, s.st_ino});
            if (it == files.end() || it->second.seen.count(path)) return;
            if (covered(path, fp.rules[it->second.rule].kind, fp.rules)) return;
            it->second.found_elsewhere = true;
            fp.ways.push_back({it->second.rule, path, "a hard link of " + it->second.path});
        };
        auto enter = [&](const std::string &path, const struct stat &s) {
            if (s.st_dev != dev) return false; // another mount: searched as its own
            for (const auto &r : fp.rules)
                if (r.kind == MountOpKind::deny && path_under(path, r.resolved)) return false;
            return true;
        };
        if (!walk_tree(top.get(), m.point, budget, incomplete, visit, enter))
            short_of_budget = true;
    }
    bool open_ended = short_of_budget || incomplete;
    for (size_t i = 0; i < fp.rules.size(); i++) {
        bool open_question = cut[i];
        for (const auto &[key, f] : files)
            if (f.rule == i && f.seen.size() < f.links && !f.found_elsewhere &&
                (open_ended || !searched.count(key.first)))
                open_question = true;
        if (open_question)
            fp.ways.push_back(
                {i, "",
                 "cannot tell whether other hard links of its files are reachable: the "
                 "search (at most " +
                     std::to_string(kHardLinkBudget) +
                     " entries) could not look everywhere it had to"});
    }
}

} // namespace

Result<FsPlan> prepare_fs_rules(int root, int procfs, const std::vector<MountOp> &plan,
                                const std::vector<OverlayLayer> &layers) {
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
    fp.ways = mount_ways(mounts, fp.rules, layers);
    hard_link_ways(root, mounts, fp);
    return fp;
}

} // namespace ocirun
