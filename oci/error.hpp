// One error type for the whole runtime: an errno (0 when the failure is not a
// system call's) and a message that grows a context chain on the way up, so the
// final text reads like a path through the code: "create: mount `/proc`: EPERM".
#pragma once

#include <cerrno>
#include <cstring>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace ocirun {

struct Error {
    int code = 0;    // errno value, 0 when not from a system call
    std::string msg; // context chain, outermost first

    // Prepend a context: "ctx: msg".
    [[gnu::cold]] Error &wrap(std::string_view ctx) {
        std::string s(ctx);
        s += ": ";
        s += msg;
        msg = std::move(s);
        return *this;
    }

    // Full one-line text, with strerror appended when there is an errno.
    std::string text() const {
        if (code == 0) return msg;
        return msg + ": " + std::strerror(code);
    }
};

template <class T> using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

// The constructors of a failure are cold: the compiler moves the code that
// leads to them (building the message above all) out of the hot text, which
// keeps the pages a successful command touches fewer.
[[gnu::cold]] inline std::unexpected<Error> fail(std::string msg) {
    return std::unexpected(Error{0, std::move(msg)});
}

[[gnu::cold]] inline std::unexpected<Error> fail_code(int code, std::string msg) {
    return std::unexpected(Error{code, std::move(msg)});
}

// Capture errno at the call site: `return fail_errno("open " + path);`
[[gnu::cold]] inline std::unexpected<Error> fail_errno(std::string msg) {
    int e = errno;
    return std::unexpected(Error{e, std::move(msg)});
}

[[gnu::cold]] inline std::unexpected<Error> forward(Error e) {
    return std::unexpected(std::move(e));
}

[[gnu::cold]] inline std::unexpected<Error> forward(Error e, std::string_view ctx) {
    e.wrap(ctx);
    return std::unexpected(std::move(e));
}

} // namespace ocirun

// Propagate a failed Result/Status from the enclosing function; yields the
// value on success (GNU statement expression, as used with g++ and clang).
#define OCI_TRY(expr)                                                                              \
    ({                                                                                             \
        auto _oci_r = (expr);                                                                      \
        if (!_oci_r) [[unlikely]]                                                                  \
            return ::std::unexpected(::std::move(_oci_r.error()));                                 \
        ::std::move(*_oci_r);                                                                      \
    })

#define OCI_CHECK(expr)                                                                            \
    do {                                                                                           \
        auto _oci_r = (expr);                                                                      \
        if (!_oci_r) [[unlikely]]                                                                  \
            return ::std::unexpected(::std::move(_oci_r.error()));                                 \
    } while (0)

#define OCI_CHECK_CTX(expr, ctx)                                                                   \
    do {                                                                                           \
        auto _oci_r = (expr);                                                                      \
        if (!_oci_r) [[unlikely]] {                                                                \
            _oci_r.error().wrap(ctx);                                                              \
            return ::std::unexpected(::std::move(_oci_r.error()));                                 \
        }                                                                                          \
    } while (0)
