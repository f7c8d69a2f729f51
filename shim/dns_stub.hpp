// The helper's DNS stub (a joined namespace's firewall under https sends the
// container's DNS to it, runtime/../oci/policy/firewall_rules.hpp): it
// answers A and AAAA queries for the names the proxy would let through
// (dev.ocirun.domains, less deny-domains, on any port a pattern allows),
// with the addresses the helper's resolver finds, and NXDOMAIN for every
// other name, which is never looked up: nothing of it leaves, so DNS cannot
// carry data out. What is looked up is the name as the policy matched it
// (normalised), not the bytes of the query. Other query types of an allowed
// name get an empty answer. In observe mode every name is answered. At most
// kMaxPending lookups at once; the next query is REFUSED.
#pragma once

#include "egress_proxy.hpp"
#include "loop.hpp"

#include <netinet/in.h>

#include <optional>
#include <string>

namespace ocirun::shim {

class DnsStub : public Handler {
  public:
    static constexpr int kMaxPending = 64;
    static constexpr int kBatch = 64;
    DnsStub(Resolver &resolver, const ProxyConfig &config, int fd)
        : resolver_(resolver), config_(config), fd_(fd) {}
    int fd() const { return fd_; }
    void on_ready(Loop &loop, int fd, uint32_t events) override;

  private:
    // The name as the policy matched it (normalised: what is looked up),
    // when it is allowed.
    std::optional<std::string> allowed(const std::string &name) const;
    Resolver &resolver_;
    const ProxyConfig &config_;
    int fd_;
    int pending_ = 0;
};

} // namespace ocirun::shim
