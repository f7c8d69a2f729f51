#include "oci/policy/egress_rules.hpp"
#include "oci/policy/idn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace ocirun::egress {

namespace {

constexpr size_t kMaxName = 253;
constexpr size_t kMaxLabel = 63;
constexpr size_t kMaxRaw = 1024; // before IDN conversion: refuse absurd input early

int addr_len(int family) {
    return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}
int addr_bits(int family) {
    return addr_len(family) * 8;
}

bool lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool digit(char c) {
    return c >= '0' && c <= '9';
}

// A string for a one-line message: quoted, with quotes, backslashes and
// control bytes escaped (hosts come from clients).
std::string quote(std::string_view s) {
    static const char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string char_repr(unsigned char c) {
    if (c > 0x20 && c < 0x7f && c != '\'') return std::string("'") + static_cast<char>(c) + "'";
    return quote(std::string_view(reinterpret_cast<const char *>(&c), 1));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The address with the bits after `prefix` cleared.
IpAddr masked(const IpAddr &a, int prefix) {
    IpAddr m = a;
    for (int i = 0; i < addr_len(a.family); ++i) {
        int keep = std::clamp(prefix - i * 8, 0, 8);
        m.bytes[i] &= static_cast<uint8_t>(0xff00 >> keep);
    }
    return m;
}

bool in_net(const IpAddr &a, const IpAddr &net, int prefix) {
    IpAddr c = canonical(a);
    return c.family == net.family && masked(c, prefix) == net;
}

Host address_host(const IpAddr &a) {
    Host h;
    h.is_address = true;
    h.addr = canonical(a);
    h.name = to_string(h.addr);
    return h;
}

Result<Host> ipv6_host(std::string_view raw) {
    bool ok = std::all_of(raw.begin(), raw.end(), [](char c) {
        return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
    });
    IpAddr a;
    a.family = AF_INET6;
    std::string s(raw);
    if (!ok || ::inet_pton(AF_INET6, s.c_str(), a.bytes) != 1)
        return fail("invalid IPv6 address " + quote(raw));
    return address_host(a);
}

// A UTF-8 name in ASCII (oci/policy/idn.hpp: libidn2, linked or loaded).
Result<std::string> to_punycode(const std::string &s, std::string_view raw) {
    idn::Ascii a = idn::to_ascii(s);
    if (a.missing)
        return fail("internationalised name " + quote(raw) + " needs libidn2: " + a.error);
    if (!a.error.empty())
        return fail("invalid internationalised name " + quote(raw) + ": " + a.error);
    return a.name;
}

// Labels of a name: none empty, none over 63 characters, none starting or
// ending with "-".
Status check_labels(std::string_view s, std::string_view raw) {
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = std::min(s.find('.', start), s.size());
        std::string_view label = s.substr(start, end - start);
        if (label.empty()) return fail("empty label in host " + quote(raw));
        if (label.size() > kMaxLabel)
            return fail("label longer than 63 characters in host " + quote(raw));
        if (label.front() == '-' || label.back() == '-')
            return fail("label starts or ends with '-' in host " + quote(raw));
        start = end + 1;
    }
    return {};
}

// A decimal number of at most `max_digits` digits, or -1.
long decimal(std::string_view s, size_t max_digits) {
    if (s.empty() || s.size() > max_digits || !std::all_of(s.begin(), s.end(), digit)) return -1;
    long v = 0;
    for (char c : s)
        v = v * 10 + (c - '0');
    return v;
}

Result<uint16_t> parse_port(std::string_view s) {
    if (s.empty()) return fail("empty port");
    if (!std::all_of(s.begin(), s.end(), digit))
        return fail("port " + quote(s) + " is not a number");
    long v = decimal(s, 5);
    if (v < 1 || v > 65535) return fail("port " + quote(s) + " is not in 1..65535");
    return static_cast<uint16_t>(v);
}

Result<int> parse_prefix(std::string_view s, int max) {
    if (s.empty()) return fail("empty prefix length");
    long v = decimal(s, 3);
    if (v < 0 || v > max)
        return fail("prefix length " + quote(s) + " is not in 0.." + std::to_string(max));
    return static_cast<int>(v);
}

// One allow-list entry; the error is the reason only (the caller names the
// key and the entry).
Result<Pattern> parse_entry(std::string_view e) {
    Pattern p;
    p.text = e;
    std::string_view host = e;
    std::string_view prefix, port;
    bool has_prefix = false, has_port = false;
    if (e.front() == '[') {
        size_t close = e.find(']');
        if (close == std::string_view::npos) return fail("missing \"]\"");
        host = e.substr(1, close - 1);
        if (host.find(':') == std::string_view::npos)
            return fail("brackets hold IPv6 addresses only");
        std::string_view rest = e.substr(close + 1);
        if (!rest.empty() && rest.front() == '/') {
            size_t colon = std::min(rest.find(':'), rest.size());
            prefix = rest.substr(1, colon - 1);
            has_prefix = true;
            rest.remove_prefix(colon);
        }
        if (!rest.empty() && rest.front() == ':') {
            port = rest.substr(1);
            has_port = true;
            rest = {};
        }
        if (!rest.empty()) return fail("unexpected text after \"]\"");
    } else if (std::count(e.begin(), e.end(), ':') >= 2) {
        // A bare IPv6 address (or network): no port, brackets are needed for one.
        size_t slash = e.find('/');
        if (slash != std::string_view::npos) {
            host = e.substr(0, slash);
            prefix = e.substr(slash + 1);
            has_prefix = true;
        }
    } else {
        size_t colon = e.rfind(':');
        if (colon != std::string_view::npos) {
            port = e.substr(colon + 1);
            has_port = true;
            host = e.substr(0, colon);
        }
        size_t slash = host.find('/');
        if (slash != std::string_view::npos) {
            prefix = host.substr(slash + 1);
            has_prefix = true;
            host = host.substr(0, slash);
        }
    }

    bool wildcard = host.starts_with("*.");
    if (host == "*") return fail("a bare \"*\" would allow every host");
    if (wildcard) host.remove_prefix(2);
    if (wildcard && host.empty()) return fail("\"*.\" without a domain");
    if (host.find('*') != std::string_view::npos)
        return fail("\"*\" is allowed only as a leading \"*.\"");

    Host h = OCI_TRY(normalize_host(host));
    if (wildcard) {
        if (h.is_address) return fail("an IP address with a \"*.\" wildcard");
        if (has_prefix) return fail("a prefix length on a name");
        p.kind = Pattern::Kind::subdomains;
        p.name = h.name;
    } else if (h.is_address) {
        p.kind = Pattern::Kind::address;
        p.net = h.addr;
        // ::ffff:a.b.c.d/N became IPv4: its prefix counts the 96 mapped bits.
        bool was_v6 = host.find(':') != std::string_view::npos;
        int max = was_v6 ? 128 : addr_bits(h.addr.family);
        p.prefix = has_prefix ? OCI_TRY(parse_prefix(prefix, max)) : max;
        if (was_v6 && h.addr.family == AF_INET) {
            if (p.prefix < 96) return fail("prefix length of an IPv4-mapped network below 96");
            p.prefix -= 96;
        }
        if (!(masked(p.net, p.prefix) == p.net))
            return fail("host bits set (the network is " + to_string(masked(p.net, p.prefix)) +
                        "/" + std::to_string(p.prefix) + ")");
    } else {
        if (has_prefix) return fail("a prefix length on a name");
        p.kind = Pattern::Kind::exact;
        p.name = h.name;
    }
    if (has_port) p.ports.push_back(OCI_TRY(parse_port(port)));
    return p;
}

} // namespace

bool operator==(const IpAddr &a, const IpAddr &b) {
    return a.family == b.family && std::memcmp(a.bytes, b.bytes, addr_len(a.family)) == 0;
}

std::string to_string(const IpAddr &a) {
    char buf[INET6_ADDRSTRLEN] = "";
    if (addr_len(a.family) == 0 || !::inet_ntop(a.family, a.bytes, buf, sizeof buf)) return "";
    return buf;
}

IpAddr canonical(const IpAddr &a) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (a.family != AF_INET6 || std::memcmp(a.bytes, mapped, sizeof mapped) != 0) return a;
    IpAddr v4;
    v4.family = AF_INET;
    std::memcpy(v4.bytes, a.bytes + 12, 4);
    return v4;
}

IpAddr from_sockaddr(const sockaddr *sa) {
    IpAddr a;
    if (sa && sa->sa_family == AF_INET) {
        sockaddr_in in;
        std::memcpy(&in, sa, sizeof in);
        a.family = AF_INET;
        std::memcpy(a.bytes, &in.sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        sockaddr_in6 in6;
        std::memcpy(&in6, sa, sizeof in6);
        a.family = AF_INET6;
        std::memcpy(a.bytes, &in6.sin6_addr, 16);
    }
    return canonical(a);
}

namespace {

// The IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and
// the RFCs since), every entry, most specific first: the first entry that
// covers an address decides. An entry marked globally reachable there is
// `global` here; the rest are what they are (private, loopback, ...) or
// `reserved`. Blocks the registries mark "N/A" (deprecated 6to4 relays,
// Teredo, ORCHID) are reserved: fail closed.
struct Special {
    const char *net;
    int prefix;
    AddressClass cls;
    const char *name; // the registry's name, for messages
};

constexpr Special kSpecialV4[] = {
    {"169.254.169.254", 32, AddressClass::metadata, "cloud metadata"},
    {"169.254.170.2", 32, AddressClass::metadata, "cloud metadata (ECS)"},
    {"0.0.0.0", 32, AddressClass::unspecified, "this host on this network"},
    {"0.0.0.0", 8, AddressClass::unspecified, "this network"},
    {"10.0.0.0", 8, AddressClass::private_net, "private-use"},
    {"100.64.0.0", 10, AddressClass::cgnat, "shared address space"},
    {"127.0.0.0", 8, AddressClass::loopback, "loopback"},
    {"169.254.0.0", 16, AddressClass::link_local, "link local"},
    {"172.16.0.0", 12, AddressClass::private_net, "private-use"},
    {"192.0.0.9", 32, AddressClass::global, "port control protocol anycast"},
    {"192.0.0.10", 32, AddressClass::global, "traversal using relays around NAT anycast"},
    {"192.0.0.0", 29, AddressClass::reserved, "IPv4 service continuity prefix"},
    {"192.0.0.8", 32, AddressClass::reserved, "IPv4 dummy address"},
    {"192.0.0.170", 32, AddressClass::reserved, "NAT64/DNS64 discovery"},
    {"192.0.0.171", 32, AddressClass::reserved, "NAT64/DNS64 discovery"},
    {"192.0.0.0", 24, AddressClass::reserved, "IETF protocol assignments"},
    {"192.0.2.0", 24, AddressClass::reserved, "documentation (TEST-NET-1)"},
    {"192.31.196.0", 24, AddressClass::global, "AS112-v4"},
    {"192.52.193.0", 24, AddressClass::global, "AMT"},
    {"192.88.99.0", 24, AddressClass::reserved, "deprecated 6to4 relay anycast"},
    {"192.168.0.0", 16, AddressClass::private_net, "private-use"},
    {"192.175.48.0", 24, AddressClass::global, "direct delegation AS112 service"},
    {"198.18.0.0", 15, AddressClass::reserved, "benchmarking"},
    {"198.51.100.0", 24, AddressClass::reserved, "documentation (TEST-NET-2)"},
    {"203.0.113.0", 24, AddressClass::reserved, "documentation (TEST-NET-3)"},
    {"224.0.0.0", 4, AddressClass::multicast, "multicast"},
    {"255.255.255.255", 32, AddressClass::reserved, "limited broadcast"},
    {"240.0.0.0", 4, AddressClass::reserved, "reserved"},
};

constexpr Special kSpecialV6[] = {
    {"fd00:ec2::254", 128, AddressClass::metadata, "cloud metadata"},
    {"::1", 128, AddressClass::loopback, "loopback"},
    {"::", 128, AddressClass::unspecified, "unspecified"},
    // ::ffff:0:0/96 (IPv4-mapped) is read as IPv4 before this table.
    {"64:ff9b:1::", 48, AddressClass::nat64_local, "local-use IPv4/IPv6 translation"},
    {"100::", 64, AddressClass::reserved, "discard-only"},
    {"100:0:0:1::", 64, AddressClass::reserved, "dummy IPv6 prefix"},
    {"2001:1::1", 128, AddressClass::global, "port control protocol anycast"},
    {"2001:1::2", 128, AddressClass::global, "traversal using relays around NAT anycast"},
    {"2001:1::3", 128, AddressClass::global, "DNS-SD service registration protocol anycast"},
    {"2001:2::", 48, AddressClass::reserved, "benchmarking"},
    {"2001:3::", 32, AddressClass::global, "AMT"},
    {"2001:4:112::", 48, AddressClass::global, "AS112-v6"},
    {"2001:10::", 28, AddressClass::reserved, "deprecated ORCHID"},
    {"2001:20::", 28, AddressClass::global, "ORCHIDv2"},
    {"2001:30::", 28, AddressClass::global, "drone remote ID protocol entity tags"},
    {"2001::", 32, AddressClass::reserved, "Teredo"},
    {"2001::", 23, AddressClass::reserved, "IETF protocol assignments"},
    {"2001:db8::", 32, AddressClass::reserved, "documentation"},
    {"2620:4f:8000::", 48, AddressClass::global, "direct delegation AS112 service"},
    {"3fff::", 20, AddressClass::reserved, "documentation"},
    {"5f00::", 16, AddressClass::reserved, "segment routing (SRv6) SIDs"},
    {"fc00::", 7, AddressClass::ula, "unique-local"},
    {"fe80::", 10, AddressClass::link_local, "link-local unicast"},
    {"fec0::", 10, AddressClass::reserved, "deprecated site-local"},
    {"ff00::", 8, AddressClass::multicast, "multicast"},
};

bool in_prefix(const uint8_t *a, const uint8_t *net, int prefix) {
    int whole = prefix / 8, rest = prefix % 8;
    if (std::memcmp(a, net, static_cast<size_t>(whole)) != 0) return false;
    if (rest == 0) return true;
    auto mask = static_cast<uint8_t>(0xff << (8 - rest));
    return (a[whole] & mask) == (net[whole] & mask);
}

// The entry covering `a` (AF_INET or AF_INET6, not IPv4-mapped), or null.
const Special *special(const IpAddr &a) {
    auto find = [&](const auto &table) -> const Special * {
        for (const Special &s : table) {
            uint8_t net[16] = {};
            (void)::inet_pton(a.family, s.net, net);
            if (in_prefix(a.bytes, net, s.prefix)) return &s;
        }
        return nullptr;
    };
    return a.family == AF_INET ? find(kSpecialV4) : find(kSpecialV6);
}

struct Verdict {
    AddressClass cls;
    std::string name;
};

Verdict verdict_v4(const uint8_t *b) {
    IpAddr a;
    a.family = AF_INET;
    std::memcpy(a.bytes, b, 4);
    if (const Special *s = special(a)) return {s->cls, s->name};
    return {AddressClass::global, "global"};
}

// IPv6 forms that carry an IPv4 address the packet would end up at: a
// non-global one makes the IPv6 address non-global too.
Verdict verdict_v6(const uint8_t *b) {
    static const uint8_t zeros[12] = {};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    IpAddr a;
    a.family = AF_INET6;
    std::memcpy(a.bytes, b, 16);
    const Special *s = special(a);
    if (s && s->prefix == 128) return {s->cls, s->name}; // ::, ::1, metadata, anycast
    auto embedded = [](const uint8_t *v4, const char *form, AddressClass if_global) -> Verdict {
        Verdict v = verdict_v4(v4);
        if (v.cls == AddressClass::global) return {if_global, std::string(form)};
        return {v.cls, std::string(form) + " of " + v.name};
    };
    if (std::memcmp(b, zeros, 12) == 0) // ::/96, deprecated IPv4-compatible
        return embedded(b + 12, "IPv4-compatible", AddressClass::reserved);
    if (std::memcmp(b, nat64, 12) == 0) // 64:ff9b::/96, NAT64 well-known prefix
        return embedded(b + 12, "NAT64", AddressClass::global);
    if (b[0] == 0x20 && b[1] == 0x02) // 2002::/16, 6to4: the IPv4 address in bits 16..47
        return embedded(b + 2, "6to4", AddressClass::global);
    if (s) return {s->cls, s->name};
    // Outside 2000::/3 the IPv6 address space is unassigned (reserved by the IETF).
    if ((b[0] & 0xe0) != 0x20) return {AddressClass::reserved, "reserved by the IETF"};
    return {AddressClass::global, "global"};
}

Verdict verdict(const IpAddr &addr) {
    IpAddr a = canonical(addr);
    if (a.family == AF_INET) return verdict_v4(a.bytes);
    if (a.family == AF_INET6) return verdict_v6(a.bytes);
    return {AddressClass::reserved, "no address"};
}

} // namespace

AddressClass classify(const IpAddr &addr) {
    return verdict(addr).cls;
}

std::string describe_class(const IpAddr &addr) {
    return verdict(addr).name;
}

const char *class_name(AddressClass c) {
    switch (c) {
    case AddressClass::global:
        return "global";
    case AddressClass::loopback:
        return "loopback";
    case AddressClass::private_net:
        return "private";
    case AddressClass::link_local:
        return "link-local";
    case AddressClass::cgnat:
        return "CGNAT";
    case AddressClass::ula:
        return "ULA";
    case AddressClass::metadata:
        return "metadata";
    case AddressClass::unspecified:
        return "unspecified";
    case AddressClass::multicast:
        return "multicast";
    case AddressClass::nat64_local:
        return "NAT64 local-use";
    case AddressClass::reserved:
        return "reserved";
    }
    return "reserved";
}

bool Pattern::allows_port(uint16_t port) const {
    if (ports.empty()) return port == 80 || port == 443;
    return std::find(ports.begin(), ports.end(), port) != ports.end();
}

Result<std::vector<Pattern>> parse_patterns(std::string_view list, std::string_view key) {
    std::string where = "annotations[" + std::string(key) + "]";
    if (trim(list).empty()) return fail(where + ": empty list");
    std::vector<Pattern> out;
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = std::min(list.find(',', start), list.size());
        std::string_view entry = trim(list.substr(start, end - start));
        if (entry.empty()) return fail(where + ": \"\": empty entry");
        auto p = parse_entry(entry);
        if (!p) return forward(std::move(p.error()), where + ": " + quote(entry));
        out.push_back(std::move(*p));
        start = end + 1;
    }
    return out;
}

Result<Host> normalize_host(std::string_view raw) {
    if (raw.empty()) return fail("empty host");
    if (raw.size() > kMaxRaw) return fail("host longer than 253 characters");
    // Control bytes and spaces first: nothing below may see past them.
    for (unsigned char c : raw) {
        if (c <= 0x20 || c == 0x7f)
            return fail("invalid character " + char_repr(c) + " in host " + quote(raw));
    }
    if (raw.find('@') != std::string_view::npos) return fail("userinfo in host " + quote(raw));
    if (raw.find('%') != std::string_view::npos) {
        bool v6 = raw.find(':') != std::string_view::npos;
        return fail((v6 ? "zone id in host " : "percent-encoding in host ") + quote(raw));
    }
    if (raw.find(':') != std::string_view::npos) return ipv6_host(raw);

    std::string s;
    bool ascii = true;
    for (unsigned char c : raw) {
        ascii = ascii && c < 0x80;
        s += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c);
    }
    if (!ascii) s = OCI_TRY(to_punycode(s, raw));
    if (!s.empty() && s.back() == '.') s.pop_back();
    if (s.empty()) return fail("empty host");
    for (char c : s) {
        if (!lower_alnum(c) && c != '-' && c != '_' && c != '.')
            return fail("invalid character " + char_repr(static_cast<unsigned char>(c)) +
                        " in host " + quote(raw));
    }
    if (s.size() > kMaxName) return fail("host longer than 253 characters");
    OCI_CHECK(check_labels(s, raw));

    // No top-level domain starts with a digit: such a name is an IPv4 literal
    // in one of the notations inet_aton (and so the resolver) accepts.
    size_t last = s.rfind('.');
    if (digit(s[last == std::string::npos ? 0 : last + 1])) {
        IpAddr a;
        a.family = AF_INET;
        in_addr in{};
        if (::inet_aton(s.c_str(), &in) == 0) return fail("invalid IPv4 address " + quote(raw));
        std::memcpy(a.bytes, &in, 4);
        return address_host(a);
    }
    Host h;
    h.name = std::move(s);
    return h;
}

const Pattern *match(const std::vector<Pattern> &patterns, const Host &host, uint16_t port,
                     bool any_port_when_unset) {
    for (const Pattern &p : patterns) {
        if (!(any_port_when_unset && p.ports.empty()) && !p.allows_port(port)) continue;
        switch (p.kind) {
        case Pattern::Kind::exact:
            if (!host.is_address && host.name == p.name) return &p;
            break;
        case Pattern::Kind::subdomains:
            if (!host.is_address && host.name.size() > p.name.size() + 1 &&
                host.name.ends_with(p.name) &&
                host.name[host.name.size() - p.name.size() - 1] == '.')
                return &p;
            break;
        case Pattern::Kind::address:
            if (host.is_address && in_net(host.addr, p.net, p.prefix)) return &p;
            break;
        }
    }
    return nullptr;
}

const Pattern *covering(const std::vector<Pattern> &patterns, const IpAddr &a, uint16_t port,
                        bool any_port_when_unset) {
    for (const Pattern &p : patterns) {
        if (p.kind != Pattern::Kind::address || !in_net(a, p.net, p.prefix)) continue;
        if ((any_port_when_unset && p.ports.empty()) || p.allows_port(port)) return &p;
    }
    return nullptr;
}

const Pattern *covering(const std::vector<Pattern> &patterns, const IpAddr &a) {
    for (const Pattern &p : patterns)
        if (p.kind == Pattern::Kind::address && in_net(a, p.net, p.prefix)) return &p;
    return nullptr;
}

} // namespace ocirun::egress
