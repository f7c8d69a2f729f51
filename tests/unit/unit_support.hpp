// Helpers shared by the unit suites; each asserts, so a broken fixture fails
// the test that uses it instead of passing by accident.
#pragma once

#include "oci/state.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace unit {

inline void expect_eq(const std::string &got, const std::string &want) {
    cr_assert_str_eq(got.c_str(), want.c_str());
}

inline std::string make_tmpdir() {
    char tmpl[] = "/tmp/oci-run-ut-XXXXXX";
    char *d = ::mkdtemp(tmpl);
    cr_assert(d != nullptr, "mkdtemp: %s", std::strerror(errno));
    return d;
}

inline void rm_rf(const std::string &dir) {
    std::string cmd = "rm -rf '" + dir + "'";
    int rc = std::system(cmd.c_str());
    cr_assert_eq(rc, 0, "%s failed", cmd.c_str());
}

// The file's content; the test fails when it cannot be read.
inline std::string must_read(const std::string &path) {
    auto r = ocirun::oci::read_file(path);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    return *r;
}

inline void write_file(const std::string &path, const std::string &content) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(fd >= 0, "open %s: %s", path.c_str(), std::strerror(errno));
    ssize_t n = ::write(fd, content.data(), content.size());
    ::close(fd);
    cr_assert_eq(n, static_cast<ssize_t>(content.size()));
}

} // namespace unit
