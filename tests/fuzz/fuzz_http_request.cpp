// The egress proxy's request-head parser (shim/http_request.cpp), fed the
// bytes a container's client sends. Invariants: a complete head is found at
// most once and where it ends; a shorter prefix of it is never complete; the
// head forwarded to the origin server is well framed; the body after it is
// framed the same whether it arrives whole or a byte at a time, and never
// past the bytes given.
#include "fuzz_check.hpp"

#include "oci/policy/egress_rules.hpp"
#include "shim/http_request.hpp"

using namespace ocirun::egress;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view buf = fuzz::text(data, size);
    // The proxy's limit, and a small one so that the 431 path is reached.
    const size_t max_head = (size > 0 && data[0] & 1) ? 64 : 16384;
    ParseResult r = parse_request(buf, max_head);
    switch (r.state) {
    case ParseState::incomplete:
        if (buf.size() >= max_head) fuzz::broken("incomplete past max_head", std::string(buf));
        return 0;
    case ParseState::bad:
        if (r.status != 400 && r.status != 405 && r.status != 431)
            fuzz::broken("unexpected status", std::to_string(r.status));
        if (r.reason.empty() || r.reason.find_first_of("\r\n") != std::string::npos)
            fuzz::broken("a reason that is not one line", r.reason);
        return 0;
    case ParseState::done:
        break;
    }
    const Request &q = r.req;
    if (q.head_len < 4 || q.head_len > buf.size() || q.head_len > max_head ||
        buf.substr(q.head_len - 4, 4) != "\r\n\r\n")
        fuzz::broken("head_len does not end the head at CRLFCRLF", std::string(buf));
    if (buf.substr(0, q.head_len - 4).find("\r\n\r\n") != std::string_view::npos)
        fuzz::broken("head_len is past the first CRLFCRLF", std::string(buf));
    if (q.host.empty() || q.port == 0) fuzz::broken("empty host or port accepted", q.host);

    // The same head alone parses the same; one byte short it is incomplete.
    ParseResult alone = parse_request(buf.substr(0, q.head_len), max_head);
    if (alone.state != ParseState::done || alone.req.host != q.host || alone.req.port != q.port ||
        alone.req.forward_head != q.forward_head)
        fuzz::broken("the head alone parses differently", std::string(buf));
    if (parse_request(buf.substr(0, q.head_len - 1), max_head).state == ParseState::done)
        fuzz::broken("a head one byte short is complete", std::string(buf));

    if (q.kind == Request::Kind::http) {
        const std::string &f = q.forward_head;
        if (!f.ends_with("\r\n\r\n") || f.find("\r\n\r\n") != f.size() - 4)
            fuzz::broken("forward head not ended by exactly one CRLFCRLF", f);
        for (size_t i = 0; i < f.size(); i++) {
            if (f[i] == '\0') fuzz::broken("NUL in the forward head", f);
            if (f[i] == '\n' && (i == 0 || f[i - 1] != '\r'))
                fuzz::broken("bare LF in the forward head", f);
            if (f[i] == '\r' && (i + 1 >= f.size() || f[i + 1] != '\n'))
                fuzz::broken("bare CR in the forward head", f);
        }
    }
    if (q.kind == Request::Kind::http) {
        // The bytes after the head as the body: whole, then byte by byte.
        std::string_view rest = buf.substr(q.head_len);
        BodyFramer whole(q), bytes(q);
        auto n = whole.feed(rest);
        size_t taken = 0;
        bool failed = false;
        for (size_t i = 0; i < rest.size() && !bytes.done(); i++) {
            auto k = bytes.feed(rest.substr(i, 1));
            if (!k) {
                failed = true;
                break;
            }
            taken += *k;
        }
        if (n.has_value() == failed)
            fuzz::broken("the body framed differently in pieces", std::string(buf));
        if (n && (*n > rest.size() || *n != taken || whole.done() != bytes.done()))
            fuzz::broken("the body framed differently in pieces", std::string(buf));
        if (n && whole.done() && !q.chunked && *n != q.content_length)
            fuzz::broken("a Content-Length body of another length", std::string(buf));
    }
    // What the proxy does next: normalise the host (the result is unused here).
    (void)normalize_host(q.host);
    return 0;
}
