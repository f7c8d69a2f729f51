#include "runtime/network/firewall.hpp"

#include "build_config.h"
#include "oci/policy/firewall_rules.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/network/shim_launch.hpp"

#include <unistd.h>

#include <cstdlib>

namespace ocirun {

namespace {

Result<ProgramRun> run_firewall(int netns_fd, std::vector<std::string> args,
                                const std::string &what) {
    std::string path = firewall_path();
    if (::access(path.c_str(), X_OK) < 0)
        return fail_errno(what + ": the firewall program " + path);
    args.insert(args.begin(), "oci-run-firewall");
    oci::Hook h = helper_program(std::move(path), std::move(args));
    return run_program_status(h, what + ": " + h.path, {netns_fd});
}

std::string last_line_of(std::string s) {
    while (!s.empty() && s.back() == '\n')
        s.pop_back();
    size_t nl = s.rfind('\n');
    return nl == std::string::npos ? s : s.substr(nl + 1);
}

} // namespace

std::string firewall_path() {
    return helper_path("oci-run-firewall", OCIRUN_FIREWALL_PATH);
}

Status install_firewall(int netns_fd, const std::string &id, const std::string &need) {
    const std::string what = "dev.ocirun.network=" + need + ": the network namespace's firewall";
    ProgramRun r = OCI_TRY(run_firewall(netns_fd, {"install", id, need}, what));
    if (r.status == 0) return {};
    if (r.status == 3) {
        auto owner = firewall_owner(r.output);
        return fail(what + ": the namespace has oci-run's table already, of container " +
                    (owner ? owner->id + " (" + owner->need + ")" : std::string("unknown")) +
                    ", which is not a running container of this --root");
    }
    return fail(what + ": " + last_line_of(r.output));
}

Status remove_firewall(int netns_fd, const std::string &id) {
    ProgramRun r = OCI_TRY(run_firewall(netns_fd, {"remove", id}, "firewall"));
    if (r.status != 0) return fail("firewall: " + last_line_of(r.output));
    return {};
}

Result<FirewallSeen> check_firewall(int netns_fd, const std::string &id, const std::string &need) {
    ProgramRun r = OCI_TRY(run_firewall(netns_fd, {"check", id, need}, "firewall"));
    FirewallSeen seen;
    if (r.status == 0) {
        seen.present = seen.exact = true;
        return seen;
    }
    if (r.status != 1) return fail("firewall: " + last_line_of(r.output));
    seen.present = r.output.rfind("differs\n", 0) == 0;
    if (seen.present) seen.listing = r.output.substr(8);
    return seen;
}

} // namespace ocirun
