// The firewall a network need installs in a network namespace the runtime
// did not make (one joined by path: a Kubernetes pod's, a Podman bridge
// network's, `ip netns`'s): one nftables table of the runtime's own, `inet
// oci_run`, that passes loopback and nothing else, in and out, for IPv4 and
// IPv6. What would leave by another interface is answered on the way out
// with a TCP reset or an ICMP administratively-prohibited error, so a
// connect fails at once rather than after a timeout; what comes in by
// another interface is dropped; nothing is forwarded. none, local and
// https all hold the namespace to loopback: what differs is what listens
// there (the helper's forwards and proxy, oci-run-shim), and the helper
// makes its own connections from the host's namespace, so no exception for
// it is needed here.
//
// Pure code: the text is what `nft list table inet oci_run` prints, and the
// firewall program (shim/firewall.cpp) installs it in that form too, so the
// check of a running container compares the kernel's listing with the same
// string.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ocirun {

inline constexpr const char *kFirewallFamily = "inet";
inline constexpr const char *kFirewallTable = "oci_run";

// The table for container `id` (a valid container ID) and need `need`
// (none, local, https or https+intercept); the comment names both. https
// lets DNS out of the filter to a nat chain that sends it to the helper's
// stub; https+intercept sends TCP to ports 80 and 443 to the helper's
// listeners for them the same way (NetworkPolicy::firewall_need()).
std::string firewall_table(const std::string &id, const std::string &need);

// Who a listing's table belongs to, from the comment firewall_table writes;
// nullopt for a listing without it.
struct FirewallOwner {
    std::string id, need;
};
std::optional<FirewallOwner> firewall_owner(std::string_view listing);

} // namespace ocirun
