#include "runtime/cgroups/cgroup_host.hpp"

#include "oci/state.hpp"
#include "oci/text.hpp"

namespace ocirun {

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            int v = 0;
            bool ok = true;
            for (size_t k = 1; k <= 3; k++) {
                char c = s[i + k];
                if (c < '0' || c > '7') ok = false;
                v = v * 8 + (c - '0');
            }
            if (ok) {
                out += static_cast<char>(v);
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
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
    if (rel[0] != '/') rel = "/" + rel;
    return mount + rel;
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
    CgroupHost host;
    for_each_line(mountinfo, [&](std::string_view line) {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
        auto dash = line.find(" - ");
        if (dash == std::string_view::npos) return;
        auto left = split(line.substr(0, dash), ' ');
        auto right = split(line.substr(dash + 3), ' ');
        if (left.size() < 6 || right.size() < 3) return;
        const std::string &fstype = right[0];
        if (fstype != "cgroup" && fstype != "cgroup2") return;
        Hierarchy h;
        h.version = fstype == "cgroup2" ? 2 : 1;
        h.mount_root = unescape(left[3]);
        h.mount = unescape(left[4]);
        if (h.version == 1) {
            for (const auto &opt : split(right[2], ',')) {
                static const char *kNotControllers[] = {
                    "rw", "ro", "noprefix", "xattr", "clone_children", "nsdelegate"};
                bool skip = false;
                for (const char *n : kNotControllers)
                    if (opt == n) skip = true;
                if (opt.rfind("release_agent=", 0) == 0) skip = true;
                if (!skip && !opt.empty()) h.controllers.push_back(opt);
            }
            if (h.controllers.empty()) return;
        }
        // The same hierarchy mounted twice: keep the first.
        bool dup = false;
        for (const auto &o : host.hierarchies)
            if (o.version == h.version && o.controllers == h.controllers && h.version == 1)
                dup = true;
            else if (o.version == 2 && h.version == 2)
                dup = true;
        if (!dup) host.hierarchies.push_back(std::move(h));
    });
    // /proc/self/cgroup: "ID:controller,list:/path" (v2: "0::/path").
    for_each_line(self_cgroup, [&](std::string_view line) {
        auto a = line.find(':');
        auto b = a == std::string_view::npos ? a : line.find(':', a + 1);
        if (b == std::string_view::npos) return;
        std::string ctrls(line.substr(a + 1, b - a - 1));
        std::string path(line.substr(b + 1));
        for (auto &h : host.hierarchies) {
            if (ctrls.empty()) {
                if (h.version == 2) h.own = path;
                continue;
            }
            if (h.version == 1 && !h.controllers.empty() && split(ctrls, ',') == h.controllers)
                h.own = path;
        }
    });
    for (auto &h : host.hierarchies)
        if (h.own.empty()) h.own.assign(1, '/'); // (not = "/": a g++ 12 -Wrestrict false positive)
    return host;
}

Result<CgroupHost> detect_cgroup_host() {
    std::string mi = OCI_TRY(oci::read_file("/proc/self/mountinfo"));
    std::string sc = OCI_TRY(oci::read_file("/proc/self/cgroup"));
    CgroupHost host = OCI_TRY(parse_cgroup_host(mi, sc));
    for (auto &h : host.hierarchies) {
        if (h.version != 2) continue;
        auto text = oci::read_file(h.mount + "/cgroup.controllers");
        if (!text) return forward(std::move(text.error()), "cgroup v2");
        for (auto w : words(*text))
            h.controllers.emplace_back(w);
    }
    return host;
}

} // namespace ocirun
