#include "runtime/filesystem/mount_table.hpp"

#include "oci/fd.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ocirun {

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
    if (s.find('\\') == std::string_view::npos) return std::string(s);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); i++) {
        auto octal = [&](size_t k) { return s[k] >= '0' && s[k] <= '7'; };
        if (s[i] == '\\' && i + 3 < s.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
            out +=
                static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

} // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> out;
    size_t lines = 0;
    for (char c : text)
        lines += c == '\n';
    out.reserve(lines + 1);
    for_each_line(text, [&](std::string_view line) {
        // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
        // (at most 32 fields taken: the optional ones are few).
        std::string_view f[32];
        size_t n = 0;
        for_each_word(line, [&](std::string_view w) {
            if (n < std::size(f)) f[n++] = w;
        });
        if (n < 7) return;
        MountEntry m;
        auto id = number<int>(f[0]), parent = number<int>(f[1]);
        size_t colon = f[2].find(':');
        if (!id || !parent || colon == std::string_view::npos) return;
        auto major = number<unsigned>(f[2].substr(0, colon));
        auto minor = number<unsigned>(f[2].substr(colon + 1));
        if (!major || !minor) return;
        m.id = *id;
        m.parent = *parent;
        m.major = *major;
        m.minor = *minor;
        m.root = unescape(f[3]);
        m.point = unescape(f[4]);
        for_each_field(f[5], ',', [&](std::string_view o) { m.readonly |= o == "ro"; });
        size_t dash = 6;
        while (dash < n && f[dash] != "-")
            dash++;
        if (dash + 2 < n) {
            m.fstype = f[dash + 1];
            m.source = unescape(f[dash + 2]);
            if (dash + 3 < n) m.super_options = f[dash + 3];
        }
        out.push_back(std::move(m));
    });
    return out;
}

Result<std::vector<MountEntry>> own_mounts(int procfs) {
    if (procfs < 0) return parse_mountinfo(OCI_TRY(oci::read_file("/proc/self/mountinfo")));
    Fd f(::openat(procfs, "self/mountinfo", O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!f.valid()) return fail_errno("open /proc/self/mountinfo");
    return parse_mountinfo(OCI_TRY(oci::read_fd(f.get(), "/proc/self/mountinfo")));
}

Result<std::string> path_of_fd(int fd, int procfs) {
    char buf[4096];
    std::string link = "self/fd/" + std::to_string(fd);
    ssize_t n = procfs >= 0 ? ::readlinkat(procfs, link.c_str(), buf, sizeof buf - 1)
                            : ::readlink(("/proc/" + link).c_str(), buf, sizeof buf - 1);
    if (n < 0) return fail_errno("readlink /proc/" + link);
    std::string path(buf, static_cast<size_t>(n));
    if (path.empty() || path[0] != '/' || path.ends_with(" (deleted)"))
        return fail(path + ": not reachable from this process's root");
    return path;
}

bool path_under(const std::string &path, const std::string &dir) {
    if (dir == "/") return !path.empty() && path[0] == '/';
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                           path[dir.size()] == '/');
}

std::string path_join(const std::string &dir, const std::string &rest) {
    if (rest.empty() || rest == "/") return dir.empty() ? "/" : dir;
    std::string r = rest[0] == '/' ? rest : "/" + rest;
    if (dir.empty() || dir == "/") return r;
    return dir + r;
}

Overlap overlap(const FsRegion &a, const FsRegion &b) {
    if (a.major != b.major || a.minor != b.minor) return Overlap::none;
    if (a.path == b.path) return Overlap::same;
    if (path_under(b.path, a.path)) return Overlap::contains;
    if (path_under(a.path, b.path)) return Overlap::inside;
    return Overlap::none;
}

std::string describe(const FsRegion &r) {
    return std::to_string(r.major) + ":" + std::to_string(r.minor) + ":" + r.path;
}

std::string path_in_view(const std::string &point, const std::string &root,
                         const std::string &fs_path) {
    return path_join(point, root == "/" ? fs_path : fs_path.substr(root.size()));
}

std::string path_in_mount(const MountEntry &m, const std::string &fs_path) {
    return path_in_view(m.point, m.root, fs_path);
}

FsRegion region_of(const MountEntry &m) {
    return {m.major, m.minor, m.root};
}

Result<int> mount_id_of(int fd) {
    struct statx stx {};
    if (::statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
        return fail_errno("statx");
    if (!(stx.stx_mask & STATX_MNT_ID)) return fail("statx: this kernel gives no mount ID (5.8+)");
    return static_cast<int>(stx.stx_mnt_id);
}

const MountEntry *find_mount(const std::vector<MountEntry> &mounts, int id) {
    for (const auto &m : mounts)
        if (m.id == id) return &m;
    return nullptr;
}

Result<FsRegion> region_at(int id, const std::string &path, const std::vector<MountEntry> &mounts) {
    const MountEntry *m = find_mount(mounts, id);
    if (!m) return fail(path + ": mount " + std::to_string(id) + " is not in the mount table");
    if (!path_under(path, m->point))
        return fail(path + ": outside its mount " + m->point + " (mount " + std::to_string(id) +
                    ")");
    std::string rest = m->point == "/" ? path : path.substr(m->point.size());
    return FsRegion{m->major, m->minor, path_join(m->root, rest)};
}

Result<FsRegion> region_of(int fd, const std::vector<MountEntry> &mounts, int procfs) {
    int id = OCI_TRY(mount_id_of(fd));
    std::string path = OCI_TRY(path_of_fd(fd, procfs));
    return region_at(id, path, mounts);
}

Result<FsRegion> region_of_path(const std::string &path, const std::vector<MountEntry> &mounts) {
    std::string existing = path, rest;
    for (;;) {
        Fd fd(::open(existing.c_str(), O_PATH | O_CLOEXEC));
        if (fd.valid()) {
            FsRegion r = OCI_TRY(region_of(fd.get(), mounts));
            r.path = path_join(r.path, rest);
            return r;
        }
        if (errno != ENOENT) return fail_errno("open " + existing);
        size_t slash = existing.rfind('/');
        if (slash == std::string::npos || existing == "/") return fail_errno("open " + path);
        rest = path_join(existing.substr(slash + 1), rest);
        existing = slash == 0 ? "/" : existing.substr(0, slash);
    }
}

std::vector<const MountEntry *> mounts_below(const std::vector<MountEntry> &mounts,
                                             const std::string &point) {
    std::vector<const MountEntry *> out;
    for (const auto &m : mounts)
        if (m.point != point && path_under(m.point, point)) out.push_back(&m);
    return out;
}

} // namespace ocirun
