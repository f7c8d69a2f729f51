// The network helper's configuration document (oci/policy/helper_config.cpp),
// as the helper reads it from its --config-fd. Invariant: whatever parses
// writes back to a document that parses to the same, written the same.
#include "fuzz_check.hpp"

#include "oci/policy/helper_config.hpp"

using namespace ocirun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536) return 0;
    auto c = parse_helper_config(fuzz::text(data, size));
    if (!c) return 0;
    std::string once = write_helper_config(*c);
    auto again = parse_helper_config(once);
    if (!again)
        fuzz::broken("a written configuration is refused", once + ": " + again.error().text());
    std::string twice = write_helper_config(*again);
    if (twice != once) fuzz::broken("the configuration does not round-trip", once + "\n" + twice);
    return 0;
}
