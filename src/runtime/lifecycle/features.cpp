#include "runtime/lifecycle/features.hpp"

#include "build_config.h"
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "runtime/security/sandbox_policy.hpp"
#include "runtime/security/seccomp.hpp"
#include "runtime/support.hpp"
#include "version.h"

#include <seccomp.h>

namespace ocirun {

namespace {

void list(json::Writer &w, const char *key, std::span<const char *const> items) {
    w.key(key).begin_array();
    for (const char *s : items)
        w.str(s);
    w.end_array();
}

std::string libseccomp_version() {
    const scmp_version *v = seccomp_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->micro);
}

// Seccomp rows come from libseccomp itself: an architecture is listed only
// when libseccomp resolves its name on this build.
void seccomp_section(json::Writer &w) {
    w.key("seccomp").begin_object();
    w.kv_bool("enabled", support::seccomp());
    if (support::seccomp()) {
        list(w, "actions", oci::seccomp_actions());
        list(w, "operators", oci::seccomp_operators());
        w.key("archs").begin_array();
        for (const char *a : oci::seccomp_archs()) {
            std::string lower;
            for (const char *c = a + 10; *c; c++) // skip "SCMP_ARCH_"
                lower += static_cast<char>(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
            if (seccomp_arch_resolve_name(lower.c_str()) != 0) w.str(a);
        }
        w.end_array();
        list(w, "knownFlags", oci::seccomp_flags());
        w.key("supportedFlags").begin_array();
        for (const char *f : oci::seccomp_flags())
            if (seccomp_flag_supported(seccomp_flag_bit(f))) w.str(f);
        w.end_array();
    }
    w.end_object();
}

} // namespace

std::string features_json() {
    json::Writer w(true);
    w.begin_object();
    w.kv("ociVersionMin", "1.0.0");
    w.kv("ociVersionMax", oci::kSpecVersion);
    list(w, "hooks", support::hooks());
    list(w, "mountOptions", support::mount_options());
    w.key("linux").begin_object();
    list(w, "namespaces", support::namespaces());
    w.key("capabilities").begin_array();
    if (support::capabilities())
        for (const auto &c : oci::capability_names())
            w.str(c.name);
    w.end_array();
    w.key("cgroup")
        .begin_object()
        .kv_bool("v1", support::cgroup_v1())
        .kv_bool("v2", support::cgroup_v2())
        .kv_bool("systemd", true)
        .kv_bool("systemdUser", true)
        .kv_bool("rdma", true)
        .end_object();
    seccomp_section(w);
    w.key("apparmor").begin_object().kv_bool("enabled", false).end_object();
    w.key("selinux").begin_object().kv_bool("enabled", false).end_object();
    // Refused (with no resctrl mounted, as the spec requires, else as not
    // implemented): nothing of it is applied yet.
    w.key("intelRdt")
        .begin_object()
        .kv_bool("enabled", false)
        .kv_bool("schemata", false)
        .kv_bool("monitoring", false)
        .end_object();
    w.key("memoryPolicy").begin_object();
    list(w, "modes", oci::memory_policy_modes());
    list(w, "flags", oci::memory_policy_flags());
    w.end_object();
    w.key("netDevices").begin_object().kv_bool("enabled", true).end_object();
    w.key("mountExtensions")
        .begin_object()
        .key("idmap")
        .begin_object()
        .kv_bool("enabled", true)
        .end_object()
        .end_object();
    w.end_object();
    w.key("annotations").begin_object();
    w.kv("io.github.seccomp.libseccomp.version", libseccomp_version());
    w.kv("dev.ocirun.version", OCIRUN_VERSION);
    w.kv("dev.ocirun.commit", OCIRUN_COMMIT);
    w.end_object();
    // The annotations that change what the runtime does: the sandbox
    // policy's keys a bundle may set under the runtime configuration (a
    // configuration that does not load lets a bundle set none).
    static const std::vector<std::string> none;
    auto config = runtime_config();
    w.kv_strings("potentiallyUnsafeConfigAnnotations", config ? (*config)->bundle_keys : none);
    w.end_object();
    std::string out(w.view());
    out += '\n';
    return out;
}

} // namespace ocirun
