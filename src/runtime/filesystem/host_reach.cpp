#include "runtime/filesystem/host_reach.hpp"

#include "oci/fd.hpp"
#include "oci/text.hpp"
#include "runtime/filesystem/fs_policy.hpp"
#include "runtime/filesystem/mount_options.hpp"
#include "runtime/filesystem/tree_walk.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace ocirun {

namespace {

// lowerdir's value split at its colons ("\\:" is a colon in a name); an
// empty element is the "::" before a data-only layer.
std::vector<std::string> lower_elements(const std::string &value) {
    std::vector<std::string> out(1);
    for (size_t i = 0; i < value.size(); i++) {
        if (value[i] == '\\' && i + 1 < value.size())
            out.back() += value[++i];
        else if (value[i] == ':')
            out.emplace_back();
        else
            out.back() += value[i];
    }
    return out;
}

// An overlay's data with each directory it names, in order, replaced by
// f(key, path): upperdir, workdir and the layers added one at a time
// (lowerdir+, datadir+: kernel 6.8) as given, and each of lowerdir's
// (its separators kept); the rest of the data as it was.
template <class F> std::string map_overlay_dirs(const std::string &data, F f) {
    std::string out;
    for (const auto &opt : split(data, ',')) {
        size_t eq = opt.find('=');
        std::string key = eq == std::string::npos ? "" : opt.substr(0, eq);
        std::string piece = opt;
        if (key == "upperdir" || key == "workdir" || key == "lowerdir+" || key == "datadir+") {
            piece = key + "=" + f(key, opt.substr(eq + 1));
        } else if (key == "lowerdir") {
            auto elements = lower_elements(opt.substr(eq + 1));
            piece = key + "=";
            for (size_t i = 0; i < elements.size(); i++)
                piece += (i ? ":" : "") + (elements[i].empty() ? "" : f(key, elements[i]));
        }
        out += (out.empty() ? "" : ",") + piece;
    }
    return out;
}

} // namespace

std::vector<OverlayDir> overlay_dirs(const std::string &data) {
    std::vector<OverlayDir> out;
    map_overlay_dirs(data, [&](const std::string &key, const std::string &path) {
        out.push_back({key, path, key == "upperdir" || key == "workdir"});
        return path;
    });
    return out;
}

std::string overlay_data_at(const std::string &data, const std::vector<std::string> &paths) {
    size_t next = 0;
    return map_overlay_dirs(data, [&](const std::string &, const std::string &) {
        return next < paths.size() ? paths[next++] : std::string();
    });
}

std::string describe_mount(const MountOp &op) {
    return concat("mounts[", std::to_string(op.index), "] (source ", op.source, ", destination ",
                  op.dest, ", options ", op.option_list, ")");
}

Result<std::vector<ReachGuard>> reach_guards(const std::string &root, const SandboxPolicy *policy,
                                             const std::vector<MountEntry> &host) {
    std::vector<ReachGuard> out;
    // The path's own region, and each host mount below it: another
    // filesystem there is in the path too (a protected /var with /var/lib
    // on its own disk).
    auto guard = [&](const std::string &path, const std::string &key, const std::string &noun,
                     bool any_mount) -> Status {
        auto r = region_of_path(path, host);
        if (!r) return forward(std::move(r.error()), key);
        char real[PATH_MAX];
        std::string at = ::realpath(path.c_str(), real) ? real : path;
        out.push_back({key, noun, *r, any_mount, "", at});
        for (const MountEntry *m : mounts_below(host, at))
            out.push_back({key,
                           noun,
                           {m->major, m->minor, m->root},
                           any_mount,
                           " (the host's mount at " + m->point + " in it)",
                           m->point});
        return {};
    };
    // Read-only for an ordinary container (a host's / or /run bound
    // read-only is common); not at all with a policy, for untrusted work.
    if (!root.empty())
        OCI_CHECK(
            guard(root, "--root " + root, "the runtime's state directory", policy != nullptr));
    if (policy)
        for (const auto &p : policy->protected_paths)
            OCI_CHECK(
                guard(p, "annotations[dev.ocirun.protected]: " + p, "the protected path", false));
    return out;
}

Status check_reach(const std::vector<Reach> &reaches, const std::vector<ReachGuard> &guards) {
    for (const auto &g : guards)
        for (const auto &r : reaches) {
            if (!g.any_mount && !r.writable) continue;
            const char *why = nullptr;
            switch (overlap(r.region, g.region)) {
            case Overlap::same:
                why = "is";
                break;
            case Overlap::contains:
                why = "contains";
                break;
            case Overlap::inside:
                why = "is inside";
                break;
            case Overlap::none:
                break;
            }
            if (!why) continue;
            std::string how = r.writable ? "is writable and " : "";
            std::string line =
                g.key + ": " + r.what + r.via + " " + how + why + " " + g.noun + g.within;
            if (g.noun == "the runtime's state directory")
                line += r.writable ? " (the container could change the records that delete and "
                                     "kill act on)"
                                   : " (a sandbox policy's container may not read the records)";
            return fail(line);
        }
    return {};
}

Result<std::vector<Reach>> plan_reach(const std::vector<MountOp> &plan, int rootfs_fd,
                                      const std::string &rootfs, bool root_readonly,
                                      const std::vector<MountEntry> &host) {
    std::vector<Reach> out;
    auto below = [&](const std::string &what, int fd, auto writable_of) -> Status {
        auto at = path_of_fd(fd);
        if (!at) return forward(std::move(at.error()), what);
        const std::string &path = *at;
        for (const MountEntry *m : mounts_below(host, path))
            out.push_back({what, " through its submount " + m->point, region_of(*m),
                           writable_of(m->readonly), m->point});
        return {};
    };
    // The rootfs: bound recursively onto itself; root.readonly turns only
    // its top mount read-only.
    {
        std::string what = "the rootfs " + rootfs;
        auto r = region_of(rootfs_fd, host);
        if (!r) return forward(std::move(r.error()), what);
        out.push_back(
            {what + (root_readonly ? "" : " (writable)"), "", *r, !root_readonly, rootfs});
        OCI_CHECK(below(what, rootfs_fd, [](bool ro) { return !ro; }));
    }
    for (const MountOp &op : plan) {
        if (op.kind != MountOpKind::mount) continue;
        // Only a bind and an overlay's layers reach the host's files.
        bool bound = op.bind && op.source_fd >= 0;
        if (!bound && op.type != "overlay") continue;
        std::string what = describe_mount(op);
        if (bound) {
            auto r = region_of(op.source_fd, host);
            if (!r) return forward(std::move(r.error()), what);
            auto id = mount_id_of(op.source_fd);
            const MountEntry *e = id ? find_mount(host, *id) : nullptr;
            uint64_t current = e && e->readonly ? MOUNT_ATTR_RDONLY : 0;
            MountAttrPlan attrs = attr_plan(op.options);
            bool top_ro = attrs_after(attrs, current, true) & MOUNT_ATTR_RDONLY;
            auto at = path_of_fd(op.source_fd);
            out.push_back({what, "", *r, !top_ro, at ? *at : std::string()});
            if (op.options.recursive)
                OCI_CHECK(below(what, op.source_fd, [&](bool ro) {
                    return !(attrs_after(attrs, ro ? MOUNT_ATTR_RDONLY : 0, false) &
                             MOUNT_ATTR_RDONLY);
                }));
        } else {
            for (const auto &d : overlay_dirs(op.options.data)) {
                Fd fd(::open(d.path.c_str(), O_PATH | O_CLOEXEC));
                if (!fd.valid()) return fail_errno(what + ": open " + d.key + " " + d.path);
                auto r = region_of(fd.get(), host);
                if (!r) return forward(std::move(r.error()), what);
                out.push_back(
                    {what, " (its " + d.key + " " + d.path + ")", *r, d.writable, d.path});
            }
        }
    }
    return out;
}

namespace {

std::string why_stopped(bool incomplete) {
    return incomplete ? std::string("a directory could not be read")
                      : std::to_string(kHardLinkBudget) + " entries";
}

auto same_fs(dev_t dev) {
    return [dev](const std::string &, const struct stat &st) { return st.st_dev == dev; };
}

// The guards' linked files, walking those on a device in `written` and,
// with `every_protected`, every guard that is not any_mount's (the
// protected paths). A walk cut short (kHardLinkBudget entries, or a
// directory that could not be read) refuses, as one line.
Result<LinkedFiles> linked_files(const std::vector<ReachGuard> &guards,
                                 const std::set<dev_t> &written, bool every_protected) {
    LinkedFiles out;
    size_t budget = kHardLinkBudget;
    for (const ReachGuard &g : guards) {
        if (g.host_path.empty()) continue;
        Fd top(::open(g.host_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
        if (!top.valid() && (errno == ENOENT || errno == ELOOP)) continue; // not made yet
        if (!top.valid())
            return fail_errno(g.key + ": open " + g.host_path +
                              " (to look for other names of its files)");
        struct stat st;
        if (::fstat(top.get(), &st) < 0) return fail_errno(g.key + ": stat " + g.host_path);
        if (!written.count(st.st_dev) && (!every_protected || g.any_mount)) continue;
        auto note = [&](const struct stat &s, const std::string &path) {
            if (S_ISDIR(s.st_mode) || s.st_nlink < 2) return;
            LinkedFiles::File &f = out.files[{s.st_dev, s.st_ino}];
            if (f.names.empty()) {
                f.guard = &g;
                f.links = s.st_nlink;
                f.path = path;
            }
            f.names.insert(path);
        };
        if (!S_ISDIR(st.st_mode)) {
            note(st, g.host_path);
            continue;
        }
        bool incomplete = false;
        if (!walk_tree(top.get(), g.host_path, budget, incomplete, note, same_fs(st.st_dev)) ||
            incomplete)
            return fail(g.key + ": the search for other names of its files stopped at " +
                        g.host_path + " (" + why_stopped(incomplete) +
                        "): cannot tell whether a writable mount reaches them");
    }
    for (auto it = out.files.begin(); it != out.files.end();)
        if (it->second.names.size() < it->second.links) {
            out.devices.insert(it->first.first);
            ++it;
        } else {
            it = out.files.erase(it);
        }
    return out;
}

} // namespace

Status search_linked(const LinkedFiles &linked, int top, const std::string &top_path,
                     const std::string &what, size_t &budget) {
    struct stat st;
    if (::fstat(top, &st) < 0) return fail_errno(what + ": stat " + top_path);
    if (!linked.devices.count(st.st_dev)) return {};
    std::string found;
    const LinkedFiles::File *of = nullptr;
    auto look = [&](const struct stat &s, const std::string &path) {
        if (of || S_ISDIR(s.st_mode)) return;
        auto f = linked.files.find({s.st_dev, s.st_ino});
        if (f != linked.files.end() && !f->second.names.count(path)) {
            of = &f->second;
            found = path;
        }
    };
    bool incomplete = false, whole = true;
    if (S_ISDIR(st.st_mode)) {
        // (An O_PATH descriptor cannot be read.)
        Fd dir(::openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
        if (!dir.valid()) return fail_errno(what + ": open " + top_path);
        whole = walk_tree(dir.get(), top_path, budget, incomplete, look, same_fs(st.st_dev));
    } else {
        look(st, top_path);
    }
    if (of)
        return fail(of->guard->key + ": " + of->path + " has another name, " + found + ", which " +
                    what + " reaches writable (a hard link: the same file as " + of->guard->noun +
                    "'s)");
    if (!whole || incomplete)
        return fail(linked.files.begin()->second.guard->key +
                    ": files in it have other names on the filesystem that " + what +
                    " reaches writable, and the search for them stopped (" +
                    why_stopped(incomplete) + "): cannot tell");
    return {};
}

Result<LinkedFiles> check_linked_reach(const std::vector<Reach> &reaches,
                                       const std::vector<ReachGuard> &guards, bool for_init) {
    // Only a filesystem some writable reach shows is walked, unless the
    // init will look too (at mounts the runtime did not see: any
    // filesystem; the protected paths, not the state directory, which no
    // mount may reach at all). Devices are compared as stat gives them (on btrfs a
    // subvolume's is its own, not the one mountinfo names).
    std::set<dev_t> written;
    for (const Reach &r : reaches)
        if (struct stat st;
            r.writable && !r.host_path.empty() && ::stat(r.host_path.c_str(), &st) == 0)
            written.insert(st.st_dev);
    LinkedFiles linked = OCI_TRY(linked_files(guards, written, for_init));
    OCI_CHECK(search_writable(linked, reaches));
    return linked;
}

Status search_writable(const LinkedFiles &linked, const std::vector<Reach> &reaches, int top,
                       const std::string &top_path) {
    if (linked.files.empty()) return {};
    size_t budget = kHardLinkBudget;
    for (const Reach &r : reaches) {
        if (!r.writable) continue;
        if (top >= 0 && r.via.empty()) {
            OCI_CHECK(search_linked(linked, top, top_path, r.what, budget));
            continue;
        }
        if (r.host_path.empty()) continue;
        Fd at(::open(r.host_path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!at.valid()) return fail_errno(r.what + r.via + ": open " + r.host_path);
        OCI_CHECK(search_linked(linked, at.get(), r.host_path, r.what + r.via, budget));
    }
    return {};
}

std::vector<Reach> tree_reach(const std::vector<MountEntry> &mounts, int top_id,
                              const std::string &what) {
    std::vector<Reach> out;
    std::vector<int> ids{top_id};
    // The table lists a mount after the one it is on: one pass finds the tree.
    for (const auto &m : mounts) {
        bool in = m.id == top_id;
        for (int id : ids)
            if (m.parent == id) in = true;
        if (!in) continue;
        if (m.id != top_id) ids.push_back(m.id);
        out.push_back({what, m.id == top_id ? "" : " through its submount " + m.point, region_of(m),
                       !m.readonly, m.point});
    }
    return out;
}

} // namespace ocirun
