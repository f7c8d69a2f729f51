#include "runtime/lifecycle/record.hpp"

#include "oci/json.hpp"

namespace ocirun {

std::string write_record(const ContainerRecord &rec) {
    json::Writer w(false);
    write_record(w, rec);
    return std::string(w.view());
}

void write_record(json::Writer &w, const ContainerRecord &rec) {
    w.begin_object();
    oci::write_state_members(w, rec.state);
    w.kv_u64("initStartTime", rec.init_start_time);
    w.kv("created", rec.created);
    w.kv("rootfs", rec.rootfs);
    w.kv_u64("owner", rec.owner);
    w.kv_bool("started", rec.started);
    w.kv_bool("hasHooks", rec.has_hooks);
    if (!rec.cgroup_dirs.empty()) w.kv_strings("cgroupDirs", rec.cgroup_dirs);
    if (!rec.cgroup_dirs.empty()) w.kv("cgroupsPath", rec.cgroups_path);
    if (rec.systemd_cgroup) w.kv_bool("systemdCgroup", true);
    if (rec.systemd_user) w.kv_bool("systemdUser", true);
    if (rec.init_pidns) w.kv_u64("initPidNamespace", rec.init_pidns);
    if (rec.own_pidns) w.kv_bool("ownPidNamespace", true);
    if (rec.release_pipe) {
        w.kv_u64("releaseFd", rec.release_fd).kv_u64("releasePipe", rec.release_pipe);
        w.kv_u64("resultFd", rec.result_fd).kv_u64("resultPipe", rec.result_pipe);
    }
    if (rec.sandboxed) w.kv_bool("sandboxed", true);
    if (!rec.fs_rules.empty()) {
        w.key("fsRules").begin_array();
        for (const auto &r : rec.fs_rules) {
            w.begin_object().kv("kind", r.kind).kv("path", r.path).kv("resolved", r.resolved);
            if (r.made) w.kv_bool("made", true);
            if (!r.ways.empty()) {
                w.key("ways").begin_array();
                for (const auto &way : r.ways)
                    w.begin_object().kv("path", way.path).kv("how", way.how).end_object();
                w.end_array();
            }
            w.end_object();
        }
        w.end_array();
    }
    if (!rec.placeholders.empty()) {
        w.key("placeholders").begin_array();
        for (const auto &p : rec.placeholders)
            w.begin_object()
                .kv("path", p.path)
                .kv_u64("dev", p.dev)
                .kv_u64("ino", p.ino)
                .end_object();
        w.end_array();
    }
    if (rec.trace) w.kv_bool("trace", true);
    if (rec.shim_pid > 0) {
        w.kv_u64("shimPid", static_cast<uint64_t>(rec.shim_pid));
        w.kv_u64("shimStartTime", rec.shim_start_time);
    }
    if (rec.netns_ino) {
        w.kv_u64("netnsDevice", rec.netns_dev);
        w.kv_u64("netnsInode", rec.netns_ino);
    }
    if (rec.firewall) w.kv_bool("firewall", true);
    w.opt_str("networkOwner", rec.network_owner);
    if (rec.policy_recorded) w.kv_map("policyKeys", rec.policy_keys);
    w.end_object();
}

Result<ContainerRecord> parse_record(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    yajl_val top = doc.root();
    if (!YAJL_IS_OBJECT(top)) return fail("expected a JSON object at the top level");
    json::Path p;
    ContainerRecord rec;
    OCI_CHECK(oci::parse_state_members(top, p, rec.state));
    OCI_CHECK(json::get_uint(top, p, "initStartTime", rec.init_start_time, UINT64_MAX));
    OCI_CHECK(json::get_string(top, p, "created", rec.created));
    OCI_CHECK(json::get_string(top, p, "rootfs", rec.rootfs));
    OCI_CHECK(json::get_uint(top, p, "owner", rec.owner, UINT32_MAX));
    OCI_CHECK(json::get_bool(top, p, "started", rec.started));
    OCI_CHECK(json::get_bool(top, p, "hasHooks", rec.has_hooks));
    OCI_CHECK(json::get_strings(top, p, "cgroupDirs", rec.cgroup_dirs));
    rec.cgroups_path_recorded = json::member(top, "cgroupsPath") != nullptr;
    OCI_CHECK(json::get_string(top, p, "cgroupsPath", rec.cgroups_path));
    OCI_CHECK(json::get_bool(top, p, "systemdCgroup", rec.systemd_cgroup));
    OCI_CHECK(json::get_bool(top, p, "systemdUser", rec.systemd_user));
    OCI_CHECK(json::get_uint(top, p, "initPidNamespace", rec.init_pidns, UINT64_MAX));
    OCI_CHECK(json::get_bool(top, p, "ownPidNamespace", rec.own_pidns));
    OCI_CHECK(json::get_uint(top, p, "releaseFd", rec.release_fd, INT32_MAX));
    OCI_CHECK(json::get_uint(top, p, "releasePipe", rec.release_pipe, UINT64_MAX));
    OCI_CHECK(json::get_uint(top, p, "resultFd", rec.result_fd, INT32_MAX));
    OCI_CHECK(json::get_uint(top, p, "resultPipe", rec.result_pipe, UINT64_MAX));
    OCI_CHECK(json::get_bool(top, p, "sandboxed", rec.sandboxed));
    OCI_CHECK(
        json::for_each_object(top, p, "fsRules", [&](yajl_val o, const json::Path &ip) -> Status {
            FsRuleRecord r;
            OCI_CHECK(json::get_string(o, ip, "kind", r.kind, true));
            OCI_CHECK(json::get_string(o, ip, "path", r.path, true));
            OCI_CHECK(json::get_string(o, ip, "resolved", r.resolved, true));
            OCI_CHECK(json::get_bool(o, ip, "made", r.made));
            OCI_CHECK(json::for_each_object(
                o, ip, "ways", [&](yajl_val wo, const json::Path &wp) -> Status {
                    FsWayRecord way;
                    OCI_CHECK(json::get_string(wo, wp, "path", way.path));
                    OCI_CHECK(json::get_string(wo, wp, "how", way.how, true));
                    r.ways.push_back(std::move(way));
                    return {};
                }));
            rec.fs_rules.push_back(std::move(r));
            return {};
        }));
    OCI_CHECK(json::for_each_object(
        top, p, "placeholders", [&](yajl_val o, const json::Path &ip) -> Status {
            PlaceholderRecord r;
            OCI_CHECK(json::get_string(o, ip, "path", r.path, true));
            OCI_CHECK(json::get_uint(o, ip, "dev", r.dev, UINT64_MAX, true));
            OCI_CHECK(json::get_uint(o, ip, "ino", r.ino, UINT64_MAX, true));
            rec.placeholders.push_back(std::move(r));
            return {};
        }));
    OCI_CHECK(json::get_bool(top, p, "trace", rec.trace));
    OCI_CHECK(json::get_uint(top, p, "shimPid", rec.shim_pid, INT32_MAX));
    OCI_CHECK(json::get_uint(top, p, "shimStartTime", rec.shim_start_time, UINT64_MAX));
    OCI_CHECK(json::get_uint(top, p, "netnsDevice", rec.netns_dev, UINT64_MAX));
    OCI_CHECK(json::get_uint(top, p, "netnsInode", rec.netns_ino, UINT64_MAX));
    OCI_CHECK(json::get_bool(top, p, "firewall", rec.firewall));
    OCI_CHECK(json::get_string(top, p, "networkOwner", rec.network_owner));
    rec.policy_recorded = json::member(top, "policyKeys") != nullptr;
    OCI_CHECK(json::get_string_map(top, p, "policyKeys", rec.policy_keys));
    return rec;
}

} // namespace ocirun
