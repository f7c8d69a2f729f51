#include "state.hpp"

#include "json.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <sys/random.h>

namespace ocirun::oci {

namespace {

constexpr const char *kStatusNames[] = {"creating", "created", "running", "stopped", "paused"};

std::optional<ContainerStatus> status_from(std::string_view s) {
    for (int i = 0; i < 5; i++)
        if (s == kStatusNames[i]) return static_cast<ContainerStatus>(i);
    return std::nullopt;
}

Status parse_state_members(yajl_val top, const json::Path &p, State &st) {
    OCI_CHECK(json::get_string(top, p, "ociVersion", st.oci_version, true));
    OCI_CHECK(json::get_string(top, p, "id", st.id, true));
    std::string status;
    OCI_CHECK(json::get_string(top, p, "status", status, true));
    auto s = status_from(status);
    if (!s) return json::fail_at(p.field("status"), "unknown status \"" + status + "\"");
    st.status = *s;
    OCI_CHECK(json::get_int(top, p, "pid", st.pid, 0, INT32_MAX));
    OCI_CHECK(json::get_string(top, p, "bundle", st.bundle, true));
    OCI_CHECK(json::get_string_map(top, p, "annotations", st.annotations));
    return {};
}

} // namespace

void write_state_members(json::Writer &w, const State &st) {
    w.kv("ociVersion", st.oci_version).kv("id", st.id).kv("status", status_name(st.status));
    if (st.pid > 0) w.kv_i64("pid", st.pid);
    w.kv("bundle", st.bundle);
    w.opt_map("annotations", st.annotations);
}

const char *status_name(ContainerStatus s) {
    return kStatusNames[static_cast<int>(s)];
}

std::string write_state(const State &st, bool pretty) {
    json::Writer w(pretty);
    w.begin_object();
    write_state_members(w, st);
    w.end_object();
    return std::string(w.view());
}

Result<State> parse_state(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    if (!YAJL_IS_OBJECT(doc.root())) return fail("expected a JSON object at the top level");
    State st;
    OCI_CHECK(parse_state_members(doc.root(), json::Path{}, st));
    return st;
}

std::string write_record(const ContainerRecord &rec) {
    json::Writer w(false);
    w.begin_object();
    write_state_members(w, rec.state);
    w.kv_u64("initStartTime", rec.init_start_time);
    w.kv("created", rec.created);
    w.kv("rootfs", rec.rootfs);
    w.kv_u64("owner", rec.owner);
    w.kv_bool("started", rec.started);
    w.kv_bool("hasHooks", rec.has_hooks);
    if (!rec.cgroup_dirs.empty()) w.kv_strings("cgroupDirs", rec.cgroup_dirs);
    if (!rec.cgroup_dirs.empty()) w.kv("cgroupsPath", rec.cgroups_path);
    if (rec.init_pidns) w.kv_u64("initPidNamespace", rec.init_pidns);
    if (rec.sandboxed) w.kv_bool("sandboxed", true);
    if (!rec.fs_rules.empty()) {
        w.key("fsRules").begin_array();
        for (const auto &r : rec.fs_rules) {
            w.begin_object().kv("kind", r.kind).kv("path", r.path).kv("resolved", r.resolved);
            if (r.made) w.kv_bool("made", true);
            if (!r.ways.empty()) {
                w.key("ways").begin_array();
                for (const auto &way : r.ways)
                    w.begin_object().kv("path", way.path).kv("how", way.how).end_object();
                w.end_array();
            }
            w.end_object();
        }
        w.end_array();
    }
    if (!rec.placeholders.empty()) {
        w.key("placeholders").begin_array();
        for (const auto &p : rec.placeholders)
            w.begin_object()
                .kv("path", p.path)
                .kv_u64("dev", p.dev)
                .kv_u64("ino", p.ino)
                .end_object();
        w.end_array();
    }
    if (rec.trace) w.kv_bool("trace", true);
    if (rec.shim_pid > 0) {
        w.kv_u64("shimPid", static_cast<uint64_t>(rec.shim_pid));
        w.kv_u64("shimStartTime", rec.shim_start_time);
    }
    w.end_object();
    return std::string(w.view());
}

Result<ContainerRecord> parse_record(std::string_view text) {
    json::Document doc = OCI_TRY(json::Document::parse(text));
    yajl_val top = doc.root();
    if (!YAJL_IS_OBJECT(top)) return fail("expected a JSON object at the top level");
    json::Path p;
    ContainerRecord rec;
    OCI_CHECK(parse_state_members(top, p, rec.state));
    OCI_CHECK(json::get_uint(top, p, "initStartTime", rec.init_start_time, UINT64_MAX));
    OCI_CHECK(json::get_string(top, p, "created", rec.created));
    OCI_CHECK(json::get_string(top, p, "rootfs", rec.rootfs));
    OCI_CHECK(json::get_uint(top, p, "owner", rec.owner, UINT32_MAX));
    OCI_CHECK(json::get_bool(top, p, "started", rec.started));
    OCI_CHECK(json::get_bool(top, p, "hasHooks", rec.has_hooks));
    OCI_CHECK(json::get_strings(top, p, "cgroupDirs", rec.cgroup_dirs));
    rec.cgroups_path_recorded = json::member(top, "cgroupsPath") != nullptr;
    OCI_CHECK(json::get_string(top, p, "cgroupsPath", rec.cgroups_path));
    OCI_CHECK(json::get_uint(top, p, "initPidNamespace", rec.init_pidns, UINT64_MAX));
    OCI_CHECK(json::get_bool(top, p, "sandboxed", rec.sandboxed));
    OCI_CHECK(
        json::for_each_object(top, p, "fsRules", [&](yajl_val o, const json::Path &ip) -> Status {
            FsRuleRecord r;
            OCI_CHECK(json::get_string(o, ip, "kind", r.kind, true));
            OCI_CHECK(json::get_string(o, ip, "path", r.path, true));
            OCI_CHECK(json::get_string(o, ip, "resolved", r.resolved, true));
            OCI_CHECK(json::get_bool(o, ip, "made", r.made));
            OCI_CHECK(json::for_each_object(
                o, ip, "ways", [&](yajl_val wo, const json::Path &wp) -> Status {
                    FsWayRecord way;
                    OCI_CHECK(json::get_string(wo, wp, "path", way.path));
                    OCI_CHECK(json::get_string(wo, wp, "how", way.how, true));
                    r.ways.push_back(std::move(way));
                    return {};
                }));
            rec.fs_rules.push_back(std::move(r));
            return {};
        }));
    OCI_CHECK(json::for_each_object(
        top, p, "placeholders", [&](yajl_val o, const json::Path &ip) -> Status {
            PlaceholderRecord r;
            OCI_CHECK(json::get_string(o, ip, "path", r.path, true));
            OCI_CHECK(json::get_uint(o, ip, "dev", r.dev, UINT64_MAX, true));
            OCI_CHECK(json::get_uint(o, ip, "ino", r.ino, UINT64_MAX, true));
            rec.placeholders.push_back(std::move(r));
            return {};
        }));
    OCI_CHECK(json::get_bool(top, p, "trace", rec.trace));
    OCI_CHECK(json::get_uint(top, p, "shimPid", rec.shim_pid, INT32_MAX));
    OCI_CHECK(json::get_uint(top, p, "shimStartTime", rec.shim_start_time, UINT64_MAX));
    return rec;
}

Result<std::string> read_file(const std::string &path, int flags, size_t limit) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) return fail_errno("open " + path);
    std::string text;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            return fail_code(e, "read " + path);
        }
        if (n == 0) break;
        if (static_cast<size_t>(n) > limit - text.size()) {
            ::close(fd);
            return fail_code(EFBIG, path + " is larger than " + std::to_string(limit) + " bytes");
        }
        text.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
}

std::string rfc3339_now() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return rfc3339(ts);
}

std::string rfc3339(const struct timespec &ts) {
    // Calendar arithmetic, not gmtime_r or strftime: glibc loads the time
    // zone (/etc/localtime) on their first call, even for UTC.
    using namespace std::chrono;
    sys_seconds secs{seconds{ts.tv_sec}};
    auto day = floor<days>(secs);
    year_month_day ymd{day};
    hh_mm_ss<seconds> hms{secs - day};
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02lld.%09ldZ",
                  static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()), static_cast<long>(hms.hours().count()),
                  static_cast<long>(hms.minutes().count()),
                  static_cast<long long>(hms.seconds().count()), ts.tv_nsec);
    return buf;
}

Result<StagedFile> stage_file(const std::string &path, std::string_view content, int mode) {
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    // A random suffix (getrandom: std::random_device probes the CPU with
    // cpuid first, which traps to the hypervisor in a VM) for O_EXCL.
    unsigned suffix = 0;
    if (::getrandom(&suffix, sizeof suffix, GRND_NONBLOCK) != sizeof suffix) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        suffix = static_cast<unsigned>(ts.tv_nsec);
    }
    char tmp[64];
    std::snprintf(tmp, sizeof tmp, "/.tmp-%d-%08x", getpid(), suffix);
    std::string tmp_path = dir + tmp;
    int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    // Errors name `path`, the file the caller knows: the temp name is ours.
    if (fd < 0) return fail_errno("write " + path);
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            ::unlink(tmp_path.c_str());
            return fail_code(e, "write " + path);
        }
        done += static_cast<size_t>(n);
    }
    if (::close(fd) < 0) {
        int e = errno;
        ::unlink(tmp_path.c_str());
        return fail_code(e, "write " + path);
    }
    return StagedFile(path, tmp_path);
}

StagedFile::~StagedFile() {
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Status StagedFile::commit() {
    if (::rename(tmp_.c_str(), path_.c_str()) < 0) return fail_errno("rename into " + path_);
    tmp_.clear();
    return {};
}

Status write_file_atomic(const std::string &path, std::string_view content, int mode) {
    StagedFile staged = OCI_TRY(stage_file(path, content, mode));
    return staged.commit();
}

} // namespace ocirun::oci
