// OCI mount options -> mount(2) flags, propagation and data
// (src/runtime/filesystem/mount_options.cpp). The input is the options array, one option
// per line. Invariants: what is not a known option goes to the data string;
// a flag (or recursive attribute) ends up set or cleared, never both,
// whatever order the options come in.
#include "fuzz_check.hpp"

#include "runtime/filesystem/mount_options.hpp"

#include <sys/mount.h>

using namespace ocirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536) return 0;
    const std::vector<std::string> options = fuzz::split(fuzz::text(data, size), '\n');
    MountOptions o = parse_mount_options(options);
    (void)o.readonly();
    for (const auto &u : options) {
        if (!known_mount_option(u) && o.data.find(u) == std::string::npos)
            fuzz::broken("an unknown option is missing from the data", u + " / " + o.data);
    }
    if (o.idmap_recursive && !o.idmap) fuzz::broken("ridmap without idmap", "");
    if (o.flags & o.clear) fuzz::broken("a flag both set and cleared", o.data);
    if (o.rec_set & o.rec_clear) fuzz::broken("an attribute both set and cleared", o.data);
    if (o.recursive && !o.bind) fuzz::broken("rbind without bind", "");
    (void)known_mount_flag_names();
    return 0;
}
