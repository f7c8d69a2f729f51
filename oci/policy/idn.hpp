// Internationalised host names to ASCII (punycode), through libidn2,
// non-transitional. Two builds of this one function, the rest of the policy
// library being the same for both programs: idn_loaded.cpp (the helper, a
// dynamically linked oci-run) loads libidn2 on the first name that is not
// ASCII; idn_linked.cpp (the static oci-run) calls it linked in.
#pragma once

#include <string>

namespace ocirun::idn {

struct Ascii {
    std::string name;     // the ASCII form, when `error` is empty
    std::string error;    // libidn2's reason, or why it could not be loaded
    bool missing = false; // libidn2 could not be loaded
};

Ascii to_ascii(const std::string &utf8);

} // namespace ocirun::idn
