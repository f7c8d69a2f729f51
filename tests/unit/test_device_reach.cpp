// Devices below the filesystem rules (runtime/security/device_reach.hpp):
// which configurations let a container read or write the host's disks or
// memory, and which field says so; what clients write passes.
#include "runtime/security/device_reach.hpp"
#include "support/container_env.hpp"
#include "unit_support.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace ocirun;

namespace {

// /proc/devices of a host with SCSI generic (21), bsg and NVMe loaded.
constexpr const char *kProcDevices = "Character devices:\n"
                                     "  1 mem\n"
                                     "  5 /dev/tty\n"
                                     " 10 misc\n"
                                     " 21 sg\n"
                                     "136 pts\n"
                                     "240 nvme-generic\n"
                                     "241 nvme\n"
                                     "248 bsg\n"
                                     "\n"
                                     "Block devices:\n"
                                     "  8 sd\n"
                                     "242 sg\n";

using test::device_rule;

// Podman's and containerd's rules: every device denied, then the standard
// character devices (and mknod of any).
oci::Linux clients_default() {
    oci::Linux lx;
    lx.resources.emplace();
    lx.resources->devices = {
        device_rule(false, "", {}, {}, "rwm"),  device_rule(true, "c", {}, {}, "m"),
        device_rule(true, "b", {}, {}, "m"),    device_rule(true, "c", 1, 3, "rwm"),
        device_rule(true, "c", 1, 5, "rwm"),    device_rule(true, "c", 1, 7, "rwm"),
        device_rule(true, "c", 1, 8, "rwm"),    device_rule(true, "c", 1, 9, "rwm"),
        device_rule(true, "c", 5, 0, "rwm"),    device_rule(true, "c", 5, 1, "rwm"),
        device_rule(true, "c", 5, 2, "rwm"),    device_rule(true, "c", 136, {}, "rwm"),
        device_rule(true, "c", 10, 200, "rwm"), device_rule(true, "c", 10, 229, "rwm")};
    return lx;
}

} // namespace

Test(device_reach, the_raw_character_majors_are_read_by_driver_name) {
    auto majors = raw_char_majors(kProcDevices);
    cr_assert(majors == (std::vector<int64_t>{1, 21, 240, 241, 248}), "%zu", majors.size());
    cr_assert(raw_char_majors("") == std::vector<int64_t>{1});
}

Test(device_reach, what_clients_write_passes) {
    auto majors = raw_char_majors(kProcDevices);
    unit::expect_eq(disk_device_access(clients_default(), majors), "");
    // A deny of every block device and every character device, in two rules.
    oci::Linux lx;
    lx.resources.emplace();
    lx.resources->devices = {
        device_rule(true, "b", 8, 0, "r"), device_rule(false, "b", {}, {}, "rw"),
        device_rule(false, "c", {}, {}, "rwm"), device_rule(true, "c", 1, 3, "rw")};
    unit::expect_eq(disk_device_access(lx, majors), "");
}

Test(device_reach, each_way_to_a_disk_or_memory_is_named) {
    auto majors = raw_char_majors(kProcDevices);
    struct Case {
        const char *name;
        std::vector<oci::DeviceRule> extra; // after the clients' rules
        std::string want;
    } cases[] = {
        {"a block device read",
         {device_rule(true, "b", 8, 0, "r")},
         "linux.resources.devices[14] allows b 8:0 r"},
        {"every device",
         {device_rule(true, "a", {}, {}, "rwm")},
         "linux.resources.devices[14] allows a *:* rwm"},
        {"every character device",
         {device_rule(true, "c", {}, {}, "rw")},
         "linux.resources.devices[14] allows c *:* rw"},
        {"SCSI generic",
         {device_rule(true, "c", 21, 0, "r")},
         "linux.resources.devices[14] allows c 21:0 r"},
        {"an NVMe generic node",
         {device_rule(true, "c", 240, {}, "rw")},
         "linux.resources.devices[14] allows c 240:* rw"},
        {"/dev/mem",
         {device_rule(true, "c", 1, 1, "r")},
         "linux.resources.devices[14] allows c 1:1 r"},
        {"/dev/port",
         {device_rule(true, "c", 1, 4, "w")},
         "linux.resources.devices[14] allows c 1:4 w"},
    };
    for (const auto &c : cases) {
        oci::Linux lx = clients_default();
        for (const auto &r : c.extra)
            lx.resources->devices.push_back(r);
        unit::expect_eq(disk_device_access(lx, majors), c.want);
    }
    // Not denied first: open from the start, the cgroup being the parent's.
    oci::Linux tail = clients_default();
    tail.resources->devices.erase(tail.resources->devices.begin());
    unit::expect_eq(disk_device_access(tail, majors),
                    "linux.resources.devices does not deny every block device before its rules");
    oci::Linux none;
    cr_assert(disk_device_access(none, majors).starts_with("linux.resources.devices has no rule"));
    // An unprivileged runtime makes no devices cgroup: its rules are not
    // the control (the user's permissions on the host's nodes are), and
    // `oci-run spec --rootless` writes none.
    unit::expect_eq(disk_device_access(none, majors, false), "");
    // A node given to the container: a block device, or a raw character one.
    for (auto [type, major, minor] : {std::tuple{"b", 8, 0}, std::tuple{"c", 21, 2}}) {
        oci::Linux lx = clients_default();
        oci::Device d;
        d.path = "/dev/x";
        d.type = type;
        d.major = major;
        d.minor = minor;
        lx.devices.push_back(d);
        for (bool rules : {true, false})
            cr_assert(
                disk_device_access(lx, majors, rules).starts_with("linux.devices[0] (/dev/x, "),
                "%s %d:%d", type, major, minor);
    }
    // Mere mknod rights, and the standard nodes, are not a way in.
    oci::Linux mk = clients_default();
    mk.resources->devices.push_back(device_rule(true, "a", {}, {}, "m"));
    unit::expect_eq(disk_device_access(mk, majors), "");
}

// Which nodes reach disks or memory raw: a block device, sg, /dev/mem
// (1:1); not null (1:3), nor a regular file.
Test(device_reach, nodes_that_reach_disks_raw) {
    auto majors = raw_char_majors(kProcDevices);
    cr_assert(reaches_disks_raw(S_IFBLK | 0600, makedev(8, 0), majors));
    cr_assert(reaches_disks_raw(S_IFCHR | 0600, makedev(21, 3), majors));
    cr_assert(reaches_disks_raw(S_IFCHR | 0600, makedev(1, 1), majors));
    cr_assert(!reaches_disks_raw(S_IFCHR | 0600, makedev(1, 3), majors));
    cr_assert(!reaches_disks_raw(S_IFREG | 0600, makedev(8, 0), majors));
}
