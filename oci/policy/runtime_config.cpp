#include "oci/policy/runtime_config.hpp"

#include "oci/json.hpp"
#include "oci/policy/annotations.hpp"
#include "oci/policy/network_policy.hpp"
#include "oci/text.hpp"

#include <algorithm>

namespace ocirun {

namespace {

bool is_network_key(std::string_view name) {
    return std::find(std::begin(kNetworkKeys), std::end(kNetworkKeys), name) !=
           std::end(kNetworkKeys);
}

bool known_key(std::string_view name) {
    for (const auto &k : policy_keys())
        if (k.name == name && k.set_by == PolicyKeySetter::bundle) return true;
    return false;
}

bool allowed(const RuntimeConfig &c, const std::string &key) {
    for (const auto &k : c.bundle_keys)
        if (k == key || (k.back() == '.' && key.rfind(k, 0) == 0)) return true;
    return false;
}

// Only the dev.ocirun.* keys of `a` whose name (after the prefix) passes `f`.
template <class F> oci::StringMap keys_of(const oci::StringMap &a, F f) {
    oci::StringMap out;
    const std::string_view prefix = kAnnotationPrefix;
    for (const auto &[k, v] : a)
        if (k.rfind(prefix, 0) == 0 && f(std::string_view(k).substr(prefix.size()))) out[k] = v;
    return out;
}

std::string key(const char *name) {
    return std::string(kAnnotationPrefix) + name;
}

} // namespace

Result<RuntimeConfig> parse_runtime_config(std::string_view text, const std::string &path) {
    auto doc = json::Document::parse(text);
    if (!doc) return forward(std::move(doc.error()), path);
    yajl_val top = doc->root();
    if (!YAJL_IS_OBJECT(top)) return fail(path + ": expected a JSON object");
    RuntimeConfig c;
    c.path = path;
    json::Path p;
    for (size_t i = 0; i < top->u.object.len; i++) {
        std::string m = top->u.object.keys[i];
        if (m != "policy" && m != "bundleKeys")
            return fail(path + ": unknown member \"" + m + "\" (expected policy, bundleKeys)");
    }
    if (auto r = json::get_string_map(top, p, "policy", c.policy); !r)
        return forward(std::move(r.error()), path);
    for (const auto &[k, v] : c.policy)
        if (k.rfind(kAnnotationPrefix, 0) != 0)
            return fail(path + ": policy[" + k + "]: not a dev.ocirun.* key");
    if (auto r = parse_sandbox_policy(c.policy); !r)
        return forward(std::move(r.error()), path + ": policy");
    if (json::member(top, "bundleKeys")) {
        c.bundle_keys.clear();
        if (auto r = json::get_strings(top, p, "bundleKeys", c.bundle_keys); !r)
            return forward(std::move(r.error()), path);
    }
    const std::string_view prefix = kAnnotationPrefix;
    for (const auto &k : c.bundle_keys) {
        bool ok = k == prefix || (k.rfind(prefix, 0) == 0 && known_key(k.substr(prefix.size())));
        if (!ok)
            return fail(path + ": bundleKeys: \"" + k +
                        "\" is not a dev.ocirun.* key a bundle sets (or \"dev.ocirun.\")");
    }
    return c;
}

Result<oci::StringMap> apply_runtime_config(const RuntimeConfig &c, const oci::StringMap &bundle) {
    const std::string where = "the runtime configuration (" + c.path + ")";
    for (const auto &[k, v] : keys_of(bundle, [](std::string_view) { return true; }))
        if (!allowed(c, k))
            return fail("annotations[" + k + "]: " + where + " does not let a bundle set it");
    if (c.policy.empty()) return bundle;
    oci::StringMap out = bundle;
    auto given = [&](const char *name) -> const std::string * {
        auto it = bundle.find(key(name));
        return it == bundle.end() ? nullptr : &it->second;
    };
    auto base = [&](const char *name) -> const std::string * {
        auto it = c.policy.find(key(name));
        return it == c.policy.end() ? nullptr : &it->second;
    };
    // Path lists: the baseline's and the bundle's.
    for (const char *name : {"deny", "deny-write", "deny-rename", "protected"}) {
        const std::string *b = base(name);
        if (!b) continue;
        const std::string *g = given(name);
        std::vector<std::string> all;
        for (const std::string *v : {b, g})
            if (v)
                for (auto part : split(*v, ':'))
                    if (std::find(all.begin(), all.end(), part) == all.end())
                        all.emplace_back(part);
        std::string joined;
        for (const auto &a : all)
            joined += (joined.empty() ? "" : ":") + a;
        out[key(name)] = joined;
    }
    // strict and trace stay on.
    const std::string *be = base("enforcement");
    const std::string *ge = given("enforcement");
    if ((!be || *be == "strict") && ge && *ge == "report")
        return fail("annotations[dev.ocirun.enforcement]: report loosens " + where +
                    ", which enforces strictly");
    if (be && !ge) out[key("enforcement")] = *be;
    const std::string *bt = base("trace");
    const std::string *gt = given("trace");
    if (bt && *bt == "true" && gt && *gt != "true")
        return fail("annotations[dev.ocirun.trace]: " + where + " traces every container");
    if (bt && !gt) out[key("trace")] = *bt;
    // Network keys: the bundle's (all of them when it names the need, else
    // over the baseline's), no looser than the baseline's.
    oci::StringMap base_net = keys_of(c.policy, is_network_key);
    oci::StringMap own_net = keys_of(bundle, is_network_key);
    if (base_net.empty()) return out;
    oci::StringMap want = own_net;
    if (!own_net.count(key("network")))
        for (const auto &[k, v] : base_net)
            want.emplace(k, v);
    NetworkPolicy ceiling = OCI_TRY(parse_network_policy(base_net));
    NetworkPolicy asked = OCI_TRY(parse_network_policy(want));
    // The baseline's deny-domains hold under a proxy whatever the bundle says.
    if (asked.proxy() && !ceiling.deny_domains.empty()) {
        std::string &d = want[key("deny-domains")];
        if (d != ceiling.deny_domains)
            d = d.empty() ? ceiling.deny_domains : ceiling.deny_domains + "," + d;
        asked = OCI_TRY(parse_network_policy(want));
    }
    NetworkPolicy held = OCI_TRY(held_to(ceiling, asked, true, "the runtime configuration"));
    for (const char *name : kNetworkKeys)
        out.erase(key(name));
    for (const auto &[name, v] : held.given)
        out[key(name.c_str())] = v;
    return out;
}

} // namespace ocirun
