// A network namespace joined by path that holds several containers: a
// Kubernetes pod's, a Podman pod's. The first container with a network need
// there (the pod's sandbox or infra container) installs the namespace's
// firewall (runtime/network/firewall.hpp) and starts the one helper; every
// later container in the namespace is held to that container's network
// policy, which its own keys may only tighten (inherit_network), and starts
// nothing of its own. The owner is found through the state directory: a
// running container of the same --root whose record says it installed the
// firewall of the same namespace (device and inode, checked on its init's
// namespace too), and the kernel's listing of the table must be exactly
// what that owner installed.
#pragma once

#include "oci/error.hpp"
#include "oci/policy/network_policy.hpp"
#include "runtime/lifecycle/record.hpp"

#include <sys/types.h>

#include <optional>
#include <string>

namespace ocirun {

class ContainerDir;

struct NetworkOwner {
    std::string id;
    NetworkPolicy net; // the owner's network policy, from its annotations
};

// The running owner of network namespace `netns_fd` under `root` (not
// `self`), if any; the table it installed is checked in the kernel.
Result<std::optional<NetworkOwner>> find_network_owner(const std::string &root,
                                                       const std::string &self, int netns_fd);

// The record of `rec`'s network owner, while it runs in the same network
// namespace as `rec`'s init; nullopt otherwise.
std::optional<ContainerRecord> network_owner_record(const std::string &root,
                                                    const ContainerRecord &rec);

// delete: the firewall `rec` installed, removed unless a container it holds
// to its policy still runs there, or is being made (then it stays, with a
// warning: the namespace is not left open). The namespace is the init's
// while it runs, else the path config.json joined, if it still names the
// same namespace.
void remove_network_firewall(const ContainerDir &dir, const ContainerRecord &rec);

} // namespace ocirun
