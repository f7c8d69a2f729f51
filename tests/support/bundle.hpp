// Busybox bundles for integration tests, made by contrib/make-bundle.sh and
// edited through the runtime's own Spec model (as runc's tests use jq).
#pragma once

#include "oci/spec.hpp"

#include <string>
#include <vector>

namespace test {

struct Bundle {
    std::string dir;    // bundle directory (a temp dir)
    std::string rootfs; // dir + "/rootfs"
    ocirun::oci::Spec spec;

    // Write `spec` back to config.json.
    void save() const;
    // Remove the bundle directory.
    void remove() const;
};

// A bundle running `args` (default: the spec's sh), terminal off.
Bundle make_bundle(const char *tag, const std::vector<std::string> &args = {});

// A state directory for --root, unique per test.
std::string make_root(const char *tag);

// A container ID unique to this test process.
std::string unique_id(const char *tag);

} // namespace test
