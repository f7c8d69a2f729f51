// `oci-run features`: the runtime-spec features document, listing only what
// this build really implements on this host.
#pragma once

#include <string>

namespace ocirun {

std::string features_json();

} // namespace ocirun
