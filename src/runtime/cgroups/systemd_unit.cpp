#include "runtime/cgroups/systemd_unit.hpp"

#include "oci/json.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup_plan.hpp"

#include <cstdint>
#include <limits>
#include <map>

namespace ocirun {

namespace {

constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

std::unexpected<Error> bad_path(const std::string &path, const std::string &why) {
    return fail("linux.cgroupsPath: \"" + path + "\": " + why);
}

// The characters systemd takes in a unit name (unit_name_is_valid), less '@'
// (a template instance) and '\\' (escapes oci-run does not make).
bool unit_chars(std::string_view s) {
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == ':' || c == '-' || c == '_' || c == '.'))
            return false;
    return true;
}

UnitProperty prop(std::string name, std::string type, std::string value) {
    UnitProperty p;
    p.name = std::move(name);
    p.type = std::move(type);
    p.value = std::move(value);
    return p;
}

UnitProperty u64(std::string name, uint64_t v) {
    return prop(std::move(name), "t", std::to_string(v));
}

// A cpus or mems list ("0-3,7") as systemd's bitmask: byte i holds bits
// 8i..8i+7, lowest first.
Result<std::vector<uint8_t>> cpu_mask(const std::string &list, const std::string &field) {
    auto cpus = oci::parse_cpu_list(list, oci::EmptyItems::skip);
    if (!cpus) return fail(field + ": \"" + list + "\" is not a list of numbers and ranges");
    std::vector<uint8_t> mask;
    for (unsigned i : *cpus) {
        if (mask.size() <= i / 8) mask.resize(i / 8 + 1, 0);
        mask[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
    return mask;
}

// Driver names of the character (c) and block (b) majors in /proc/devices.
std::map<std::pair<char, int64_t>, std::string> device_names(std::string_view text) {
    std::map<std::pair<char, int64_t>, std::string> out;
    char section = 0;
    for_each_line(text, [&](std::string_view line) {
        if (line.starts_with("Character")) section = 'c';
        if (line.starts_with("Block")) section = 'b';
        std::vector<std::string_view> w = words(line);
        if (!section || w.size() < 2) return;
        if (auto major = number<int64_t>(w[0])) out[{section, *major}] = std::string(w[1]);
    });
    return out;
}

// DevicePolicy and DeviceAllow for the container's device rules (the
// configuration's and the defaults, as the cgroup files get them). A
// configuration that starts by denying everything (what clients send) is
// "strict" with its allow rules listed; one that allows everything at some
// point is "auto" with no list. A deny after the first rule cannot be said
// to systemd: its list then allows more than the container's own device
// filter, which still holds (both must allow a device).
void device_properties(const std::vector<oci::DeviceRule> &spec_rules,
                       std::string_view proc_devices, std::vector<UnitProperty> &out) {
    if (spec_rules.empty()) return;
    auto all = [](const oci::DeviceRule &r) {
        return (r.type.empty() || r.type == "a") && !r.major && !r.minor;
    };
    if (spec_rules.front().allow || !all(spec_rules.front())) {
        out.push_back(prop("DevicePolicy", "s", "auto"));
        return;
    }
    auto names = device_names(proc_devices);
    UnitProperty allow;
    allow.name = "DeviceAllow";
    allow.type = "a(ss)";
    std::vector<oci::DeviceRule> rules = effective_device_rules(spec_rules);
    for (size_t i = 1; i < rules.size(); i++) {
        const oci::DeviceRule &r = rules[i];
        if (!r.allow) continue;
        if (all(r)) {
            out.push_back(prop("DevicePolicy", "s", "auto"));
            return;
        }
        std::string access = r.access.empty() ? "rwm" : r.access;
        std::vector<char> types;
        if (r.type == "c" || r.type == "b")
            types.push_back(r.type[0]);
        else
            types = {'c', 'b'};
        for (char t : types) {
            std::string group = t == 'c' ? "char-" : "block-";
            if (!r.major) {
                allow.pairs.push_back({group + "*", access});
            } else if (!r.minor) {
                auto it = names.find({t, *r.major});
                if (it != names.end()) allow.pairs.push_back({group + it->second, access});
            } else {
                allow.pairs.push_back({std::string(t == 'c' ? "/dev/char/" : "/dev/block/") +
                                           std::to_string(*r.major) + ":" +
                                           std::to_string(*r.minor),
                                       access});
            }
        }
    }
    out.push_back(prop("DevicePolicy", "s", "strict"));
    out.push_back(std::move(allow));
}

} // namespace

Result<std::string> slice_cgroup(const std::string &slice) {
    if (slice == "-.slice") return std::string();
    const std::string suffix = ".slice";
    if (slice.size() <= suffix.size() ||
        slice.compare(slice.size() - suffix.size(), suffix.size(), suffix) != 0)
        return fail("\"" + slice + "\" is not a slice name (NAME.slice)");
    std::string base = slice.substr(0, slice.size() - suffix.size());
    if (!unit_chars(base) || base.front() == '-' || base.back() == '-' ||
        base.find("--") != std::string::npos)
        return fail("\"" + slice + "\" is not a valid slice name");
    // Each dash starts a level: a-b-c.slice is in a-b.slice, in a.slice.
    std::string path;
    for (size_t at = base.find('-');; at = base.find('-', at + 1)) {
        path += "/" + base.substr(0, at) + suffix;
        if (at == std::string::npos) break;
    }
    return path;
}

Result<SystemdScope> systemd_scope(const std::string &cgroups_path, const std::string &id,
                                   bool user) {
    const char *default_slice = user ? "user.slice" : "system.slice";
    std::string path =
        cgroups_path.empty() ? std::string(default_slice) + ":oci-run:" + id : cgroups_path;
    size_t c1 = path.find(':');
    size_t c2 = c1 == std::string::npos ? c1 : path.find(':', c1 + 1);
    if (c2 == std::string::npos || path.find(':', c2 + 1) != std::string::npos)
        return bad_path(path, "--systemd-cgroup takes slice:prefix:name");
    SystemdScope s;
    s.id = id;
    s.user = user;
    s.slice = path.substr(0, c1);
    if (s.slice.empty()) s.slice = default_slice;
    std::string prefix = path.substr(c1 + 1, c2 - c1 - 1), name = path.substr(c2 + 1);
    if (name.empty()) name = id;
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".slice") == 0)
        return bad_path(path, "a name ending in .slice makes a slice of its own, which oci-run "
                              "does not (use a scope: any other name)");
    if (!unit_chars(prefix) || !unit_chars(name))
        return bad_path(path, "the prefix and name may hold only letters, digits, ':', '-', "
                              "'_' and '.'");
    s.unit = (prefix.empty() ? "" : prefix + "-") + name + ".scope";
    if (s.unit.size() > 255) return bad_path(path, "the unit name is longer than 255 bytes");
    auto slice_path = slice_cgroup(s.slice);
    if (!slice_path) return bad_path(path, slice_path.error().text());
    s.cgroup = *slice_path + "/" + s.unit;
    return s;
}

Result<std::vector<UnitProperty>>
systemd_properties(const oci::Resources &r, const CgroupHost &host, std::string_view proc_devices) {
    std::vector<UnitProperty> out;
    auto v2 = [&](const char *controller) {
        const Hierarchy *h = host.for_controller(controller);
        return h && h->version == 2;
    };
    if (r.memory) {
        const oci::Memory &m = *r.memory;
        auto bytes = [](int64_t v) { return v < 0 ? kInfinity : static_cast<uint64_t>(v); };
        if (v2("memory")) {
            if (m.limit) out.push_back(u64("MemoryMax", bytes(*m.limit)));
            if (m.reservation) out.push_back(u64("MemoryLow", bytes(*m.reservation)));
            // runtime-spec's swap is memory+swap; v2's swap.max is swap alone.
            if (m.swap) {
                if (*m.swap < 0)
                    out.push_back(u64("MemorySwapMax", kInfinity));
                else if (m.limit && *m.limit >= 0 && *m.swap >= *m.limit)
                    out.push_back(u64("MemorySwapMax", static_cast<uint64_t>(*m.swap - *m.limit)));
            }
        } else if (m.limit) {
            out.push_back(u64("MemoryLimit", bytes(*m.limit)));
        }
    }
    if (r.cpu) {
        const oci::Cpu &c = *r.cpu;
        if (c.shares && *c.shares > 0) {
            if (v2("cpu"))
                out.push_back(u64("CPUWeight", cpu_shares_to_weight(*c.shares)));
            else
                out.push_back(u64("CPUShares", *c.shares));
        }
        uint64_t period = c.period && *c.period > 0 ? *c.period : 100000;
        if (c.period && *c.period > 0) out.push_back(u64("CPUQuotaPeriodUSec", period));
        if (c.quota) {
            uint64_t per_sec = kInfinity;
            if (*c.quota > 0) {
                per_sec = static_cast<uint64_t>(*c.quota) * 1000000 / period;
                // systemd keeps the quota in units of 10 ms per second.
                if (per_sec % 10000) per_sec = (per_sec / 10000 + 1) * 10000;
            }
            out.push_back(u64("CPUQuotaPerSecUSec", per_sec));
        }
        if (v2("cpuset")) {
            if (!c.cpus.empty()) {
                UnitProperty p = prop("AllowedCPUs", "ay", "");
                p.bytes = OCI_TRY(cpu_mask(c.cpus, "linux.resources.cpu.cpus"));
                out.push_back(std::move(p));
            }
            if (!c.mems.empty()) {
                UnitProperty p = prop("AllowedMemoryNodes", "ay", "");
                p.bytes = OCI_TRY(cpu_mask(c.mems, "linux.resources.cpu.mems"));
                out.push_back(std::move(p));
            }
        }
    }
    if (r.pids && r.pids->limit) {
        std::string v = pids_max_value(*r.pids->limit);
        out.push_back(u64("TasksMax", v == "max" ? kInfinity : std::stoull(v)));
    }
    if (r.block_io && r.block_io->weight) {
        if (v2("io"))
            out.push_back(u64("IOWeight", blkio_weight_to_io_weight(*r.block_io->weight)));
        else
            out.push_back(u64("BlockIOWeight", *r.block_io->weight));
    }
    device_properties(r.devices, proc_devices, out);
    return out;
}

std::string scope_description(const std::string &id) {
    return "oci-run container " + id;
}

std::vector<UnitProperty> scope_properties(const SystemdScope &s, const std::string &id) {
    std::vector<UnitProperty> out = {
        prop("Slice", "s", s.slice),           prop("Description", "s", scope_description(id)),
        prop("Delegate", "b", "true"),         prop("DefaultDependencies", "b", "false"),
        prop("MemoryAccounting", "b", "true"), prop("CPUAccounting", "b", "true"),
        prop("TasksAccounting", "b", "true"),
    };
    return out;
}

std::string systemd_request(const std::vector<UnitProperty> &props, int pid) {
    json::Writer w;
    w.begin_object().kv_i64("pid", pid).key("properties").begin_array();
    for (const auto &p : props) {
        w.begin_object().kv("name", p.name).kv("type", p.type);
        if (p.type == "ay") {
            w.key("bytes").begin_array();
            for (uint8_t b : p.bytes)
                w.u64(b);
            w.end_array();
        } else if (p.type == "a(ss)") {
            w.key("pairs").begin_array();
            for (const auto &[a, b] : p.pairs)
                w.begin_array().str(a).str(b).end_array();
            w.end_array();
        } else {
            w.kv("value", p.value);
        }
        w.end_object();
    }
    w.end_array().end_object();
    return std::string(w.view());
}

} // namespace ocirun
