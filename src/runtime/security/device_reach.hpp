// Devices below the filesystem rules: a host's disks hold every file the
// rules guard (deny, deny-write, deny-rename, protected), and reading or
// writing them raw bypasses all of those. That is what block devices do,
// and the character devices that pass commands to disks (SCSI generic sg
// and bsg, NVMe controllers and their generic nodes), give raw persistent
// memory or flash (dax, mtd), or reach memory (/dev/mem, /dev/kmem,
// /dev/port).
#pragma once

#include "oci/spec.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

// The character majors of such devices on this host, from the text of
// /proc/devices (their drivers' names), 1 (mem) first.
std::vector<int64_t> raw_char_majors(std::string_view proc_devices);

// The field of `lx` that lets the container read or write such a device
// (`raw_majors` from raw_char_majors), or "" when none does. With no device
// rule at all the devices cgroup is left as its parent's (as runc leaves
// it), so every device is open; else the rules are read in order, open
// from the start, and a rule denying reading and writing every block (or
// every character) device closes what came before it for that type.
// `cgroup_rules` false (an unprivileged runtime, which makes no devices
// cgroup: the user's own permissions hold the host's nodes): the rules are
// not looked at, a node in linux.devices is.
std::string disk_device_access(const oci::Linux &lx, const std::vector<int64_t> &raw_majors,
                               bool cgroup_rules = true);

// Whether a node (st_mode, st_rdev) is such a device: a block device, or a
// character device of `raw_majors` or a raw one of mem's.
bool reaches_disks_raw(mode_t mode, dev_t rdev, const std::vector<int64_t> &raw_majors);

} // namespace ocirun
