// linux.seccomp -> BPF program, as create and exec compile it (libseccomp,
// exported, never loaded). The input is the linux.seccomp object; it is
// parsed by the same parser as config.json, inside a minimal document.
#include "fuzz_check.hpp"

#include "oci/spec_io.hpp"
#include "runtime/security/seccomp.hpp"

using namespace ocirun;

namespace {

// The bounding sets the capability-conditional rules ("includes": {"caps"})
// are matched against: none, and the ones the default profile names.
const std::vector<std::string> kNoCaps;
const std::vector<std::string> kSomeCaps = {"CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_SYS_MODULE",
                                            "CAP_SYSLOG",    "CAP_SYS_TIME",   "CAP_NET_ADMIN"};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::log_to_null();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    std::string doc = "{\"ociVersion\": \"1.2.1\", \"linux\": {\"seccomp\": ";
    doc.append(fuzz::text(data, size));
    doc += "}}";
    auto spec = oci::parse_spec(doc);
    if (!spec || !spec->linux_ || !spec->linux_->seccomp) return 0;
    const oci::Seccomp &s = *spec->linux_->seccomp;
    for (const auto &name : s.flags)
        (void)seccomp_flag_bit(name);
    // With capabilities only when some rule depends on them (each compile of
    // a full profile costs tens of milliseconds).
    bool conditional = false;
    for (const auto &sc : s.syscalls)
        conditional = conditional || !sc.includes_caps.empty();
    for (const auto *caps : {&kNoCaps, &kSomeCaps}) {
        if (caps == &kSomeCaps && !conditional) break;
        auto f = compile_seccomp(s, *caps);
        if (!f) {
            if (f.error().msg.empty()) fuzz::broken("empty error", "compile_seccomp");
            continue;
        }
        // Programs the kernel could take: at least one, each non-empty,
        // within BPF_MAXINSNS, ending in a return; a listener's alone.
        if (f->programs.empty()) fuzz::broken("no BPF program", doc);
        if (f->notify && f->programs.size() != 1) fuzz::broken("a listener in a stack", doc);
        for (const auto &program : f->programs) {
            if (program.empty()) fuzz::broken("empty BPF program", doc);
            if (program.size() > 4096) fuzz::broken("BPF program above BPF_MAXINSNS", doc);
            if (BPF_CLASS(program.back().code) != BPF_RET)
                fuzz::broken("BPF program does not end in a return", doc);
        }
    }
    return 0;
}
