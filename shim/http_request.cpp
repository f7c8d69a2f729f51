#include "http_request.hpp"

#include "oci/error.hpp"

#include <algorithm>
#include <cstring>
#include <expected>
#include <utility>
#include <vector>

namespace ocirun::egress {

namespace {

// Why a request is refused: the status to answer with and a one-line reason.
struct Refusal {
    int status = 400;
    std::string reason;
};

template <class T> using Parsed = std::expected<T, Refusal>;

std::unexpected<Refusal> refuse(std::string reason, int status = 400) {
    return std::unexpected(Refusal{status, std::move(reason)});
}

ParseResult bad(Refusal r) {
    ParseResult p;
    p.state = ParseState::bad;
    p.status = r.status;
    p.reason = std::move(r.reason);
    return p;
}

bool digit(char c) {
    return c >= '0' && c <= '9';
}

bool tchar(char c) {
    return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

bool token(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), tchar);
}

// The request line's three parts and the version's form; the method's
// characters are the caller's to check.
std::optional<RequestLine> split_shape(std::string_view line) {
    size_t sp1 = line.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
        return std::nullopt;
    RequestLine r{line.substr(0, sp1), line.substr(sp1 + 1, sp2 - sp1 - 1), line.substr(sp2 + 1)};
    if (r.version.size() != 8 || !r.version.starts_with("HTTP/1.") || !digit(r.version[7]))
        return std::nullopt;
    return r;
}

char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The comma-separated elements of a header value, trimmed.
std::vector<std::string_view> elements(std::string_view v) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (start <= v.size()) {
        size_t end = std::min(v.find(',', start), v.size());
        out.push_back(trim_ows(v.substr(start, end - start)));
        start = end + 1;
    }
    return out;
}

// Removed on the way to the origin server (hop-by-hop or meant for the proxy);
// Host is replaced by the URL's authority.
bool dropped(std::string_view name) {
    static const char *const kNames[] = {"host",
                                         "connection",
                                         "proxy-connection",
                                         "keep-alive",
                                         "proxy-authorization",
                                         "proxy-authenticate",
                                         "te",
                                         "upgrade"};
    return std::any_of(std::begin(kNames), std::end(kNames),
                       [&](const char *n) { return iequal(name, n); });
}

Parsed<uint16_t> port_number(std::string_view s) {
    if (s.empty()) return refuse("empty port");
    if (s.size() > 5 || !std::all_of(s.begin(), s.end(), digit))
        return refuse("port \"" + std::string(s.substr(0, 16)) + "\" is not in 1..65535");
    long v = 0;
    for (char c : s)
        v = v * 10 + (c - '0');
    if (v < 1 || v > 65535) return refuse("port \"" + std::string(s) + "\" is not in 1..65535");
    return static_cast<uint16_t>(v);
}

struct Authority {
    std::string host;
    uint16_t port = 0;
};

// host[:port] or [v6][:port]; without a port `default_port` (0: required).
Parsed<Authority> authority(std::string_view a, uint16_t default_port) {
    if (a.find('@') != std::string_view::npos) return refuse("userinfo in the URL");
    Authority out;
    std::string_view port;
    bool has_port = false;
    if (!a.empty() && a.front() == '[') {
        size_t close = a.find(']');
        if (close == std::string_view::npos) return refuse("unclosed '[' in the target");
        out.host = a.substr(1, close - 1);
        std::string_view rest = a.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') return refuse("text after ']' in the target");
        has_port = !rest.empty();
        if (has_port) port = rest.substr(1);
    } else {
        size_t colon = a.find(':');
        out.host = a.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = a.substr(colon + 1);
            has_port = true;
            if (port.find(':') != std::string_view::npos)
                return refuse("IPv6 address without brackets in the target");
        }
    }
    if (out.host.empty()) return refuse("empty host in the target");
    if (!has_port && default_port == 0) return refuse("CONNECT target without a port");
    out.port = has_port ? OCI_TRY(port_number(port)) : default_port;
    return out;
}

struct Header {
    std::string_view name;
    std::string_view line; // as written, without CRLF
};

// What the header lines say about framing and hop-by-hop fields.
struct Headers {
    std::vector<Header> lines;
    std::vector<std::string_view> connection; // fields named by Connection
    bool has_length = false;
    unsigned long long length = 0;
    bool chunked_last = false; // the last Transfer-Encoding's final coding
    bool has_te = false;
};

Parsed<Headers> headers(const std::vector<std::string_view> &lines) {
    Headers h;
    for (std::string_view line : lines) {
        if (line.empty()) return refuse("empty header line");
        if (line.front() == ' ' || line.front() == '\t')
            return refuse("obsolete line folding in a header");
        size_t colon = line.find(':');
        if (colon == std::string_view::npos) return refuse("header line without ':'");
        std::string_view name = line.substr(0, colon);
        if (!token(name)) return refuse("header name is not a token");
        std::string_view value = trim_ows(line.substr(colon + 1));
        for (unsigned char c : value) {
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return refuse("control character in header " + std::string(name));
        }
        if (iequal(name, "content-length")) {
            if (value.empty() || value.size() > 18 ||
                !std::all_of(value.begin(), value.end(), digit))
                return refuse("Content-Length is not a number");
            unsigned long long n = 0;
            for (char c : value)
                n = n * 10 + static_cast<unsigned>(c - '0');
            if (h.has_length && n != h.length) return refuse("differing Content-Length headers");
            if (h.has_length) continue; // the same again: forward it once
            h.has_length = true;
            h.length = n;
        } else if (iequal(name, "transfer-encoding")) {
            h.has_te = true;
            h.chunked_last = iequal(elements(value).back(), "chunked");
        } else if (iequal(name, "connection")) {
            for (std::string_view e : elements(value)) {
                if (iequal(e, "content-length") || iequal(e, "transfer-encoding"))
                    return refuse("Connection names a framing header");
                if (!e.empty()) h.connection.push_back(e);
            }
        }
        h.lines.push_back({name, line});
    }
    if (h.has_length && h.has_te) return refuse("both Content-Length and Transfer-Encoding");
    if (h.has_te && !h.chunked_last) return refuse("Transfer-Encoding does not end in chunked");
    return h;
}

// The head for the origin server.
std::string forward_head(std::string_view method, std::string_view path, std::string_view version,
                         std::string_view auth, const Headers &h) {
    std::string out;
    out.append(method).append(" ").append(path).append(" ").append(version).append("\r\n");
    out.append("Host: ").append(auth).append("\r\n");
    for (const Header &f : h.lines) {
        bool named = std::any_of(h.connection.begin(), h.connection.end(),
                                 [&](std::string_view n) { return iequal(n, f.name); });
        if (dropped(f.name) || named) continue;
        out.append(f.line).append("\r\n");
    }
    out.append("Connection: close\r\n\r\n");
    return out;
}

// The request line and headers of a complete head (without the final CRLFCRLF).
Parsed<Request> request(std::string_view head) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    while (start <= head.size()) {
        size_t end = std::min(head.find("\r\n", start), head.size());
        lines.push_back(head.substr(start, end - start));
        start = end + 2;
    }
    auto shape = split_shape(lines.front());
    if (!shape) return refuse("request line is not METHOD SP TARGET SP HTTP/1.x");
    auto [method, target, version] = *shape;
    if (!token(method)) return refuse("method is not a token");
    // Bytes past ASCII only in a host (an IDN, normalised by the caller).
    auto visible = [](unsigned char c) { return c > 0x20 && c != 0x7f; };
    if (target.empty() || !std::all_of(target.begin(), target.end(), visible))
        return refuse("invalid character in the request target");
    Headers h = OCI_TRY(headers(std::vector<std::string_view>(lines.begin() + 1, lines.end())));

    Request req;
    req.method = method;
    if (method == "CONNECT") {
        if (target.find_first_of("/?#") != std::string_view::npos)
            return refuse("CONNECT target is not host:port");
        Authority a = OCI_TRY(authority(target, 0));
        req.kind = Request::Kind::connect;
        req.host = std::move(a.host);
        req.port = a.port;
        return req;
    }
    if (target.front() == '/')
        return refuse("origin-form target: a proxy request needs an absolute http:// URL");
    size_t sep = target.find("://");
    if (sep == std::string_view::npos) return refuse("target is not an absolute http:// URL");
    std::string scheme;
    for (char c : target.substr(0, sep))
        scheme += lower(c);
    if (scheme == "https") return refuse("use CONNECT for https", 405);
    if (scheme != "http") return refuse("unsupported scheme \"" + scheme.substr(0, 16) + "\"");
    std::string_view rest = target.substr(sep + 3);
    size_t auth_end = std::min(rest.find_first_of("/?#"), rest.size());
    std::string_view auth = rest.substr(0, auth_end);
    std::string path(rest.substr(auth_end, rest.find('#') - auth_end)); // no fragment
    if (!std::all_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x80; }))
        return refuse("invalid character in the request target");
    if (path.empty() || path.front() != '/') path.insert(0, "/");
    Authority a = OCI_TRY(authority(auth, 80));
    req.kind = Request::Kind::http;
    req.host = std::move(a.host);
    req.port = a.port;
    req.forward_head = forward_head(method, path, version, auth, h);
    req.chunked = h.has_te;
    req.content_length = h.has_length ? h.length : 0;
    return req;
}

} // namespace

ParseResult parse_request(std::string_view buf, size_t max_head) {
    // Refuse bytes two parsers could read differently as soon as they arrive.
    size_t limit = std::min(buf.size(), max_head);
    size_t end = 0;
    for (size_t i = 0; i < limit && end == 0; ++i) {
        char c = buf[i];
        if (c == '\0') return bad({400, "NUL byte in the request head"});
        if (c == '\n' && (i == 0 || buf[i - 1] != '\r')) return bad({400, "bare LF line ending"});
        if (c == '\r' && i + 1 < buf.size() && buf[i + 1] != '\n')
            return bad({400, "bare CR in the request head"});
        if (c == '\n' && i >= 3 && buf.substr(i - 3, 4) == "\r\n\r\n") end = i + 1;
    }
    if (end == 0) {
        if (buf.size() >= max_head)
            return bad({431, "request head larger than " + std::to_string(max_head) + " bytes"});
        return {};
    }
    auto req = request(buf.substr(0, end - 4));
    if (!req) return bad(std::move(req.error()));
    ParseResult r;
    r.state = ParseState::done;
    r.req = std::move(*req);
    r.req.head_len = end;
    return r;
}

BodyFramer::BodyFramer(const Request &r)
    : state_(r.chunked              ? State::size
             : r.content_length > 0 ? State::length
                                    : State::done),
      remaining_(r.chunked ? 0 : r.content_length) {}

Result<size_t> BodyFramer::feed(std::string_view data) {
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    auto text_byte = [](unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); };
    size_t i = 0;
    while (i < data.size() && state_ != State::done) {
        char c = data[i];
        switch (state_) {
        case State::length:
        case State::data: {
            size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, data.size() - i));
            remaining_ -= n;
            i += n;
            if (remaining_ == 0) state_ = state_ == State::length ? State::done : State::data_cr;
            continue;
        }
        case State::size:
            if (hex(c) >= 0) {
                if (++digits_ > 15) return fail("chunk size over 2^60");
                remaining_ = remaining_ * 16 + static_cast<uint64_t>(hex(c));
                break;
            }
            if (c == '\n') return fail("bare LF in the chunk framing");
            if (digits_ == 0) return fail("chunk size is not a hex number");
            if (c == '\r')
                state_ = State::size_lf;
            else if (c == ';' || c == ' ' || c == '\t')
                state_ = State::ext;
            else
                return fail("chunk size is not a hex number");
            break;
        case State::ext:
            if (c == '\r')
                state_ = State::size_lf;
            else if (!text_byte(static_cast<unsigned char>(c)))
                return fail("control character in a chunk extension");
            break;
        case State::size_lf:
            if (c != '\n') return fail("bare CR in the chunk framing");
            digits_ = 0;
            state_ = remaining_ == 0 ? State::line : State::data;
            break;
        case State::data_cr:
            if (c != '\r') return fail("chunk data longer than its size");
            state_ = State::data_lf;
            break;
        case State::data_lf:
            if (c != '\n') return fail("bare CR in the chunk framing");
            state_ = State::size;
            break;
        case State::line:
            if (c == '\r')
                state_ = State::last_lf;
            else if (c == ' ' || c == '\t')
                return fail("obsolete line folding in a trailer");
            else if (!text_byte(static_cast<unsigned char>(c)))
                return fail("control character in a trailer");
            else
                state_ = State::trailer;
            break;
        case State::trailer:
            if (c == '\r')
                state_ = State::trailer_lf;
            else if (!text_byte(static_cast<unsigned char>(c)))
                return fail("control character in a trailer");
            break;
        case State::trailer_lf:
            if (c != '\n') return fail("bare CR in a trailer");
            state_ = State::line;
            break;
        case State::last_lf:
            if (c != '\n') return fail("bare CR in the chunk framing");
            state_ = State::done;
            break;
        case State::done:
            break;
        }
        i++;
    }
    return i;
}

std::optional<RequestLine> split_request_line(std::string_view line) {
    auto r = split_shape(line);
    if (!r || !token(r->method)) return std::nullopt;
    return r;
}

bool is_token(std::string_view s) {
    return token(s);
}

} // namespace ocirun::egress
