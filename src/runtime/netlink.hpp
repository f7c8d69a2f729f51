// Netlink (rtnetlink over libmnl) for the container's network namespace:
// loopback up, and the host interfaces linux.netDevices moves in.
#pragma once

#include "oci/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ocirun {

// Bring the loopback interface of the caller's network namespace up.
Status loopback_up();

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
