#include "runtime/cgroups/cgroup_host.hpp"

#include "oci/state.hpp"
#include "oci/text.hpp"

namespace ocirun {

namespace {

// Whether "a,b,c" is the list `names`, in that order.
bool same_list(std::string_view text, const std::vector<std::string> &names) {
    size_t i = 0;
    bool same = true;
    for_each_field(text, ',', [&](std::string_view f) {
        same = same && i < names.size() && names[i] == f;
        i++;
    });
    return same && i == names.size();
}

} // namespace

bool Hierarchy::has(std::string_view controller) const {
    for (const auto &c : controllers)
        if (c == controller) return true;
    return false;
}

std::string Hierarchy::dir_of(const std::string &p) const {
    std::string rel = p;
    // A path under the mount's root (in a cgroup namespace the root shows as "/").
    if (mount_root != "/" && rel.rfind(mount_root, 0) == 0) rel = rel.substr(mount_root.size());
    if (rel.empty() || rel == "/") return mount;
    return concat(mount, rel[0] == '/' ? "" : "/", rel);
}

const Hierarchy *CgroupHost::unified() const {
    for (const auto &h : hierarchies)
        if (h.version == 2) return &h;
    return nullptr;
}

const Hierarchy *CgroupHost::for_controller(std::string_view controller) const {
    for (const auto &h : hierarchies)
        if (h.version == 1 && h.has(controller)) return &h;
    const Hierarchy *u = unified();
    return u && u->has(controller) ? u : nullptr;
}

bool CgroupHost::pure_v2() const {
    for (const auto &h : hierarchies)
        if (h.version == 1) return false;
    return unified() != nullptr;
}

Result<CgroupHost> parse_cgroup_host(std::string_view mountinfo, std::string_view self_cgroup) {
    return parse_cgroup_host(parse_mountinfo(mountinfo), self_cgroup);
}

Result<CgroupHost> parse_cgroup_host(const std::vector<MountEntry> &mounts,
                                     std::string_view self_cgroup) {
    CgroupHost host;
    size_t cgroup_mounts = 0;
    for (const MountEntry &m : mounts)
        cgroup_mounts += m.fstype == "cgroup" || m.fstype == "cgroup2";
    host.hierarchies.reserve(cgroup_mounts);
    for (const MountEntry &m : mounts) {
        if (m.fstype != "cgroup" && m.fstype != "cgroup2") continue;
        Hierarchy h;
        h.version = m.fstype == "cgroup2" ? 2 : 1;
        h.mount_root = m.root;
        h.mount = m.point;
        if (h.version == 1) {
            for_each_field(m.super_options, ',', [&](std::string_view opt) {
                static const char *kNotControllers[] = {
                    "rw", "ro", "noprefix", "xattr", "clone_children", "nsdelegate"};
                for (const char *n : kNotControllers)
                    if (opt == n) return;
                if (opt.empty() || opt.starts_with("release_agent=")) return;
                h.controllers.emplace_back(opt);
            });
            if (h.controllers.empty()) continue;
        }
        // The same hierarchy mounted twice: keep the first.
        bool dup = false;
        for (const auto &o : host.hierarchies)
            if (o.version == h.version && o.controllers == h.controllers && h.version == 1)
                dup = true;
            else if (o.version == 2 && h.version == 2)
                dup = true;
        if (!dup) host.hierarchies.push_back(std::move(h));
    }
    // /proc/self/cgroup: "ID:controller,list:/path" (v2: "0::/path").
    for_each_line(self_cgroup, [&](std::string_view line) {
        auto a = line.find(':');
        auto b = a == std::string_view::npos ? a : line.find(':', a + 1);
        if (b == std::string_view::npos) return;
        std::string_view ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        for (auto &h : host.hierarchies) {
            if (ctrls.empty()) {
                if (h.version == 2) h.own = path;
                continue;
            }
            if (h.version == 1 && !h.controllers.empty() && same_list(ctrls, h.controllers))
                h.own = path;
        }
    });
    for (auto &h : host.hierarchies)
        if (h.own.empty()) h.own.assign(1, '/'); // (not = "/": a g++ 12 -Wrestrict false positive)
    return host;
}

Result<CgroupHost> detect_cgroup_host() {
    return detect_cgroup_host(OCI_TRY(own_mounts()));
}

Result<CgroupHost> detect_cgroup_host(const std::vector<MountEntry> &mounts) {
    std::string sc = OCI_TRY(oci::read_file("/proc/self/cgroup"));
    CgroupHost host = OCI_TRY(parse_cgroup_host(mounts, sc));
    for (auto &h : host.hierarchies) {
        if (h.version != 2) continue;
        auto text = oci::read_file(h.mount + "/cgroup.controllers");
        if (!text) return forward(std::move(text.error()), "cgroup v2");
        for_each_word(*text, [&](std::string_view w) { h.controllers.emplace_back(w); });
    }
    return host;
}

} // namespace ocirun
