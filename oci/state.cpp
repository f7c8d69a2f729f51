#include "state.hpp"

#include "json.hpp"
#include "text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <sys/random.h>
#include <sys/stat.h>

namespace ocirun::oci {

namespace {

constexpr const char *kStatusNames[] = {"creating", "created", "running", "stopped", "paused"};

std::optional<ContainerStatus> status_from(std::string_view s) {
    for (int i = 0; i < 5; i++)
        if (s == kStatusNames[i]) return static_cast<ContainerStatus>(i);
    return std::nullopt;
}

} // namespace

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

Result<std::string> read_file(const std::string &path, int flags, size_t limit) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
    if (fd < 0) return fail_errno("open " + path);
    auto text = read_fd(fd, path, limit);
    ::close(fd);
    return text;
}

Result<std::string> read_fd(int fd, const std::string &path, size_t limit) {
    std::string text;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_errno("read " + path);
        if (n == 0) break;
        if (static_cast<size_t>(n) > limit - text.size())
            return fail_code(EFBIG, path + " is larger than " + std::to_string(limit) + " bytes");
        text.append(buf, static_cast<size_t>(n));
    }
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
    char buf[128]; // room for any value of each field (-Wformat-truncation)
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
    std::string tmp_path = concat(dir, tmp);
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

// A file renamed over another is written out at once by ext4 (its
// auto_da_alloc, for editors that do not fsync), and removing it later waits
// on that write: the record is replaced twice per container. Exchanged with
// the old file, which is then unlinked, the new content stays in the page
// cache like the first, and readers still see one whole file or the other.
// Where the filesystem cannot exchange, a plain rename.
Status StagedFile::commit() {
    int r = ::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (r < 0 && errno == EEXIST) {
        struct stat old;
        if (::lstat(path_.c_str(), &old) == 0 && S_ISREG(old.st_mode) &&
            ::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
            ::unlink(tmp_.c_str()); // the old content
            tmp_.clear();
            return {};
        }
        // (What is not a regular file gets rename's own answer.)
        r = ::rename(tmp_.c_str(), path_.c_str());
    } else if (r < 0 && (errno == EINVAL || errno == ENOSYS)) {
        r = ::rename(tmp_.c_str(), path_.c_str());
    }
    if (r < 0) return fail_errno("rename into " + path_);
    tmp_.clear();
    return {};
}

Status write_file_atomic(const std::string &path, std::string_view content, int mode) {
    StagedFile staged = OCI_TRY(stage_file(path, content, mode));
    return staged.commit();
}

} // namespace ocirun::oci
