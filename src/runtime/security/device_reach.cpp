#include "runtime/security/device_reach.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>

namespace ocirun {

namespace {

// mem's minors that reach memory: /dev/mem, /dev/kmem, /dev/port (the
// others are null, zero, full, random, ...).
constexpr int64_t kMemMajor = 1;
bool raw_mem_minor(int64_t minor) {
    return minor == 1 || minor == 2 || minor == 4;
}

// Whether char device `major`:`minor` (nullopt: any) is one of them.
bool raw_char(std::optional<int64_t> major, std::optional<int64_t> minor,
              const std::vector<int64_t> &raw_majors) {
    if (!major) return true;
    if (*major == kMemMajor) return !minor || raw_mem_minor(*minor);
    return std::find(raw_majors.begin(), raw_majors.end(), *major) != raw_majors.end();
}

std::string numbers(const std::string &type, std::optional<int64_t> major,
                    std::optional<int64_t> minor, const std::string &access) {
    return (type.empty() ? "a" : type) + " " + (major ? std::to_string(*major) : "*") + ":" +
           (minor ? std::to_string(*minor) : "*") + " " + (access.empty() ? "rwm" : access);
}

} // namespace

std::vector<int64_t> raw_char_majors(std::string_view text) {
    std::vector<int64_t> out = {kMemMajor};
    bool chars = false;
    for (size_t at = 0; at < text.size();) {
        size_t nl = text.find('\n', at);
        std::string_view line = text.substr(at, nl == std::string_view::npos ? nl : nl - at);
        at = nl == std::string_view::npos ? text.size() : nl + 1;
        if (line.starts_with("Character devices:")) chars = true;
        if (line.starts_with("Block devices:")) chars = false;
        if (!chars) continue;
        size_t start = line.find_first_not_of(' ');
        if (start == std::string_view::npos) continue;
        int64_t major = 0;
        auto [end, ec] = std::from_chars(line.data() + start, line.data() + line.size(), major);
        if (ec != std::errc() || end == line.data() + line.size() || *end != ' ') continue;
        std::string_view name = line.substr(static_cast<size_t>(end - line.data()) + 1);
        for (std::string_view raw : {"sg", "bsg", "nvme", "nvme-generic", "dax", "mtd"})
            if (name == raw && std::find(out.begin(), out.end(), major) == out.end())
                out.push_back(major);
    }
    return out;
}

std::string disk_device_access(const oci::Linux &lx, const std::vector<int64_t> &raw_majors,
                               bool cgroup_rules) {
    for (size_t i = 0; i < lx.devices.size(); i++) {
        const oci::Device &d = lx.devices[i];
        bool ch = d.type == "c" || d.type == "u";
        if (d.type == "b" || (ch && raw_char(d.major, d.minor, raw_majors)))
            return "linux.devices[" + std::to_string(i) + "] (" + d.path + ", " +
                   (d.type == "b" ? "block" : "character") + " device " + std::to_string(d.major) +
                   ":" + std::to_string(d.minor) + ") reaches the host's disks or memory";
    }
    if (!cgroup_rules) return "";
    static const std::vector<oci::DeviceRule> none;
    const auto &rules = lx.resources ? lx.resources->devices : none;
    if (rules.empty())
        return "linux.resources.devices has no rule, so every device, the host's disks among "
               "them, is open";
    const std::string first = "linux.resources.devices does not deny every ";
    std::string block = first + "block device before its rules",
                chars = first + "character device before its rules";
    for (size_t i = 0; i < rules.size(); i++) {
        const oci::DeviceRule &r = rules[i];
        bool all = r.type.empty() || r.type == "a";
        bool is_block = all || r.type == "b", is_char = all || r.type == "c";
        auto has = [&](char c) {
            return r.access.empty() || r.access.find(c) != std::string::npos;
        };
        if (!r.allow) {
            if (r.major || r.minor || !has('r') || !has('w')) continue;
            if (is_block) block.clear();
            if (is_char) chars.clear();
            continue;
        }
        if (!has('r') && !has('w')) continue;
        std::string what = "linux.resources.devices[" + std::to_string(i) + "] allows " +
                           numbers(r.type, r.major, r.minor, r.access);
        if (is_block) block = what;
        if (is_char && raw_char(r.major, r.minor, raw_majors)) chars = what;
    }
    return block.empty() ? chars : block;
}

bool reaches_disks_raw(mode_t mode, dev_t rdev, const std::vector<int64_t> &raw_majors) {
    if (S_ISBLK(mode)) return true;
    return S_ISCHR(mode) && raw_char(static_cast<int64_t>(major(rdev)),
                                     static_cast<int64_t>(minor(rdev)), raw_majors);
}

} // namespace ocirun
