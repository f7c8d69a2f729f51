// The container's network namespace: loopback up (an ioctl), and the host
// interfaces linux.netDevices moves in. oci-run links no netlink library:
// moving an interface is the network helper's job (oci-run-shim --netdev,
// shim/netdev.hpp), run once per device while the init waits.
#pragma once

#include "oci/error.hpp"

#include <string>

namespace ocirun {

// Bring the loopback interface of the caller's network namespace up.
Status loopback_up();

// linux.netDevices[name] exists in the caller's network namespace.
Status check_interface(const std::string &name);

// The helper that moves interfaces is installed (before anything is made).
Status check_net_device_helper();

// Move the host interface `name` into the network namespace at `netns` (a
// joined one's path, or /proc/<init>/ns/net of an unreaped child) as
// `new_name` (the same name when empty), with the addresses it had, and set
// it up there.
Status move_net_device(const std::string &name, const std::string &new_name,
                       const std::string &netns);

} // namespace ocirun
