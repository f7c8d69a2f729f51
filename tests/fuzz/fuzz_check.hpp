// What the fuzz targets share: an invariant check that stops the run with the
// reason (libFuzzer then saves the input as a crash artifact), the input as
// text, and the runtime's log sent nowhere.
#pragma once

#include "oci/text.hpp"
#include "runtime/log.hpp"

#include <fcntl.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

// An invariant the code under test promises; a failure is a bug, reported
// like a sanitizer finding.
[[noreturn]] inline void broken(const char *what, const std::string &detail) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, detail.c_str());
    std::abort();
}

inline std::string_view text(const uint8_t *data, size_t size) {
    return {reinterpret_cast<const char *>(data), size};
}

// Fields of the input separated by `sep` (empty fields kept): the runtime's own splitter.
using ocirun::split;

// The runtime's warnings (a report-mode policy's gaps) and debug lines go to
// /dev/null: written, so their code runs, but not flooding the fuzzer's output.
inline void log_to_null() {
    ocirun::log::configure(::open("/dev/null", O_WRONLY | O_CLOEXEC), ocirun::log::Format::text,
                           true);
}

} // namespace fuzz
