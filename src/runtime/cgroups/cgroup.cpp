#include "runtime/cgroups/cgroup.hpp"

#include "oci/fd.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/device_filter.hpp"
#include "runtime/cgroups/systemd_unit.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/log.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/spawn.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

namespace ocirun {

namespace {

Status write_file(const std::string &path, const std::string &value, const std::string &what) {
    return write_existing_file(path, value, what, true);
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::string read_trimmed(const std::string &path) {
    return trimmed(oci::read_file(path).value_or(""));
}

void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    ::nanosleep(&ts, nullptr);
}

// "a//b/" -> "a/b", "/a/" -> "/a": the form cgroup_dirs_for names
// directories in, and check_own_cgroup compares.
std::string normal_cgroup_path(const std::string &p) {
    std::string out = p.empty() || p[0] != '/' ? "" : "/";
    for (const auto &part : split(p, '/'))
        if (!part.empty()) out += (out.empty() || out == "/" ? "" : "/") + part;
    return out;
}

bool has_dotdot(const std::string &p) {
    for (const auto &part : split(p, '/'))
        if (part == "..") return true;
    return false;
}

std::string_view parent_view(std::string_view p) {
    auto slash = p.rfind('/');
    return slash == std::string_view::npos || slash == 0 ? "/" : p.substr(0, slash);
}
std::string parent_of(const std::string &p) {
    return std::string(parent_view(p));
}

// The controller a v2 file belongs to ("pids.max" -> "pids"); "" for cgroup.*.
std::string controller_of(const std::string &file) {
    std::string c = file.substr(0, file.find('.'));
    return c == "cgroup" ? "" : c;
}

} // namespace

const Hierarchy *hierarchy_of(const CgroupHost &host, const std::string &dir) {
    for (const auto &h : host.hierarchies)
        if (dir.starts_with(h.mount) &&
            (dir.size() == h.mount.size() || dir[h.mount.size()] == '/'))
            return &h;
    return nullptr;
}

namespace {

// A path in a cgroup hierarchy, as the hierarchy's mount (opened once per
// process, O_CLOEXEC, until close_cgroup_mounts) and the rest below it. A lookup through
// sysfs (/sys) or a hierarchy revalidates each component under that
// filesystem's lock (kernfs), which other containers' creates take for
// writing while they make their cgroups and network devices: in 100
// concurrent creates most of the runtime's waits were there, walking
// /sys/fs/cgroup/... again for every file. The mounts are opened below
// their parent (/sys/fs/cgroup), opened once too. A path outside the
// hierarchies, or a mount that does not open, is walked as given.
struct At {
    int fd = AT_FDCWD;
    const char *rel; // into the path given, which must outlive this
};

std::map<std::string, int> &opened_mounts() {
    static std::map<std::string, int> opened;
    return opened;
}

int open_once(const std::string &dir, bool below_parent) {
    std::map<std::string, int> &opened = opened_mounts();
    auto [it, fresh] = opened.try_emplace(dir, -1);
    if (!fresh) return it->second;
    auto slash = dir.rfind('/');
    int parent = below_parent && slash != std::string::npos && slash > 0
                     ? open_once(dir.substr(0, slash), false)
                     : -1;
    it->second = parent >= 0
                     ? ::openat(parent, dir.c_str() + slash + 1, O_PATH | O_DIRECTORY | O_CLOEXEC)
                     : ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    return it->second;
}

At cgroup_at(const CgroupHost &host, const std::string &path) {
    const Hierarchy *h = hierarchy_of(host, path);
    if (!h) return {AT_FDCWD, path.c_str()};
    int fd = open_once(h->mount, true);
    if (fd < 0) return {AT_FDCWD, path.c_str()};
    return {fd, path.size() > h->mount.size() ? path.c_str() + h->mount.size() + 1 : "."};
}
At cgroup_at(const CgroupHost &, std::string &&) = delete; // (`rel` would dangle)

} // namespace

void close_cgroup_mounts() {
    for (auto &[path, fd] : opened_mounts())
        if (fd >= 0) ::close(fd);
    opened_mounts().clear();
}

Fd open_in_cgroup(const CgroupHost &host, const std::string &path, int flags) {
    At a = cgroup_at(host, path);
    return Fd(::openat(a.fd, a.rel, flags | O_CLOEXEC));
}

namespace {

std::string read_trimmed(const CgroupHost &host, const std::string &path) {
    Fd fd = open_in_cgroup(host, path, O_RDONLY);
    if (!fd.valid()) return {};
    return trimmed(oci::read_fd(fd.get(), path).value_or(""));
}

// As write_existing_file; `fd` an open file of `path`, else opened here.
Status write_in(const CgroupHost &host, const std::string &path, const std::string &value,
                const std::string &what, int fd = -1) {
    Fd own;
    if (fd < 0) {
        own = open_in_cgroup(host, path, O_WRONLY);
        if (!own.valid()) return fail_errno(what + ": open " + path);
        fd = own.get();
    }
    if (::write(fd, value.data(), value.size()) != static_cast<ssize_t>(value.size()))
        return fail_errno(what + ": write \"" + value + "\" to " + path);
    return {};
}

} // namespace

Result<std::vector<std::string>>
cgroup_dirs_for(const CgroupHost &host, const std::string &cgroups_path, const std::string &id) {
    std::string path = normal_cgroup_path(cgroups_path.empty() ? "oci-run/" + id : cgroups_path);
    if (path.empty() || path == "/")
        return fail("linux.cgroupsPath: \"" + cgroups_path + "\" is a hierarchy's root");
    if (has_dotdot(path))
        return fail("linux.cgroupsPath: \"" + cgroups_path + "\" must not contain \"..\"");
    std::vector<std::string> dirs;
    dirs.reserve(host.hierarchies.size());
    for (const auto &h : host.hierarchies) {
        std::string inner;
        if (path[0] == '/') {
            inner = path;
        } else {
            std::string base = h.version == 2 ? parent_of(h.own) : h.own;
            inner = (base == "/" ? "" : base) + "/" + path;
        }
        while (inner.size() > 1 && inner.back() == '/')
            inner.pop_back();
        std::string dir = h.dir_of(inner);
        if (dir == h.mount)
            return fail("linux.cgroupsPath: \"" + cgroups_path + "\" is a hierarchy's root");
        dirs.push_back(dir);
    }
    return dirs;
}

Status apply_cgroup_writes(const CgroupHost &host, const std::vector<std::string> &dirs,
                           const std::vector<CgroupWrite> &writes,
                           const std::vector<std::string> *all) {
    static const std::string none;
    auto dir_in = [&](const CgroupWrite &w,
                      const std::vector<std::string> &in) -> const std::string & {
        const Hierarchy *h = hierarchy_for(w, host);
        if (!h) return none;
        for (const auto &d : in)
            if (hierarchy_of(host, d) == h) return d;
        return none;
    };
    auto dir_for = [&](const CgroupWrite &w) -> const std::string & { return dir_in(w, dirs); };
    // A file written again right after (devices.allow, a rule each) is
    // opened once.
    std::string open_path;
    Fd open_fd;
    auto write = [&](const std::string &path, const std::string &value, const std::string &what) {
        if (path != open_path) {
            open_fd = open_in_cgroup(host, path, O_WRONLY);
            if (!open_fd.valid()) {
                open_path.clear();
                return Status(fail_errno(what + ": open " + path));
            }
            open_path = path;
        }
        return write_in(host, path, value, what, open_fd.get());
    };
    for (size_t i = 0; i < writes.size(); i++) {
        const CgroupWrite &w = writes[i];
        const std::string &dir = dir_for(w);
        if (dir.empty() && all && !dir_in(w, *all).empty()) continue; // the other step's
        if (dir.empty()) return fail(w.field + ": no cgroup hierarchy for " + w.file);
        if (w.file == kDeviceProgram) {
            OCI_CHECK(attach_device_program(w.device_rules, dir, w.replace_programs));
            continue;
        }
        std::string file = concat(dir, "/", w.file);
        if (!w.alt_file.empty()) {
            At a = cgroup_at(host, file);
            if (::faccessat(a.fd, a.rel, F_OK, 0) != 0) file = concat(dir, "/", w.alt_file);
        }
        auto r = write(file, w.value, w.field);
        if (!r && w.retry_after_next && r.error().code == EINVAL && i + 1 < writes.size()) {
            const CgroupWrite &next = writes[i + 1];
            OCI_CHECK(write(dir_for(next) + "/" + next.file, next.value, next.field));
            OCI_CHECK(write(file, w.value, w.field));
            i++;
            continue;
        }
        if (!r) {
            if (r.error().code == ENOENT)
                return fail_code(ENOENT, w.field + ": this kernel has no " + w.file);
            return forward(std::move(r.error()));
        }
    }
    return {};
}

namespace {

// An existing container cgroup `d` that may be reused: empty and thawed.
Status reusable_cgroup(const Hierarchy &h, const std::string &d) {
    auto procs = oci::read_file(d + "/cgroup.procs");
    if (!procs) return fail_code(procs.error().code, "cgroup " + d + " exists and cannot be read");
    if (!words(*procs).empty())
        return fail("cgroup " + d + " already exists and has processes in it");
    if (DIR *dir = ::opendir(d.c_str())) {
        std::string below;
        while (struct dirent *e = ::readdir(dir))
            if (e->d_type == DT_DIR && e->d_name[0] != '.' && below.empty()) below = e->d_name;
        ::closedir(dir);
        if (!below.empty())
            return fail("cgroup " + d + " already exists and has cgroups below it (" + below + ")");
    }
    bool frozen = h.version == 1
                      ? (h.has("freezer") && read_trimmed(d + "/freezer.state") != "THAWED")
                      : read_trimmed(d + "/cgroup.freeze") == "1";
    if (frozen) return fail("cgroup " + d + " already exists and is frozen");
    return {};
}

} // namespace

Status create_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs,
                     const std::vector<CgroupWrite> &writes, const std::vector<std::string> *all) {
    std::set<std::string> v2_needed;
    for (const auto &w : writes)
        if (w.controller.empty() && w.file != kDeviceProgram && !controller_of(w.file).empty())
            v2_needed.insert(controller_of(w.file));
    std::vector<std::string> made; // deepest last
    made.reserve(2 * dirs.size()); // "oci-run" and the container's, in most
    auto undo = [&](Error e) -> Status {
        for (auto it = made.rbegin(); it != made.rend(); ++it) {
            At a = cgroup_at(host, *it);
            ::unlinkat(a.fd, a.rel, AT_REMOVEDIR);
        }
        return forward(std::move(e), "cgroup");
    };
    for (const auto &dir : dirs) {
        const Hierarchy *h = hierarchy_of(host, dir);
        // Levels from the mount down to dir; make the missing ones.
        std::vector<std::string> levels;
        levels.reserve(2);
        for (std::string_view d = dir; d.size() > h->mount.size(); d = parent_view(d))
            levels.emplace_back(d);
        std::reverse(levels.begin(), levels.end());
        int retries = 0;
        for (size_t i = 0; i < levels.size(); i++) {
            const std::string &d = levels[i];
            bool leaf = i + 1 == levels.size();
            bool exists = false;
            At at = cgroup_at(host, d);
            if (::mkdirat(at.fd, at.rel, 0755) < 0) {
                // The shared "oci-run" parent removed by a delete between our
                // levels: start again from the top.
                if (errno == ENOENT && retries++ < 3) {
                    i = static_cast<size_t>(-1);
                    continue;
                }
                if (errno != EEXIST) return undo(Error{errno, "mkdir " + d});
                // An existing cgroup is reused, as runc does, when nothing is
                // in it: no process, no cgroup below it, not frozen.
                if (leaf)
                    if (auto r = reusable_cgroup(*h, d); !r) return undo(r.error());
                exists = true;
            } else {
                made.push_back(d);
            }
            std::string_view parent = parent_view(d);
            if (h->version == 1 && h->has("cpuset")) {
                // A new cpuset cgroup starts empty and no task can join it
                // then. Top-down, so the parent is filled first (also when
                // another create made it a moment ago and has not yet).
                for (const char *f : {"cpuset.cpus", "cpuset.mems"})
                    if (read_trimmed(host, d + "/" + f).empty())
                        if (auto r = write_in(host, d + "/" + f,
                                              read_trimmed(host, concat(parent, "/", f)), f);
                            !r)
                            return undo(r.error());
            }
            if (exists && !leaf) continue;
            if (h->version == 2) {
                // Enable in the parent what this level needs: the controllers
                // the writes use, and below our own levels whatever the parent
                // offers (stats, later updates).
                std::string avail = read_trimmed(host, concat(parent, "/cgroup.controllers"));
                std::string enabled = read_trimmed(host, concat(parent, "/cgroup.subtree_control"));
                bool parent_is_ours = i > 0 && made.size() > 1 && made[made.size() - 2] == parent;
                std::string add;
                for (auto word : words(avail)) {
                    std::string c(word);
                    bool want = v2_needed.count(c) || parent_is_ours;
                    if (want && (" " + enabled + " ").find(" " + c + " ") == std::string::npos)
                        add += (add.empty() ? "+" : " +") + c;
                }
                for (const auto &n : v2_needed)
                    if ((" " + avail + " ").find(" " + n + " ") == std::string::npos)
                        return undo(Error{0, "the " + n + " controller is not available in " +
                                                 std::string(parent)});
                if (!add.empty())
                    if (auto r = write_in(host, concat(parent, "/cgroup.subtree_control"), add,
                                          "enable controllers");
                        !r)
                        return undo(r.error());
            }
        }
    }
    if (auto r = apply_cgroup_writes(host, dirs, writes, all); !r) return undo(r.error());
    return {};
}

std::string unified_dir(const CgroupHost &host, const std::vector<std::string> &dirs) {
    const Hierarchy *u = host.unified();
    for (const auto &d : dirs)
        if (u && hierarchy_of(host, d) == u) return d;
    return {};
}

bool v1_cpuset_only(const Hierarchy &h) {
    return h.version == 1 && h.controllers.size() == 1 && h.controllers[0] == "cpuset";
}

void leave_out_v1_cpuset(const CgroupHost &host, std::vector<std::string> &dirs) {
    std::erase_if(dirs, [&](const std::string &d) {
        const Hierarchy *h = hierarchy_of(host, d);
        return h && v1_cpuset_only(*h);
    });
}

namespace {

// Every cgroup below `dir`, deepest first (a container with its cgroup
// namespace and cgroupfs writable makes its own: a systemd node's slices, a
// nested runtime's containers). `skip` (a child's name) is left out with
// what is below it.
std::vector<std::string> descendants(const std::string &dir, const char *skip = nullptr) {
    std::vector<std::string> out;
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return out;
    // getdents64 into the stack: opendir's 32 KiB buffer, once per hierarchy
    // on every delete, was most of what delete asked of malloc.
    std::vector<std::string> children;
    alignas(8) char buf[4096];
    for (;;) {
        long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) break;
        for (long at = 0; at < n;) {
            auto *e = reinterpret_cast<struct dirent64 *>(buf + at);
            at += e->d_reclen;
            std::string_view name = e->d_name;
            if (e->d_type != DT_DIR || name == "." || name == ".." || (skip && name == skip))
                continue;
            children.push_back(dir + "/" + std::string(name));
        }
    }
    ::close(fd);
    for (const auto &c : children) {
        for (auto &below : descendants(c))
            out.push_back(std::move(below));
        out.push_back(c);
    }
    return out;
}

// The directory to list the container's processes from. One hierarchy is
// enough: prefer v2, then pids, then any.
std::string procs_dir(const CgroupHost &host, const std::vector<std::string> &dirs) {
    std::string dir = unified_dir(host, dirs);
    if (dir.empty())
        for (const auto &d : dirs) {
            const Hierarchy *h = hierarchy_of(host, d);
            if (h && h->has("pids")) dir = d;
        }
    if (dir.empty() && !dirs.empty()) dir = dirs[0];
    return dir;
}

// The PIDs `dir`'s cgroup.procs lists, appended to `out`.
Status read_procs(const std::string &dir, std::vector<pid_t> &out) {
    auto text = oci::read_file(dir + "/cgroup.procs");
    if (!text) return std::unexpected(std::move(text.error()));
    for (auto w : words(*text))
        if (auto v = number<pid_t>(w)) out.push_back(*v);
    return {};
}

// The processes in `dir` and every cgroup below it; a `dir` that cannot be
// read is an error (a sub-cgroup gone meanwhile is not).
Status collect_procs(const std::string &dir, std::vector<pid_t> &out, bool top = true) {
    if (auto r = read_procs(dir, out); !r)
        return top ? Status(forward(std::move(r.error()), "cgroup")) : Status{};
    DIR *d = ::opendir(dir.c_str());
    if (!d) return {};
    while (struct dirent *e = ::readdir(d))
        if (e->d_type == DT_DIR && e->d_name[0] != '.')
            (void)collect_procs(dir + "/" + e->d_name, out, false);
    ::closedir(d);
    return {};
}

} // namespace

std::string v1_dir_of(const Hierarchy &h, pid_t pid) {
    auto text = oci::read_file("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text) return {};
    std::string joined;
    for (const auto &c : h.controllers)
        joined += (joined.empty() ? "" : ",") + c;
    std::string found;
    for_each_line(*text, [&](std::string_view line) {
        size_t a = line.find(':'), b = a == std::string_view::npos ? a : line.find(':', a + 1);
        if (b == std::string_view::npos) return;
        if (line.substr(a + 1, b - a - 1) == joined)
            found = h.dir_of(std::string(line.substr(b + 1)));
    });
    return found;
}

namespace {

// `pid`'s cgroup directory in `h` (v1 or v2), or "".
std::string dir_of_process(const Hierarchy &h, pid_t pid) {
    if (h.version == 1) return v1_dir_of(h, pid);
    auto text = oci::read_file("/proc/" + std::to_string(pid) + "/cgroup");
    if (!text) return {};
    std::string found;
    for_each_line(*text, [&](std::string_view line) {
        if (line.starts_with("0::")) found = h.dir_of(std::string(line.substr(3)));
    });
    return found;
}

bool ends_with_path(const std::string &dir, const std::string &rel) {
    return dir.size() > rel.size() + 1 &&
           dir.compare(dir.size() - rel.size(), rel.size(), rel) == 0 &&
           dir[dir.size() - rel.size() - 1] == '/';
}

} // namespace

Status check_in_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, pid_t pid) {
    for (const auto &d : dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        std::string in = h ? dir_of_process(*h, pid) : "";
        if (in != d)
            return fail("cgroup: process " + std::to_string(pid) + " is in " +
                        (in.empty() ? "no cgroup of that hierarchy" : in) + ", not in " + d);
    }
    return {};
}

Result<SystemdScope> recorded_scope(const ContainerRecord &rec) {
    auto s = systemd_scope(rec.cgroups_path, rec.state.id, rec.systemd_user);
    if (!s) return forward(std::move(s.error()), "state.json of \"" + rec.state.id + "\"");
    return s;
}

Status check_own_cgroup(const CgroupHost &host, const ContainerRecord &rec) {
    const std::string &id = rec.state.id;
    std::string path =
        normal_cgroup_path(rec.cgroups_path.empty() ? "oci-run/" + id : rec.cgroups_path);
    // A systemd scope's: its slice's path and the unit, absolute; in a
    // user's manager below the manager's own cgroup, wherever that is (so
    // relative: its end).
    if (rec.systemd_cgroup) {
        SystemdScope scope = OCI_TRY(recorded_scope(rec));
        path = rec.systemd_user ? scope.cgroup.substr(1) : scope.cgroup;
    }
    const std::string default_path = "oci-run/" + id;
    auto refuse = [&](const std::string &d, const std::string &why) {
        return fail("state.json of \"" + id + "\": cgroup " + d + " " + why +
                    ": refused (the record is not the container's own)");
    };
    for (const auto &d : rec.cgroup_dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        if (!h || d == h->mount || has_dotdot(d) || d.find("//") != std::string::npos ||
            d.back() == '/')
            return refuse(d, "is not a directory below a cgroup hierarchy of this host");
        // Named by the container's configured path: absolute in every
        // hierarchy, or relative under whatever cgroup its creator was in
        // (update's own v1 cpuset cgroup is oci-run/<id> under the init's).
        bool named = path[0] == '/' ? d == h->dir_of(path)
                                    : ends_with_path(d, path) ||
                                          (v1_cpuset_only(*h) && ends_with_path(d, default_path));
        if (!named) return refuse(d, "is not named by the container's cgroupsPath (" + path + ")");
        // Never the runtime's own cgroup or one above it.
        if (path_under(h->dir_of(h->own), d))
            return refuse(d, "holds this process's own cgroup " + h->dir_of(h->own));
    }
    return {};
}

bool init_in_cgroup(const CgroupHost &host, const ContainerRecord &rec) {
    for (const auto &d : rec.cgroup_dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        std::string at = h ? dir_of_process(*h, rec.state.pid) : "";
        if (at.empty() || !path_under(at, d)) return false;
    }
    return true;
}

bool init_in_own_pid_namespace(const ContainerRecord &rec) {
    struct stat st;
    std::string ns = "/proc/" + std::to_string(rec.state.pid) + "/ns/pid";
    if (rec.init_pidns == 0 || ::stat(ns.c_str(), &st) < 0 || st.st_ino != rec.init_pidns)
        return false;
    return has_own_pid_namespace(rec.state.pid);
}

std::string borrowed_v1_cpuset(const CgroupHost &host, const std::vector<std::string> &dirs,
                               pid_t init) {
    for (const auto &h : host.hierarchies) {
        if (!v1_cpuset_only(h)) continue;
        for (const auto &d : dirs)
            if (hierarchy_of(host, d) == &h) return {};
        return v1_dir_of(h, init);
    }
    return {};
}

Status add_v1_cpuset(const CgroupHost &host, const std::vector<std::string> &dirs,
                     const std::string &cpuset_dir) {
    if (::access(cpuset_dir.c_str(), F_OK) != 0) OCI_CHECK(create_cgroup(host, {cpuset_dir}, {}));
    bool was_frozen = cgroup_frozen(host, dirs);
    if (!was_frozen)
        if (auto r = freeze_cgroup(host, dirs, true); !r) {
            (void)freeze_cgroup(host, dirs, false);
            return forward(std::move(r.error()), "cgroup: add " + cpuset_dir);
        }
    // Every process the container has is in each of its hierarchies, sub-
    // cgroups included.
    std::vector<pid_t> pids;
    Status moved = collect_procs(procs_dir(host, dirs), pids);
    for (pid_t pid : pids) {
        auto r = write_file(cpuset_dir + "/cgroup.procs", std::to_string(pid), "cgroup: join");
        if (!r && r.error().code != ESRCH && moved) moved = std::move(r);
    }
    if (!was_frozen)
        if (auto r = freeze_cgroup(host, dirs, false); !r && moved) moved = std::move(r);
    return moved;
}

Status enter_cgroup(const std::vector<std::string> &dirs, pid_t pid) {
    std::string p = std::to_string(pid);
    for (const auto &d : dirs)
        OCI_CHECK(write_file(concat(d, "/cgroup.procs"), p, "cgroup: join"));
    return {};
}

Result<Fd> open_tasks(const CgroupHost &host, const std::string &dir) {
    std::string path = concat(dir, "/tasks");
    Fd fd = open_in_cgroup(host, path, O_WRONLY | O_NOFOLLOW);
    if (!fd.valid()) return fail_errno("cgroup: join: open " + path);
    return fd;
}

Status join_self(int tasks_fd, const char *dir) {
    ssize_t n;
    while ((n = ::write(tasks_fd, "0", 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) return fail_errno(std::string("cgroup: join ") + dir + " (its tasks file)");
    return {};
}

Result<std::vector<pid_t>> cgroup_pids(const CgroupHost &host,
                                       const std::vector<std::string> &dirs) {
    std::string dir = procs_dir(host, dirs);
    std::vector<pid_t> pids;
    if (dir.empty()) return pids;
    // Its own and those of the cgroups below it (not the helper's).
    std::vector<std::string> all = descendants(dir, kHelperCgroup);
    all.insert(all.begin(), dir);
    for (const auto &d : all)
        if (auto r = read_procs(d, pids); !r && r.error().code != ENOENT)
            return forward(std::move(r.error()), "cgroup");
    return pids;
}

namespace {

// Each process `list` names, held by a pidfd, then signalled only when a
// second `list` still names it: cgroup.procs gives numbers, and a process
// that ended between the read and the hold may have left its PID to one
// outside the cgroup, which is not reached. (One that ends after the hold
// is not reached either: its pidfd names it, not the PID.)
template <class List> Status signal_listed(List list, int sig) {
    std::vector<pid_t> first = OCI_TRY(list());
    fault_point("cgroup:listed");
    std::vector<std::pair<pid_t, Fd>> held;
    for (pid_t pid : first) {
        Fd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
        if (fd.valid())
            held.emplace_back(pid, std::move(fd));
        else if (errno != ESRCH)
            return fail_errno("pidfd_open " + std::to_string(pid));
    }
    if (held.empty()) return {};
    std::vector<pid_t> again = OCI_TRY(list());
    std::sort(again.begin(), again.end());
    for (const auto &[pid, fd] : held)
        if (std::binary_search(again.begin(), again.end(), pid) &&
            ::syscall(SYS_pidfd_send_signal, fd.get(), sig, nullptr, 0) < 0 && errno != ESRCH)
            return fail_errno("signal process " + std::to_string(pid));
    return {};
}

} // namespace

Status signal_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, int sig) {
    std::string u = unified_dir(host, dirs);
    if (sig == SIGKILL && !u.empty() && ::access((u + "/cgroup.kill").c_str(), F_OK) == 0)
        return write_file(u + "/cgroup.kill", "1", "cgroup.kill");
    return signal_listed([&] { return cgroup_pids(host, dirs); }, sig);
}

static std::string freezer_dir(const CgroupHost &host, const std::vector<std::string> &dirs,
                               bool &v2) {
    for (const auto &d : dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        if (h && h->version == 1 && h->has("freezer")) {
            v2 = false;
            return d;
        }
    }
    v2 = true;
    return unified_dir(host, dirs);
}

bool cgroup_frozen(const CgroupHost &host, const std::vector<std::string> &dirs) {
    bool v2;
    std::string d = freezer_dir(host, dirs, v2);
    if (d.empty()) return false;
    // FREEZING counts: a process joining now would be frozen too.
    if (!v2) return read_trimmed(d + "/freezer.state") != "THAWED";
    return read_trimmed(d + "/cgroup.freeze") == "1";
}

Status freeze_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs, bool frozen) {
    bool v2;
    std::string d = freezer_dir(host, dirs, v2);
    if (d.empty()) return fail("no freezer: the container has no cgroup with a freezer");
    // Up to 10 s (a loaded host takes a while to stop every task), waiting
    // 1 ms, then 10 ms between looks.
    auto wait = [](int i) { sleep_ms(i < 100 ? 1 : 10); };
    constexpr int kLooks = 1000;
    if (!v2) {
        const char *want = frozen ? "FROZEN" : "THAWED";
        for (int i = 0; i < kLooks; i++) {
            OCI_CHECK(write_file(d + "/freezer.state", want, "freezer.state"));
            if (read_trimmed(d + "/freezer.state") == want) return {};
            wait(i);
        }
        // Not left half frozen (FREEZING holds whatever joins it): as runc,
        // a freeze that does not complete is undone.
        if (frozen) (void)write_file(d + "/freezer.state", "THAWED", "freezer.state");
        return fail_code(EBUSY, "freezer.state: " + d + " did not become " + want);
    }
    OCI_CHECK(write_file(d + "/cgroup.freeze", frozen ? "1" : "0", "cgroup.freeze"));
    std::string want = std::string("frozen ") + (frozen ? "1" : "0");
    for (int i = 0; i < kLooks; i++) {
        if (read_trimmed(d + "/cgroup.events").find(want) != std::string::npos) return {};
        wait(i);
    }
    if (frozen) (void)write_file(d + "/cgroup.freeze", "0", "cgroup.freeze");
    return fail_code(EBUSY, "cgroup.freeze: " + d + " did not report " + want);
}

std::vector<std::string> helper_cgroup_dirs(const CgroupHost &host,
                                            const std::vector<std::string> &dirs) {
    std::vector<std::string> out;
    for (const auto &d : dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        if (h && (h->version == 2 || h->has("memory") || h->has("pids")))
            out.push_back(d + "/" + kHelperCgroup);
    }
    return out;
}

Status place_in_helper_cgroup(SpawnSpec &s, const CgroupHost &host,
                              const std::vector<std::string> &dirs, const std::string &what) {
    std::vector<std::string> helper = helper_cgroup_dirs(host, dirs);
    for (const auto &d : helper)
        if (::mkdir(d.c_str(), 0755) < 0 && errno != EEXIST)
            return fail_errno(what + ": cgroup: make " + d);
    s.born_in = unified_dir(host, helper);
    for (const auto &d : helper)
        if (d != s.born_in) s.cgroups.push_back(d);
    return {};
}

namespace {

// How long a cgroup may stay busy before its removal fails: with the
// processes killed (what dies takes a moment), or left alone.
constexpr int kRemoveTriesKilling = 2000, kRemoveTriesWaiting = 1000; // of 1 ms

// The cgroups below `d` (the helper's, and any the container made), deepest
// first, each once what it holds has died (killed, with `kill_left`).
Status remove_children(const std::string &d, bool kill_left) {
    const int limit = kill_left ? kRemoveTriesKilling : kRemoveTriesWaiting;
    for (const auto &child : descendants(d))
        for (int tries = 0; ::rmdir(child.c_str()) < 0; tries++) {
            if (errno == ENOENT) break;
            if (errno != EBUSY || tries > limit) return fail_errno("cgroup: remove " + child);
            if (kill_left && tries % 50 == 0)
                (void)signal_listed(
                    [&]() -> Result<std::vector<pid_t>> {
                        std::vector<pid_t> pids;
                        (void)read_procs(child, pids);
                        return pids;
                    },
                    SIGKILL);
            sleep_ms(1);
        }
    return {};
}

// The default parent "oci-run" goes once the last container leaves it.
void remove_default_parent(const std::string &d) {
    std::string parent = parent_of(d);
    if (parent.size() > 8 && parent.substr(parent.size() - 8) == "/oci-run")
        ::rmdir(parent.c_str());
}

} // namespace

Status destroy_cgroup(const CgroupHost &host, const std::vector<std::string> &dirs,
                      bool kill_left) {
    // Most often the container's processes are gone and it made no cgroup
    // below: rmdir succeeds, which it does only on an empty cgroup, and
    // nothing needs reading first. What refuses (EBUSY: a process or a
    // cgroup left in it) is killed and emptied below.
    std::vector<std::string> left;
    for (const auto &d : dirs) {
        if (::rmdir(d.c_str()) == 0)
            remove_default_parent(d);
        else if (errno != ENOENT)
            left.push_back(d);
    }
    if (left.empty()) return {};
    // A frozen cgroup's processes cannot die: thaw after the kill is queued.
    if (kill_left) {
        (void)signal_cgroup(host, left, SIGKILL);
        if (cgroup_frozen(host, left)) (void)freeze_cgroup(host, left, false);
    }
    const int limit = kill_left ? kRemoveTriesKilling : kRemoveTriesWaiting;
    for (const auto &d : left) {
        if (::access(d.c_str(), F_OK) != 0) continue;
        OCI_CHECK(remove_children(d, kill_left));
        int tries = 0;
        while (::rmdir(d.c_str()) < 0) {
            if (errno == ENOENT) break;
            if (errno != EBUSY || ++tries > limit) return fail_errno("cgroup: remove " + d);
            if (kill_left && tries % 50 == 0) (void)signal_cgroup(host, left, SIGKILL);
            sleep_ms(1);
        }
        remove_default_parent(d);
    }
    return {};
}

} // namespace ocirun
