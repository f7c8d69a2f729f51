// The egress host matcher (oci/policy/egress_rules.cpp): an allow-list as in
// dev.ocirun.domains, a host as a client writes it, and a port. The input is
// "PATTERNS\nHOST\nPORT". Invariants: normalising is idempotent, an exact
// pattern matches its own name, match/covering agree with the pattern kinds.
#include "fuzz_check.hpp"

#include "oci/policy/egress_rules.hpp"

#include <charconv>

using namespace ocirun::egress;

namespace {

void expect_stable(const Host &h, std::string_view raw) {
    auto again = normalize_host(h.name);
    if (!again)
        fuzz::broken("a normalised host is refused",
                     std::string(raw) + " -> " + h.name + ": " + again.error().text());
    if (again->name != h.name || again->is_address != h.is_address ||
        (h.is_address && !(again->addr == h.addr)))
        fuzz::broken("normalize_host is not idempotent",
                     std::string(raw) + " -> " + h.name + " -> " + again->name);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 8192) return 0;
    std::vector<std::string> f = fuzz::split(fuzz::text(data, size), '\n');
    f.resize(3);
    unsigned port_value = 443;
    std::from_chars(f[2].data(), f[2].data() + f[2].size(), port_value);
    const uint16_t port = static_cast<uint16_t>(port_value);

    auto patterns = parse_patterns(f[0], "dev.ocirun.domains");
    if (patterns) {
        for (const Pattern &p : *patterns) {
            if (p.kind == Pattern::Kind::address) {
                if (p.prefix < 0 || p.prefix > (p.net.family == AF_INET ? 32 : 128))
                    fuzz::broken("prefix out of range", p.text);
                if (!covering(*patterns, p.net))
                    fuzz::broken("a network does not cover itself", p.text);
                (void)class_name(classify(p.net));
                continue;
            }
            auto h = normalize_host(p.name);
            if (!h || h->is_address || h->name != p.name)
                fuzz::broken("a name pattern is not a normalised name", p.text + " -> " + p.name);
            if (p.kind == Pattern::Kind::exact) {
                uint16_t allowed = p.ports.empty() ? 443 : p.ports.front();
                if (!match(*patterns, *h, allowed))
                    fuzz::broken("an exact pattern does not match its own name", p.text);
            } else if (match({p}, *h, p.ports.empty() ? 443 : p.ports.front())) {
                fuzz::broken("*.NAME matches NAME itself", p.text);
            }
        }
    } else if (patterns.error().msg.empty()) {
        fuzz::broken("empty error", "parse_patterns");
    }

    auto host = normalize_host(f[1]);
    if (!host) return 0;
    expect_stable(*host, f[1]);
    if (host->is_address) {
        (void)class_name(classify(host->addr));
        if (!(canonical(host->addr) == host->addr))
            fuzz::broken("address not canonical", host->name);
    }
    if (patterns) {
        const Pattern *m = match(*patterns, *host, port);
        const Pattern *any = match(*patterns, *host, port, true);
        if (m && !any) fuzz::broken("a port-specific match but no any-port match", f[1]);
        if (m && m->kind == Pattern::Kind::address && !host->is_address)
            fuzz::broken("an address pattern matched a name", m->text + " ~ " + host->name);
        if (m && m->kind != Pattern::Kind::address && host->is_address)
            fuzz::broken("a name pattern matched an address", m->text + " ~ " + host->name);
        if (host->is_address) (void)covering(*patterns, host->addr);
    }
    return 0;
}
