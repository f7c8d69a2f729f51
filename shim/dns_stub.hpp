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
//
// Over UDP an answer is at most 512 bytes (with TC when records were left
// out); over TCP (RFC 7766) a client sends its queries, each a two-byte
// length and the message, on one connection, and each answer comes when it
// is looked up. A TCP client counts as one of the proxy's connections and
// has the proxy's request timeout (30 s) for each next query.
#pragma once

#include "dns_message.hpp"
#include "egress_proxy.hpp"
#include "loop.hpp"

#include <netinet/in.h>

#include <functional>
#include <optional>
#include <string>

namespace ocirun::shim {

class DnsStub : public Handler {
  public:
    static constexpr int kMaxPending = 64;
    static constexpr int kBatch = 64;
    // `udp`: the stub's socket; `tcp`: its listener, or -1. Both
    // non-blocking, owned.
    DnsStub(EgressProxy &proxy, int udp, int tcp) : proxy_(proxy), udp_(udp), tcp_(tcp) {}
    ~DnsStub() override;
    // Both watched on `loop`; false with errno.
    bool start(Loop &loop);
    void on_ready(Loop &loop, int fd, uint32_t events) override;

    // The answer to `q`, of at most `max_size` bytes, given to `reply` now
    // or once its name is looked up.
    using Reply = std::function<void(const std::string &answer)>;
    void answer(Loop &loop, const DnsQuery &q, size_t max_size, Reply reply);

  private:
    // The name as the policy matched it (normalised: what is looked up),
    // when it is allowed.
    std::optional<std::string> allowed(const std::string &name) const;
    void read_udp(Loop &loop);
    void accept_tcp(Loop &loop);

    EgressProxy &proxy_;
    int udp_, tcp_;
    int pending_ = 0;
};

} // namespace ocirun::shim
