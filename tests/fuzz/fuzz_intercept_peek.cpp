// What an intercepted connection names (shim/intercept_peek.cpp), fed the
// first bytes a container sends to port 80 or 443: the input is tried as a
// TLS ClientHello and as an HTTP request head. Invariants: a name found is
// non-empty and is bytes of the input; a prefix of the input never names
// another host (the decision cannot change as more bytes arrive, only be
// reached); a refusal has a reason.
#include "fuzz_check.hpp"

#include "shim/intercept_peek.hpp"

using namespace ocirun::egress;

namespace {

void check(Peeked (*peek)(std::string_view), std::string_view in, const char *what) {
    Peeked p = peek(in);
    if (p.state == PeekState::bad && p.reason.empty())
        fuzz::broken((std::string(what) + ": a refusal without a reason").c_str(), std::string(in));
    if (p.state != PeekState::found) return;
    if (p.host.empty() || in.find(p.host) == std::string_view::npos)
        fuzz::broken((std::string(what) + ": a name that is not the input's").c_str(), p.host);
    Peeked half = peek(in.substr(0, in.size() / 2));
    if (half.state == PeekState::found && half.host != p.host)
        fuzz::broken((std::string(what) + ": a prefix names another host").c_str(), half.host);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string_view in = fuzz::text(data, size);
    check(tls_server_name, in, "tls");
    check(http_host, in, "http");
    return 0;
}
