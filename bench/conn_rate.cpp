// conn_rate: TCP connection rate and proxy set-up latency, for
// bench/network.sh. Figures, not assertions.
//
//   conn_rate serve PORT
//       Accept on 127.0.0.1:PORT; send one byte on every connection, then
//       close it. Runs until killed.
//   conn_rate connect HOST PORT SECONDS [PARALLEL]
//       For SECONDS, PARALLEL threads (default 1) each open a connection,
//       read the server's byte and its end, and close; prints
//       "rate=CONN/S connections=N errors=E seconds=S".
//   conn_rate latency HOST PORT N
//       N sequential connect + first byte, timed; prints
//       "median_us=M p90_us=P min_us=L n=N errors=E".
//   conn_rate connect-proxy PROXYPORT HOST:PORT N
//       N sequential HTTP CONNECT handshakes through 127.0.0.1:PROXYPORT,
//       each timed from socket() to the end of the 200 answer; prints the
//       same line as latency.
//
// A connection counts once the server's byte came back: through a relay, a
// finished handshake only says the relay's listener took it. The server
// closes first, so TIME_WAIT stays on its fixed port and a long run does not
// use up the client's ephemeral ports.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void usage() {
    std::fputs("usage: conn_rate serve PORT\n"
               "       conn_rate connect HOST PORT SECONDS [PARALLEL]\n"
               "       conn_rate latency HOST PORT N\n"
               "       conn_rate connect-proxy PROXYPORT HOST:PORT N\n",
               stderr);
}

// A whole decimal number in [lo, hi], or -1.
long number(std::string_view s, long lo, long hi) {
    long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return -1;
    return v;
}

struct Address {
    sockaddr_storage ss{};
    socklen_t len = 0;
};

// HOST must be an address literal (IPv4 or IPv6): no name lookups in a
// benchmark.
bool parse_address(const std::string &host, const std::string &port, Address &out) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo *res = nullptr;
    int r = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (r != 0) {
        std::fprintf(stderr, "conn_rate: %s port %s: %s\n", host.c_str(), port.c_str(),
                     ::gai_strerror(r));
        return false;
    }
    std::memcpy(&out.ss, res->ai_addr, res->ai_addrlen);
    out.len = res->ai_addrlen;
    ::freeaddrinfo(res);
    return true;
}

// --- serve -----------------------------------------------------------------

int serve(uint16_t port) {
    int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    (void)::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l < 0 || ::bind(l, reinterpret_cast<sockaddr *>(&in), sizeof in) < 0 ||
        ::listen(l, 4096) < 0) {
        std::fprintf(stderr, "conn_rate: listen on 127.0.0.1:%u: %s\n", port, std::strerror(errno));
        return 1;
    }
    // Two acceptors, so the server is not what a parallel client measures.
    auto accept_loop = [l] {
        for (;;) {
            int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) {
                if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
                    continue;
                std::fprintf(stderr, "conn_rate: accept: %s\n", std::strerror(errno));
                std::exit(1);
            }
            (void)::send(c, "x", 1, MSG_NOSIGNAL);
            ::close(c);
        }
    };
    std::thread other(accept_loop);
    accept_loop();
    other.join();
    return 0;
}

// --- client side -----------------------------------------------------------

// Connect, wait for the server's byte and its end of stream, close. False
// (errno set) when any step fails or the byte does not come.
bool one_connection(const Address &a) {
    int s = ::socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return false;
    bool ok = ::connect(s, reinterpret_cast<const sockaddr *>(&a.ss), a.len) == 0;
    size_t got = 0;
    char buf[16];
    while (ok) {
        ssize_t n = ::recv(s, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) ok = false;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    int e = errno;
    ::close(s);
    if (ok && got == 0) e = ECONNRESET; // closed without the byte
    errno = e;
    return ok && got > 0;
}

struct Worker {
    uint64_t done = 0, errors = 0;
    int first_errno = 0;
};

int connect_loop(const Address &a, double seconds, int parallel) {
    std::vector<Worker> workers(static_cast<size_t>(parallel));
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    const auto duration =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    Clock::time_point start, deadline;
    for (auto &w : workers)
        threads.emplace_back([&, &w = w] {
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            while (Clock::now() < deadline) {
                if (one_connection(a)) {
                    w.done++;
                    continue;
                }
                if (w.errors++ == 0) w.first_errno = errno;
                // Out of ports or refused: do not spin on the same failure.
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
    start = Clock::now();
    deadline = start + duration;
    go.store(true, std::memory_order_release);
    for (auto &t : threads)
        t.join();
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    uint64_t done = 0, errors = 0;
    int first_errno = 0;
    for (const auto &w : workers) {
        done += w.done;
        errors += w.errors;
        if (!first_errno) first_errno = w.first_errno;
    }
    std::printf("rate=%.0f connections=%llu errors=%llu seconds=%.2f\n",
                static_cast<double>(done) / elapsed, static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(errors), elapsed);
    if (errors)
        std::fprintf(stderr, "conn_rate: %llu failed connections, first: %s\n",
                     static_cast<unsigned long long>(errors), std::strerror(first_errno));
    return done > 0 ? 0 : 1;
}

void print_latencies(std::vector<double> us, uint64_t errors, int first_errno) {
    if (us.empty()) {
        std::fprintf(stderr, "conn_rate: no attempt succeeded (%llu errors, first: %s)\n",
                     static_cast<unsigned long long>(errors), std::strerror(first_errno));
        return;
    }
    std::sort(us.begin(), us.end());
    auto at = [&](double q) {
        return us[static_cast<size_t>(q * static_cast<double>(us.size() - 1))];
    };
    std::printf("median_us=%.1f p90_us=%.1f min_us=%.1f n=%zu errors=%llu\n", at(0.5), at(0.9),
                us.front(), us.size(), static_cast<unsigned long long>(errors));
    if (errors)
        std::fprintf(stderr, "conn_rate: %llu failed attempts, first: %s\n",
                     static_cast<unsigned long long>(errors), std::strerror(first_errno));
}

double micros_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

int latency(const Address &a, long n) {
    std::vector<double> us;
    uint64_t errors = 0;
    int first_errno = 0;
    for (long i = 0; i < n; i++) {
        auto t0 = Clock::now();
        if (one_connection(a))
            us.push_back(micros_since(t0));
        else if (errors++ == 0)
            first_errno = errno;
    }
    print_latencies(us, errors, first_errno);
    return us.empty() ? 1 : 0;
}

// One CONNECT through the proxy: true once the "200" answer's head is in.
// On a refusal, the proxy's first line goes to `refusal`.
bool one_connect(const Address &proxy, const std::string &target, std::string &refusal) {
    int s = ::socket(proxy.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return false;
    int one = 1;
    (void)::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string req = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
    bool ok = ::connect(s, reinterpret_cast<const sockaddr *>(&proxy.ss), proxy.len) == 0 &&
              ::send(s, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
    std::string head;
    char buf[512];
    while (ok && head.find("\r\n\r\n") == std::string::npos && head.size() < 8192) {
        ssize_t n = ::recv(s, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = false;
            if (n == 0) errno = ECONNRESET;
            break;
        }
        head.append(buf, static_cast<size_t>(n));
    }
    int e = errno;
    ::close(s);
    if (ok && head.compare(0, 12, "HTTP/1.1 200") != 0 &&
        head.compare(0, 12, "HTTP/1.0 200") != 0) {
        refusal = head.substr(0, head.find("\r\n"));
        ok = false;
        e = EPROTO;
    }
    errno = e;
    return ok;
}

int connect_proxy(const Address &proxy, const std::string &target, long n) {
    std::vector<double> us;
    uint64_t errors = 0;
    int first_errno = 0;
    std::string refusal;
    for (long i = 0; i < n; i++) {
        auto t0 = Clock::now();
        if (one_connect(proxy, target, refusal))
            us.push_back(micros_since(t0));
        else if (errors++ == 0)
            first_errno = errno;
    }
    if (!refusal.empty())
        std::fprintf(stderr, "conn_rate: the proxy answered \"%s\"\n", refusal.c_str());
    print_latencies(us, errors, first_errno);
    return us.empty() ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
    std::vector<std::string> a(argv + 1, argv + argc);
    (void)::signal(SIGPIPE, SIG_IGN);
    if (a.size() == 2 && a[0] == "serve") {
        long port = number(a[1], 1, 65535);
        if (port < 0) return usage(), 2;
        return serve(static_cast<uint16_t>(port));
    }
    if ((a.size() == 4 || a.size() == 5) && a[0] == "connect") {
        Address addr;
        char *end = nullptr;
        double seconds = std::strtod(a[3].c_str(), &end);
        long parallel = a.size() == 5 ? number(a[4], 1, 256) : 1;
        if (*end != '\0' || !(seconds > 0) || parallel < 0) return usage(), 2;
        if (!parse_address(a[1], a[2], addr)) return 2;
        return connect_loop(addr, seconds, static_cast<int>(parallel));
    }
    if (a.size() == 4 && a[0] == "latency") {
        Address addr;
        long n = number(a[3], 1, 10000000);
        if (n < 0) return usage(), 2;
        if (!parse_address(a[1], a[2], addr)) return 2;
        return latency(addr, n);
    }
    if (a.size() == 4 && a[0] == "connect-proxy") {
        Address proxy;
        long n = number(a[3], 1, 10000000);
        if (n < 0 || number(a[1], 1, 65535) < 0 || a[2].rfind(':') == std::string::npos)
            return usage(), 2;
        if (!parse_address("127.0.0.1", a[1], proxy)) return 2;
        return connect_proxy(proxy, a[2], n);
    }
    usage();
    return 2;
}
