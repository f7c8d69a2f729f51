// What an intercepted connection names (shim/intercept_peek.hpp): the TLS
// server name of a ClientHello, the Host of an HTTP/1.x request; incomplete
// until the bytes that decide are here, and anything that does not read as
// exactly one name refused.
#include "intercept_peek.hpp"
#include "support/net_server.hpp"
#include "unit_support.hpp"

#include <string>

using namespace ocirun::egress;

namespace {

void expect_found(const Peeked &p, const std::string &host) {
    cr_assert(p.state == PeekState::found, "state %d: %s", static_cast<int>(p.state),
              p.reason.c_str());
    unit::expect_eq(p.host, host);
}

void expect_bad(const Peeked &p, const std::string &why) {
    cr_assert(p.state == PeekState::bad, "state %d (host %s)", static_cast<int>(p.state),
              p.host.c_str());
    cr_assert(p.reason.find(why) != std::string::npos, "%s", p.reason.c_str());
}

} // namespace

Test(intercept_peek, tls_server_name_of_a_client_hello) {
    std::string hello = test::tls_client_hello("a.example.com");
    expect_found(tls_server_name(hello), "a.example.com");
    // Bytes after the record (early data) change nothing.
    expect_found(tls_server_name(hello + "more"), "a.example.com");
    // Every prefix is incomplete, not a verdict.
    for (size_t n = 0; n < hello.size(); n++)
        cr_assert(tls_server_name(hello.substr(0, n)).state == PeekState::incomplete, "%zu", n);
}

Test(intercept_peek, tls_without_one_server_name_is_refused) {
    expect_bad(tls_server_name(test::tls_client_hello("")), "without a server_name");
    expect_bad(tls_server_name("GET / HTTP/1.1\r\n"), "not a TLS handshake");
    std::string hello = test::tls_client_hello("a.test");
    std::string other = hello;
    other[5] = 2; // a ServerHello
    expect_bad(tls_server_name(other), "not a ClientHello");
    // A record length past 16384.
    std::string big = hello;
    big[3] = 0x41;
    expect_bad(tls_server_name(big), "longer than 16384");
    // A handshake longer than its record.
    std::string split = hello;
    split[8] = static_cast<char>(split[8] + 1);
    expect_bad(tls_server_name(split), "does not fit");
    // Extension lengths that run past the hello.
    std::string ext = hello;
    size_t at = ext.find("a.test") - 2;
    ext[at + 1] = 60;
    expect_bad(tls_server_name(ext), "do not add up");
}

Test(intercept_peek, http_host_of_a_request) {
    expect_found(http_host("GET /x HTTP/1.1\r\nUser-Agent: t\r\nHost: a.test\r\n\r\n"), "a.test");
    expect_found(http_host("GET / HTTP/1.1\r\nhost:  a.test:8080 \r\n\r\nbody"), "a.test");
    expect_found(http_host("GET / HTTP/1.0\r\nHost: [2001:db8::1]:80\r\n\r\n"), "2001:db8::1");
    cr_assert(http_host("GET / HTTP/1.1\r\nHost: a.test\r\n").state == PeekState::incomplete);
    cr_assert(http_host("").state == PeekState::incomplete);
}

Test(intercept_peek, http_that_two_readers_could_read_apart_is_refused) {
    expect_bad(http_host("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n"),
               "more than one Host");
    expect_bad(http_host("GET / HTTP/1.1\r\nX: y\r\n\r\n"), "without a Host");
    expect_bad(http_host("GET / HTTP/1.1\r\nHost: \r\n\r\n"), "empty Host");
    expect_bad(http_host("GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"), "origin-form");
    expect_bad(http_host("GET / HTTP/1.1\nHost: a.test\r\n\r\n"), "bare LF");
    expect_bad(http_host("GET / HTTP/1.1\r\nHost: a.test\rX\r\n\r\n"), "bare CR");
    expect_bad(http_host(std::string("GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n", 29)), "NUL");
    expect_bad(http_host("GET / HTTP/1.1\r\nX: y\r\n Host: a.test\r\n\r\n"), "obs-fold");
    expect_bad(http_host("GET / HTTP/1.1\r\nHost : a.test\r\n\r\n"), "not a token");
    expect_bad(http_host("GET / SPDY/3\r\nHost: a.test\r\n\r\n"), "request line");
    expect_bad(http_host("GET / HTTP/1.1\r\n" + std::string(kMaxPeek, 'x')), "longer than");
}
