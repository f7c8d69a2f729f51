#include "runtime/lifecycle/pod_network.hpp"

#include "oci/fd.hpp"
#include "oci/policy/annotations.hpp"
#include "oci/spec_io.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/log.hpp"
#include "runtime/network/firewall.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <sys/stat.h>

namespace ocirun {

namespace {

bool same_netns(int fd, uint64_t dev, uint64_t ino) {
    struct stat st;
    return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

// `rec`'s init, while it runs, in the namespace `dev`:`ino`.
bool init_in_netns(const ContainerRecord &rec, uint64_t dev, uint64_t ino) {
    if (rec.state.pid <= 0) return false;
    auto ns = open_namespace(rec.state.pid, "net");
    return ns && process_alive(rec.state.pid, rec.init_start_time) &&
           same_netns(ns->get(), dev, ino);
}

} // namespace

Result<std::optional<NetworkOwner>> find_network_owner(const std::string &root,
                                                       const std::string &self, int netns_fd) {
    struct stat st;
    if (::fstat(netns_fd, &st) < 0) return fail_errno("network namespace: fstat");
    for (const auto &id : OCI_TRY(list_ids(root))) {
        if (id == self) continue;
        auto dir = ContainerDir::observe(root, id);
        if (!dir) continue;
        auto rec = dir->load();
        if (!rec || !rec->firewall || rec->netns_dev != st.st_dev || rec->netns_ino != st.st_ino)
            continue;
        if (!init_in_netns(*rec, st.st_dev, st.st_ino)) continue;
        auto spec = dir->load_spec();
        if (!spec)
            return forward(std::move(spec.error()),
                           "the network namespace's owner, container \"" + id + "\"");
        // As the owner's create worked it out (the operator's baseline
        // included), not as its annotations alone say.
        SandboxPolicy policy = OCI_TRY(container_policy(*rec, *spec));
        auto seen = OCI_TRY(check_firewall(netns_fd, id, policy.net.firewall_need()));
        if (!seen.exact)
            return fail("the network namespace's firewall, of container \"" + id + "\" (" +
                        policy.net.mode + "), is " +
                        (seen.present ? "not as it was installed" : "gone") +
                        ": refused rather than run without it");
        return NetworkOwner{id, std::move(policy.net)};
    }
    return std::optional<NetworkOwner>();
}

std::optional<ContainerRecord> network_owner_record(const std::string &root,
                                                    const ContainerRecord &rec) {
    if (rec.network_owner.empty()) return std::nullopt;
    auto dir = ContainerDir::observe(root, rec.network_owner);
    if (!dir) return std::nullopt;
    auto owner = dir->load();
    if (!owner || !owner->firewall || owner->netns_ino != rec.netns_ino ||
        owner->netns_dev != rec.netns_dev || !init_in_netns(*owner, rec.netns_dev, rec.netns_ino))
        return std::nullopt;
    return std::move(*owner);
}

void remove_network_firewall(const ContainerDir &own, const ContainerRecord &rec) {
    if (!rec.firewall) return;
    const std::string &id = rec.state.id;
    for (const auto &other : list_ids(own.root()).value_or(std::vector<std::string>{})) {
        if (other == id) continue;
        auto dir = ContainerDir::observe(own.root(), other);
        if (!dir) continue;
        auto r = dir->load();
        if (!r || r->network_owner != id) continue;
        // One still being made counts: its init may not be in the
        // namespace yet (join_network_owner in create.cpp).
        bool making = r->state.status == oci::ContainerStatus::creating && dir->busy();
        if (making || init_in_netns(*r, rec.netns_dev, rec.netns_ino)) {
            log::warning("delete " + id +
                         ": the network namespace's firewall is left in place: "
                         "container " +
                         other + (making ? " is being made" : " still runs") +
                         " there under its policy");
            return;
        }
    }
    Fd ns;
    if (rec.state.pid > 0)
        if (auto fd = open_namespace(rec.state.pid, "net");
            fd && process_alive(rec.state.pid, rec.init_start_time))
            ns = std::move(*fd);
    if (!ns.valid()) {
        // The init is gone: the namespace config.json joined, if that path
        // still names it (a pod's is often gone by now, and its table with it).
        // Opened only when it is a network namespace (open_namespace_path
        // looks first), and used only when it is the one the record names.
        auto spec = own.load_spec();
        const oci::Namespace *n =
            spec ? spec->linux_->find_namespace(oci::NsType::network) : nullptr;
        if (n && !n->path.empty())
            if (auto fd = open_namespace_path(n->path, CLONE_NEWNET, "network namespace"))
                ns = std::move(*fd);
    }
    if (!same_netns(ns.get(), rec.netns_dev, rec.netns_ino)) return;
    if (auto r = remove_firewall(ns.get(), id); !r)
        log::warning("delete " + id + ": " + r.error().text());
}

} // namespace ocirun
