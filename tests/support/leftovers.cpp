#include "leftovers.hpp"

#include "harness.hpp"
#include "runtime/cgroups/cgroup_host.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace test {

namespace {

std::vector<ocirun::Hierarchy> hierarchies() {
    auto h = ocirun::detect_cgroup_host();
    return h ? h->hierarchies : std::vector<ocirun::Hierarchy>{};
}

} // namespace

std::string cgroup_parent(const char *tag) {
    std::string parent = "/oci-run-test-" + std::to_string(::getpid()) + "-" + tag;
    track_cgroup_parent(parent);
    return parent;
}

std::vector<std::string> cgroup_dirs(const std::string &parent, const std::string &id) {
    std::vector<std::string> out;
    for (const auto &h : hierarchies())
        out.push_back(h.dir_of(parent + "/" + id));
    return out;
}

std::vector<std::string> cgroup_children(const std::string &parent) {
    std::vector<std::string> out;
    for (const auto &h : hierarchies()) {
        std::string dir = h.dir_of(parent);
        DIR *d = ::opendir(dir.c_str());
        if (!d) continue;
        while (struct dirent *e = ::readdir(d)) {
            std::string n = e->d_name;
            if (e->d_type == DT_DIR && n != "." && n != "..") out.push_back(dir + "/" + n);
        }
        ::closedir(d);
    }
    return out;
}

std::string remove_cgroup_parent(const std::string &parent) {
    std::string failed;
    for (const auto &h : hierarchies()) {
        std::string dir = h.dir_of(parent);
        if (::rmdir(dir.c_str()) < 0 && errno != ENOENT)
            failed += dir + ": " + std::strerror(errno) + "; ";
    }
    return failed;
}

std::vector<long> processes_with(const std::string &marker) {
    std::vector<long> out;
    for (const auto &name : dir_entries("/proc")) {
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd = read_file("/proc/" + name + "/cmdline");
        if (contains(cmd, marker)) out.push_back(std::atol(name.c_str()));
    }
    return out;
}

std::vector<std::string> mounts_naming(const std::string &path) {
    std::vector<std::string> out;
    std::istringstream in(read_file("/proc/self/mountinfo"));
    std::string line;
    while (std::getline(in, line))
        if (contains(line, path)) out.push_back(line);
    return out;
}

} // namespace test
