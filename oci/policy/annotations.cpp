#include "oci/policy/annotations.hpp"

#include "oci/text.hpp"

namespace ocirun {

namespace {

// "/a//b/" -> "/a/b"; refuses relative paths and "..".
Result<std::string> normal_path(const std::string &key, const std::string &p) {
    if (p.empty() || p[0] != '/')
        return fail("annotations[" + key + "]: \"" + p + "\" is not an absolute path");
    std::string out;
    for (const auto &part : split(p, '/')) {
        if (part == "..")
            return fail("annotations[" + key + "]: \"" + p + "\" must not contain \"..\"");
        if (!part.empty() && part != ".") out += "/" + part;
    }
    if (out.empty()) return fail("annotations[" + key + "]: \"" + p + "\" is the root itself");
    return out;
}

Result<std::vector<std::string>> path_list(const std::string &key, const std::string &value) {
    std::vector<std::string> out;
    auto parts = split(value, ':');
    if (parts.size() > kMaxPolicyPaths)
        return fail("annotations[" + key + "]: " + std::to_string(parts.size()) +
                    " paths, more than " + std::to_string(kMaxPolicyPaths));
    for (const auto &p : parts) {
        if (p.empty()) return fail("annotations[" + key + "]: empty path in \"" + value + "\"");
        out.push_back(OCI_TRY(normal_path(key, p)));
    }
    return out;
}

} // namespace

namespace {

Status paths_into(std::vector<std::string> &field, const std::string &key, const std::string &v) {
    field = OCI_TRY(path_list(key, v));
    return {};
}

Status parse_trace(SandboxPolicy &p, const std::string &key, const std::string &v) {
    if (v != "true" && v != "false")
        return fail("annotations[" + key + "]: expected true or false, got \"" + v + "\"");
    p.trace = v == "true";
    return {};
}

Status parse_enforcement(SandboxPolicy &p, const std::string &key, const std::string &v) {
    if (v != "strict" && v != "report")
        return fail("annotations[" + key + "]: expected strict or report, got \"" + v + "\"");
    p.strict = v == "strict";
    return {};
}

Status parse_network(SandboxPolicy &p, const std::string &key, const std::string &v) {
    return parse_network_key(p.net, key.substr(std::string_view(kAnnotationPrefix).size()), v);
}

// Every dev.ocirun.* key: its parser, and who may set it.
constexpr PolicyKey kKeys[] = {
    {"deny", PolicyKeySetter::bundle,
     [](SandboxPolicy &p, const std::string &k, const std::string &v) {
         return paths_into(p.deny, k, v);
     }},
    {"deny-write", PolicyKeySetter::bundle,
     [](SandboxPolicy &p, const std::string &k, const std::string &v) {
         return paths_into(p.deny_write, k, v);
     }},
    {"deny-rename", PolicyKeySetter::bundle,
     [](SandboxPolicy &p, const std::string &k, const std::string &v) {
         return paths_into(p.deny_rename, k, v);
     }},
    {"protected", PolicyKeySetter::bundle,
     [](SandboxPolicy &p, const std::string &k, const std::string &v) {
         return paths_into(p.protected_paths, k, v);
     }},
    {"trace", PolicyKeySetter::bundle, parse_trace},
    {"enforcement", PolicyKeySetter::bundle, parse_enforcement},
    {"network", PolicyKeySetter::bundle, parse_network},
    {"local-ports", PolicyKeySetter::bundle, parse_network},
    {"publish", PolicyKeySetter::bundle, parse_network},
    {"domains", PolicyKeySetter::bundle, parse_network},
    {"deny-domains", PolicyKeySetter::bundle, parse_network},
    {"network-mode", PolicyKeySetter::bundle, parse_network},
    {"intercept", PolicyKeySetter::bundle, parse_network},
    {"proxy-max-connections", PolicyKeySetter::bundle, parse_network},
    {"forward-max-connections", PolicyKeySetter::bundle, parse_network},
    {"max-connections", PolicyKeySetter::bundle, parse_network},
    // The path of dev.ocirun.trace's log, which `state` shows: the runtime's
    // own record, never read from a bundle.
    {"trace-log", PolicyKeySetter::runtime, nullptr},
};

} // namespace

std::span<const PolicyKey> policy_keys() {
    return kKeys;
}

Result<SandboxPolicy> parse_sandbox_policy(const oci::StringMap &annotations) {
    SandboxPolicy p;
    for (const auto &[key, value] : annotations) {
        if (key.rfind(kAnnotationPrefix, 0) != 0) continue;
        p.present = true;
        std::string name = key.substr(std::string_view(kAnnotationPrefix).size());
        const PolicyKey *k = nullptr;
        for (const auto &entry : kKeys)
            if (name == entry.name) k = &entry;
        if (!k) return fail("annotations[" + key + "]: unknown sandbox policy key");
        if (k->set_by == PolicyKeySetter::runtime)
            return fail("annotations[" + key +
                        "]: set by the runtime in its own state, refused from config.json");
        OCI_CHECK(k->parse(p, key, value));
    }
    OCI_CHECK(finish_network_policy(p.net));
    return p;
}

} // namespace ocirun
