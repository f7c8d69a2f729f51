// The operator's runtime configuration (oci/policy/runtime_config.hpp): the
// file's checks, and how a bundle's annotations go over the baseline: path
// lists add up, strict and trace stay, the network keys only tighten, and
// keys the operator keeps are refused.
#include "oci/policy/runtime_config.hpp"
#include "unit_support.hpp"

#include <string>

using namespace ocirun;

namespace {

RuntimeConfig config(const std::string &text) {
    auto c = parse_runtime_config(text, "/etc/oci-run/x.json");
    cr_assert(c.has_value(), "%s", c ? "" : c.error().text().c_str());
    return std::move(*c);
}

std::string refusal_of_file(const std::string &text) {
    auto c = parse_runtime_config(text, "/etc/oci-run/x.json");
    cr_assert(!c.has_value(), "accepted: %s", text.c_str());
    return c.error().text();
}

std::string refusal(const RuntimeConfig &c, const oci::StringMap &a) {
    auto r = apply_runtime_config(c, a);
    cr_assert(!r.has_value(), "accepted");
    return r.error().text();
}

bool has(const std::string &s, const char *needle) {
    return s.find(needle) != std::string::npos;
}

} // namespace

Test(runtime_config, the_file_is_checked_naming_it) {
    cr_assert(has(refusal_of_file("[]"), "/etc/oci-run/x.json: expected a JSON object"));
    cr_assert(has(refusal_of_file(R"({"polcy": {}})"), "unknown member \"polcy\""));
    std::string bad = refusal_of_file(R"({"policy": {"dev.ocirun.network": "maybe"}})");
    cr_assert(has(bad, "/etc/oci-run/x.json") && has(bad, "dev.ocirun.network"), "%s", bad.c_str());
    cr_assert(has(refusal_of_file(R"({"policy": {"io.other": "1"}})"), "not a dev.ocirun.* key"));
    cr_assert(has(refusal_of_file(R"({"bundleKeys": ["dev.ocirun.trace-log"]})"), "bundleKeys"));
    cr_assert(has(refusal_of_file(R"({"bundleKeys": ["io."]})"), "bundleKeys"));
    RuntimeConfig all = config("{}");
    cr_assert_eq(all.bundle_keys.size(), 1u);
    cr_assert_str_eq(all.bundle_keys[0].c_str(), "dev.ocirun.");
}

Test(runtime_config, only_the_keys_it_lets_through_are_read) {
    RuntimeConfig c = config(R"({"bundleKeys": ["dev.ocirun.deny"]})");
    auto ok = apply_runtime_config(c, {{"dev.ocirun.deny", "/a"}, {"io.other", "x"}});
    cr_assert(ok.has_value());
    std::string why = refusal(c, {{"dev.ocirun.network", "full"}});
    cr_assert(has(why, "annotations[dev.ocirun.network]") && has(why, "does not let a bundle"),
              "%s", why.c_str());
    RuntimeConfig none = config(R"({"bundleKeys": []})");
    cr_assert(!apply_runtime_config(none, {{"dev.ocirun.deny", "/a"}}).has_value());
}

Test(runtime_config, annotations_only_tighten_the_baseline) {
    RuntimeConfig c = config(R"({"policy": {"dev.ocirun.domains": "example.com,*.example.org",
                                              "dev.ocirun.deny-domains": "bad.example.org",
                                              "dev.ocirun.deny": "/root/.ssh"}})");
    auto plain = apply_runtime_config(c, {});
    cr_assert(plain.has_value());
    cr_assert_str_eq(plain->at("dev.ocirun.domains").c_str(), "example.com,*.example.org");
    cr_assert_str_eq(plain->at("dev.ocirun.deny").c_str(), "/root/.ssh");
    auto more = apply_runtime_config(
        c, {{"dev.ocirun.deny", "/etc:/root/.ssh"}, {"dev.ocirun.domains", "example.com"}});
    cr_assert(more.has_value(), "%s", more ? "" : more.error().text().c_str());
    cr_assert_str_eq(more->at("dev.ocirun.deny").c_str(), "/root/.ssh:/etc");
    cr_assert_str_eq(more->at("dev.ocirun.domains").c_str(), "example.com");
    cr_assert_str_eq(more->at("dev.ocirun.deny-domains").c_str(), "bad.example.org");
    auto none = apply_runtime_config(c, {{"dev.ocirun.network", "none"}});
    cr_assert(none.has_value(), "%s", none ? "" : none.error().text().c_str());
    cr_assert_str_eq(none->at("dev.ocirun.network").c_str(), "none");
    cr_assert_eq(none->count("dev.ocirun.domains"), 0u);
    for (const auto &[k, v] : std::initializer_list<std::pair<const char *, const char *>>{
             {"dev.ocirun.network", "full"},
             {"dev.ocirun.domains", "other.test"},
             {"dev.ocirun.network-mode", "observe"}}) {
        std::string why = refusal(c, {{k, v}});
        cr_assert(has(why, (std::string("annotations[") + k + "]").c_str()) &&
                      has(why, "more than the runtime configuration allows"),
                  "%s: %s", k, why.c_str());
    }
    RuntimeConfig strict = config(R"({"policy": {"dev.ocirun.trace": "true"}})");
    cr_assert(has(refusal(strict, {{"dev.ocirun.enforcement", "report"}}), "report loosens"));
    cr_assert(has(refusal(strict, {{"dev.ocirun.trace", "false"}}), "traces every container"));
    RuntimeConfig lax = config(R"({"policy": {"dev.ocirun.enforcement": "report"}})");
    auto s = apply_runtime_config(lax, {{"dev.ocirun.enforcement", "strict"}});
    cr_assert(s.has_value());
    cr_assert_str_eq(s->at("dev.ocirun.enforcement").c_str(), "strict");
}
