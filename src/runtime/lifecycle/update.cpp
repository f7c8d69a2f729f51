#include "runtime/lifecycle/update.hpp"

#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/systemd_driver.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/process/proc.hpp"

#include <unistd.h>

#include <algorithm>

namespace ocirun {

namespace {

template <typename T> void take(std::optional<T> &into, const std::optional<T> &from) {
    if (from) into = from;
}

// Current memory use, to refuse a limit below it (checkBeforeUpdate).
Result<int64_t> memory_usage(const CgroupHost &host, const std::vector<std::string> &dirs) {
    for (const auto &d : dirs) {
        const Hierarchy *h = hierarchy_of(host, d);
        if (!h || !h->has("memory")) continue;
        auto t =
            oci::read_file(d + (h->version == 1 ? "/memory.usage_in_bytes" : "/memory.current"));
        if (!t) return forward(std::move(t.error()));
        return static_cast<int64_t>(std::strtoll(t->c_str(), nullptr, 10));
    }
    return fail("no memory controller");
}

// cpus or mems for a container created without a v1 cpuset cgroup of its own
// (runtime/cgroups/cgroup.hpp v1_cpuset_only): it gets one where create would have
// made it, oci-run/<id> under the init's cpuset cgroup (the create caller's,
// which may not be ours), recorded before it is made so that delete finds it.
// A failure before the directory exists takes the record back; after, the
// directory stays recorded and the next update moves the processes again.
Status own_v1_cpuset(const CgroupHost &host, const ContainerDir &dir, ContainerRecord &rec) {
    for (const auto &h : host.hierarchies) {
        if (!v1_cpuset_only(h)) continue;
        std::string have;
        for (const auto &d : rec.cgroup_dirs)
            if (hierarchy_of(host, d) == &h) have = d;
        std::string init_at = v1_dir_of(h, rec.state.pid);
        if (init_at.empty()) return fail("cannot read the init's cpuset cgroup");
        if (init_at == have) return {};
        std::string target = have.empty() ? init_at + "/oci-run/" + dir.id() : have;
        std::vector<std::string> others;
        for (const auto &d : rec.cgroup_dirs)
            if (d != target) others.push_back(d);
        if (have.empty()) {
            rec.cgroup_dirs.push_back(target);
            OCI_CHECK(dir.save(rec));
        }
        auto r = add_v1_cpuset(host, others, target);
        if (!r && have.empty() && ::access(target.c_str(), F_OK) != 0) {
            rec.cgroup_dirs.pop_back();
            (void)dir.save(rec);
        }
        return r;
    }
    return {};
}

} // namespace

void merge_resources(oci::Resources &into, const oci::Resources &d) {
    if (d.memory) {
        auto &m = into.memory ? *into.memory : into.memory.emplace();
        take(m.limit, d.memory->limit);
        take(m.reservation, d.memory->reservation);
        take(m.swap, d.memory->swap);
        take(m.kernel, d.memory->kernel);
        take(m.kernel_tcp, d.memory->kernel_tcp);
        take(m.swappiness, d.memory->swappiness);
        take(m.disable_oom_killer, d.memory->disable_oom_killer);
        take(m.use_hierarchy, d.memory->use_hierarchy);
        take(m.check_before_update, d.memory->check_before_update);
    }
    if (d.cpu) {
        auto &c = into.cpu ? *into.cpu : into.cpu.emplace();
        take(c.shares, d.cpu->shares);
        take(c.quota, d.cpu->quota);
        take(c.burst, d.cpu->burst);
        take(c.period, d.cpu->period);
        take(c.realtime_runtime, d.cpu->realtime_runtime);
        take(c.realtime_period, d.cpu->realtime_period);
        take(c.idle, d.cpu->idle);
        if (!d.cpu->cpus.empty()) c.cpus = d.cpu->cpus;
        if (!d.cpu->mems.empty()) c.mems = d.cpu->mems;
    }
    if (d.pids) into.pids = d.pids;
    if (d.block_io) {
        auto &b = into.block_io ? *into.block_io : into.block_io.emplace();
        take(b.weight, d.block_io->weight);
        take(b.leaf_weight, d.block_io->leaf_weight);
        auto replace = [](auto &to, const auto &from) {
            if (!from.empty()) to = from;
        };
        replace(b.weight_device, d.block_io->weight_device);
        replace(b.throttle_read_bps, d.block_io->throttle_read_bps);
        replace(b.throttle_write_bps, d.block_io->throttle_write_bps);
        replace(b.throttle_read_iops, d.block_io->throttle_read_iops);
        replace(b.throttle_write_iops, d.block_io->throttle_write_iops);
    }
    for (const auto &h : d.hugepage_limits) {
        bool found = false;
        for (auto &o : into.hugepage_limits)
            if (o.page_size == h.page_size) {
                o.limit = h.limit;
                found = true;
            }
        if (!found) into.hugepage_limits.push_back(h);
    }
    if (d.network) into.network = d.network;
    for (const auto &[k, v] : d.rdma)
        into.rdma[k] = v;
    for (const auto &[k, v] : d.unified)
        into.unified[k] = v;
}

namespace {

// One device rule as the kernel reads it: type "" is "a", access a set.
bool same_rule(const oci::DeviceRule &a, const oci::DeviceRule &b) {
    auto type = [](const std::string &t) { return t.empty() ? std::string("a") : t; };
    auto access = [](std::string s) {
        if (s.empty()) s = "rwm";
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        return s;
    };
    return a.allow == b.allow && type(a.type) == type(b.type) && a.major == b.major &&
           a.minor == b.minor && access(a.access) == access(b.access);
}

} // namespace

Status update_container(const std::string &root, const std::string &id,
                        const oci::Resources &asked) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("update: container \"" + id + "\" is not running");
    if (rec.cgroup_dirs.empty())
        return fail("update: container \"" + id +
                    "\" has no cgroup (an unprivileged user's container without resources)");
    oci::Spec spec = OCI_TRY(dir.load_spec());
    oci::Resources &res =
        spec.linux_->resources ? *spec.linux_->resources : spec.linux_->resources.emplace();
    // Read as the container's config.json version reads it.
    oci::Resources delta = asked;
    oci::normalise_pids_limit(delta, spec.oci_version);
    // containerd's runc shim sends the container's whole resources on every
    // UpdateContainerResources, device rules included: the same rules are
    // no change; other rules replace the container's (as runc).
    const std::vector<oci::DeviceRule> devices_before = res.devices;
    bool new_devices =
        !delta.devices.empty() &&
        !(delta.devices.size() == res.devices.size() &&
          std::equal(delta.devices.begin(), delta.devices.end(), res.devices.begin(), same_rule));
    merge_resources(res, delta);
    if (new_devices) res.devices = delta.devices;
    CgroupHost host = OCI_TRY(detect_cgroup_host());
    OCI_CHECK(check_own_cgroup(host, rec));
    if (delta.memory && delta.memory->limit && *delta.memory->limit > 0 && res.memory &&
        res.memory->check_before_update.value_or(false)) {
        int64_t used = OCI_TRY(memory_usage(host, rec.cgroup_dirs));
        if (used > *delta.memory->limit)
            return fail("update: memory.limit " + std::to_string(*delta.memory->limit) +
                        " is below the container's current usage " + std::to_string(used) +
                        " (checkBeforeUpdate)");
    }
    // The whole merged set is written again (the same values are no-ops);
    // device rules only when they change, from what create set.
    oci::Resources apply = res;
    apply.devices.clear();
    auto writes = plan_resources(apply, host);
    if (!writes) return forward(std::move(writes.error()), "update");
    if (new_devices) {
        auto dev = plan_device_update(devices_before, res.devices, host);
        if (!dev) return forward(std::move(dev.error()), "update");
        writes->insert(writes->begin(), dev->begin(), dev->end());
    }
    // The new config.json is written before the cgroup is touched and put in
    // place after: on a full --root the update fails with nothing changed,
    // rather than limits applied that the container's record does not show.
    auto staged = oci::stage_file(dir.path() + "/config.json", oci::write_spec(spec, false));
    if (!staged) return forward(std::move(staged.error()), "update");
    if (sets_cpuset(delta))
        if (auto r = own_v1_cpuset(host, dir, rec); !r)
            return forward(std::move(r.error()), "update");
    // What systemd manages, through it (or its next reload would undo the
    // files), then the files.
    if (rec.systemd_cgroup) {
        auto scope = recorded_scope(rec);
        if (!scope) return forward(std::move(scope.error()), "update");
        oci::Resources props = res;
        if (!new_devices) props.devices.clear();
        auto p = resource_properties(props, host);
        if (!p) return forward(std::move(p.error()), "update");
        if (auto r = set_scope_properties(*scope, *p); !r)
            return forward(std::move(r.error()), "update");
    }
    if (auto r = apply_cgroup_writes(host, rec.cgroup_dirs, *writes); !r)
        return forward(std::move(r.error()), "update");
    if (auto r = staged->commit(); !r) return forward(std::move(r.error()), "update");
    return {};
}

} // namespace ocirun
