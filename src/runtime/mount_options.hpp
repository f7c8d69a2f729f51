// OCI mount options -> mount(2) flags, propagation, and the data string.
#pragma once

#include "oci/error.hpp"

#include <string>
#include <vector>

namespace ocirun {

struct MountOptions {
    unsigned long flags = 0;       // MS_* to set
    unsigned long clear = 0;       // MS_* explicitly cleared (rw, suid, dev, exec, ...)
    unsigned long propagation = 0; // MS_PRIVATE/SHARED/SLAVE/UNBINDABLE (| MS_REC)
    bool bind = false;
    bool recursive = false; // rbind
    bool readonly() const;
    std::string data; // options passed to the filesystem (size=, mode=, ...)
};

// Unknown options are passed to the filesystem as data, as runc does.
MountOptions parse_mount_options(const std::vector<std::string> &options);

// The option names the parser understands as flags (for `features`).
const std::vector<const char *> &known_mount_flag_names();

} // namespace ocirun
