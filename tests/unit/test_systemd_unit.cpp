// The systemd cgroup driver's pure half (runtime/cgroups/systemd_unit.hpp):
// the scope "slice:prefix:name" names and where systemd puts its cgroup, and
// linux.resources as the unit properties systemd manages, on v1 and v2.
#include "runtime/cgroups/systemd_unit.hpp"
#include "unit_support.hpp"

#include <string>

using namespace ocirun;
using unit::expect_eq;

namespace {

CgroupHost host(const char *mountinfo, const char *self, std::vector<std::string> v2_controllers) {
    auto h = parse_cgroup_host(mountinfo, self);
    cr_assert(h.has_value(), "%s", h ? "" : h.error().text().c_str());
    for (auto &x : h->hierarchies)
        if (x.version == 2) x.controllers = v2_controllers;
    return *h;
}

CgroupHost v2() {
    return host("29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/init.scope\n",
                {"cpuset", "cpu", "io", "memory", "pids"});
}

CgroupHost v1() {
    return host("34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
                "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
                "32 30 0:29 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
                "35 30 0:32 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio\n"
                "38 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
                "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
                "5:pids:/\n4:blkio:/\n3:cpuset:/\n2:memory:/\n1:cpu:/\n0::/\n", {});
}

// name=TYPE:value (a(ss): the pairs, ay: the bytes in hex), in order.
std::string text(const std::vector<UnitProperty> &props) {
    std::string out;
    for (const auto &p : props) {
        out += p.name + "=" + p.type + ":";
        if (p.type == "a(ss)")
            for (const auto &[a, b] : p.pairs)
                out += "[" + a + " " + b + "]";
        else if (p.type == "ay")
            for (uint8_t b : p.bytes) {
                char h[4];
                std::snprintf(h, sizeof h, "%02x", b);
                out += h;
            }
        else
            out += p.value;
        out += "\n";
    }
    return out;
}

std::string refusal(const std::string &path) {
    auto s = systemd_scope(path, "c1");
    cr_assert(!s.has_value(), "%s accepted", path.c_str());
    return s.error().text();
}

} // namespace

Test(systemd_unit, slices_nest_by_their_dashes) {
    expect_eq(*slice_cgroup("system.slice"), "/system.slice");
    expect_eq(*slice_cgroup("a-b-c.slice"), "/a.slice/a-b.slice/a-b-c.slice");
    expect_eq(*slice_cgroup("-.slice"), "");
    for (const char *bad : {"a--b.slice", "-a.slice", "a-.slice", "system", ".slice", "a/b.slice"})
        cr_assert(!slice_cgroup(bad).has_value(), "%s accepted", bad);
}

Test(systemd_unit, scope_of_a_cgroups_path) {
    auto s = systemd_scope("system.slice:docker:abc", "c1");
    cr_assert(s.has_value());
    expect_eq(s->unit, "docker-abc.scope");
    expect_eq(s->slice, "system.slice");
    expect_eq(s->cgroup, "/system.slice/docker-abc.scope");
    auto d = systemd_scope("", "c1");
    expect_eq(d->unit, "oci-run-c1.scope");
    expect_eq(d->cgroup, "/system.slice/oci-run-c1.scope");
    auto n = systemd_scope("machine-pod.slice::x", "c1");
    expect_eq(n->unit, "x.scope");
    expect_eq(n->cgroup, "/machine.slice/machine-pod.slice/x.scope");
    auto e = systemd_scope(":libpod:", "c1");
    expect_eq(e->unit, "libpod-c1.scope");
    expect_eq(e->slice, "system.slice");
    auto root = systemd_scope("-.slice:p:n", "c1");
    expect_eq(root->cgroup, "/p-n.scope");
    cr_assert(refusal("/a/b").find("slice:prefix:name") != std::string::npos);
    cr_assert(refusal("a:b:c:d").find("slice:prefix:name") != std::string::npos);
    cr_assert(refusal("system:p:n").find("not a slice name") != std::string::npos);
    cr_assert(refusal("s.slice:p:n.slice").find("a slice of its own") != std::string::npos);
    cr_assert(refusal("s.slice:p:a b").find("may hold only") != std::string::npos);
    cr_assert(refusal("s.slice:p:" + std::string(300, 'x')).find("255") != std::string::npos);
    cr_assert(refusal("x").find("linux.cgroupsPath") == 0);
}

// In a user's manager (rootless), as runc: an empty slice is user.slice;
// the cgroup is relative to the manager's own, which the runtime asks for.
Test(systemd_unit, scope_in_a_users_manager) {
    auto d = systemd_scope("", "c1", true);
    cr_assert(d.has_value());
    cr_assert(d->user);
    expect_eq(d->unit, "oci-run-c1.scope");
    expect_eq(d->slice, "user.slice");
    expect_eq(d->cgroup, "/user.slice/oci-run-c1.scope");
    auto e = systemd_scope(":p:n", "c1", true);
    expect_eq(e->slice, "user.slice");
    auto named = systemd_scope("user-x.slice:p:n", "c1", true);
    expect_eq(named->cgroup, "/user.slice/user-x.slice/p-n.scope");
    cr_assert(!systemd_scope("", "c1")->user);
}

Test(systemd_unit, resources_as_v2_properties) {
    oci::Resources r;
    auto &m = r.memory.emplace();
    m.limit = 64 << 20;
    m.reservation = 32 << 20;
    m.swap = 96 << 20;
    auto &c = r.cpu.emplace();
    c.shares = 1024;
    c.quota = 12345;
    c.period = 100000;
    c.cpus = "0-2,9";
    c.mems = "0";
    r.pids.emplace().limit = -1;
    r.block_io.emplace().weight = 500;
    auto p = systemd_properties(r, v2(), "");
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    expect_eq(text(*p), "MemoryMax=t:67108864\nMemoryLow=t:33554432\nMemorySwapMax=t:33554432\n"
                        "CPUWeight=t:39\nCPUQuotaPeriodUSec=t:100000\n"
                        "CPUQuotaPerSecUSec=t:130000\nAllowedCPUs=ay:0702\n"
                        "AllowedMemoryNodes=ay:01\nTasksMax=t:18446744073709551615\n"
                        "IOWeight=t:4950\n");
}

// What a cpus or mems list may say as systemd's bitmask: numbers and
// ranges up to CPU 8191, empty items skipped; anything else is refused,
// naming the field.
Test(systemd_unit, cpu_lists_as_masks_and_refusals) {
    auto mask = [](const char *cpus) -> std::string {
        oci::Resources r;
        r.cpu.emplace().cpus = cpus;
        auto p = systemd_properties(r, v2(), "");
        if (!p) return "error: " + p.error().text();
        return text(*p);
    };
    expect_eq(mask("0,,2"), "AllowedCPUs=ay:05\n");
    expect_eq(mask(",0,2,"), "AllowedCPUs=ay:05\n");
    expect_eq(mask("8-9"), "AllowedCPUs=ay:0003\n");
    for (const char *bad : {"1-", "-1", "x", "1-x", "3-1", "8192", "0-8192", "+1", "1 "}) {
        std::string got = mask(bad);
        cr_assert(got.find("error: linux.resources.cpu.cpus: \"") == 0 &&
                      got.find("is not a list of numbers and ranges") != std::string::npos,
                  "\"%s\": %s", bad, got.c_str());
    }
}

Test(systemd_unit, resources_as_v1_properties) {
    oci::Resources r;
    r.memory.emplace().limit = 64 << 20;
    auto &c = r.cpu.emplace();
    c.shares = 512;
    c.quota = 50000;
    c.cpus = "1"; // v1 cpuset: the files, not systemd
    r.pids.emplace().limit = 32;
    r.block_io.emplace().weight = 300;
    auto p = systemd_properties(r, v1(), "");
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    expect_eq(text(*p), "MemoryLimit=t:67108864\nCPUShares=t:512\nCPUQuotaPerSecUSec=t:500000\n"
                        "TasksMax=t:32\nBlockIOWeight=t:300\n");
    oci::Resources bad;
    bad.cpu.emplace().cpus = "3-1";
    cr_assert(!systemd_properties(bad, v2(), "").has_value());
}

// What clients send (deny everything, then allow some) is strict with the
// allowed devices and the defaults; a wildcard minor by the driver's name.
Test(systemd_unit, device_rules_as_device_allow) {
    oci::Resources r;
    oci::DeviceRule deny;
    deny.access = "rwm";
    oci::DeviceRule null;
    null.allow = true;
    null.type = "c";
    null.major = 1;
    null.minor = 3;
    null.access = "rw";
    r.devices = {deny, null};
    auto p =
        systemd_properties(r, v2(), "Character devices:\n  1 mem\n136 pts\n\nBlock devices:\n");
    cr_assert(p.has_value());
    std::string t = text(*p);
    cr_assert(t.rfind("DevicePolicy=s:strict\nDeviceAllow=a(ss):[/dev/char/1:3 rw][char-* m]"
                      "[block-* m][/dev/char/1:3 rwm]",
                      0) == 0,
              "%s", t.c_str());
    cr_assert(t.find("[char-pts rwm]") != std::string::npos, "%s", t.c_str());
    oci::DeviceRule all;
    all.allow = true;
    all.access = "rwm";
    r.devices = {all};
    expect_eq(text(*systemd_properties(r, v2(), "")), "DevicePolicy=s:auto\n");
}

Test(systemd_unit, request_document) {
    SystemdScope s = *systemd_scope("system.slice:p:n", "c1");
    auto props = scope_properties(s, "c1");
    UnitProperty ay;
    ay.name = "AllowedCPUs";
    ay.type = "ay";
    ay.bytes = {7};
    props.push_back(ay);
    std::string doc = systemd_request(props, 42);
    cr_assert(doc.find("\"pid\":42") != std::string::npos, "%s", doc.c_str());
    cr_assert(doc.find("{\"name\":\"Slice\",\"type\":\"s\",\"value\":\"system.slice\"}") !=
                  std::string::npos,
              "%s", doc.c_str());
    cr_assert(doc.find("{\"name\":\"Delegate\",\"type\":\"b\",\"value\":\"true\"}") !=
                  std::string::npos,
              "%s", doc.c_str());
    cr_assert(doc.find("\"bytes\":[7]") != std::string::npos, "%s", doc.c_str());
}
