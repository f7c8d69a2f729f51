// The runtime's side of the firewall in a joined network namespace
// (oci/policy/firewall_rules.hpp): the program that applies it
// (oci-run-firewall, shim/firewall.cpp), run with the namespace as an fd the
// runtime opened, and waited for.
#pragma once

#include "oci/error.hpp"

#include <string>

namespace ocirun {

// helper_path("oci-run-firewall").
std::string firewall_path();

// Install container `id`'s table for `need` in the network namespace
// `netns_fd`. A namespace that has the table already is refused, naming the
// container its comment names.
Status install_firewall(int netns_fd, const std::string &id, const std::string &need);

// Remove container `id`'s table (one that is not its own is left, with a
// warning; none is fine).
Status remove_firewall(int netns_fd, const std::string &id);

// What the kernel lists of the table, against what `id` and `need` install.
struct FirewallSeen {
    bool present = false;
    bool exact = false;  // the kernel lists exactly the table
    std::string listing; // the kernel's, when it differs
};
Result<FirewallSeen> check_firewall(int netns_fd, const std::string &id, const std::string &need);

} // namespace ocirun
