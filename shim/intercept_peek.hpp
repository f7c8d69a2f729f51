// What an intercepted connection names before a byte of it is relayed
// (dev.ocirun.intercept: TCP to ports 80 and 443 that a joined namespace's
// firewall sends to the helper). Port 443: the server_name extension of the
// TLS ClientHello; port 80: the Host header of the first HTTP/1.x request.
// Pure parsing of the bytes received so far, no I/O.
//
// What that trusts: the name is the client's word. The helper decides it
// against dev.ocirun.domains as the proxy does and connects to the address
// that name resolves to on the host, never to the address the client
// dialled; so a false name reaches only an allowed name's server. The rest
// of the connection (later requests on it, the TLS session) is relayed
// without being read, as a CONNECT tunnel is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ocirun::egress {

enum class PeekState { incomplete, found, bad };

struct Peeked {
    PeekState state = PeekState::incomplete;
    std::string host;   // found: as the client wrote it (a port removed)
    std::string reason; // bad: why, one line
};

// The most a peek reads: one TLS record (16 KiB of payload and its header),
// or an HTTP request head.
inline constexpr size_t kMaxPeek = 16384 + 5;

// The server name of a TLS ClientHello at the start of `buf`. bad: not a TLS
// handshake record, not a ClientHello, a ClientHello that does not fit in
// its first record, lengths that do not add up, no server_name extension or
// no host_name in it, more than one server_name extension.
Peeked tls_server_name(std::string_view buf);

// The Host header of the HTTP/1.x request head at the start of `buf`. bad: a
// request line other than METHOD SP TARGET SP HTTP/1.x, a target that is not
// origin-form ("/..."), bare LF or CR or NUL, obs-fold, no Host header or
// more than one, an empty host, a head longer than kMaxPeek.
Peeked http_host(std::string_view buf);

} // namespace ocirun::egress
