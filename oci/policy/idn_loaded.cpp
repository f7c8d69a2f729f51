// The helper and a dynamically linked oci-run load libidn2, and the 1.7 MB
// libunistring under it, on the first name that is not ASCII: every create
// checks the domain patterns, and linking them would cost every start two
// mappings and the relocations of both.
#include "oci/policy/idn.hpp"

#include <dlfcn.h>
#include <idn2.h>

namespace ocirun::idn {

namespace {

struct Idn2 {
    int (*to_ascii_8z)(const char *, char **, int) = nullptr;
    const char *(*strerror)(int) = nullptr;
    void (*free)(void *) = nullptr;
    std::string error;
};

const Idn2 &idn2() {
    static const Idn2 lib = [] {
        Idn2 l;
        void *h = ::dlopen("libidn2.so.0", RTLD_NOW | RTLD_LOCAL);
        if (h) {
            l.to_ascii_8z =
                reinterpret_cast<decltype(l.to_ascii_8z)>(::dlsym(h, "idn2_to_ascii_8z"));
            l.strerror = reinterpret_cast<decltype(l.strerror)>(::dlsym(h, "idn2_strerror"));
            l.free = reinterpret_cast<decltype(l.free)>(::dlsym(h, "idn2_free"));
        }
        if (!l.to_ascii_8z || !l.strerror || !l.free) {
            const char *e = ::dlerror();
            l.error = e ? e : "libidn2.so.0: a symbol is missing";
            l.to_ascii_8z = nullptr;
        }
        return l;
    }();
    return lib;
}

} // namespace

Ascii to_ascii(const std::string &utf8) {
    Ascii a;
    const Idn2 &lib = idn2();
    if (!lib.to_ascii_8z) {
        a.missing = true;
        a.error = lib.error;
        return a;
    }
    char *out = nullptr;
    int rc = lib.to_ascii_8z(utf8.c_str(), &out, IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
        a.error = lib.strerror(rc);
        return a;
    }
    a.name = out;
    lib.free(out);
    return a;
}

} // namespace ocirun::idn
