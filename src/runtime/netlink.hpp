// The container's network namespace: loopback up (an ioctl), and the host
// interfaces linux.netDevices moves in (rtnetlink over libmnl, which is
// loaded with dlopen the first time it is needed: few containers need it).
#pragma once

#include "oci/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ocirun {

// Bring the loopback interface of the caller's network namespace up.
Status loopback_up();

// From now on, a netlink call that would load libmnl fails instead. The
// container's init calls it first: after pivot_root, the library would come
// from the container's rootfs. What the init needs was loaded before the
// fork, by interface_addresses.
void forbid_netlink_loading();

// An address of an interface (what moving it to another namespace drops).
struct IfAddress {
    int family = 0; // AF_INET or AF_INET6
    uint8_t addr[16] = {};
    uint8_t prefix = 0;
};

// The global addresses of the interface `name` in the caller's namespace.
Result<std::vector<IfAddress>> interface_addresses(const std::string &name);

// Move the interface `name` into the network namespace `netns_fd`, named
// `new_name` there (the same name when empty), in one request.
Status move_interface(const std::string &name, int netns_fd, const std::string &new_name);

// In the caller's namespace: give the interface `name` these addresses and
// set it up.
Status configure_interface(const std::string &name, const std::vector<IfAddress> &addrs);

} // namespace ocirun
