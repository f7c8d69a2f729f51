// config.json as `create` reads it: parse_spec then validate_spec (what
// oci::load_bundle_spec runs on the file's bytes), then the pure decisions
// create takes from a valid spec before anything exists: the sandbox policy
// and the mount plan. Invariants: a parsed spec written back parses to the
// same text (tests/unit/test_spec_roundtrip.cpp promises the round trip) and
// validates the same way; errors are one non-empty line.
#include "fuzz_check.hpp"

#include "oci/spec_io.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/security/sandbox_policy.hpp"

using namespace ocirun;

namespace {

void expect_error_line(const Error &e, const char *what) {
    if (e.msg.empty()) fuzz::broken(what, "an empty error message");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::log_to_null();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // load_bundle_spec refuses anything larger before parsing.
    if (size > oci::kMaxConfigSize) return 0;
    const std::string_view text = fuzz::text(data, size);

    // The other two documents oci-run parses with the same code: exec
    // --process and update --resources.
    if (auto p = oci::parse_process(text); !p) expect_error_line(p.error(), "parse_process");
    if (auto r = oci::parse_resources(text); !r) expect_error_line(r.error(), "parse_resources");

    auto spec = oci::parse_spec(text);
    if (!spec) {
        expect_error_line(spec.error(), "parse_spec");
        return 0;
    }
    auto valid = oci::validate_spec(*spec);
    if (!valid) expect_error_line(valid.error(), "validate_spec");

    const std::string once = oci::write_spec(*spec, false);
    auto again = oci::parse_spec(once);
    if (!again)
        fuzz::broken("write_spec output does not parse", again.error().text() + "\n" + once);
    const std::string twice = oci::write_spec(*again, false);
    if (twice != once) fuzz::broken("write_spec is not stable", once + "\n" + twice);
    if (oci::validate_spec(*again).has_value() != valid.has_value())
        fuzz::broken("validation differs after a round trip", once);
    (void)oci::write_spec(*spec, true);
    if (!valid) return 0;

    // What create decides from a valid spec, before anything exists.
    auto policy = parse_sandbox_policy(spec->annotations);
    if (!policy) {
        expect_error_line(policy.error(), "parse_sandbox_policy");
        policy = SandboxPolicy{};
    }
    if (policy->present) {
        (void)check_policy_gaps(*policy, *spec, HostFacts{});
        HostFacts every{true, true, true, true, true, std::vector<int64_t>{1, 21}, ""};
        (void)check_policy_gaps(*policy, *spec, every);
    }
    for (bool in_userns : {false, true}) {
        auto plan = plan_mounts(*spec, {in_userns, false, policy->present ? &*policy : nullptr});
        if (plan)
            (void)describe_plan(*plan);
        else
            expect_error_line(plan.error(), "plan_mounts");
    }
    return 0;
}
