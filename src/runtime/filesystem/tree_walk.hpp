// A bounded walk of a directory tree, shared by the searches for other
// names of a file (hard links): the rules on files inside the container
// (runtime/filesystem/fs_policy.cpp) and the protected paths on the host
// (runtime/filesystem/host_reach.cpp).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

namespace ocirun {

// Depth-first below the directory `top` (at path `top_path`): each entry
// (symlinks not followed) to `visit(st, path)`; a directory is entered when
// `enter(path, st)` says so (at most 256 levels). False when the budget ran
// out; `incomplete` when a directory could not be read.
template <class Visit, class Enter>
bool walk_tree(int top, const std::string &top_path, size_t &budget, bool &incomplete, Visit visit,
               Enter enter) {
    struct Level {
        DIR *d;
        std::string path;
    };
    std::vector<Level> stack;
    int dup = ::fcntl(top, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? ::fdopendir(dup) : nullptr;
    if (!d) {
        if (dup >= 0) ::close(dup);
        incomplete = true; // not read: what is below it is not known
        return true;
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
        // An entry gone since readdir (a directory others write to: the
        // state directory, a repository) has no name left to find.
        if (::fstatat(::dirfd(l.d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT) incomplete = true;
            continue;
        }
        std::string path = l.path + "/" + name;
        visit(st, path);
        if (S_ISDIR(st.st_mode) && enter(path, st)) {
            if (stack.size() >= 256) {
                incomplete = true;
                continue;
            }
            int fd = ::openat(::dirfd(l.d), name.c_str(),
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            DIR *sub = fd >= 0 ? ::fdopendir(fd) : nullptr;
            if (!sub && fd >= 0) ::close(fd);
            if (sub)
                stack.push_back({sub, path});
            else if (fd >= 0 || errno != ENOENT)
                incomplete = true;
        }
    }
    for (auto &l : stack)
        ::closedir(l.d);
    return ok;
}

} // namespace ocirun
