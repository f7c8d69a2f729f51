// Netlink (rtnetlink over libmnl) for the container's network namespace.
#pragma once

#include "oci/error.hpp"

namespace ocirun {

// Bring the loopback interface of the caller's network namespace up.
Status loopback_up();

} // namespace ocirun
