#include "runtime/process/userns.hpp"

#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/process/proc.hpp"

#include <unistd.h>

#include <cstdlib>

namespace ocirun {

namespace {

std::string map_text(const std::vector<oci::IdMapping> &maps) {
    std::string text;
    for (const auto &m : maps)
        text += std::to_string(m.container_id) + " " + std::to_string(m.host_id) + " " +
                std::to_string(m.size) + "\n";
    return text;
}

bool self_mapping(const std::vector<oci::IdMapping> &maps, uint32_t id) {
    return maps.size() == 1 && maps[0].host_id == id && maps[0].size == 1;
}

// newuidmap/newgidmap from PATH (or the usual directories).
std::string find_helper(const char *name) {
    const char *env = std::getenv("PATH");
    std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        std::string dir = path.substr(start, end - start);
        if (!dir.empty()) {
            std::string candidate = dir + "/" + name;
            if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        }
        start = end + 1;
    }
    return {};
}

Status run_helper(const char *name, pid_t pid, const std::vector<oci::IdMapping> &maps,
                  const char *field) {
    std::string what = std::string(field) + ": " + name;
    std::string bin = find_helper(name);
    if (bin.empty())
        return fail_code(ENOENT, what + ": not found in PATH (an unprivileged user needs it, "
                                        "from the uidmap package, for more than a mapping of "
                                        "its own id)");
    oci::Hook h;
    h.path = bin;
    h.args = {name, std::to_string(pid)};
    for (const auto &m : maps) {
        h.args.push_back(std::to_string(m.container_id));
        h.args.push_back(std::to_string(m.host_id));
        h.args.push_back(std::to_string(m.size));
    }
    h.timeout = 10;
    return run_program(h, what, "");
}

} // namespace

bool in_initial_user_namespace() {
    static const bool initial = [] {
        auto map = oci::read_file("/proc/self/uid_map");
        if (!map) return true; // no user namespaces in this kernel
        auto w = words(*map);
        return w.size() == 3 && w[0] == "0" && w[1] == "0" && w[2] == "4294967295";
    }();
    return initial;
}

bool host_root() {
    return ::geteuid() == 0 && in_initial_user_namespace();
}

Status write_id_mappings(pid_t pid, const oci::Linux &lx) {
    if (::geteuid() == 0) {
        OCI_CHECK(write_proc_file(pid, "uid_map", map_text(lx.uid_mappings), "linux.uidMappings"));
        return write_proc_file(pid, "gid_map", map_text(lx.gid_mappings), "linux.gidMappings");
    }
    if (self_mapping(lx.uid_mappings, ::geteuid()))
        OCI_CHECK(write_proc_file(pid, "uid_map", map_text(lx.uid_mappings), "linux.uidMappings"));
    else
        OCI_CHECK(run_helper("newuidmap", pid, lx.uid_mappings, "linux.uidMappings"));
    if (self_mapping(lx.gid_mappings, ::getegid())) {
        // The kernel lets an unprivileged process map its own gid only once
        // setgroups is denied in the namespace.
        OCI_CHECK(write_proc_file(pid, "setgroups", "deny", "linux.gidMappings"));
        return write_proc_file(pid, "gid_map", map_text(lx.gid_mappings), "linux.gidMappings");
    }
    return run_helper("newgidmap", pid, lx.gid_mappings, "linux.gidMappings");
}

} // namespace ocirun
