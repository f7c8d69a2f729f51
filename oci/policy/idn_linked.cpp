// The static oci-run links libidn2 and libunistring in: nothing to load, and
// only the pages a conversion touches are read.
#include "oci/policy/idn.hpp"

#include <idn2.h>

namespace ocirun::idn {

Ascii to_ascii(const std::string &utf8) {
    Ascii a;
    char *out = nullptr;
    int rc = ::idn2_to_ascii_8z(utf8.c_str(), &out, IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
        a.error = ::idn2_strerror(rc);
        return a;
    }
    a.name = out;
    ::idn2_free(out);
    return a;
}

} // namespace ocirun::idn
