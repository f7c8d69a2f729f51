// The egress proxy's decisions as pure functions (no I/O): hosts as clients
// write them, normalised once; the allow-list patterns of an annotation; which
// pattern lets a host:port through; and the class of an address a name
// resolved to (a name may reach a non-global address only when an address
// pattern covers it).
#pragma once

#include "oci/error.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun::egress {

// An IPv4 or IPv6 address; AF_INET uses bytes[0..3].
struct IpAddr {
    int family = 0; // AF_INET, AF_INET6 or 0 (none)
    uint8_t bytes[16] = {};
};

bool operator==(const IpAddr &a, const IpAddr &b);
// "127.0.0.1", "::1" (inet_ntop); "" for an address without a family.
std::string to_string(const IpAddr &a);
// ::ffff:a.b.c.d -> AF_INET a.b.c.d; anything else unchanged.
IpAddr canonical(const IpAddr &a);
// The address of an AF_INET / AF_INET6 socket address, canonical(); family 0
// for anything else.
IpAddr from_sockaddr(const sockaddr *sa);

// What an address is, for the rule "names resolve to global addresses only":
// the entry of the IANA IPv4 or IPv6 Special-Purpose Address Registry that
// covers it (every entry; the most specific decides), else global. Entries
// the registries call globally reachable (the PCP and TURN anycast
// addresses, AS112, AMT, ORCHIDv2, ...) are global; those marked N/A
// (Teredo, the deprecated 6to4 relay anycast and ORCHID) are reserved. IPv6
// outside 2000::/3 and the listed blocks is unassigned: reserved. Cloud
// metadata addresses (169.254.169.254, 169.254.170.2, fd00:ec2::254) are
// their own class. Forms that embed an IPv4 address the packet would reach
// take its class when that is not global: ::ffff:a.b.c.d (IPv4-mapped, read
// as a.b.c.d), ::a.b.c.d (IPv4-compatible, deprecated: reserved when
// global), 64:ff9b::a.b.c.d (NAT64) and 2002:AABB:CCDD::/48 (6to4);
// 64:ff9b:1::/48 (NAT64 local-use, RFC 8215) is never global.
enum class AddressClass {
    global,
    loopback,
    private_net,
    link_local,
    cgnat,
    ula,
    metadata,
    unspecified,
    multicast,
    nat64_local,
    reserved
};
AddressClass classify(const IpAddr &a);
// "loopback", "private", "link-local", "CGNAT", "ULA", "metadata",
// "unspecified", "multicast", "NAT64 local-use", "reserved", "global".
const char *class_name(AddressClass c);
// The registry entry's name for `a` ("documentation (TEST-NET-1)",
// "6to4 of private-use", ...), or "global".
std::string describe_class(const IpAddr &a);

// One entry of an allow-list annotation.
struct Pattern {
    enum class Kind { exact, subdomains, address };
    Kind kind = Kind::exact;
    std::string name;            // exact: normalised host; subdomains: the suffix after "*."
    IpAddr net;                  // address: the network (host bits zero)
    int prefix = 0;              // address: prefix length
    std::vector<uint16_t> ports; // empty: 80 and 443
    std::string text;            // the entry as written, for events and reports

    bool allows_port(uint16_t port) const;
};

// A comma-separated allow-list as in the annotation `key`, entries trimmed of
// spaces:
//   example.com  *.example.com  name:8443  10.0.0.0/8  192.168.1.7:8080
//   [::1]  [fd00::]/8:443  ::1  fd00::/8   (a bare IPv6 entry takes no port)
// Names are normalised like hosts (normalize_host); an address pattern's host
// bits must be zero. Refused, one line naming the key and the entry
// (`annotations[KEY]: "ENTRY": REASON`): an empty list or entry, "*", "*.",
// a "*" anywhere but a leading "*.", a wildcard over an IP literal, a prefix
// on a name or out of range, a port that is not 1..65535, a host that
// normalize_host refuses.
Result<std::vector<Pattern>> parse_patterns(std::string_view list, std::string_view key);

// A host as a client wrote it, normalised.
struct Host {
    bool is_address = false;
    std::string name; // normalised name, or to_string(addr)
    IpAddr addr;      // canonical()
};

// A host from a request (CONNECT authority or URL host, brackets removed):
// ASCII lowercased, UTF-8 IDN converted to punycode (libidn2, non-transitional),
// one trailing dot dropped. IPv6 literals and every IPv4 notation inet_aton
// accepts (2130706433, 0x7f000001, 0177.0.0.1, 127.1) become addresses; a name
// whose last label starts with a digit must be such an address (no top-level
// domain does), so "1.2.3.4.5" and "0x1g" are refused. Refused too: empty,
// userinfo ("@"), percent-encoding or an IPv6 zone ("%"), an invalid IDN,
// empty labels, characters other than [a-z0-9-_.], labels starting or ending
// with "-", labels over 63 or names over 253 characters. The error message is
// the reason, e.g. `userinfo in host "u@a.com"`.
Result<Host> normalize_host(std::string_view raw);

// The first pattern letting host:port through, or null. exact: the same name;
// subdomains: names ending in "." + suffix (not the suffix itself); address:
// address hosts inside net/prefix. The pattern must allow the port.
// With any_port_when_unset (deny lists), an entry without a port matches
// every port.
const Pattern *match(const std::vector<Pattern> &patterns, const Host &host, uint16_t port,
                     bool any_port_when_unset = false);

// An address pattern covering `a` whose ports take `port`, or null: a name
// may resolve to a non-global address only then, and only for the ports that
// pattern allows (a name's rule and the address's rule must both allow the
// port). With any_port_when_unset (deny lists), an entry without a port
// covers every port.
const Pattern *covering(const std::vector<Pattern> &patterns, const IpAddr &a, uint16_t port,
                        bool any_port_when_unset = false);
// An address pattern covering `a`, whatever its ports (for messages).
const Pattern *covering(const std::vector<Pattern> &patterns, const IpAddr &a);

} // namespace ocirun::egress
