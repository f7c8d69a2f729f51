#include "egress_proxy.hpp"

#include "forward.hpp"
#include "http_request.hpp"
#include "intercept_peek.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <optional>
#include <sstream>

namespace ocirun::shim {

using egress::Host;
using egress::IpAddr;

Verdict decide(const ProxyConfig &c, const Host &host, uint16_t port) {
    Verdict v;
    if (const egress::Pattern *d = egress::match(c.deny, host, port, true)) {
        v.blocked = true;
        v.reason = "denied by dev.ocirun.deny-domains entry \"" + d->text + "\"";
        return v;
    }
    if (const egress::Pattern *a = egress::match(c.allow, host, port)) {
        v.matched = a->text;
        return v;
    }
    v.blocked = true;
    v.reason = host.name + ":" + std::to_string(port) + " is not in dev.ocirun.domains";
    return v;
}

Pick pick_address(const ProxyConfig &c, const std::string &name, uint16_t port,
                  const std::vector<IpAddr> &addrs) {
    Pick p;
    std::string seen;
    for (const IpAddr &raw : addrs) {
        IpAddr a = egress::canonical(raw);
        egress::AddressClass cls = egress::classify(a);
        std::string what = egress::class_name(cls);
        if (const egress::Pattern *d = egress::covering(c.deny, a, port, true))
            what = "denied by \"" + d->text + "\"";
        else if (cls == egress::AddressClass::global || egress::covering(c.allow, a, port)) {
            p.addr = a;
            return p;
        } else if (egress::covering(c.allow, a))
            what += "; its address pattern does not allow port " + std::to_string(port);
        else if (cls == egress::AddressClass::reserved)
            what += ": " + egress::describe_class(a);
        seen += (seen.empty() ? "" : ", ") + egress::to_string(a) + " (" + what + ")";
    }
    p.blocked = true;
    p.reason = addrs.empty() ? name + " does not resolve"
                             : name + " resolves to no address it may reach on port " +
                                   std::to_string(port) + ": " + seen;
    if (!addrs.empty()) p.addr = egress::canonical(addrs.front());
    return p;
}

// --- name resolution -------------------------------------------------------

namespace {

void wake(union sigval v) {
    uint64_t one = 1;
    (void)!::write(v.sival_int, &one, sizeof one);
}

// Every address of `name` in the text of a hosts-format file.
std::vector<IpAddr> from_hosts_file(const std::string &text, const std::string &name) {
    std::vector<IpAddr> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream f(line);
        std::string addr, n;
        if (!(f >> addr)) continue;
        while (f >> n) {
            for (char &ch : n)
                ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            if (n != name) continue;
            IpAddr a;
            a.family = addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
            if (::inet_pton(a.family, addr.c_str(), a.bytes) == 1) out.push_back(a);
        }
    }
    return out;
}

} // namespace

Resolver::Resolver(std::string hosts_file) : hosts_file_(std::move(hosts_file)) {}

Resolver::~Resolver() {
    for (auto &p : pending_)
        if (::gai_cancel(&p->cb) == EAI_CANCELED && p->cb.ar_result)
            ::freeaddrinfo(p->cb.ar_result);
    // Requests still running keep their memory: the helper is exiting.
    for (auto &p : pending_)
        (void)p.release();
    if (efd_ >= 0) ::close(efd_);
}

bool Resolver::start(Loop &loop) {
    // A name is looked up as the policy matched it, never with the host's
    // search domains appended (glibc tries "a.test.corp.example" when
    // "a.test" fails, or first for a name with fewer dots than ndots): an
    // empty LOCALDOMAIN replaces resolv.conf's search list with none. Set
    // before any lookup thread exists.
    if (::setenv("LOCALDOMAIN", "", 1) < 0) return false;
    if (!hosts_file_.empty()) {
        int fd = ::open(hosts_file_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        char buf[4096];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0 && hosts_text_.size() < (1u << 20))
            hosts_text_.append(buf, static_cast<size_t>(n));
        int e = errno;
        ::close(fd);
        if (n < 0) return errno = e, false;
    }
    efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return efd_ >= 0 && loop.watch(efd_, EPOLLIN, this);
}

void Resolver::resolve(Loop &loop, const std::string &name, Done done) {
    if (!hosts_file_.empty()) {
        auto addrs = from_hosts_file(hosts_text_, name);
        return done(loop, std::move(addrs), "");
    }
    auto p = std::make_unique<Pending>();
    p->name = name;
    p->done = std::move(done);
    p->hints.ai_family = AF_UNSPEC;
    p->hints.ai_socktype = SOCK_STREAM;
    p->cb.ar_name = p->name.c_str();
    p->cb.ar_request = &p->hints;
    gaicb *list[1] = {&p->cb};
    struct sigevent sev {};
    sev.sigev_notify = SIGEV_THREAD;
    sev.sigev_notify_function = wake;
    sev.sigev_value.sival_int = efd_;
    int r = ::getaddrinfo_a(GAI_NOWAIT, list, 1, &sev);
    if (r != 0) return p->done(loop, {}, ::gai_strerror(r));
    pending_.push_back(std::move(p));
}

void Resolver::on_ready(Loop &loop, int, uint32_t) {
    uint64_t n;
    (void)!::read(efd_, &n, sizeof n);
    for (auto it = pending_.begin(); it != pending_.end();) {
        int r = ::gai_error(&(*it)->cb);
        if (r == EAI_INPROGRESS) {
            ++it;
            continue;
        }
        std::unique_ptr<Pending> p = std::move(*it);
        it = pending_.erase(it);
        std::vector<IpAddr> addrs;
        for (addrinfo *ai = p->cb.ar_result; ai; ai = ai->ai_next) {
            IpAddr a = egress::from_sockaddr(ai->ai_addr);
            bool dup = false;
            for (const auto &x : addrs)
                dup = dup || x == a;
            if (a.family && !dup) addrs.push_back(a);
        }
        if (p->cb.ar_result) ::freeaddrinfo(p->cb.ar_result);
        std::string err = r == 0 || r == EAI_NONAME ? "" : ::gai_strerror(r);
        p->done(loop, std::move(addrs), err);
    }
}

// --- one client connection -------------------------------------------------

namespace {

const char *status_text(int status) {
    switch (status) {
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 431:
        return "Request Header Fields Too Large";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

// Everything or nothing, on a non-blocking socket whose buffer is empty (a
// fresh connection): a short write is an error.
bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

void answer(int fd, int status, const std::string &reason) {
    std::string body = "oci-run egress proxy: " + reason + "\n";
    std::string msg =
        "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
        "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n" + body;
    (void)send_all(fd, msg);
}

// Whether the first bytes inside a CONNECT tunnel are a proxy request: a
// tunnel through an allowed host that is itself a proxy would reach any
// host. Blank lines first are skipped (servers ignore them before a request
// line). A proxy request starts with a standard method and a space; bytes
// that cannot be the start of one (TLS, SSH, most protocols) are not one,
// decided at once. After CONNECT it is one; after another method it is one
// when the target is in absolute form ("://"), decided once the target ends.
// nullopt: not enough bytes yet. At kProbeLine bytes (no more are read
// before deciding) it is decided on what is there: a target still going is
// not absolute (a scheme is short), and blank lines or a method's start
// with nothing after them count as a request (what follows cannot be seen).
constexpr size_t kProbeLine = 4096;

std::optional<bool> proxy_request(std::string_view data, bool eof) {
    static constexpr std::string_view kMethods[] = {
        "CONNECT ", "GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "TRACE ", "PATCH "};
    bool full = data.size() >= kProbeLine;
    // Not enough to tell: wait, or decide as the bytes end.
    auto unknown = [&]() -> std::optional<bool> {
        if (eof) return false;
        if (full) return true;
        return std::nullopt;
    };
    size_t i = data.find_first_not_of("\r\n");
    if (i == std::string_view::npos) return unknown();
    std::string_view rest = data.substr(i);
    for (std::string_view m : kMethods) {
        size_t n = std::min(rest.size(), m.size());
        if (::strncasecmp(rest.data(), m.data(), n) != 0) continue;
        if (n < m.size()) return unknown();
        if (m == "CONNECT ") return true;
        std::string_view target = rest.substr(m.size());
        size_t end = target.find_first_of(" \t\r\n");
        if (target.find("://") < end) return true;
        if (end == std::string_view::npos && !eof && !full) return std::nullopt;
        return false;
    }
    return false;
}

// The Host line of a head made by egress::forward_head (its second line)
// set to `name` and, unless it is 80, the port.
void set_host_line(std::string &head, const std::string &name, uint16_t port) {
    size_t at = head.find("\r\nHost: ");
    if (at == std::string::npos) return;
    at += 8;
    size_t end = head.find("\r\n", at);
    head.replace(at, end - at, port == 80 ? name : name + ":" + std::to_string(port));
}

class ProxyConn : public Handler, public Awaiting {
  public:
    ProxyConn(EgressProxy &px, int client, std::optional<Intercept> intercept = std::nullopt)
        : px_(px), client_(client), intercept_(intercept) {
        ev_.observe = px.config().observe;
        px_.await(*this);
    }
    ~ProxyConn() override {
        if (client_ >= 0) ::close(client_);
        if (up_ >= 0) ::close(up_);
    }
    void on_ready(Loop &loop, int fd, uint32_t events) override;
    // The request head, or a tunnel's first bytes, did not come in time.
    void expired(Loop &loop) override;

  private:
    enum class Phase { head, resolving, dialing, probe, http };
    void read_head(Loop &loop);
    // An intercepted connection's first bytes: what they name, into req_
    // (found), or more needed (incomplete), or refused (bad).
    egress::PeekState peek(Loop &loop);
    // req_ decided, then resolved and dialled.
    void decide_request(Loop &loop);
    void resolved(Loop &loop, std::vector<IpAddr> addrs, const std::string &err);
    void connect_to(Loop &loop, const IpAddr &addr);
    void connected(Loop &loop, int err);
    void probe(Loop &loop);
    void relay(Loop &loop);
    // The plain-http exchange: the parsed head, then exactly the body its
    // head frames, up; the response down until the server closes.
    void http(Loop &loop);
    bool http_watch(Loop &loop);
    // The exchange's close event (bytes each way, `reason` if one is given),
    // then the end.
    void http_closed(Loop &loop, std::string reason);
    // Refuse with `status`: answer, log, close.
    void refuse(Loop &loop, int status, const std::string &reason);
    void finish(Loop &loop);

    EgressProxy &px_;
    int client_, up_ = -1;
    std::optional<Intercept> intercept_;
    Phase phase_ = Phase::head;
    std::string buf_;
    uint64_t sent_up_ = 0; // bytes sent upstream before the relay took over
    egress::Request req_;
    EgressEvent ev_;
    // http
    std::optional<egress::BodyFramer> body_;
    std::string to_up_, to_client_;
    bool up_eof_ = false, client_eof_ = false, extra_ = false, up_shut_ = false;
    uint64_t down_ = 0;
    uint32_t want_client_ = 0, want_up_ = 0;
};

void ProxyConn::finish(Loop &loop) {
    px_.awaited(*this);
    if (client_ >= 0) loop.unwatch(client_);
    if (up_ >= 0) loop.unwatch(up_);
    px_.release();
    loop.retire(this);
}

void ProxyConn::refuse(Loop &loop, int status, const std::string &reason) {
    ev_.event = "refused";
    ev_.blocked = true;
    ev_.reason = reason;
    px_.log().write(ev_);
    // An intercepted TLS client gets no answer it could read: it is closed.
    if (intercept_ != Intercept::tls) answer(client_, status, reason);
    finish(loop);
}

void ProxyConn::expired(Loop &loop) {
    std::string in = std::to_string(px_.config().request_timeout_ms / 1000);
    if (phase_ == Phase::head) return refuse(loop, 408, "no complete request in " + in + " s");
    // A tunnel whose client sent nothing: it ends, and says why.
    ev_.event = "close";
    ev_.bytes = true;
    ev_.reason = "nothing from the client through the tunnel in " + in + " s";
    px_.log().write(ev_);
    finish(loop);
}

void ProxyConn::on_ready(Loop &loop, int, uint32_t) {
    switch (phase_) {
    case Phase::head:
        return read_head(loop);
    case Phase::probe:
        return probe(loop);
    case Phase::http:
        return http(loop);
    case Phase::resolving:
    case Phase::dialing:
        return;
    }
}

void ProxyConn::read_head(Loop &loop) {
    char tmp[4096];
    for (;;) {
        ssize_t n = ::recv(client_, tmp, sizeof tmp, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n < 0 || (n == 0 && buf_.empty())) return finish(loop); // gone before asking
        if (n == 0) {
            // A client may send its request and shut down its side at once
            // (`printf ... | nc`): what it sent is decided, and the EOF
            // passed on.
            client_eof_ = true;
            break;
        }
        buf_.append(tmp, static_cast<size_t>(n));
        if (buf_.size() > 20000) break;
    }
    if (intercept_) {
        switch (peek(loop)) {
        case egress::PeekState::found:
            return decide_request(loop);
        case egress::PeekState::incomplete:
            if (client_eof_) finish(loop); // ended undecided
            return;
        case egress::PeekState::bad:
            return; // refused
        }
        return;
    }
    egress::ParseResult r = egress::parse_request(buf_);
    if (r.state == egress::ParseState::incomplete) {
        if (client_eof_) finish(loop); // ended before its head did
        return;
    }
    loop.unwatch(client_);
    if (r.state == egress::ParseState::bad) {
        ev_.host = r.req.host;
        ev_.port = r.req.port;
        ev_.method = r.req.method;
        return refuse(loop, r.status, r.reason);
    }
    req_ = std::move(r.req);
    decide_request(loop);
}

egress::PeekState ProxyConn::peek(Loop &loop) {
    bool tls = intercept_ == Intercept::tls;
    egress::Peeked seen = tls ? egress::tls_server_name(buf_) : egress::http_host(buf_);
    if (seen.state == egress::PeekState::incomplete) return seen.state;
    loop.unwatch(client_);
    req_.kind = egress::Request::Kind::connect;
    req_.method = tls ? "TLS" : "HTTP";
    req_.port = tls ? 443 : 80;
    req_.host = seen.host;
    req_.head_len = 0; // everything read goes to the server as it came
    if (seen.state == egress::PeekState::bad) {
        ev_.method = req_.method;
        ev_.port = req_.port;
        refuse(loop, 400, "intercepted: " + seen.reason);
    }
    return seen.state;
}

void ProxyConn::decide_request(Loop &loop) {
    px_.awaited(*this); // the request is here
    ev_.method = req_.method;
    ev_.host = req_.host;
    ev_.port = req_.port;
    auto host = egress::normalize_host(req_.host);
    if (!host) return refuse(loop, 403, host.error().text());
    ev_.host = host->name;
    // The server is sent the name as decided on (punycode, lowercase, no
    // trailing dot), not the bytes the client wrote.
    if (req_.kind == egress::Request::Kind::http && !host->is_address)
        set_host_line(req_.forward_head, host->name, req_.port);
    Verdict v = decide(px_.config(), *host, req_.port);
    ev_.matched = v.matched;
    if (v.blocked) {
        // Enforced: refused before any lookup (a denied name is never asked).
        if (!ev_.observe) return refuse(loop, 403, v.reason);
        ev_.blocked = true;
        ev_.reason = v.reason;
    }
    if (host->is_address) {
        // An address literal: its own address rule decided above.
        phase_ = Phase::dialing;
        return connect_to(loop, host->addr);
    }
    phase_ = Phase::resolving;
    px_.resolver().resolve(loop, host->name,
                           [this](Loop &l, std::vector<IpAddr> addrs, std::string err) {
                               resolved(l, std::move(addrs), err);
                           });
}

void ProxyConn::resolved(Loop &loop, std::vector<IpAddr> addrs, const std::string &err) {
    if (addrs.empty())
        return refuse(loop, 502, ev_.host + " does not resolve" + (err.empty() ? "" : ": " + err));
    Pick p = pick_address(px_.config(), ev_.host, req_.port, addrs);
    if (p.blocked) {
        if (!ev_.observe) return refuse(loop, 403, p.reason);
        ev_.blocked = true;
        ev_.reason += (ev_.reason.empty() ? "" : "; ") + p.reason;
    }
    phase_ = Phase::dialing;
    connect_to(loop, p.addr);
}

void ProxyConn::connect_to(Loop &loop, const IpAddr &addr) {
    ev_.address = egress::to_string(addr);
    up_ = ::socket(addr.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (up_ < 0) return refuse(loop, 502, std::string("socket: ") + std::strerror(errno));
    dial(loop, up_, to_sockaddr(addr, req_.port), [this](Loop &l, int err) { connected(l, err); });
}

void ProxyConn::connected(Loop &loop, int err) {
    if (err != 0)
        return refuse(loop, 502,
                      "connect to " + ev_.address + ":" + std::to_string(req_.port) + ": " +
                          std::strerror(err));
    ev_.event = "allowed";
    px_.log().write(ev_);
    buf_.erase(0, req_.head_len);
    if (intercept_) {
        // What it sent so far, as it came, then the relay.
        if (!buf_.empty() && !send_all(up_, buf_)) return finish(loop);
        sent_up_ = buf_.size();
        if (client_eof_) ::shutdown(up_, SHUT_WR);
        return relay(loop);
    }
    if (req_.kind == egress::Request::Kind::http) {
        phase_ = Phase::http;
        cap_buffers(client_, false);
        cap_buffers(up_, false);
        body_.emplace(req_);
        to_up_ = req_.forward_head;
        sent_up_ = 0;
        return http(loop);
    }
    if (!send_all(client_, "HTTP/1.1 200 Connection established\r\n\r\n")) return finish(loop);
    phase_ = Phase::probe;
    px_.await(*this);
    probe(loop);
}

void ProxyConn::probe(Loop &loop) {
    bool eof = false;
    while (buf_.size() < kProbeLine) {
        char tmp[kProbeLine];
        ssize_t n = ::recv(client_, tmp, kProbeLine - buf_.size(), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n < 0) return finish(loop);
        if (n == 0) {
            eof = true;
            break;
        }
        buf_.append(tmp, static_cast<size_t>(n));
    }
    if (buf_.empty() && eof) {
        // Closed without a byte: the tunnel ends here, and says so.
        ev_.event = "close";
        ev_.bytes = true;
        px_.log().write(ev_);
        return finish(loop);
    }
    std::optional<bool> nested = proxy_request(buf_, eof);
    if (!nested) {
        // Wait for more bytes (or EOF).
        if (!loop.watch(client_, EPOLLIN, this)) return finish(loop);
        return;
    }
    px_.awaited(*this);
    loop.unwatch(client_);
    if (*nested) {
        ev_.blocked = true;
        ev_.reason = "a proxy request (CONNECT or an absolute URL) inside the tunnel";
        if (!ev_.observe) {
            ev_.event = "refused";
            px_.log().write(ev_);
            return finish(loop);
        }
    }
    if (!buf_.empty() && !send_all(up_, buf_)) return finish(loop);
    sent_up_ = buf_.size();
    // What the client sent was read, not left in the socket: EOF passes on.
    if (eof) ::shutdown(up_, SHUT_WR);
    relay(loop);
}

void ProxyConn::relay(Loop &loop) {
    EgressProxy &px = px_;
    EgressEvent ev = ev_;
    uint64_t sent = sent_up_;
    ev.event = "close";
    ev.bytes = true;
    int c = client_, u = up_;
    client_ = up_ = -1;
    px.hold(); // the relay's own place; this connection's ends in finish()
    finish(loop);
    Relay *r =
        Relay::start(loop, px.pool(), c, u, [&px, ev, sent](uint64_t up, uint64_t down) mutable {
            ev.bytes_up = sent + up;
            ev.bytes_down = down;
            px.log().write(ev);
            px.release();
        });
    if (!r) {
        // No pipes (the helper is out of descriptors): both sockets are
        // closed without the callback, so the place is given back here, or
        // it would be lost for good.
        ev.bytes_up = sent;
        ev.reason = "no pipe for the relay (out of file descriptors)";
        px.log().write(ev);
        px.release();
    }
}

// Send what `pending` holds to `fd` as far as it takes it, counting the
// bytes: 1 when some went, 0 when none could, -1 on an error.
int send_pending(int fd, std::string &pending, uint64_t &count) {
    if (pending.empty()) return 0;
    ssize_t n = ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    pending.erase(0, static_cast<size_t>(n));
    count += static_cast<uint64_t>(n);
    return n > 0 ? 1 : 0;
}

void ProxyConn::http_closed(Loop &loop, std::string reason) {
    ev_.event = "close";
    ev_.bytes = true;
    ev_.bytes_up = sent_up_;
    ev_.bytes_down = down_;
    if (!reason.empty()) ev_.reason = std::move(reason); // else an observe-mode reason stays
    px_.log().write(ev_);
    finish(loop);
}

// Non-blocking both ways through small buffers: the client's bytes go up
// only as far as the body its head framed (what follows, a pipelined
// request, is never relayed: the server was told Connection: close, so the
// exchange ends with its response and the client asks again on a new
// connection, decided on its own); the server's bytes go down until it
// closes.
void ProxyConn::http(Loop &loop) {
    constexpr size_t kChunk = 65536;
    char tmp[kChunk];
    for (bool moved = true; moved;) {
        moved = false;
        int up = send_pending(up_, to_up_, sent_up_);
        if (up < 0) return finish(loop);
        moved = up > 0;
        // The body: buffered bytes first, then the client's socket.
        if (to_up_.empty() && !body_->done()) {
            if (buf_.empty() && !client_eof_) {
                ssize_t n = ::recv(client_, tmp, kChunk, 0);
                if (n > 0)
                    buf_.assign(tmp, static_cast<size_t>(n));
                else if (n == 0)
                    client_eof_ = true;
                else if (errno != EAGAIN && errno != EINTR)
                    return finish(loop);
            }
            if (!buf_.empty()) {
                auto k = body_->feed(buf_);
                if (!k) {
                    ev_.reason = "request body: " + k.error().text();
                    return refuse(loop, 400, ev_.reason);
                }
                to_up_.append(buf_, 0, *k);
                buf_.erase(0, *k);
                moved = true;
            } else if (client_eof_) {
                // Gone before the body's end: what went up is said, then closed.
                return http_closed(loop, "the client closed before the request's end");
            }
        }
        if (body_->done() && !buf_.empty()) {
            extra_ = true; // a pipelined request: not relayed
            buf_.clear();
        }
        // After the body the client is still read, for its EOF (passed on
        // to the server, which may wait for it); its bytes are dropped.
        if (body_->done() && !client_eof_) {
            ssize_t n = ::recv(client_, tmp, kChunk, 0);
            if (n > 0) {
                extra_ = true;
                moved = true;
            } else if (n == 0) {
                client_eof_ = true;
            } else if (errno != EAGAIN && errno != EINTR) {
                return finish(loop);
            }
        }
        // The client's EOF goes on once the request has (the server may
        // wait for it).
        if (client_eof_ && body_->done() && to_up_.empty() && !up_shut_) {
            ::shutdown(up_, SHUT_WR);
            up_shut_ = true;
        }
        int down = send_pending(client_, to_client_, down_);
        if (down < 0) return finish(loop);
        moved = moved || down > 0;
        if (to_client_.empty() && !up_eof_) {
            ssize_t n = ::recv(up_, tmp, kChunk, 0);
            if (n > 0) {
                to_client_.assign(tmp, static_cast<size_t>(n));
                moved = true;
            } else if (n == 0) {
                up_eof_ = true;
            } else if (errno != EAGAIN && errno != EINTR) {
                return finish(loop);
            }
        }
    }
    if (up_eof_ && to_client_.empty())
        return http_closed(loop, extra_ ? "bytes after the request (a pipelined request) were "
                                          "not relayed: one request per connection"
                                 : !body_->done() ? "the server closed before the request's end"
                                                  : "");
    if (!http_watch(loop)) return finish(loop);
}

bool ProxyConn::http_watch(Loop &loop) {
    // The client is read for the body while the server takes it, then for
    // its EOF alone.
    bool read_client = !client_eof_ && (body_->done() || (to_up_.empty() && buf_.empty()));
    uint32_t wc =
        (read_client ? uint32_t{EPOLLIN} : 0u) | (!to_client_.empty() ? uint32_t{EPOLLOUT} : 0u);
    uint32_t wu = (!up_eof_ && to_client_.empty() ? uint32_t{EPOLLIN} : 0u) |
                  (!to_up_.empty() ? uint32_t{EPOLLOUT} : 0u);
    auto set = [&](int fd, uint32_t w, uint32_t &cur) {
        if (w == cur) return true;
        cur = w;
        if (w == 0) {
            loop.unwatch(fd);
            return true;
        }
        return loop.watch(fd, w, this);
    };
    return set(client_, wc, want_client_) && set(up_, wu, want_up_);
}

} // namespace

EgressProxy::~EgressProxy() {
    ::close(listener_);
    if (timer_ >= 0) ::close(timer_);
}

namespace {

uint64_t now_ms() {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

} // namespace

bool EgressProxy::start(Loop &loop) {
    timer_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (timer_ < 0) return false;
    struct itimerspec tick {};
    tick.it_interval.tv_sec = tick.it_value.tv_sec = 1;
    return ::timerfd_settime(timer_, 0, &tick, nullptr) == 0 && loop.watch(timer_, EPOLLIN, this);
}

// Deadlines are now plus one duration, so appending keeps the list in
// their order.
void EgressProxy::await(Awaiting &a) {
    awaited(a);
    a.deadline_ms_ = now_ms() + static_cast<uint64_t>(config_.request_timeout_ms);
    a.prev_ = last_;
    a.next_ = nullptr;
    (last_ ? last_->next_ : first_) = &a;
    last_ = &a;
    a.listed_ = true;
}

void EgressProxy::awaited(Awaiting &a) {
    if (!a.listed_) return;
    (a.prev_ ? a.prev_->next_ : first_) = a.next_;
    (a.next_ ? a.next_->prev_ : last_) = a.prev_;
    a.prev_ = a.next_ = nullptr;
    a.listed_ = false;
}

void EgressProxy::expire(Loop &loop) {
    uint64_t ticks;
    (void)!::read(timer_, &ticks, sizeof ticks);
    uint64_t now = now_ms();
    while (first_ && first_->deadline_ms_ <= now) {
        Awaiting *a = first_;
        awaited(*a);
        a->expired(loop);
    }
}

std::string EgressProxy::over_limit() const {
    if (active >= config_.max_connections)
        return "more than " + std::to_string(config_.max_connections) +
               " connections at once (dev.ocirun.proxy-max-connections)";
    if (budget_.full())
        return "more than " + std::to_string(budget_.max) +
               " connections through the helper at once (dev.ocirun.max-connections)";
    return "";
}

std::string EgressProxy::take_place(const std::string &limit, const std::string &what) {
    std::string over = over_limit();
    if (over.empty()) {
        log_.under(limit);
        hold();
        return "";
    }
    EgressEvent ev;
    ev.event = "refused";
    ev.blocked = true;
    ev.observe = config_.observe;
    ev.reason = what + over;
    log_.refused_over(limit, ev);
    return ev.reason;
}

namespace {

// Accept every connection waiting on `listener` for `px` (an intercepted one
// with `intercept`); over a limit, refused (`answer_over`: with a 503).
void accept_all(Loop &loop, EgressProxy &px, int listener, std::optional<Intercept> intercept,
                bool answer_over) {
    for (;;) {
        int c = accept_connection(listener);
        if (c < 0) return;
        if (std::string over = px.take_place("proxy"); !over.empty()) {
            if (answer_over) answer(c, 503, over);
            ::close(c);
            continue;
        }
        auto *conn = new ProxyConn(px, c, intercept);
        if (!loop.watch(c, EPOLLIN, conn)) {
            px.awaited(*conn);
            px.release();
            delete conn;
        }
    }
}

} // namespace

void EgressProxy::on_ready(Loop &loop, int fd, uint32_t) {
    if (fd == timer_) return expire(loop);
    accept_all(loop, *this, listener_, std::nullopt, true);
}

Interceptor::~Interceptor() {
    ::close(listener_);
}

void Interceptor::on_ready(Loop &loop, int, uint32_t) {
    accept_all(loop, proxy_, listener_, kind_, kind_ == Intercept::http);
}

} // namespace ocirun::shim
