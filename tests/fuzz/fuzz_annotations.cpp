// The sandbox and network policy annotations (every dev.ocirun.* key), as
// create checks them before anything exists. The input is one annotation per
// line, "NAME=VALUE", NAME after the dev.ocirun. prefix (a line starting with
// '!' is a key without the prefix, which the policy must ignore).
#include "fuzz_check.hpp"

#include "oci/policy/network_policy.hpp"
#include "oci/spec_io.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <algorithm>

using namespace ocirun;

namespace {

oci::StringMap annotations_of(std::string_view text) {
    oci::StringMap a;
    for (const std::string &line : fuzz::split(text, '\n')) {
        size_t eq = line.find('=');
        std::string name = line.substr(0, eq);
        std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
        if (!name.empty() && name[0] == '!')
            a[name.substr(1)] = value;
        else
            a[kAnnotationPrefix + name] = value;
    }
    return a;
}

// The spec the policy is checked against: `oci-run spec`'s default, with a
// network namespace and a few bind mounts the path rules can meet.
const oci::Spec &base_spec() {
    static const oci::Spec spec = [] {
        oci::Spec s = oci::default_spec(false, 0, 0);
        for (const char *dst : {"/data", "/work", "/data/sub", "/secrets"}) {
            oci::Mount m;
            m.destination = dst;
            m.type = "bind";
            m.source = "/srv/shared";
            m.options = {"rbind", "rw"};
            s.mounts.push_back(m);
        }
        return s;
    }();
    return spec;
}

void check_paths(const std::vector<std::string> &paths, const char *key) {
    for (const auto &p : paths) {
        // Normalised: absolute, no empty, "." or ".." component, no trailing '/'.
        bool ok = p.size() > 1 && p[0] == '/' && p.back() != '/' &&
                  p.find("//") == std::string::npos && p.find("/./") == std::string::npos &&
                  p.find("/../") == std::string::npos && !p.ends_with("/.") && !p.ends_with("/..");
        if (!ok) fuzz::broken("a policy path is not normalised", std::string(key) + ": " + p);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::log_to_null();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536) return 0;
    const oci::StringMap annotations = annotations_of(fuzz::text(data, size));
    const bool any_key = std::any_of(annotations.begin(), annotations.end(), [](const auto &kv) {
        return kv.first.rfind(kAnnotationPrefix, 0) == 0;
    });

    auto net = parse_network_policy(annotations);
    auto policy = parse_sandbox_policy(annotations);
    if (!policy) {
        if (policy.error().msg.empty()) fuzz::broken("empty error", "parse_sandbox_policy");
        return 0;
    }
    if (policy->present != any_key) fuzz::broken("present differs from the keys given", "");
    // The sandbox policy holds the network policy: the same keys, the same verdict.
    if (!net)
        fuzz::broken("network policy refused but the sandbox policy accepted", net.error().text());

    check_paths(policy->deny, "deny");
    check_paths(policy->deny_write, "deny-write");
    check_paths(policy->deny_rename, "deny-rename");
    check_paths(policy->protected_paths, "protected");

    const NetworkPolicy &n = policy->net;
    std::vector<uint16_t> ports = n.listen_ports();
    if (ports.size() != n.local_ports.size() + (n.proxy() ? 1 : 0))
        fuzz::broken("listen_ports does not list every forward and the proxy", "");
    for (const auto &f : n.local_ports)
        if (f.container_port == 0 || f.host_port == 0) fuzz::broken("port 0 accepted", "");
    for (const auto &p : n.publish)
        if (p.container_port == 0 || p.host_port == 0) fuzz::broken("port 0 accepted", "");
    if (n.proxy()) {
        std::vector<std::string> env = {"PATH=/bin", "HTTP_PROXY=old"};
        add_proxy_env(env);
    }

    // What create does next with a policy: the checks against the spec and
    // the mount plan (pure; what mounts reach of the host is read from it and left out).
    const oci::Spec &spec = base_spec();
    (void)check_policy_gaps(*policy, spec, HostFacts{});
    HostFacts every{true, true, true, true, true, std::vector<int64_t>{1, 21}, ""};
    (void)check_policy_gaps(*policy, spec, every);
    auto plan = plan_mounts(spec, {false, false, &*policy});
    if (plan) (void)describe_plan(*plan);
    return 0;
}
