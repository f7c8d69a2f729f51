// The egress proxy: HTTP CONNECT and absolute-form plain HTTP on a listener
// inside the container's network namespace, connections made from the
// helper (the host's namespace). Each request is decided against
// dev.ocirun.domains / deny-domains: the host normalised, the name resolved
// here and the address checked (names reach non-global addresses only when
// an address pattern names them) and then used for the connection, so a
// second lookup cannot rebind it. Every decision is an egress event.
#pragma once

#include "egress_log.hpp"
#include "forward.hpp"
#include "loop.hpp"
#include "oci/policy/egress_rules.hpp"
#include "relay.hpp"

#include <netdb.h>

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace ocirun::shim {

struct ProxyConfig {
    std::vector<egress::Pattern> allow, deny;
    bool observe = false;
    int max_connections = 256;
    // How long a client has for its whole request head (and a tunnel's
    // client for its first bytes) before the connection is ended, so that
    // slow clients cannot hold the connection limit.
    int request_timeout_ms = 30000;
    // A hosts-format file consulted instead of the system resolver
    // ($OCI_RUN_RESOLVE_HOSTS; for tests and for pinning names by hand),
    // read when the helper starts.
    std::string hosts_file;
};

// The verdict on a host:port before resolution.
struct Verdict {
    bool blocked = false;
    std::string matched; // the allow pattern, as written
    std::string reason;  // why it is (or would be) refused
};
Verdict decide(const ProxyConfig &c, const egress::Host &host, uint16_t port);

// The address to connect to among those a name resolved to: the first one
// that is global or covered by an allow address pattern that takes `port`,
// and not covered by a deny pattern for `port`. blocked (with the reason)
// when there is none.
struct Pick {
    bool blocked = false;
    egress::IpAddr addr;
    std::string reason;
};
Pick pick_address(const ProxyConfig &c, const std::string &name, uint16_t port,
                  const std::vector<egress::IpAddr> &addrs);

// Name resolution off the loop's thread (getaddrinfo_a), answered on the
// loop through an eventfd.
class Resolver : public Handler {
  public:
    using Done = std::function<void(Loop &, std::vector<egress::IpAddr>, std::string error)>;
    explicit Resolver(std::string hosts_file);
    ~Resolver() override;
    // Before the helper is confined: the hosts file is read here, once.
    // false with errno.
    bool start(Loop &loop);
    void resolve(Loop &loop, const std::string &name, Done done);
    void on_ready(Loop &loop, int fd, uint32_t events) override;

  private:
    struct Pending {
        gaicb cb{};
        addrinfo hints{};
        std::string name;
        Done done;
    };
    std::string hosts_file_, hosts_text_;
    int efd_ = -1;
    std::list<std::unique_ptr<Pending>> pending_;
};

// A connection that owes the proxy bytes by a deadline (a request head, a
// tunnel's first bytes): listed in its EgressProxy's order of deadlines,
// ended by expired() once past it.
class Awaiting {
  public:
    virtual void expired(Loop &loop) = 0;

  protected:
    ~Awaiting() = default;

  private:
    friend class EgressProxy;
    uint64_t deadline_ms_ = 0;
    Awaiting *prev_ = nullptr, *next_ = nullptr;
    bool listed_ = false;
};

class EgressProxy : public Handler {
  public:
    EgressProxy(PipePool &pool, ConnectionBudget &budget, EgressLog &log, Resolver &resolver,
                ProxyConfig config, int listener)
        : pool_(pool), budget_(budget), log_(log), resolver_(resolver), config_(std::move(config)),
          listener_(listener) {
        set_nodelay(listener_); // inherited by every accepted connection
    }
    ~EgressProxy() override;
    int fd() const { return listener_; }
    // Its timer for the deadlines (a tick a second), watched on `loop`;
    // false with errno on failure.
    bool start(Loop &loop);
    void on_ready(Loop &loop, int fd, uint32_t events) override;

    // `a` owes bytes from now on, for config().request_timeout_ms; and no
    // longer (also when it was not listed).
    void await(Awaiting &a);
    void awaited(Awaiting &a);

    PipePool &pool() { return pool_; }
    EgressLog &log() { return log_; }
    Resolver &resolver() { return resolver_; }
    const ProxyConfig &config() const { return config_; }
    // A new connection's place: taken (hold(), and a run of refusals over
    // `limit` ended in the egress log), "", or over a limit, refused: the
    // egress event written, its reason (`what` + why) returned.
    std::string take_place(const std::string &limit, const std::string &what = "");
    int active = 0; // connections from accept to close
    // A place, here and in the helper's budget; and giving it back.
    void hold() {
        active++;
        budget_.active++;
    }
    void release() {
        active--;
        budget_.active--;
    }

  private:
    // A tick of the timer: the connections past their deadline, ended.
    void expire(Loop &loop);
    // Why one more connection would be over a limit, or "" when it is not.
    std::string over_limit() const;

    PipePool &pool_;
    ConnectionBudget &budget_;
    EgressLog &log_;
    Resolver &resolver_;
    ProxyConfig config_;
    int listener_;
    int timer_ = -1;
    Awaiting *first_ = nullptr, *last_ = nullptr; // by deadline, earliest first
};

// dev.ocirun.intercept: a listener the firewall sends TCP to port 80 (http)
// or 443 (tls) to. Each connection is decided by what it names
// (intercept_peek.hpp) against the proxy's rules, on the port it dialled,
// and counts against the proxy's connection limits; refused, it is closed
// (an http one gets a 403 first). The proxy's egress events, with method
// "HTTP" or "TLS".
enum class Intercept { http, tls };
class Interceptor : public Handler {
  public:
    Interceptor(EgressProxy &proxy, Intercept kind, int listener)
        : proxy_(proxy), kind_(kind), listener_(listener) {
        set_nodelay(listener_); // inherited by every accepted connection
    }
    ~Interceptor() override;
    void on_ready(Loop &loop, int fd, uint32_t events) override;

  private:
    EgressProxy &proxy_;
    Intercept kind_;
    int listener_;
};

} // namespace ocirun::shim
