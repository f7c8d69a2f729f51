// The egress proxy's decisions without a proxy: allow-list patterns, hosts as
// clients write them, address classes and request heads.
#include "oci/policy/egress_rules.hpp"
#include "shim/http_request.hpp"
#include "unit_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

using namespace ocirun;
using namespace ocirun::egress;
using namespace std::literals;

namespace {

const char *const kKey = "dev.ocirun.domains";

std::vector<Pattern> pats(std::string_view list) {
    auto p = parse_patterns(list, kKey);
    cr_assert(p.has_value(), "%s", p ? "" : p.error().text().c_str());
    return *p;
}

std::string pat_error(std::string_view list) {
    auto p = parse_patterns(list, kKey);
    cr_assert(!p.has_value(), "\"%.*s\" parsed without error", static_cast<int>(list.size()),
              list.data());
    return p.error().text();
}

// `annotations[dev.ocirun.domains]: "ENTRY": REASON`
std::string entry_error(const std::string &entry, const std::string &reason) {
    return "annotations[dev.ocirun.domains]: \"" + entry + "\": " + reason;
}

Host host(std::string_view raw) {
    auto h = normalize_host(raw);
    cr_assert(h.has_value(), "%s", h ? "" : h.error().text().c_str());
    return *h;
}

std::string host_error(std::string_view raw) {
    auto h = normalize_host(raw);
    cr_assert(!h.has_value(), "\"%.*s\" normalised without error", static_cast<int>(raw.size()),
              raw.data());
    return h.error().text();
}

IpAddr ip(const char *text) {
    IpAddr a;
    a.family = std::strchr(text, ':') ? AF_INET6 : AF_INET;
    cr_assert_eq(::inet_pton(a.family, text, a.bytes), 1, "bad test address %s", text);
    return a;
}

// Whether the list lets host:port through.
bool allows(std::string_view list, std::string_view raw, uint16_t port) {
    auto p = pats(list);
    return match(p, host(raw), port) != nullptr;
}

void expect_class(const char *addr, AddressClass want) {
    AddressClass got = classify(ip(addr));
    cr_assert_eq(got, want, "%s: %s, want %s", addr, class_name(got), class_name(want));
}

ParseResult parse(std::string_view buf, size_t max_head = 16384) {
    return parse_request(buf, max_head);
}

void expect_bad(std::string_view buf, int status, const std::string &reason) {
    ParseResult r = parse(buf);
    cr_assert_eq(r.state, ParseState::bad, "not refused: %.*s", static_cast<int>(buf.size()),
                 buf.data());
    cr_assert_eq(r.status, status, "%d for %.*s", r.status, static_cast<int>(buf.size()),
                 buf.data());
    unit::expect_eq(r.reason, reason);
}

Request done(std::string_view buf) {
    ParseResult r = parse(buf);
    cr_assert_eq(r.state, ParseState::done, "%s", r.reason.c_str());
    cr_assert_eq(r.req.head_len, buf.size());
    return r.req;
}

} // namespace

// ---- allow-list patterns -------------------------------------------------

Test(egress, patterns_of_every_form) {
    auto p = pats(" example.com , *.Example.ORG,name:8443,10.0.0.0/8, 192.168.1.7,"
                  "[::1],[fd00::]/8:443,::1,fd00::/16,[::ffff:10.0.0.0]/104");
    cr_assert_eq(p.size(), 10u);
    cr_assert_eq(p[0].kind, Pattern::Kind::exact);
    unit::expect_eq(p[0].name, "example.com");
    unit::expect_eq(p[0].text, "example.com");
    cr_assert(p[0].ports.empty());
    cr_assert_eq(p[1].kind, Pattern::Kind::subdomains);
    unit::expect_eq(p[1].name, "example.org");
    unit::expect_eq(p[1].text, "*.Example.ORG");
    cr_assert_eq(p[2].kind, Pattern::Kind::exact);
    unit::expect_eq(p[2].name, "name");
    cr_assert_eq(p[2].ports.size(), 1u);
    cr_assert_eq(p[2].ports[0], 8443);
    cr_assert_eq(p[3].kind, Pattern::Kind::address);
    cr_assert(p[3].net == ip("10.0.0.0"));
    cr_assert_eq(p[3].prefix, 8);
    cr_assert(p[4].net == ip("192.168.1.7"));
    cr_assert_eq(p[4].prefix, 32);
    cr_assert(p[5].net == ip("::1"));
    cr_assert_eq(p[5].prefix, 128);
    cr_assert(p[5].ports.empty());
    cr_assert(p[6].net == ip("fd00::"));
    cr_assert_eq(p[6].prefix, 8);
    cr_assert_eq(p[6].ports.size(), 1u);
    cr_assert_eq(p[6].ports[0], 443);
    unit::expect_eq(p[6].text, "[fd00::]/8:443");
    cr_assert(p[7].net == ip("::1"));
    cr_assert(p[8].net == ip("fd00::"));
    cr_assert_eq(p[8].prefix, 16);
    // An IPv4-mapped network becomes IPv4: its prefix loses the 96 mapped bits.
    cr_assert(p[9].net == ip("10.0.0.0"));
    cr_assert_eq(p[9].prefix, 8);
    // A name is normalised like a host: an IPv4 notation becomes an address.
    auto q = pats("127.1:8080");
    cr_assert_eq(q[0].kind, Pattern::Kind::address);
    cr_assert(q[0].net == ip("127.0.0.1"));
    cr_assert_eq(q[0].ports[0], 8080);
}

Test(egress, pattern_errors_name_the_key_and_the_entry) {
    unit::expect_eq(pat_error(""), "annotations[dev.ocirun.domains]: empty list");
    unit::expect_eq(pat_error("  "), "annotations[dev.ocirun.domains]: empty list");
    unit::expect_eq(pat_error("a.com,,b.com"), entry_error("", "empty entry"));
    unit::expect_eq(pat_error("a.com, "), entry_error("", "empty entry"));
    unit::expect_eq(pat_error("*"), entry_error("*", "a bare \"*\" would allow every host"));
    unit::expect_eq(pat_error("*."), entry_error("*.", "\"*.\" without a domain"));
    unit::expect_eq(pat_error("a.*.com"),
                    entry_error("a.*.com", "\"*\" is allowed only as a leading \"*.\""));
    unit::expect_eq(pat_error("*com"),
                    entry_error("*com", "\"*\" is allowed only as a leading \"*.\""));
    unit::expect_eq(pat_error("*.*.com"),
                    entry_error("*.*.com", "\"*\" is allowed only as a leading \"*.\""));
    unit::expect_eq(pat_error("a.com:0"), entry_error("a.com:0", "port \"0\" is not in 1..65535"));
    unit::expect_eq(pat_error("a.com:65536"),
                    entry_error("a.com:65536", "port \"65536\" is not in 1..65535"));
    unit::expect_eq(pat_error("a.com:123456"),
                    entry_error("a.com:123456", "port \"123456\" is not in 1..65535"));
    unit::expect_eq(pat_error("a.com:https"),
                    entry_error("a.com:https", "port \"https\" is not a number"));
    unit::expect_eq(pat_error("a.com:-1"), entry_error("a.com:-1", "port \"-1\" is not a number"));
    unit::expect_eq(pat_error("a.com:"), entry_error("a.com:", "empty port"));
    unit::expect_eq(pat_error("10.0.0.0/33"),
                    entry_error("10.0.0.0/33", "prefix length \"33\" is not in 0..32"));
    unit::expect_eq(pat_error("[fd00::]/129"),
                    entry_error("[fd00::]/129", "prefix length \"129\" is not in 0..128"));
    unit::expect_eq(pat_error("10.0.0.0/x"),
                    entry_error("10.0.0.0/x", "prefix length \"x\" is not in 0..32"));
    unit::expect_eq(pat_error("10.0.0.0/"), entry_error("10.0.0.0/", "empty prefix length"));
    unit::expect_eq(pat_error("10.0.0.1/8"),
                    entry_error("10.0.0.1/8", "host bits set (the network is 10.0.0.0/8)"));
    unit::expect_eq(pat_error("fd00::/7"),
                    entry_error("fd00::/7", "host bits set (the network is fc00::/7)"));
    unit::expect_eq(pat_error("a.com/8"), entry_error("a.com/8", "a prefix length on a name"));
    unit::expect_eq(pat_error("*.1.2.3.4"),
                    entry_error("*.1.2.3.4", "an IP address with a \"*.\" wildcard"));
    unit::expect_eq(pat_error("*.[::1]"), entry_error("*.[::1]", "invalid IPv6 address \"[::1]\""));
    unit::expect_eq(pat_error("*.::1"),
                    entry_error("*.::1", "an IP address with a \"*.\" wildcard"));
    unit::expect_eq(pat_error("[1.2.3.4]"),
                    entry_error("[1.2.3.4]", "brackets hold IPv6 addresses only"));
    unit::expect_eq(pat_error("[::1"), entry_error("[::1", "missing \"]\""));
    unit::expect_eq(pat_error("[::1]x"), entry_error("[::1]x", "unexpected text after \"]\""));
    unit::expect_eq(
        pat_error("[::ffff:10.0.0.0]/8"),
        entry_error("[::ffff:10.0.0.0]/8", "prefix length of an IPv4-mapped network below 96"));
    unit::expect_eq(pat_error("a b.com"),
                    entry_error("a b.com", "invalid character \" \" in host \"a b.com\""));
    unit::expect_eq(pat_error("a!.com"),
                    entry_error("a!.com", "invalid character '!' in host \"a!.com\""));
    unit::expect_eq(pat_error("u@a.com"), entry_error("u@a.com", "userinfo in host \"u@a.com\""));
    unit::expect_eq(pat_error("ok.com,-a.com"),
                    entry_error("-a.com", "label starts or ends with '-' in host \"-a.com\""));
    std::string label64(64, 'a');
    unit::expect_eq(pat_error(label64 + ".com"),
                    entry_error(label64 + ".com",
                                "label longer than 63 characters in host \"" + label64 + ".com\""));
    std::string long_name;
    for (int i = 0; i < 42; ++i)
        long_name += "abcde.";
    long_name += "com"; // 255 characters
    unit::expect_eq(pat_error(long_name),
                    entry_error(long_name, "host longer than 253 characters"));
    // The edges themselves are fine: a 63-character label, a 253-character name.
    pats(std::string(63, 'a') + ".com");
    pats(long_name.substr(2));
}

// ---- matching names ------------------------------------------------------

Test(egress, wildcard_matches_subdomains_only) {
    const char *list = "*.a.com";
    cr_assert(allows(list, "x.a.com", 443));
    cr_assert(allows(list, "x.y.a.com", 443));
    cr_assert(!allows(list, "a.com", 443));
    cr_assert(!allows(list, "evila.com", 443));
    cr_assert(!allows(list, "x.evila.com", 443));
    cr_assert(!allows(list, "a.com.evil.net", 443));
    cr_assert(!allows(list, "b.com", 443));
    // The exact pattern is the other half.
    cr_assert(allows("a.com", "a.com", 443));
    cr_assert(!allows("a.com", "x.a.com", 443));
    cr_assert(!allows("a.com", "evila.com", 443));
}

Test(egress, hosts_are_normalised_before_matching) {
    unit::expect_eq(host("a.com.").name, "a.com");
    unit::expect_eq(host("A.COM").name, "a.com");
    unit::expect_eq(host("X.A.Com.").name, "x.a.com");
    unit::expect_eq(host("_srv.a.com").name, "_srv.a.com");
    cr_assert(!host("a.com").is_address);
    cr_assert(allows("a.com", "a.com.", 443));
    cr_assert(allows("a.com", "A.COM", 80));
    cr_assert(allows("A.Com.", "a.com", 80));
    cr_assert(allows("*.a.com", "X.A.COM.", 443));
    unit::expect_eq(host_error("a.com.."), "empty label in host \"a.com..\"");
    unit::expect_eq(host_error("a..com"), "empty label in host \"a..com\"");
    unit::expect_eq(host_error(".a.com"), "empty label in host \".a.com\"");
    unit::expect_eq(host_error("."), "empty host");
    unit::expect_eq(host_error(""), "empty host");
    unit::expect_eq(host_error("a-.com"), "label starts or ends with '-' in host \"a-.com\"");
    unit::expect_eq(host_error("a.com/x"), "invalid character '/' in host \"a.com/x\"");
    unit::expect_eq(host_error("a.com\r\nX: y"), "invalid character \"\\x0d\" in host "
                                                 "\"a.com\\x0d\\x0aX: y\"");
    unit::expect_eq(host_error("a.com\0.evil"sv),
                    "invalid character \"\\x00\" in host \"a.com\\x00.evil\"");
    unit::expect_eq(host_error(std::string(2000, 'a')), "host longer than 253 characters");
}

Test(egress, userinfo_and_percent_encoding_refused) {
    unit::expect_eq(host_error("user@a.com"), "userinfo in host \"user@a.com\"");
    unit::expect_eq(host_error("u@a.com"), "userinfo in host \"u@a.com\"");
    unit::expect_eq(host_error("a%2ecom"), "percent-encoding in host \"a%2ecom\"");
    unit::expect_eq(host_error("%61.com"), "percent-encoding in host \"%61.com\"");
    unit::expect_eq(host_error("fe80::1%eth0"), "zone id in host \"fe80::1%eth0\"");
    unit::expect_eq(host_error("fe80::1%25eth0"), "zone id in host \"fe80::1%25eth0\"");
}

Test(egress, idn_becomes_punycode) {
    Host h = host("bücher.example");
    cr_assert(!h.is_address);
    unit::expect_eq(h.name, "xn--bcher-kva.example");
    unit::expect_eq(host("BÜCHER.Example.").name, "xn--bcher-kva.example");
    unit::expect_eq(host("straße.de").name, "xn--strae-oqa.de"); // non-transitional
    cr_assert(allows("xn--bcher-kva.example", "bücher.example", 443));
    cr_assert(allows("bücher.example", "xn--bcher-kva.example", 443));
    cr_assert(allows("*.bücher.example", "www.xn--bcher-kva.example", 443));
    unit::expect_eq(pats("*.bücher.example")[0].name, "xn--bcher-kva.example");
    cr_assert(!allows("bucher.example", "bücher.example", 443));
    // Mapped forms resolve like their ASCII equivalent, so they match it.
    unit::expect_eq(host("ｅxample.com").name, "example.com");
    unit::expect_eq(host("a。com").name, "a.com");
    unit::expect_eq(host("ⓐ.com").name, "a.com");
    // What a mapping turns into a forbidden ASCII character is refused as it.
    unit::expect_eq(host_error("a＠b.com"), "invalid character '@' in host \"a＠b.com\"");
    unit::expect_eq(host_error("a／b.com"), "invalid character '/' in host \"a／b.com\"");
    cr_assert(host_error("-ü.com").starts_with("invalid internationalised name \"-ü.com\": "));
    cr_assert(host_error("\xff\xfe.com").starts_with("invalid internationalised name "));
}

// ---- addresses in hosts ----------------------------------------------------

Test(egress, every_ipv4_notation_is_an_address) {
    const char *forms[] = {"127.0.0.1",  "2130706433", "0x7f000001",  "0X7F000001",
                           "0177.0.0.1", "127.1",      "127.0.1",     "0x7f.1",
                           "0x7f.0.0.1", "127.0.0.1.", "017700000001"};
    for (const char *f : forms) {
        Host h = host(f);
        cr_assert(h.is_address, "%s is not an address", f);
        cr_assert(h.addr == ip("127.0.0.1"), "%s is %s", f, h.name.c_str());
        unit::expect_eq(h.name, "127.0.0.1");
        // An address host matches address patterns only: never a name pattern
        // that happens to spell it, nor a wildcard.
        cr_assert(allows("127.0.0.1", f, 80), "%s", f);
        cr_assert(allows("127.0.0.0/8", f, 443), "%s", f);
        cr_assert(!allows("127.0.0.1.nip.io", f, 80), "%s", f);
        cr_assert(!allows("*.nip.io,*.0.0.1.nip.io", f, 80), "%s", f);
    }
    cr_assert(host("0").addr == ip("0.0.0.0"));
    // A name spelling an address is a name, resolved like any other.
    Host nip = host("127.0.0.1.nip.io");
    cr_assert(!nip.is_address);
    cr_assert(allows("127.0.0.1.nip.io", "127.0.0.1.nip.io", 80));
    cr_assert(!allows("127.0.0.1", "127.0.0.1.nip.io", 80));
    cr_assert(!host("1password.com").is_address);
    cr_assert(!host("cafe.face").is_address);
}

Test(egress, numeric_names_that_are_not_addresses_refused) {
    unit::expect_eq(host_error("1.2.3.4.5"), "invalid IPv4 address \"1.2.3.4.5\"");
    unit::expect_eq(host_error("0x1g"), "invalid IPv4 address \"0x1g\"");
    unit::expect_eq(host_error("1.2.3.256"), "invalid IPv4 address \"1.2.3.256\"");
    unit::expect_eq(host_error("4294967296"), "invalid IPv4 address \"4294967296\"");
    unit::expect_eq(host_error("08"), "invalid IPv4 address \"08\"");
    unit::expect_eq(host_error("a.1"), "invalid IPv4 address \"a.1\"");
    unit::expect_eq(host_error("127.0.0.1x"), "invalid IPv4 address \"127.0.0.1x\"");
    // Full-width digits map to ASCII ones: still an address.
    cr_assert(host("１２７.０.０.１").addr == ip("127.0.0.1"));
}

Test(egress, ipv6_hosts) {
    Host h = host("::1");
    cr_assert(h.is_address);
    cr_assert_eq(h.addr.family, AF_INET6);
    unit::expect_eq(h.name, "::1");
    unit::expect_eq(host("FD00:0:0::0001").name, "fd00::1");
    Host mapped = host("::ffff:127.0.0.1");
    cr_assert_eq(mapped.addr.family, AF_INET);
    unit::expect_eq(mapped.name, "127.0.0.1");
    unit::expect_eq(host("::FFFF:7f00:1").name, "127.0.0.1");
    cr_assert(allows("127.0.0.1", "::ffff:127.0.0.1", 443));
    cr_assert(allows("[::1]", "::1", 443));
    cr_assert(allows("::1", "0:0:0:0:0:0:0:1", 80));
    cr_assert(allows("[::ffff:127.0.0.1]", "127.0.0.1", 80));
    cr_assert(!allows("::1", "127.0.0.1", 80));
    unit::expect_eq(host_error("[::1]"), "invalid IPv6 address \"[::1]\"");
    unit::expect_eq(host_error("::1::2"), "invalid IPv6 address \"::1::2\"");
    unit::expect_eq(host_error("a.com:443"), "invalid IPv6 address \"a.com:443\"");
    unit::expect_eq(host_error("fe80::1%eth0"), "zone id in host \"fe80::1%eth0\"");
}

Test(egress, cidr_edges) {
    auto v4 = pats("10.1.2.0/23");
    auto in = [](const std::vector<Pattern> &p, const char *a) {
        return covering(p, ip(a)) != nullptr;
    };
    cr_assert(!in(v4, "10.1.1.255"));
    cr_assert(in(v4, "10.1.2.0"));
    cr_assert(in(v4, "10.1.3.255"));
    cr_assert(!in(v4, "10.1.4.0"));
    cr_assert(in(v4, "::ffff:10.1.2.9")); // mapped: the same address
    cr_assert(match(v4, host("10.1.3.255"), 443) != nullptr);
    cr_assert(match(v4, host("10.1.4.0"), 443) == nullptr);
    auto v6 = pats("[2001:db8:0:10::]/60");
    cr_assert(!in(v6, "2001:db8:0:f:ffff:ffff:ffff:ffff"));
    cr_assert(in(v6, "2001:db8:0:10::"));
    cr_assert(in(v6, "2001:db8:0:1f:ffff:ffff:ffff:ffff"));
    cr_assert(!in(v6, "2001:db8:0:20::"));
    cr_assert(!in(v6, "10.1.2.3")); // another family
    cr_assert(match(v6, host("2001:db8:0:1f::1"), 80) != nullptr);
    auto odd = pats("fc00::/7,192.168.0.0/17");
    cr_assert(in(odd, "fdff:ffff::1"));
    cr_assert(in(odd, "fc00::"));
    cr_assert(!in(odd, "fe00::"));
    cr_assert(!in(odd, "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
    cr_assert(in(odd, "192.168.127.255"));
    cr_assert(!in(odd, "192.168.128.0"));
    auto all = pats("0.0.0.0/0,[::]/0");
    cr_assert(in(all, "255.255.255.255"));
    cr_assert(in(all, "ffff::1"));
    auto one = pats("192.168.1.7");
    cr_assert(in(one, "192.168.1.7"));
    cr_assert(!in(one, "192.168.1.6"));
    cr_assert(!in(one, "192.168.1.8"));
    // covering ignores the port; match does not.
    auto port = pats("10.0.0.0/8:5432");
    cr_assert(in(port, "10.9.9.9"));
    cr_assert(match(port, host("10.9.9.9"), 443) == nullptr);
    cr_assert(match(port, host("10.9.9.9"), 5432) != nullptr);
    // Name patterns never cover an address.
    cr_assert(!in(pats("localhost,*.internal"), "127.0.0.1"));
    cr_assert(covering({}, ip("10.0.0.1")) == nullptr);
}

Test(egress, ports_default_to_80_and_443) {
    auto p = pats("a.com");
    cr_assert(p[0].allows_port(80));
    cr_assert(p[0].allows_port(443));
    cr_assert(!p[0].allows_port(8080));
    cr_assert(!p[0].allows_port(22));
    cr_assert(allows("a.com", "a.com", 80));
    cr_assert(allows("a.com", "a.com", 443));
    cr_assert(!allows("a.com", "a.com", 8443));
    cr_assert(allows("a.com:8443", "a.com", 8443));
    cr_assert(!allows("a.com:8443", "a.com", 443));
    cr_assert(!allows("a.com:8443", "a.com", 80));
    cr_assert(allows("[::1]:22", "::1", 22));
    cr_assert(!allows("[::1]:22", "::1", 443));
    cr_assert(allows("*.a.com:9000", "x.a.com", 9000));
    cr_assert(!allows("*.a.com:9000", "x.a.com", 443));
    // The first matching pattern is the one returned.
    auto two = pats("a.com:8443,a.com,*.a.com");
    cr_assert_eq(match(two, host("a.com"), 8443), &two[0]);
    cr_assert_eq(match(two, host("a.com"), 443), &two[1]);
    cr_assert_eq(match(two, host("b.a.com"), 80), &two[2]);
    cr_assert_null(match(two, host("b.a.com"), 8443));
}

// ---- address classes -------------------------------------------------------

// Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (as of 2026; written out here from the registries, not from the code's
// table): the first and the last address of each block, and whether the
// registry calls it globally reachable. "N/A" entries are not global here.
Test(egress, special_purpose_registries_every_entry) {
    struct Entry {
        const char *first, *last;
        bool global;
    };
    const Entry v4[] = {
        {"0.0.0.0", "0.255.255.255", false},           // "this network", RFC 791
        {"0.0.0.0", "0.0.0.0", false},                 // "this host on this network"
        {"10.0.0.0", "10.255.255.255", false},         // private-use, RFC 1918
        {"100.64.0.0", "100.127.255.255", false},      // shared address space, RFC 6598
        {"127.0.0.0", "127.255.255.255", false},       // loopback
        {"169.254.0.0", "169.254.255.255", false},     // link local, RFC 3927
        {"172.16.0.0", "172.31.255.255", false},       // private-use
        {"192.0.0.0", "192.0.0.255", false},           // IETF protocol assignments, RFC 6890
        {"192.0.0.0", "192.0.0.7", false},             // IPv4 service continuity prefix, RFC 7335
        {"192.0.0.8", "192.0.0.8", false},             // IPv4 dummy address, RFC 7600
        {"192.0.0.9", "192.0.0.9", true},              // PCP anycast, RFC 7723
        {"192.0.0.10", "192.0.0.10", true},            // TURN anycast, RFC 8155
        {"192.0.0.170", "192.0.0.171", false},         // NAT64/DNS64 discovery, RFC 8880
        {"192.0.2.0", "192.0.2.255", false},           // documentation (TEST-NET-1), RFC 5737
        {"192.31.196.0", "192.31.196.255", true},      // AS112-v4, RFC 7535
        {"192.52.193.0", "192.52.193.255", true},      // AMT, RFC 7450
        {"192.88.99.0", "192.88.99.255", false},       // deprecated 6to4 relay anycast (N/A)
        {"192.168.0.0", "192.168.255.255", false},     // private-use
        {"192.175.48.0", "192.175.48.255", true},      // direct delegation AS112, RFC 7534
        {"198.18.0.0", "198.19.255.255", false},       // benchmarking, RFC 2544
        {"198.51.100.0", "198.51.100.255", false},     // documentation (TEST-NET-2)
        {"203.0.113.0", "203.0.113.255", false},       // documentation (TEST-NET-3)
        {"240.0.0.0", "255.255.255.254", false},       // reserved, RFC 1112
        {"255.255.255.255", "255.255.255.255", false}, // limited broadcast, RFC 919
        {"224.0.0.0", "239.255.255.255", false},       // multicast (its own registry)
    };
    const Entry v6[] = {
        {"::1", "::1", false},                             // loopback
        {"::", "::", false},                               // unspecified
        {"::ffff:0.0.0.0", "::ffff:0.255.255.255", false}, // IPv4-mapped "this network"
        {"::ffff:8.8.8.8", "::ffff:8.8.8.8", true},        // IPv4-mapped, global
        {"64:ff9b::8.8.8.8", "64:ff9b::8.8.8.8", true},    // IPv4-IPv6 translation, RFC 6052
        {"64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
         false},                                              // local-use translation, RFC 8215
        {"100::", "100::ffff:ffff:ffff:ffff", false},         // discard-only, RFC 6666
        {"100:0:0:1::", "100::1:ffff:ffff:ffff:ffff", false}, // dummy IPv6 prefix, RFC 9780
        {"2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false}, // IETF protocol assignments
        {"2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false},   // Teredo, RFC 4380 (N/A)
        {"2001:1::1", "2001:1::1", true},                            // PCP anycast
        {"2001:1::2", "2001:1::2", true},                            // TURN anycast
        {"2001:1::3", "2001:1::3", true},                            // DNS-SD SRP anycast, RFC 9665
        {"2001:2::", "2001:2:0:ffff:ffff:ffff:ffff:ffff", false},    // benchmarking, RFC 5180
        {"2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff", true},  // AMT
        {"2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", true}, // AS112-v6, RFC 7535
        {"2001:10::", "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", false}, // deprecated ORCHID (N/A)
        {"2001:20::", "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", true},  // ORCHIDv2, RFC 7343
        {"2001:30::", "2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", true},  // drone remote ID, RFC 9374
        {"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false}, // documentation, RFC 3849
        {"2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
         true}, // 6to4 of a global IPv4 address
        {"2620:4f:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff",
         true},                                                       // direct delegation AS112
        {"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false},  // documentation, RFC 9637
        {"5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, // SRv6 SIDs, RFC 9602
        {"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, // unique-local, RFC 4193
        {"fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, // link-local unicast
        {"ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false}, // multicast
    };
    auto check = [](const Entry &e) {
        for (const char *a : {e.first, e.last}) {
            // 2002::/16 takes the embedded address's class: its first and last
            // embed 0.0.0.0 and 255.255.255.255; a global one is checked below.
            if (std::strncmp(a, "2002:", 5) == 0) a = "2002:808:808::1";
            bool global = classify(ip(a)) == AddressClass::global;
            cr_assert_eq(global, e.global, "%s (entry %s..%s): %s, want %s", a, e.first, e.last,
                         class_name(classify(ip(a))), e.global ? "global" : "not global");
        }
    };
    for (const Entry &e : v4)
        check(e);
    for (const Entry &e : v6)
        check(e);
    // Next to the blocks: global.
    for (const char *a : {"192.0.1.0", "192.0.3.0", "198.20.0.0", "100.128.0.0", "2001:200::1",
                          "2001:db9::1", "2620:4f:8001::1", "2606:4700::1111"})
        cr_assert_eq(classify(ip(a)), AddressClass::global, "%s", a);
    // IPv6 outside 2000::/3 and the listed blocks is unassigned.
    for (const char *a : {"4000::1", "1::1", "e000::1", "::ffff:0:808:808"})
        cr_assert_eq(classify(ip(a)), AddressClass::reserved, "%s", a);
    // Forms that embed a non-global IPv4 address are not global either.
    expect_class("::ffff:10.1.2.3", AddressClass::private_net);
    expect_class("::169.254.169.254", AddressClass::metadata);
    expect_class("64:ff9b::10.1.2.3", AddressClass::private_net);
    expect_class("64:ff9b::192.0.2.1", AddressClass::reserved);
    expect_class("64:ff9b:1::a01:203", AddressClass::nat64_local);
    expect_class("64:ff9b:1:0a01:0203::", AddressClass::nat64_local);
    expect_class("2002:a01:203::1", AddressClass::private_net); // 6to4 of 10.1.2.3
    expect_class("2002:a9fe:a9fe::1", AddressClass::metadata);  // 6to4 of 169.254.169.254
    expect_class("2002:7f00:1::1", AddressClass::loopback);     // 6to4 of 127.0.0.1
    expect_class("2002:808:808::1", AddressClass::global);      // 6to4 of 8.8.8.8
    unit::expect_eq(describe_class(ip("192.0.2.7")), "documentation (TEST-NET-1)");
    unit::expect_eq(describe_class(ip("2002:a01:203::1")), "6to4 of private-use");
    unit::expect_eq(describe_class(ip("64:ff9b:1::1")), "local-use IPv4/IPv6 translation");
    unit::expect_eq(describe_class(ip("8.8.8.8")), "global");
    cr_assert_str_eq(class_name(AddressClass::nat64_local), "NAT64 local-use");
}

// An address pattern lets a name's resolved address through only on the
// ports the pattern allows; a deny entry without a port covers every port.
Test(egress, covering_takes_the_port) {
    auto allow = pats("127.0.0.1:11434,10.0.0.0/8");
    cr_assert_not_null(covering(allow, ip("127.0.0.1"), 11434));
    cr_assert_null(covering(allow, ip("127.0.0.1"), 443));
    cr_assert_not_null(covering(allow, ip("10.9.9.9"), 443)); // no port: 80 and 443
    cr_assert_null(covering(allow, ip("10.9.9.9"), 22));
    cr_assert_not_null(covering(allow, ip("127.0.0.1"))); // whatever the port
    auto deny = pats("10.0.0.0/8,192.168.0.0/16:22");
    cr_assert_not_null(covering(deny, ip("10.1.1.1"), 5432, true));
    cr_assert_not_null(covering(deny, ip("192.168.1.1"), 22, true));
    cr_assert_null(covering(deny, ip("192.168.1.1"), 443, true));
}

Test(egress, address_classes) {
    expect_class("127.0.0.1", AddressClass::loopback);
    expect_class("127.255.255.254", AddressClass::loopback);
    expect_class("::1", AddressClass::loopback);
    expect_class("::ffff:127.0.0.1", AddressClass::loopback);
    expect_class("10.0.0.1", AddressClass::private_net);
    expect_class("172.16.0.1", AddressClass::private_net);
    expect_class("172.31.255.255", AddressClass::private_net);
    expect_class("172.32.0.1", AddressClass::global);
    expect_class("192.168.1.1", AddressClass::private_net);
    expect_class("169.254.1.1", AddressClass::link_local);
    expect_class("fe80::1", AddressClass::link_local);
    expect_class("febf::1", AddressClass::link_local);
    expect_class("fec0::1", AddressClass::reserved); // deprecated site-local
    expect_class("100.64.0.1", AddressClass::cgnat);
    expect_class("100.127.255.255", AddressClass::cgnat);
    expect_class("100.128.0.1", AddressClass::global);
    expect_class("fc00::1", AddressClass::ula);
    expect_class("fd12:3456::1", AddressClass::ula);
    expect_class("169.254.169.254", AddressClass::metadata);
    expect_class("169.254.170.2", AddressClass::metadata);
    expect_class("fd00:ec2::254", AddressClass::metadata);
    expect_class("::ffff:169.254.169.254", AddressClass::metadata);
    expect_class("0.0.0.0", AddressClass::unspecified);
    expect_class("0.1.2.3", AddressClass::unspecified);
    expect_class("::", AddressClass::unspecified);
    expect_class("224.0.0.1", AddressClass::multicast);
    expect_class("239.255.255.255", AddressClass::multicast);
    expect_class("ff02::1", AddressClass::multicast);
    expect_class("240.0.0.1", AddressClass::reserved);
    expect_class("255.255.255.255", AddressClass::reserved);
    expect_class("192.0.0.8", AddressClass::reserved);
    expect_class("198.18.0.1", AddressClass::reserved);
    expect_class("198.19.255.255", AddressClass::reserved);
    expect_class("198.20.0.1", AddressClass::global);
    expect_class("192.0.2.1", AddressClass::reserved);
    expect_class("198.51.100.1", AddressClass::reserved);
    expect_class("203.0.113.1", AddressClass::reserved);
    expect_class("2001:db8::1", AddressClass::reserved);
    expect_class("100::1", AddressClass::reserved);
    expect_class("100:0:0:1::1", AddressClass::reserved);  // dummy prefix, RFC 9780
    expect_class("::2", AddressClass::unspecified);        // IPv4-compatible 0.0.0.2
    expect_class("::10.0.0.1", AddressClass::private_net); // IPv4-compatible
    expect_class("::8.8.8.8", AddressClass::reserved);     // deprecated: never global
    // NAT64: the embedded IPv4 address decides.
    expect_class("64:ff9b::8.8.8.8", AddressClass::global);
    expect_class("64:ff9b::127.0.0.1", AddressClass::loopback);
    expect_class("64:ff9b::169.254.169.254", AddressClass::metadata);
    expect_class("8.8.8.8", AddressClass::global);
    expect_class("1.1.1.1", AddressClass::global);
    expect_class("2606:4700::1111", AddressClass::global);
    cr_assert_str_eq(class_name(AddressClass::private_net), "private");
    cr_assert_str_eq(class_name(AddressClass::link_local), "link-local");
    cr_assert_str_eq(class_name(AddressClass::cgnat), "CGNAT");
    cr_assert_str_eq(class_name(AddressClass::ula), "ULA");
    cr_assert_str_eq(class_name(AddressClass::metadata), "metadata");
    cr_assert_str_eq(class_name(AddressClass::global), "global");
    cr_assert_str_eq(class_name(AddressClass::loopback), "loopback");
    cr_assert_str_eq(class_name(AddressClass::unspecified), "unspecified");
    cr_assert_str_eq(class_name(AddressClass::multicast), "multicast");
    cr_assert_str_eq(class_name(AddressClass::reserved), "reserved");
}

Test(egress, addresses_from_sockets_are_canonical) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(0x0a000102);
    IpAddr a = from_sockaddr(reinterpret_cast<const sockaddr *>(&in));
    cr_assert(a == ip("10.0.1.2"));
    unit::expect_eq(to_string(a), "10.0.1.2");
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    cr_assert_eq(::inet_pton(AF_INET6, "::ffff:192.168.0.1", &in6.sin6_addr), 1);
    IpAddr m = from_sockaddr(reinterpret_cast<const sockaddr *>(&in6));
    cr_assert_eq(m.family, AF_INET);
    unit::expect_eq(to_string(m), "192.168.0.1");
    cr_assert_eq(::inet_pton(AF_INET6, "2001:db8::5", &in6.sin6_addr), 1);
    unit::expect_eq(to_string(from_sockaddr(reinterpret_cast<const sockaddr *>(&in6))),
                    "2001:db8::5");
    sockaddr un{};
    un.sa_family = AF_UNIX;
    cr_assert_eq(from_sockaddr(&un).family, 0);
    cr_assert_eq(from_sockaddr(nullptr).family, 0);
    unit::expect_eq(to_string(IpAddr{}), "");
    cr_assert(canonical(ip("::1")) == ip("::1"));
    cr_assert(canonical(ip("::ffff:1.2.3.4")) == ip("1.2.3.4"));
    cr_assert(!(ip("1.2.3.4") == ip("::ffff:1.2.3.4")));
}

// ---- request heads ---------------------------------------------------------

Test(egress, request_incomplete_until_the_blank_line) {
    const std::string full = "CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\n\r\n";
    for (size_t n = 0; n < full.size(); ++n) {
        ParseResult r = parse(std::string_view(full).substr(0, n));
        cr_assert_eq(r.state, ParseState::incomplete, "after %zu bytes: %s", n, r.reason.c_str());
    }
    Request req = done(full);
    cr_assert_eq(req.head_len, full.size());
    // Bytes after the head (the tunnel's first bytes) are not part of it.
    ParseResult more = parse(full + "\x16\x03\x01");
    cr_assert_eq(more.state, ParseState::done);
    cr_assert_eq(more.req.head_len, full.size());
}

Test(egress, request_connect) {
    Request r = done("CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\nUser-Agent: x\r\n\r\n");
    cr_assert_eq(r.kind, Request::Kind::connect);
    unit::expect_eq(r.method, "CONNECT");
    unit::expect_eq(r.host, "a.com");
    cr_assert_eq(r.port, 443);
    unit::expect_eq(r.forward_head, "");
    Request v6 = done("CONNECT [::1]:8443 HTTP/1.0\r\n\r\n");
    unit::expect_eq(v6.host, "::1");
    cr_assert_eq(v6.port, 8443);
    // The host as written: normalising is the caller's job.
    unit::expect_eq(done("CONNECT B\xc3\xbc"
                         "cher.Example.:443 HTTP/1.1\r\n\r\n")
                        .host,
                    "B\xc3\xbc"
                    "cher.Example.");
    expect_bad("CONNECT a.com HTTP/1.1\r\n\r\n", 400, "CONNECT target without a port");
    expect_bad("CONNECT [::1] HTTP/1.1\r\n\r\n", 400, "CONNECT target without a port");
    expect_bad("CONNECT a.com: HTTP/1.1\r\n\r\n", 400, "empty port");
    expect_bad("CONNECT a.com:0 HTTP/1.1\r\n\r\n", 400, "port \"0\" is not in 1..65535");
    expect_bad("CONNECT a.com:65536 HTTP/1.1\r\n\r\n", 400, "port \"65536\" is not in 1..65535");
    expect_bad("CONNECT a.com:44x HTTP/1.1\r\n\r\n", 400, "port \"44x\" is not in 1..65535");
    expect_bad("CONNECT a.com:443/x HTTP/1.1\r\n\r\n", 400, "CONNECT target is not host:port");
    expect_bad("CONNECT http://a.com:443 HTTP/1.1\r\n\r\n", 400, "CONNECT target is not host:port");
    expect_bad("CONNECT u@a.com:443 HTTP/1.1\r\n\r\n", 400, "userinfo in the URL");
    expect_bad("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host in the target");
    expect_bad("CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400,
               "IPv6 address without brackets in the target");
    expect_bad("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, "unclosed '[' in the target");
    expect_bad("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", 400, "text after ']' in the target");
}

Test(egress, request_absolute_form_is_rewritten) {
    const std::string head = "GET http://Example.com:8080/p/a?q=1#frag HTTP/1.1\r\n"
                             "Host: evil.com\r\n"
                             "User-Agent: t/1\r\n"
                             "Proxy-Connection: keep-alive\r\n"
                             "Proxy-Authorization: Basic eA==\r\n"
                             "Connection: keep-alive, X-Hop\r\n"
                             "X-Hop: 1\r\n"
                             "Keep-Alive: timeout=5\r\n"
                             "TE: trailers\r\n"
                             "Upgrade: websocket\r\n"
                             "Accept: */*\r\n"
                             "\r\n";
    Request r = done(head);
    cr_assert_eq(r.kind, Request::Kind::http);
    unit::expect_eq(r.method, "GET");
    unit::expect_eq(r.host, "Example.com");
    cr_assert_eq(r.port, 8080);
    unit::expect_eq(r.forward_head, "GET /p/a?q=1 HTTP/1.1\r\n"
                                    "Host: Example.com:8080\r\n"
                                    "User-Agent: t/1\r\n"
                                    "Accept: */*\r\n"
                                    "Connection: close\r\n"
                                    "\r\n");

    Request bare = done("GET http://a.com HTTP/1.0\r\n\r\n");
    cr_assert_eq(bare.port, 80);
    unit::expect_eq(bare.forward_head,
                    "GET / HTTP/1.0\r\nHost: a.com\r\nConnection: close\r\n\r\n");
    unit::expect_eq(done("HEAD HTTP://a.com?x HTTP/1.1\r\n\r\n").forward_head,
                    "HEAD /?x HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n");
    Request v6 = done("GET http://[::1]:81/ HTTP/1.1\r\n\r\n");
    unit::expect_eq(v6.host, "::1");
    cr_assert_eq(v6.port, 81);
    unit::expect_eq(v6.forward_head,
                    "GET / HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n");
    // A body's framing goes through unchanged; Trailer is end-to-end.
    unit::expect_eq(done("POST http://a.com/u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                         "Trailer: X-Sum\r\n\r\n")
                        .forward_head,
                    "POST /u HTTP/1.1\r\nHost: a.com\r\nTransfer-Encoding: chunked\r\n"
                    "Trailer: X-Sum\r\nConnection: close\r\n\r\n");
    unit::expect_eq(done("PUT http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\n"
                         "content-length:5\r\n\r\n")
                        .forward_head,
                    "PUT / HTTP/1.1\r\nHost: a.com\r\nContent-Length: 5\r\n"
                    "Connection: close\r\n\r\n");
}

Test(egress, request_targets_refused) {
    expect_bad("GET https://a.com/ HTTP/1.1\r\n\r\n", 405, "use CONNECT for https");
    expect_bad("GET HTTPS://a.com/ HTTP/1.1\r\n\r\n", 405, "use CONNECT for https");
    expect_bad("GET ftp://a.com/ HTTP/1.1\r\n\r\n", 400, "unsupported scheme \"ftp\"");
    expect_bad("GET / HTTP/1.1\r\nHost: a.com\r\n\r\n", 400,
               "origin-form target: a proxy request needs an absolute http:// URL");
    expect_bad("OPTIONS * HTTP/1.1\r\n\r\n", 400, "target is not an absolute http:// URL");
    expect_bad("GET a.com:80 HTTP/1.1\r\n\r\n", 400, "target is not an absolute http:// URL");
    expect_bad("GET http://user:pw@a.com/ HTTP/1.1\r\n\r\n", 400, "userinfo in the URL");
    expect_bad("GET http://a.com\\@evil.com/ HTTP/1.1\r\n\r\n", 400, "userinfo in the URL");
    expect_bad("GET http:///x HTTP/1.1\r\n\r\n", 400, "empty host in the target");
    expect_bad("GET http://a.com:/ HTTP/1.1\r\n\r\n", 400, "empty port");
    expect_bad("GET http://a.com:99999/ HTTP/1.1\r\n\r\n", 400,
               "port \"99999\" is not in 1..65535");
    expect_bad("GET http://a.com/\x7f HTTP/1.1\r\n\r\n", 400,
               "invalid character in the request target");
    expect_bad("GET http://a.com/\xc3\xa9 HTTP/1.1\r\n\r\n", 400,
               "invalid character in the request target");
}

Test(egress, request_line_refused) {
    const char *why = "request line is not METHOD SP TARGET SP HTTP/1.x";
    expect_bad("GET http://a.com/ HTTP/2.0\r\n\r\n", 400, why);
    expect_bad("GET http://a.com/ HTTP/1.1 \r\n\r\n", 400, why);
    expect_bad("GET  http://a.com/ HTTP/1.1\r\n\r\n", 400, why);
    expect_bad("GET http://a.com/\r\n\r\n", 400, why);
    expect_bad("GET\thttp://a.com/ HTTP/1.1\r\n\r\n", 400, why);
    expect_bad("\r\nGET http://a.com/ HTTP/1.1\r\n\r\n", 400, why);
    expect_bad("G(T http://a.com/ HTTP/1.1\r\n\r\n", 400, "method is not a token");
    expect_bad(" http://a.com/ HTTP/1.1\r\n\r\n", 400, "method is not a token");
    // Lowercase connect is some other method, with a target that is no URL.
    expect_bad("connect a.com:443 HTTP/1.1\r\n\r\n", 400, "target is not an absolute http:// URL");
}

Test(egress, request_head_too_large) {
    std::string head = "GET http://a.com/ HTTP/1.1\r\nX-Pad: " + std::string(200, 'x');
    ParseResult r = parse(head, 128);
    cr_assert_eq(r.state, ParseState::bad);
    cr_assert_eq(r.status, 431);
    unit::expect_eq(r.reason, "request head larger than 128 bytes");
    cr_assert_eq(parse(head.substr(0, 127), 128).state, ParseState::incomplete);
    // Complete, but past the limit.
    ParseResult late = parse(head + "\r\n\r\n", 128);
    cr_assert_eq(late.state, ParseState::bad);
    cr_assert_eq(late.status, 431);
    // Exactly at the limit is fine.
    std::string exact = "CONNECT a.com:443 HTTP/1.1\r\n\r\n";
    cr_assert_eq(parse(exact, exact.size()).state, ParseState::done);
    cr_assert_eq(parse(exact, exact.size() - 1).status, 431);
    // The default limit is 16 KiB.
    std::string big = "GET http://a.com/ HTTP/1.1\r\nX: " + std::string(16384, 'x') + "\r\n\r\n";
    cr_assert_eq(parse_request(big).status, 431);
}

Test(egress, request_smuggling_refused) {
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\n"
               "Transfer-Encoding: chunked\r\n\r\n",
               400, "both Content-Length and Transfer-Encoding");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
               "Content-Length: 5\r\n\r\n",
               400, "both Content-Length and Transfer-Encoding");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
               "differing Content-Length headers");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
               "Content-Length is not a number");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
               "Content-Length is not a number");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length:\r\n\r\n", 400,
               "Content-Length is not a number");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400,
               "Transfer-Encoding does not end in chunked");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 400,
               "Transfer-Encoding does not end in chunked");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400,
               "header name is not a token");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\n Transfer-Encoding: chunked"
               "\r\n\r\n",
               400, "obsolete line folding in a header");
    expect_bad("GET http://a.com/ HTTP/1.1\r\nX-A: 1\r\n\tcontinued\r\n\r\n", 400,
               "obsolete line folding in a header");
    expect_bad("GET http://a.com/ HTTP/1.1\r\nno colon here\r\n\r\n", 400,
               "header line without ':'");
    expect_bad("GET http://a.com/ HTTP/1.1\r\n: empty name\r\n\r\n", 400,
               "header name is not a token");
    expect_bad("GET http://a.com/ HTTP/1.1\r\nX-A: a\x01"
               "b\r\n\r\n",
               400, "control character in header X-A");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nConnection: Content-Length\r\n"
               "Content-Length: 5\r\n\r\n",
               400, "Connection names a framing header");
    expect_bad("POST http://a.com/ HTTP/1.1\r\nConnection: close, transfer-encoding\r\n\r\n", 400,
               "Connection names a framing header");
    // Bare LF, bare CR and NUL are refused as soon as they arrive.
    expect_bad("GET http://a.com/ HTTP/1.1\n", 400, "bare LF line ending");
    expect_bad("GET http://a.com/ HTTP/1.1\r\nHost: a\n\r\n", 400, "bare LF line ending");
    expect_bad("GET http://a.com/ HTTP/1.1\n\n", 400, "bare LF line ending");
    expect_bad("\n", 400, "bare LF line ending");
    expect_bad("GET http://a.com/ HTTP/1.1\rX", 400, "bare CR in the request head");
    expect_bad("GET http://a.com/\0 HTTP/1.1"sv, 400, "NUL byte in the request head");
    expect_bad("GET http://a.com/ HTTP/1.1\r\nX: a\0b\r\n\r\n"sv, 400,
               "NUL byte in the request head");
    // The same on a CONNECT.
    expect_bad("CONNECT a.com:443 HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked"
               "\r\n\r\n",
               400, "both Content-Length and Transfer-Encoding");
    // A CR at the very end may still become CRLF.
    cr_assert_eq(parse("GET http://a.com/ HTTP/1.1\r").state, ParseState::incomplete);
}

// ---- request bodies ----------------------------------------------------------

namespace {

// The body's length in `bytes` (fed in pieces of `step`), or the error.
std::string framed(std::string_view head, std::string_view bytes, size_t step = 1000) {
    ParseResult r = parse(head);
    cr_assert_eq(r.state, ParseState::done, "%s", r.reason.c_str());
    BodyFramer f(r.req);
    size_t total = 0;
    for (size_t at = 0; at < bytes.size() && !f.done(); at += step) {
        auto n = f.feed(bytes.substr(at, std::min(step, bytes.size() - at)));
        if (!n) return "error: " + n.error().text();
        total += *n;
        if (*n < std::min(step, bytes.size() - at)) break;
    }
    return (f.done() ? "done " : "open ") + std::to_string(total);
}

} // namespace

// The proxy relays a plain-http request's body as its head frames it, and
// nothing after it: a pipelined request is never the body's.
Test(egress, request_bodies_are_framed) {
    const std::string get = "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n";
    const std::string post = "POST http://a.com/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
    const std::string chunked = "POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::string next = "GET http://evil.com/ HTTP/1.1\r\n\r\n";
    unit::expect_eq(framed(get, next), "done 0");
    unit::expect_eq(framed(post, "hello" + next), "done 5");
    unit::expect_eq(framed(post, "hel"), "open 3");
    for (size_t step : {1, 3, 1000}) {
        unit::expect_eq(framed(chunked, "5\r\nhello\r\n0\r\n\r\n" + next, step), "done 15");
        unit::expect_eq(
            framed(chunked, "A;ext=1\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n" + next, step),
            "done 34");
    }
    unit::expect_eq(framed(chunked, "5\r\nhello\r\n"), "open 10");
    unit::expect_eq(framed(chunked, "5\nhello\r\n0\r\n\r\n"),
                    "error: bare LF in the chunk framing");
    unit::expect_eq(framed(chunked, "5\r\rhello"), "error: bare CR in the chunk framing");
    unit::expect_eq(framed(chunked, "zz\r\n"), "error: chunk size is not a hex number");
    unit::expect_eq(framed(chunked, "5\r\nhello!\r\n"), "error: chunk data longer than its size");
    unit::expect_eq(framed(chunked, "1000000000000000\r\n"), "error: chunk size over 2^60");
    unit::expect_eq(framed(chunked, "0\r\n X: 1\r\n\r\n"),
                    "error: obsolete line folding in a trailer");
}
