#include "bundle.hpp"

#include "oci/spec_io.hpp"
#include "process.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace test {

namespace {
std::string maker_path() {
    const char *p = std::getenv("OCI_RUN_BUNDLE_MAKER");
    return p && *p ? p : "contrib/make-bundle.sh";
}
} // namespace

void Bundle::save() const {
    write_file(dir + "/config.json", ocirun::oci::write_spec(spec));
}

void Bundle::remove() const {
    rm_rf(dir);
}

Bundle make_bundle(const char *tag, const std::vector<std::string> &args) {
    Bundle b;
    b.dir = make_temp_dir(tag);
    b.rootfs = b.dir + "/rootfs";
    std::vector<std::string> argv{maker_path(), "--oci-run", oci_run_path(), b.dir};
    argv.insert(argv.end(), args.begin(), args.end());
    Output o = run(argv);
    if (o.status != 0) {
        std::fprintf(stderr, "make-bundle failed: %s\n", o.err.c_str());
        std::abort();
    }
    auto spec = ocirun::oci::parse_spec(read_file(b.dir + "/config.json"));
    if (!spec) {
        std::fprintf(stderr, "bundle config: %s\n", spec.error().text().c_str());
        std::abort();
    }
    b.spec = std::move(*spec);
    return b;
}

std::string make_root(const char *tag) {
    return make_temp_dir((std::string("root-") + tag).c_str());
}

std::string unique_id(const char *tag) {
    static std::atomic<int> n{0};
    return std::string("t-") + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

} // namespace test
