// Bundle-level operations that need no container: writing a default config.
#pragma once

#include "oci/error.hpp"

#include <string>

namespace ocirun {

// Write `<bundle>/config.json` with the default configuration; refuses to
// overwrite an existing one.
Status write_default_spec(const std::string &bundle, bool rootless);

} // namespace ocirun
