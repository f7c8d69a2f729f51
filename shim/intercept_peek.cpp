#include "intercept_peek.hpp"

#include "http_request.hpp"

#include <strings.h>

#include <cstdint>
#include <optional>

namespace ocirun::egress {

namespace {

Peeked bad(std::string reason) {
    Peeked p;
    p.state = PeekState::bad;
    p.reason = std::move(reason);
    return p;
}

// A bounds-checked reader of big-endian fields.
struct Reader {
    std::string_view s;
    bool ok = true;
    uint32_t num(size_t n) {
        if (s.size() < n) {
            ok = false;
            return 0;
        }
        uint32_t v = 0;
        for (size_t i = 0; i < n; i++)
            v = v << 8 | static_cast<unsigned char>(s[i]);
        s.remove_prefix(n);
        return v;
    }
    std::string_view take(size_t n) {
        if (s.size() < n) {
            ok = false;
            return {};
        }
        std::string_view out = s.substr(0, n);
        s.remove_prefix(n);
        return out;
    }
};

constexpr uint8_t kHandshake = 22, kClientHello = 1;
constexpr uint16_t kServerName = 0;
constexpr uint8_t kHostName = 0;
constexpr size_t kMaxRecord = 16384;

// The host_name of a server_name extension's body.
Peeked server_name_of(std::string_view ext) {
    Reader r{ext};
    std::string_view list = r.take(r.num(2));
    if (!r.ok || !r.s.empty()) return bad("a server_name extension whose lengths do not add up");
    Reader l{list};
    std::string host;
    while (l.ok && !l.s.empty()) {
        uint32_t type = l.num(1);
        std::string_view name = l.take(l.num(2));
        if (!l.ok) break;
        if (type != kHostName) continue;
        if (!host.empty()) return bad("more than one host_name in the server_name extension");
        if (name.empty()) return bad("an empty host_name in the server_name extension");
        host = std::string(name);
    }
    if (!l.ok) return bad("a server_name extension whose lengths do not add up");
    if (host.empty()) return bad("a server_name extension without a host_name");
    Peeked p;
    p.state = PeekState::found;
    p.host = std::move(host);
    return p;
}

} // namespace

Peeked tls_server_name(std::string_view buf) {
    // Each byte of the record header is checked as soon as it is here.
    if (!buf.empty() && static_cast<uint8_t>(buf[0]) != kHandshake)
        return bad("not a TLS handshake record");
    if (buf.size() > 1 && buf[1] != 3) return bad("not a TLS record (version)");
    if (buf.size() < 5) return {};
    Reader rec{buf.substr(3)};
    size_t len = rec.num(2);
    if (len > kMaxRecord) return bad("a TLS record longer than 16384 bytes");
    if (buf.size() < 5 + len) {
        if (buf.size() > 5 && static_cast<uint8_t>(buf[5]) != kClientHello)
            return bad("a TLS handshake that is not a ClientHello");
        return {};
    }
    Reader hs{buf.substr(5, len)};
    if (hs.num(1) != kClientHello) return bad("a TLS handshake that is not a ClientHello");
    size_t hello_len = hs.num(3);
    if (!hs.ok || hello_len > hs.s.size())
        return bad("a ClientHello that does not fit in its first record");
    Reader h{hs.take(hello_len)};
    h.take(2 + 32);   // legacy_version, random
    h.take(h.num(1)); // legacy_session_id
    h.take(h.num(2)); // cipher_suites
    h.take(h.num(1)); // legacy_compression_methods
    if (!h.ok) return bad("a ClientHello whose lengths do not add up");
    if (h.s.empty()) return bad("a ClientHello without extensions (no server_name)");
    std::string_view exts = h.take(h.num(2));
    if (!h.ok || !h.s.empty()) return bad("a ClientHello whose lengths do not add up");
    Reader e{exts};
    std::optional<Peeked> found;
    while (e.ok && !e.s.empty()) {
        uint32_t type = e.num(2);
        std::string_view body = e.take(e.num(2));
        if (!e.ok) break;
        if (type != kServerName) continue;
        if (found) return bad("more than one server_name extension");
        found = server_name_of(body);
        if (found->state == PeekState::bad) return *found;
    }
    if (!e.ok) return bad("a ClientHello whose extensions do not add up");
    if (!found) return bad("a ClientHello without a server_name extension");
    return *found;
}

Peeked http_host(std::string_view buf) {
    size_t end = buf.find("\r\n\r\n");
    std::string_view head = buf.substr(0, end == std::string_view::npos ? buf.size() : end + 2);
    for (size_t i = 0; i < head.size(); i++) {
        char c = head[i];
        if (c == '\0') return bad("a NUL byte in the request head");
        if (c == '\n' && (i == 0 || head[i - 1] != '\r'))
            return bad("a bare LF in the request head");
        if (c == '\r' && i + 1 < head.size() && head[i + 1] != '\n')
            return bad("a bare CR in the request head");
    }
    if (end == std::string_view::npos) {
        if (buf.size() > kMaxPeek) return bad("a request head longer than 16389 bytes");
        return {};
    }
    // Each line without its CRLF.
    size_t at = 0;
    auto line = [&]() {
        size_t nl = head.find("\r\n", at);
        std::string_view l = head.substr(at, nl - at);
        at = nl + 2;
        return l;
    };
    auto request = split_request_line(line());
    if (!request) return bad("not an HTTP/1.x request line (METHOD SP TARGET SP HTTP/1.x)");
    std::string_view target = request->target;
    if (target.empty() || target[0] != '/')
        return bad("a request target that is not origin-form (\"/...\")");
    std::string host;
    int hosts = 0;
    while (at < head.size()) {
        std::string_view l = line();
        if (!l.empty() && (l[0] == ' ' || l[0] == '\t')) return bad("obs-fold in the request head");
        size_t colon = l.find(':');
        if (colon == std::string_view::npos || colon == 0)
            return bad("a header line without a name and ':'");
        std::string_view name = l.substr(0, colon);
        if (!is_token(name)) return bad("a header name that is not a token");
        if (name.size() != 4 || ::strncasecmp(name.data(), "host", 4) != 0) continue;
        hosts++;
        std::string_view v = l.substr(colon + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
            v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
            v.remove_suffix(1);
        // The port goes (the connection's is the one it dialled).
        if (!v.empty() && v[0] == '[') {
            size_t close = v.find(']');
            if (close == std::string_view::npos) return bad("a Host header with an unclosed '['");
            v = v.substr(1, close - 1);
        } else if (size_t c = v.rfind(':'); c != std::string_view::npos) {
            v = v.substr(0, c);
        }
        host = std::string(v);
    }
    if (hosts == 0) return bad("a request without a Host header");
    if (hosts > 1) return bad("a request with more than one Host header");
    if (host.empty()) return bad("an empty Host header");
    Peeked p;
    p.state = PeekState::found;
    p.host = std::move(host);
    return p;
}

} // namespace ocirun::egress
