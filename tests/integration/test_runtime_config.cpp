// The operator's runtime configuration (/etc/oci-run/NAME.json, NAME the
// name oci-run is run as): its baseline holds for every container run under
// that name, a bundle's keys may only tighten it, and only the keys it lets
// a bundle set are read. Each test runs oci-run through a symlink of a name
// of its own, whose file it writes and removes; other names are untouched.
#include "support/container_env.hpp"
#include "support/net_server.hpp"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

using test::cleanup_all;
using test::contains;
using test::Env;
using test::make_env;

namespace {

// oci-run as `name` (a symlink in the test's directory) with `config` in
// /etc/oci-run/NAME.json, for the tests' oci-run calls from now on.
struct Named {
    std::string link, file;
    // Before the asserts (a failed one ends the test's process at once).
    void remove() {
        if (!file.empty()) ::unlink(file.c_str());
        if (!link.empty()) ::unlink(link.c_str());
        ::rmdir("/etc/oci-run"); // if the test made it
        file.clear();
        link.clear();
    }
    ~Named() { remove(); }
};

void run_as(Named &n, const Env &e, const std::string &config) {
    std::string name = "oci-run-t" + std::to_string(::getpid());
    char real[PATH_MAX];
    cr_assert(::realpath(std::getenv("OCI_RUN"), real) != nullptr);
    ::mkdir("/etc/oci-run", 0755);
    n.file = "/etc/oci-run/" + name + ".json";
    test::write_file(n.file, config);
    n.link = e.root + "/" + name;
    ::mkdir(e.root.c_str(), 0700);
    cr_assert(::symlink(real, n.link.c_str()) == 0);
    ::setenv("OCI_RUN", n.link.c_str(), 1);
}

} // namespace

TestSuite(opconfig, .fini = cleanup_all, .timeout = 60);

// A baseline of network none and a denied path: a container without
// annotations gets both; asking for more is refused naming the key; a
// key the operator does not let a bundle set is refused; features lists
// what a bundle may set.
Test(opconfig, baseline_holds_and_annotations_only_tighten) {
    Env e = make_env("opbase", {"sh", "-c",
                                "cat /etc/hostname && echo read; nc -w 1 127.0.0.1 1; "
                                "echo rc=$?"});
    Named n;
    run_as(n, e,
           R"({"policy": {"dev.ocirun.network": "none", "dev.ocirun.deny": "/etc/hostname"},
               "bundleKeys": ["dev.ocirun.network", "dev.ocirun.deny-write"]})");
    auto base = test::run(e);
    Env more = make_env("opmore", {"true"});
    more.root = e.root;
    test::track(more.root, more.id);
    more.b.spec.annotations["dev.ocirun.network"] = "https";
    auto refused = test::run(more);
    Env key = make_env("opkey", {"true"});
    key.root = e.root;
    test::track(key.root, key.id);
    key.b.spec.annotations["dev.ocirun.deny"] = "/tmp";
    auto not_allowed = test::run(key);
    Env tight = make_env("optight", {"sh", "-c", "echo x > /tmp/f; echo w=$?"});
    tight.root = e.root;
    test::track(tight.root, tight.id);
    tight.b.spec.annotations["dev.ocirun.deny-write"] = "/tmp";
    auto tightened = test::run(tight);
    auto features = test::oci({"features"});
    cleanup_all();
    n.remove();
    std::string all = base.out + base.err;
    cr_assert_eq(base.status, 0, "%s", all.c_str());
    cr_assert(!contains(all, "read\n"), "the baseline's deny did not hold: %s", all.c_str());
    cr_assert(contains(all, "Address family not supported"), "network none: %s", all.c_str());
    cr_assert_neq(refused.status, 0);
    cr_assert(contains(refused.err, "annotations[dev.ocirun.network]") &&
                  contains(refused.err, "more than the runtime configuration allows"),
              "%s", refused.err.c_str());
    cr_assert_neq(not_allowed.status, 0);
    cr_assert(contains(not_allowed.err, "annotations[dev.ocirun.deny]") &&
                  contains(not_allowed.err, "does not let a bundle set it"),
              "%s", not_allowed.err.c_str());
    cr_assert_eq(tightened.status, 0, "%s", tightened.err.c_str());
    cr_assert(contains(tightened.out + tightened.err, "w=1"), "%s%s", tightened.out.c_str(),
              tightened.err.c_str());
    std::string unsafe = features.out.substr(features.out.find("potentiallyUnsafeConfig"));
    unsafe = unsafe.substr(0, unsafe.find(']'));
    cr_assert(contains(unsafe, "\"dev.ocirun.network\",") &&
                  contains(unsafe, "\"dev.ocirun.deny-write\"") &&
                  !contains(unsafe, "\"dev.ocirun.\""),
              "%s", features.out.c_str());
}

// A malformed configuration refuses every create under its name, naming the
// file; nothing is left behind.
Test(opconfig, malformed_configuration_refuses_naming_the_file) {
    Env e = make_env("opbad", {"true"});
    Named n;
    run_as(n, e, R"({"policy": {"dev.ocirun.network": "sometimes"}})");
    auto o = test::run(e);
    std::string file = n.file;
    n.remove();
    auto left = test::dir_entries(e.root);
    cleanup_all();
    cr_assert_neq(o.status, 0);
    cr_assert(contains(o.err, file) && contains(o.err, "dev.ocirun.network"), "%s", o.err.c_str());
    cr_assert_eq(test::count_lines(o.err), 1u, "%s", o.err.c_str());
    cr_assert(left.empty(), "left behind in %s", e.root.c_str());
}

// A pod under the baseline: its first container's policy is the baseline's
// (none, with no annotation asking for it), and the pod's next container is
// held to that, as recorded at the first one's create, not to what the first
// one's annotations alone would say (no policy, which its firewall does not
// match).
Test(opconfig, pod_is_held_to_its_first_containers_baseline) {
    test::own_network({"8.8.8.8"});
    test::Server srv;
    test::serve(srv, "8.8.8.8", "PUB:");
    test::PodNetns ns;
    test::make_pod_netns(ns);
    auto in_pod = [&](const char *tag, const std::string &script) {
        Env e = make_env(tag, {"sh", "-c", script});
        for (auto &x : e.b.spec.linux_->namespaces)
            if (x.type == ocirun::oci::NsType::network) x.path = ns.path;
        return e;
    };
    Env owner = in_pod("oppown", "sleep 60");
    Named n;
    run_as(n, owner, R"({"policy": {"dev.ocirun.network": "none"}})");
    owner.b.save();
    auto c = test::create(owner);
    auto s = test::oci({"--root", owner.root, "start", owner.id});
    Env app =
        in_pod("oppapp", "echo hi | nc -w 5 8.8.8.8 " + std::to_string(srv.port) + "; echo tcp=$?");
    app.root = owner.root;
    test::track(app.root, app.id);
    auto o = test::run(app);
    cleanup_all();
    n.remove();
    cr_assert_eq(c.status, 0, "%s", c.err.c_str());
    cr_assert_eq(s.status, 0, "%s", s.err.c_str());
    std::string all = o.out + o.err;
    cr_assert_eq(o.status, 0, "%s", all.c_str());
    cr_assert(contains(all, "tcp=1") && !contains(all, "PUB:hi"), "%s", all.c_str());
}
