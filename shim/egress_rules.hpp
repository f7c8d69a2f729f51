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

// What an address is, for the rule "names resolve to global addresses only".
// IPv4                                      IPv6
//   loopback     127.0.0.0/8                  ::1
//   private_net  10/8, 172.16/12, 192.168/16  -
//   link_local   169.254/16 (but metadata)    fe80::/10
//   cgnat        100.64/10                    -
//   ula          -                            fc00::/7 (but metadata)
//   metadata     169.254.169.254, 169.254.170.2, fd00:ec2::254
//   unspecified  0.0.0.0/8                    ::
//   multicast    224/4                        ff00::/8
//   reserved     240/4 (255.255.255.255 too), 2001:db8::/32, 100::/64,
//                192.0.0/24, 198.18/15,       ::/96 but ::1 and ::
//                192.0.2/24, 198.51.100/24,
//                203.0.113/24
//   global       everything else
// ::ffff:a.b.c.d is classified as a.b.c.d; so is NAT64 64:ff9b::a.b.c.d (the
// translator would reach a.b.c.d).
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
    reserved
};
AddressClass classify(const IpAddr &a);
// "loopback", "private", "link-local", "CGNAT", "ULA", "metadata",
// "unspecified", "multicast", "reserved", "global".
const char *class_name(AddressClass c);

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

// An address pattern covering `a` (any port), or null: a name may resolve to
// a non-global address only then.
const Pattern *covering(const std::vector<Pattern> &patterns, const IpAddr &a);

} // namespace ocirun::egress
