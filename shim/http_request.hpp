// The head of a request sent to the egress proxy, parsed strictly (no I/O):
// CONNECT host:port, or a plain-http request in absolute-form rewritten for
// the origin server. Anything two parsers could read differently (bare LF,
// obs-fold, conflicting framing headers) is refused rather than repaired.
#pragma once

#include "oci/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ocirun::egress {

struct Request {
    enum class Kind { connect, http };
    Kind kind = Kind::connect;
    std::string method;  // "CONNECT", "GET", ...
    std::string host;    // as written, brackets removed (normalize_host is the caller's job)
    uint16_t port = 0;   // CONNECT: required in the authority; http: from the URL, default 80
    size_t head_len = 0; // bytes of the request head including the final CRLFCRLF
    // http only: the head for the origin server. The request line in
    // origin-form ("GET /path?q HTTP/1.1", "/" when the URL has no path, the
    // fragment dropped), "Host: " the URL's authority first, the client's
    // headers as written but Host and the hop-by-hop ones (Connection, the
    // fields it names, Keep-Alive, Proxy-Connection, Proxy-Authorization,
    // Proxy-Authenticate, TE, Upgrade), then "Connection: close".
    // Transfer-Encoding, Content-Length (once) and Trailer are kept.
    std::string forward_head;
    // http only: how the body is framed (RFC 9112 section 6.3): chunked when
    // Transfer-Encoding ends in chunked, else content_length bytes (0
    // without Content-Length).
    bool chunked = false;
    uint64_t content_length = 0;
};

// The body of a request parse_request accepted, as its head frames it:
// content_length bytes, or chunks up to the last chunk and the trailer
// section's empty line. feed() takes the bytes that follow, in order, and
// says how many of them are the body's; once done(), none are (what follows
// is another request, which the proxy does not relay). Chunk framing it
// cannot read (a size that is not hex or over 2^60, bare LF or CR, control
// bytes in an extension or trailer line) is an error.
class BodyFramer {
  public:
    explicit BodyFramer(const Request &r);
    Result<size_t> feed(std::string_view data);
    bool done() const { return state_ == State::done; }

  private:
    enum class State {
        length,  // content_length: remaining_ bytes to go
        size,    // chunk-size digits
        ext,     // chunk extension, to CR
        size_lf, // LF after a chunk-size line
        data,    // remaining_ bytes of chunk data
        data_cr, // CR after chunk data
        data_lf, // LF after chunk data
        line,    // start of a trailer line (CR: the end)
        trailer, // inside a trailer line, to CR
        trailer_lf,
        last_lf, // LF of the empty line ending the trailer section
        done
    };
    State state_;
    uint64_t remaining_ = 0;
    int digits_ = 0;
};

enum class ParseState { incomplete, done, bad };

struct ParseResult {
    ParseState state = ParseState::incomplete;
    Request req;
    int status = 400;   // bad: the status to answer with
    std::string reason; // bad: why, one line
};

// An HTTP/1.x request line, METHOD SP TARGET SP HTTP/1.x, split (nullopt for
// any other shape; the method is checked to be a token, the target not).
struct RequestLine {
    std::string_view method, target, version;
};
std::optional<RequestLine> split_request_line(std::string_view line);
// A non-empty RFC 9110 token (a method, a header name).
bool is_token(std::string_view s);

// Parse a proxy request head from the start of `buf` (the bytes received so
// far). incomplete until CRLFCRLF is seen; bad with 431 when the head does not
// end within max_head bytes; bad with 405 for an https:// URL ("use CONNECT
// for https"); bad with 400 for: a request line other than METHOD SP TARGET
// SP HTTP/1.x, a method that is not a token, a target with control bytes
// or with non-ASCII bytes past the host (an IDN host is the caller's to
// normalise), an origin-form or asterisk-form target, a scheme other than
// http, userinfo in the URL, an empty host or port, a CONNECT target without
// a port or with a path, a port out of 1..65535, header lines without ':',
// with a name that is not a token ("Name :") or with obs-fold (a leading space
// or tab), control bytes in a value, bare LF or bare CR, NUL bytes, both
// Content-Length and Transfer-Encoding, a Content-Length that is not a number
// or differs from an earlier one, a Transfer-Encoding not ending in chunked,
// and a Connection header naming Content-Length or Transfer-Encoding. Bare LF,
// bare CR and NUL are refused as soon as they arrive.
ParseResult parse_request(std::string_view buf, size_t max_head = 16384);

} // namespace ocirun::egress
