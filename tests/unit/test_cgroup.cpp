// The cgroup code without root: host detection from mountinfo text, where a
// container's cgroup goes, linux.resources planned for v1, v2 and hybrid
// hosts, the v2 device program run through a small eBPF interpreter, update's
// merge, and the applier against a directory tree laid out like a v2
// hierarchy.
#include "oci/spec_io.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/device_filter.hpp"
#include "runtime/lifecycle/update.hpp"
#include "unit_support.hpp"

#include <sys/stat.h>

#include <string>
#include <vector>

using namespace ocirun;
using unit::expect_eq;

namespace {

// This project's CI host: v1 controllers, a named systemd hierarchy and the
// v2 "unified" mount; the runtime's memory cgroup is not the root.
const char *kHybridMountinfo =
    "25 1 0:23 / /sys rw - sysfs sysfs rw\n"
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "35 30 0:32 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char *kHybridSelf = "9:name=systemd:/\n8:pids:/\n6:freezer:/\n5:devices:/\n"
                          "4:memory:/process_api/abc\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n";

const char *kV2Mountinfo =
    "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";
const char *kV2Self = "0::/user.slice/user-1000.slice/session-2.scope\n";

const char *kV1Mountinfo =
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/net_cls,net_prio rw - cgroup cgroup rw,net_cls,net_prio\n";
const char *kV1Self = "4:pids:/\n3:memory:/\n2:cpu,cpuacct:/\n1:net_cls,net_prio:/\n";

CgroupHost parse(const char *mi, const char *self) {
    auto h = parse_cgroup_host(mi, self);
    cr_assert(h.has_value(), "%s", h ? "" : h.error().text().c_str());
    return *h;
}

CgroupHost hybrid() {
    CgroupHost h = parse(kHybridMountinfo, kHybridSelf);
    for (auto &x : h.hierarchies)
        if (x.version == 2) x.controllers = {"hugetlb"};
    return h;
}

CgroupHost v2() {
    CgroupHost h = parse(kV2Mountinfo, kV2Self);
    h.hierarchies[0].controllers = {"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma"};
    return h;
}

// "file=value" per write, in order.
std::string plan_text(const oci::Resources &r, const CgroupHost &h) {
    auto p = plan_resources(r, h);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    std::string out;
    for (const auto &w : *p)
        out += (w.controller.empty() ? "" : w.controller + ":") + w.file + "=" + w.value + "\n";
    return out;
}

std::string plan_error(const oci::Resources &r, const CgroupHost &h) {
    auto p = plan_resources(r, h);
    cr_assert(!p.has_value(), "planned without error");
    return p.error().text();
}

} // namespace

// ---- host -----------------------------------------------------------------

Test(cgroup_host, hybrid) {
    CgroupHost h = hybrid();
    cr_assert_eq(h.hierarchies.size(), 9u);
    cr_assert(!h.pure_v2());
    cr_assert(h.unified() != nullptr);
    expect_eq(h.unified()->mount, "/sys/fs/cgroup/unified");
    expect_eq(h.for_controller("pids")->mount, "/sys/fs/cgroup/pids");
    cr_assert_eq(h.for_controller("pids")->version, 1);
    expect_eq(h.for_controller("memory")->own, "/process_api/abc");
    expect_eq(h.for_controller("hugetlb")->mount, "/sys/fs/cgroup/unified");
    cr_assert(h.for_controller("net_cls") == nullptr);
}

Test(cgroup_host, pure_v2) {
    CgroupHost h = v2();
    cr_assert(h.pure_v2());
    expect_eq(h.unified()->own, "/user.slice/user-1000.slice/session-2.scope");
    cr_assert_eq(h.for_controller("pids"), h.unified());
}

Test(cgroup_host, pure_v1_with_joined_controllers) {
    CgroupHost h = parse(kV1Mountinfo, kV1Self);
    cr_assert(h.unified() == nullptr);
    cr_assert(!h.pure_v2());
    expect_eq(h.for_controller("cpuacct")->mount, "/sys/fs/cgroup/cpu,cpuacct");
    expect_eq(h.for_controller("net_prio")->mount, "/sys/fs/cgroup/net_cls,net_prio");
}

Test(cgroup_host, escaped_mount_point) {
    CgroupHost h =
        parse("40 30 0:37 / /sys/fs/cgroup/with\\040space rw - cgroup2 cgroup2 rw\n", "0::/\n");
    expect_eq(h.unified()->mount, "/sys/fs/cgroup/with space");
}

// ---- where the container's cgroup goes ---------------------------------------

Test(cgroup_dirs, default_is_relative_to_own_or_its_parent_on_v2) {
    auto d = cgroup_dirs_for(hybrid(), "", "c1");
    cr_assert(d.has_value());
    std::string all;
    for (const auto &x : *d)
        all += x + "\n";
    cr_assert(all.find("/sys/fs/cgroup/memory/process_api/abc/oci-run/c1\n") != std::string::npos,
              "%s", all.c_str());
    cr_assert(all.find("/sys/fs/cgroup/pids/oci-run/c1\n") != std::string::npos);
    cr_assert(all.find("/sys/fs/cgroup/unified/oci-run/c1\n") != std::string::npos);
    auto v = cgroup_dirs_for(v2(), "", "c1");
    expect_eq((*v)[0], "/sys/fs/cgroup/user.slice/user-1000.slice/oci-run/c1");
}

Test(cgroup_dirs, absolute_and_refusals) {
    auto d = cgroup_dirs_for(v2(), "/machine/c1", "c1");
    expect_eq((*d)[0], "/sys/fs/cgroup/machine/c1");
    auto dots = cgroup_dirs_for(v2(), "a/../../b", "c1");
    cr_assert(!dots.has_value());
    cr_assert(dots.error().text().find("must not contain \"..\"") != std::string::npos);
    auto root = cgroup_dirs_for(v2(), "/", "c1");
    cr_assert(!root.has_value());
}

// A v1 hierarchy of cpuset alone is left out (when the caller decides so);
// cpuset co-mounted with another controller, and v2's cpuset, are not.
Test(cgroup_dirs, only_a_v1_hierarchy_of_cpuset_alone_is_left_out) {
    CgroupHost h = hybrid();
    auto d = cgroup_dirs_for(h, "", "c1");
    cr_assert(d.has_value());
    size_t n = d->size();
    leave_out_v1_cpuset(h, *d);
    cr_assert_eq(d->size(), n - 1);
    for (const auto &x : *d)
        cr_assert(x.find("/cpuset/") == std::string::npos, "%s", x.c_str());
    for (auto &x : h.hierarchies)
        if (x.has("cpuset")) x.controllers = {"cpu", "cpuset"};
    auto co = cgroup_dirs_for(h, "", "c1");
    leave_out_v1_cpuset(h, *co);
    cr_assert_eq(co->size(), n);
    auto v = cgroup_dirs_for(v2(), "", "c1");
    leave_out_v1_cpuset(v2(), *v);
    cr_assert_eq(v->size(), 1u);

    std::optional<oci::Resources> r;
    cr_assert(!sets_cpuset(r));
    r.emplace().cpu.emplace().shares = 10;
    cr_assert(!sets_cpuset(r));
    r->cpu->mems = "0";
    cr_assert(sets_cpuset(r));
}

// ---- planning ----------------------------------------------------------------

Test(cgroup_plan, v1_memory_pids_cpu) {
    oci::Resources r;
    r.pids.emplace().limit = -1;
    auto &m = r.memory.emplace();
    m.limit = 1000;
    m.swap = 2000;
    m.swappiness = 10;
    auto &c = r.cpu.emplace();
    c.shares = 512;
    c.quota = 5000;
    c.period = 10000;
    c.cpus = "0-1";
    expect_eq(plan_text(r, hybrid()), "pids:pids.max=max\n"
                                      "memory:memory.limit_in_bytes=1000\n"
                                      "memory:memory.memsw.limit_in_bytes=2000\n"
                                      "memory:memory.swappiness=10\n"
                                      "cpu:cpu.shares=512\n"
                                      "cpu:cpu.cfs_period_us=10000\n"
                                      "cpu:cpu.cfs_quota_us=5000\n"
                                      "cpuset:cpuset.cpus=0-1\n");
    auto p = plan_resources(r, hybrid());
    cr_assert((*p)[1].retry_after_next, "limit then memsw must be reorderable");
    cr_assert((*p)[5].retry_after_next, "period then quota must be reorderable");
    cr_assert(!(*p)[6].retry_after_next);
}

// runtime-spec 1.3 pids.limit: unset writes nothing, 0 is a limit of 0, -1
// is "max"; a config older than 1.3 meant no limit by 0 (parse_spec turns
// it into -1).
Test(cgroup_plan, pids_limit_as_runtime_spec_1_3) {
    oci::Resources r;
    r.pids.emplace();
    expect_eq(plan_text(r, v2()), "");
    r.pids->limit = 0;
    expect_eq(plan_text(r, v2()), "pids.max=0\n");
    r.pids->limit = -1;
    expect_eq(plan_text(r, v2()), "pids.max=max\n");
    auto spec_with = [](const char *version) {
        return oci::parse_spec(std::string(R"({"ociVersion": ")") + version +
                               R"(", "linux": {"resources": {"pids": {"limit": 0}}}})");
    };
    for (const char *old : {"1.0.2-dev", "1.1.0", "1.2.1"}) {
        auto s = spec_with(old);
        cr_assert(s.has_value());
        cr_assert_eq(*s->linux_->resources->pids->limit, -1, "%s", old);
    }
    for (const char *now : {"1.3.0", "1.3.0-rc.1", "1.10.0"}) {
        auto s = spec_with(now);
        cr_assert(s.has_value());
        cr_assert_eq(*s->linux_->resources->pids->limit, 0, "%s", now);
    }
}

Test(cgroup_plan, v2_conversions) {
    oci::Resources r;
    r.pids.emplace().limit = 64;
    auto &m = r.memory.emplace();
    m.limit = 1000;
    m.swap = 3000;
    m.reservation = 500;
    auto &c = r.cpu.emplace();
    c.shares = 1024;
    c.period = 50000;
    auto &b = r.block_io.emplace();
    b.weight = 500;
    b.throttle_read_bps.push_back({8, 0, 1048576});
    r.hugepage_limits.push_back({"2MB", 4194304});
    expect_eq(plan_text(r, v2()), "pids.max=64\n"
                                  "memory.max=1000\n"
                                  "memory.swap.max=2000\n"
                                  "memory.low=500\n"
                                  "cpu.weight=39\n"
                                  "cpu.max=max 50000\n"
                                  "io.weight=default 4950\n"
                                  "io.max=8:0 rbps=1048576\n"
                                  "hugetlb.2MB.max=4194304\n");
    cr_assert_eq(cpu_shares_to_weight(2), 1u);
    cr_assert_eq(cpu_shares_to_weight(262144), 10000u);
    cr_assert_eq(blkio_weight_to_io_weight(10), 1u);
    cr_assert_eq(blkio_weight_to_io_weight(1000), 10000u);
}

Test(cgroup_plan, v2_unlimited_memory_means_unlimited_swap) {
    oci::Resources r;
    r.memory.emplace().limit = -1;
    expect_eq(plan_text(r, v2()), "memory.max=max\nmemory.swap.max=max\n");
}

Test(cgroup_plan, hybrid_hugetlb_goes_to_the_unified_hierarchy) {
    oci::Resources r;
    r.hugepage_limits.push_back({"1GB", 0});
    expect_eq(plan_text(r, hybrid()), "hugetlb.1GB.max=0\n");
}

Test(cgroup_plan, what_a_host_cannot_apply_is_an_error) {
    oci::Resources sw;
    sw.memory.emplace().swappiness = 5;
    cr_assert(plan_error(sw, v2()).find("swappiness: not available on cgroup v2") !=
              std::string::npos);
    oci::Resources rt;
    rt.cpu.emplace().realtime_runtime = 100;
    cr_assert(plan_error(rt, v2()).find("realtime") != std::string::npos);
    oci::Resources net;
    net.network.emplace().class_id = 1;
    cr_assert(plan_error(net, hybrid()).find("needs the cgroup v1 net_cls controller") !=
              std::string::npos);
    oci::Resources uni;
    uni.unified["pids.max"] = "5";
    cr_assert(plan_error(uni, parse(kV1Mountinfo, kV1Self))
                  .find("this host has no cgroup v2 hierarchy") != std::string::npos);
    cr_assert(plan_error(uni, hybrid())
                  .find("the pids controller is not available in this "
                        "host's cgroup v2 hierarchy") != std::string::npos);
    oci::Resources path;
    path.unified["../../etc/passwd"] = "x";
    cr_assert(plan_error(path, v2()).find("not a cgroup file name") != std::string::npos);
    oci::Resources swap;
    swap.memory.emplace().swap = 100;
    cr_assert(plan_error(swap, v2()).find("a swap limit needs a memory limit") !=
              std::string::npos);
    CgroupHost nopids = v2();
    nopids.hierarchies[0].controllers = {"memory"};
    oci::Resources p;
    p.pids.emplace().limit = 3;
    expect_eq(plan_error(p, nopids),
              "linux.resources.pids.limit: the pids cgroup controller is not available on this "
              "host");
}

Test(cgroup_plan, unified_keys_on_v2) {
    oci::Resources r;
    r.unified["memory.high"] = "1000";
    r.unified["cgroup.max.depth"] = "3";
    expect_eq(plan_text(r, v2()), "cgroup.max.depth=3\nmemory.high=1000\n");
}

Test(cgroup_plan, v1_device_rules_then_defaults) {
    oci::Resources r;
    oci::DeviceRule deny;
    deny.access = "rwm";
    r.devices.push_back(deny);
    oci::DeviceRule fuse;
    fuse.allow = true;
    fuse.type = "c";
    fuse.major = 10;
    fuse.minor = 229;
    fuse.access = "rw";
    r.devices.push_back(fuse);
    std::string t = plan_text(r, hybrid());
    cr_assert(t.rfind("devices:devices.deny=a\ndevices:devices.allow=c 10:229 rw\n"
                      "devices:devices.allow=c *:* m\n",
                      0) == 0,
              "%s", t.c_str());
    cr_assert(t.find("devices:devices.allow=c 136:* rwm\n") != std::string::npos, "%s", t.c_str());
    // linux.devices is not in the plan: it adds nodes, not rules (as runc).
    cr_assert(t.find("b 8:0") == std::string::npos, "%s", t.c_str());
}

Test(cgroup_plan, v2_device_rules_become_one_program) {
    oci::Resources r;
    oci::DeviceRule deny;
    deny.access = "rwm";
    r.devices.push_back(deny);
    auto p = plan_resources(r, v2());
    cr_assert(p.has_value());
    cr_assert_eq(p->size(), 1u);
    expect_eq((*p)[0].file, kDeviceProgram);
    cr_assert_gt((*p)[0].device_rules.size(), 10u); // the rule, then the defaults
    cr_assert(!(*p)[0].device_rules[0].allow);
}

// ---- the v2 device program ------------------------------------------------------

namespace {

// Just the instructions device_program emits.
int run_program(const std::vector<struct bpf_insn> &prog, char type, const char *access,
                uint32_t major, uint32_t minor) {
    uint32_t acc = 0;
    for (const char *a = access; *a; a++)
        acc |= *a == 'r'   ? BPF_DEVCG_ACC_READ
               : *a == 'w' ? BPF_DEVCG_ACC_WRITE
                           : BPF_DEVCG_ACC_MKNOD;
    uint32_t ctx[3] = {(acc << 16) | (type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK),
                       major, minor};
    uint64_t reg[11] = {};
    for (size_t pc = 0; pc < prog.size(); pc++) {
        const auto &i = prog[pc];
        uint64_t k = static_cast<uint64_t>(static_cast<int64_t>(i.imm));
        switch (i.code) {
        case BPF_LDX | BPF_W | BPF_MEM:
            reg[i.dst_reg] = ctx[i.off / 4];
            break;
        case BPF_ALU | BPF_AND | BPF_K:
            reg[i.dst_reg] = (reg[i.dst_reg] & k) & 0xffffffffu;
            break;
        case BPF_ALU | BPF_RSH | BPF_K:
            reg[i.dst_reg] = (reg[i.dst_reg] & 0xffffffffu) >> k;
            break;
        case BPF_ALU | BPF_MOV | BPF_X:
            reg[i.dst_reg] = reg[i.src_reg] & 0xffffffffu;
            break;
        case BPF_ALU64 | BPF_MOV | BPF_K:
            reg[i.dst_reg] = k;
            break;
        case BPF_JMP | BPF_JNE | BPF_K:
            if (reg[i.dst_reg] != k) pc += static_cast<size_t>(i.off);
            break;
        case BPF_JMP | BPF_JEQ | BPF_K:
            if (reg[i.dst_reg] == k) pc += static_cast<size_t>(i.off);
            break;
        case BPF_JMP | BPF_EXIT:
            return static_cast<int>(reg[0]);
        default:
            cr_assert_fail("unexpected instruction 0x%x", i.code);
        }
    }
    cr_assert_fail("the program ran off its end");
    return -1;
}

oci::DeviceRule dr(bool allow, const char *type, int64_t major, int64_t minor, const char *acc) {
    oci::DeviceRule r;
    r.allow = allow;
    r.type = type;
    if (major >= 0) r.major = major;
    if (minor >= 0) r.minor = minor;
    r.access = acc;
    return r;
}

} // namespace

Test(device_program, no_rules_allows) {
    auto p = device_program({});
    cr_assert_eq(run_program(p, 'c', "rwm", 1, 3), 1);
}

Test(device_program, deny_all_then_allow_one) {
    auto p = device_program({dr(false, "a", -1, -1, "rwm"), dr(true, "c", 1, 3, "rw")});
    cr_assert_eq(run_program(p, 'c', "r", 1, 3), 1);
    cr_assert_eq(run_program(p, 'c', "rw", 1, 3), 1);
    cr_assert_eq(run_program(p, 'c', "m", 1, 3), 0, "mknod was not granted");
    cr_assert_eq(run_program(p, 'c', "r", 1, 5), 0);
    cr_assert_eq(run_program(p, 'b', "r", 1, 3), 0);
}

Test(device_program, last_match_wins_and_deny_needs_any_access) {
    auto p = device_program({dr(true, "a", -1, -1, "rwm"), dr(false, "c", 1, 3, "w")});
    cr_assert_eq(run_program(p, 'c', "r", 1, 3), 1);
    cr_assert_eq(run_program(p, 'c', "rw", 1, 3), 0);
    cr_assert_eq(run_program(p, 'c', "w", 1, 4), 1);
}

Test(device_program, wildcards) {
    auto p = device_program(
        {dr(false, "a", -1, -1, "rwm"), dr(true, "c", -1, -1, "m"), dr(true, "c", 136, -1, "rwm")});
    cr_assert_eq(run_program(p, 'c', "m", 8, 1), 1);
    cr_assert_eq(run_program(p, 'b', "m", 8, 1), 0);
    cr_assert_eq(run_program(p, 'c', "rw", 136, 7), 1);
    cr_assert_eq(run_program(p, 'c', "r", 137, 7), 0);
}

// ---- update's merge ----------------------------------------------------------------

Test(cgroup_update, merge_keeps_what_the_delta_does_not_set) {
    oci::Resources into;
    into.memory.emplace().limit = 100;
    into.memory->swap = 200;
    into.pids.emplace().limit = 5;
    into.hugepage_limits.push_back({"2MB", 1});
    oci::Resources d;
    d.memory.emplace().limit = 150;
    d.hugepage_limits.push_back({"2MB", 9});
    d.hugepage_limits.push_back({"1GB", 2});
    d.cpu.emplace().cpus = "1";
    merge_resources(into, d);
    cr_assert_eq(*into.memory->limit, 150);
    cr_assert_eq(*into.memory->swap, 200);
    cr_assert_eq(into.pids->limit, 5);
    cr_assert_eq(into.hugepage_limits.size(), 2u);
    cr_assert_eq(into.hugepage_limits[0].limit, 9u);
    expect_eq(into.cpu->cpus, "1");
}

// ---- the applier on a tree laid out like a v2 hierarchy -------------------------------

namespace {

// A fake v2 mount: the root offers pids and memory; nothing enabled yet.
CgroupHost fake_v2(const std::string &mount) {
    std::string mi = "29 23 0:26 / " + mount + " rw - cgroup2 cgroup2 rw\n";
    CgroupHost h = parse(mi.c_str(), "0::/\n");
    h.hierarchies[0].controllers = {"pids", "memory"};
    unit::write_file(mount + "/cgroup.controllers", "pids memory\n");
    unit::write_file(mount + "/cgroup.subtree_control", "");
    return h;
}

} // namespace

Test(cgroup_apply, writes_files_in_the_containers_directory) {
    std::string root = unit::make_tmpdir();
    CgroupHost h = fake_v2(root);
    std::string dir = root + "/c1";
    ::mkdir(dir.c_str(), 0755);
    unit::write_file(dir + "/pids.max", "");
    unit::write_file(dir + "/io.weight", "");
    oci::Resources r;
    r.pids.emplace().limit = 7;
    auto writes = plan_resources(r, h);
    cr_assert(writes.has_value());
    auto ok = apply_cgroup_writes(h, {dir}, *writes);
    std::string pids = unit::must_read(dir + "/pids.max");
    oci::Resources mem;
    mem.memory.emplace().limit = 5;
    auto missing = apply_cgroup_writes(h, {dir}, *plan_resources(mem, h));
    unit::rm_rf(root);
    cr_assert(ok.has_value(), "%s", ok ? "" : ok.error().text().c_str());
    expect_eq(pids, "7");
    cr_assert(!missing.has_value());
    expect_eq(missing.error().text(),
              "linux.resources.memory.limit: this kernel has no memory.max: "
              "No such file or directory");
}

// create_cgroup enables the controllers the writes need in the parent, and
// takes back the directory it made when a write fails (this tree has no
// pids.max in the new directory, as a real kernel would).
Test(cgroup_apply, create_enables_controllers_and_undoes_on_failure) {
    std::string root = unit::make_tmpdir();
    CgroupHost h = fake_v2(root);
    oci::Resources r;
    r.pids.emplace().limit = 7;
    auto writes = plan_resources(r, h);
    auto made = create_cgroup(h, {root + "/oci-run/c1"}, *writes);
    std::string enabled = unit::must_read(root + "/cgroup.subtree_control");
    bool left = ::access((root + "/oci-run").c_str(), F_OK) == 0;
    unit::rm_rf(root);
    cr_assert(!made.has_value());
    expect_eq(enabled, "+pids");
    cr_assert(!left, "the directories made were not removed");
}

// update's device rules on v1: from deny-all + allows to deny-all + allows,
// the new entries are allowed first and the dropped ones denied after (no
// moment without /dev/null); on v2 one program that replaces the old.
Test(cgroup_plan, device_update_without_a_gap) {
    oci::DeviceRule deny, fuse;
    deny.allow = false;
    deny.access = "rwm";
    fuse.allow = true;
    fuse.type = "c";
    fuse.major = 10;
    fuse.minor = 229;
    fuse.access = "rw";
    auto text = [](const std::vector<CgroupWrite> &w) {
        std::string out;
        for (const auto &x : w)
            out += x.file + "=" + x.value + "\n";
        return out;
    };
    auto add = plan_device_update({deny}, {deny, fuse}, hybrid());
    cr_assert(add.has_value());
    expect_eq(text(*add), "devices.allow=c 10:229 rw\n");
    auto drop = plan_device_update({deny, fuse}, {deny}, hybrid());
    cr_assert(drop.has_value());
    std::string d = text(*drop);
    cr_assert(d.rfind("devices.deny=c 10:229 rw\n", 0) == 0, "%s", d.c_str());
    cr_assert(d.find("devices.deny=a") == std::string::npos, "a gap: %s", d.c_str());
    cr_assert(d.find("devices.allow=c 1:3 rwm\n") != std::string::npos, "%s", d.c_str());
    // Another shape (no deny-all first) is written whole.
    auto whole = plan_device_update({fuse}, {deny, fuse}, hybrid());
    cr_assert(whole.has_value());
    cr_assert(text(*whole).rfind("devices.deny=a\n", 0) == 0, "%s", text(*whole).c_str());
    auto v2plan = plan_device_update({deny}, {deny, fuse}, v2());
    cr_assert(v2plan.has_value());
    cr_assert_eq(v2plan->size(), 1u);
    cr_assert((*v2plan)[0].replace_programs);
}
