#include "runtime/lifecycle/store.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/spec_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>

namespace ocirun {

Status validate_id(const std::string &id) {
    auto ok_first = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    if (id.empty()) return fail("missing container ID");
    if (id.size() > 1024) return fail("container ID is longer than 1024 characters");
    if (!ok_first(id[0]))
        return fail("invalid container ID \"" + id + "\": must start with a letter or digit");
    for (char c : id)
        if (!ok_first(c) && c != '_' && c != '.' && c != '-')
            return fail("invalid container ID \"" + id +
                        "\": only letters, digits, '_', '.' and '-' are allowed");
    return {};
}

static Status mkdir_p(const std::string &path, mode_t mode) {
    if (::mkdir(path.c_str(), mode) == 0 || errno == EEXIST) return {};
    if (errno != ENOENT) return fail_errno("mkdir " + path);
    auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return fail_errno("mkdir " + path);
    OCI_CHECK(mkdir_p(path.substr(0, slash), mode));
    if (::mkdir(path.c_str(), mode) < 0 && errno != EEXIST) return fail_errno("mkdir " + path);
    return {};
}

ContainerDir::ContainerDir(ContainerDir &&o) noexcept
    : root_(std::move(o.root_)), path_(std::move(o.path_)), id_(std::move(o.id_)), fd_(o.fd_),
      busy_(o.busy_) {
    o.fd_ = -1;
}

ContainerDir &ContainerDir::operator=(ContainerDir &&o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        root_ = std::move(o.root_);
        path_ = std::move(o.path_);
        id_ = std::move(o.id_);
        fd_ = o.fd_;
        busy_ = o.busy_;
        o.fd_ = -1;
    }
    return *this;
}

ContainerDir::~ContainerDir() {
    if (fd_ >= 0) ::close(fd_);
}

// Lock the directory `fd` (at `path`) with `op`; with LOCK_NB, *busy tells
// a lock held elsewhere (it is then left unlocked).
static Status lock_dir(int fd, const std::string &path, int op = LOCK_EX, bool *busy = nullptr) {
    while (::flock(fd, op) < 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK && busy) {
            *busy = true;
            break;
        }
        return fail_errno("lock " + path);
    }
    return {};
}

// What the runtime reads back from the state directory decides what it
// kills, removes and runs as hooks: only what this user wrote is trusted. A
// root, a container's directory or a file in it that another user owns, or
// that group or others may write, is refused; so is anything but a
// directory or a regular file where one is expected (a FIFO would hang the
// read). `what` names it in the error.
static Status check_ours(const struct stat &st, const std::string &what, bool dir) {
    if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return fail(what + ": not a " + (dir ? "directory" : "regular file"));
    if (st.st_uid != ::geteuid())
        return fail(what + ": owned by uid " + std::to_string(st.st_uid) + ", not by this user (" +
                    std::to_string(::geteuid()) + ")");
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return fail(what + ": writable by group or others");
    return {};
}

// The root, opened for openat below it, and checked to be our own
// directory (not a symlink): state written under a root another user
// controls could be swapped under us (a pre-made /tmp/oci-run-UID).
static Result<Fd> open_root(const std::string &root) {
    Fd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        // A symlink: O_NOFOLLOW's ENOTDIR on an O_PATH open.
        if (errno == ENOTDIR || errno == ELOOP) return fail("--root " + root + ": not a directory");
        return fail_errno("--root " + root);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) < 0) return fail_errno("--root " + root);
    OCI_CHECK(check_ours(st, "--root " + root, true));
    return fd;
}

Result<ContainerDir> ContainerDir::create(const std::string &root, const std::string &id) {
    OCI_CHECK(validate_id(id));
    OCI_CHECK(mkdir_p(root, 0700));
    Fd root_fd = OCI_TRY(open_root(root));
    ContainerDir d;
    d.id_ = id;
    d.root_ = root;
    d.path_ = root + "/" + id;
    if (::mkdirat(root_fd.get(), id.c_str(), 0700) < 0) {
        if (errno == EEXIST) return fail("container \"" + id + "\" already exists");
        return fail_errno("mkdir " + d.path_);
    }
    d.fd_ = ::openat(root_fd.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (d.fd_ < 0) {
        int e = errno;
        ::unlinkat(root_fd.get(), id.c_str(), AT_REMOVEDIR);
        return fail_code(e, "open " + d.path_);
    }
    if (auto locked = lock_dir(d.fd_, d.path_); !locked) {
        ::unlinkat(root_fd.get(), id.c_str(), AT_REMOVEDIR);
        return forward(std::move(locked.error()));
    }
    return d;
}

Result<ContainerDir> ContainerDir::open(const std::string &root, const std::string &id) {
    return open_as(root, id, false);
}

Result<ContainerDir> ContainerDir::observe(const std::string &root, const std::string &id) {
    return open_as(root, id, true);
}

Result<ContainerDir> ContainerDir::open_as(const std::string &root, const std::string &id,
                                           bool reader) {
    OCI_CHECK(validate_id(id));
    ContainerDir d;
    d.id_ = id;
    d.root_ = root;
    d.path_ = root + "/" + id;
    auto root_fd = open_root(root);
    if (!root_fd) {
        if (root_fd.error().code == ENOENT) return fail("container \"" + id + "\" does not exist");
        return forward(std::move(root_fd.error()));
    }
    int fd = ::openat(root_fd->get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return fail("container \"" + id + "\" does not exist");
        if (errno == ENOTDIR || errno == ELOOP) return fail(d.path_ + ": not a directory");
        return fail_errno("open " + d.path_);
    }
    d.fd_ = fd;
    struct stat st;
    if (::fstat(d.fd_, &st) < 0) return fail_errno("stat " + d.path_);
    OCI_CHECK(check_ours(st, d.path_, true));
    OCI_CHECK(lock_dir(d.fd_, d.path_, reader ? LOCK_SH | LOCK_NB : LOCK_EX,
                       reader ? &d.busy_ : nullptr));
    // A create that lost the race to delete leaves nothing to load: the
    // directory was removed while we waited for the lock.
    if (::fstat(d.fd_, &st) < 0 || st.st_nlink == 0)
        return fail("container \"" + id + "\" does not exist");
    return d;
}

// An OFD lock on the whole of `fd` (at `path`), waited for: a record
// rewritten in place (save) is written under F_WRLCK and read under
// F_RDLCK, so no reader sees half of it. Released when the file closes.
// The wait is bounded (a writer holds it for one write): a lock held for
// seconds (a writer stopped halfway, another process of this user) fails the
// command rather than hanging every `state` and `list`.
static Status lock_file(int fd, short type, const std::string &path) {
    struct flock fl {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    constexpr int kTries = 2000; // 1 ms apart
    for (int i = 0; ::fcntl(fd, F_OFD_SETLK, &fl) < 0; i++) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EACCES) return fail_errno("lock " + path);
        if (i == kTries)
            return fail_code(EAGAIN, path + ": held locked by another process for " +
                                         std::to_string(kTries / 1000) + " s");
        ::usleep(1000);
    }
    return {};
}

Result<std::string> ContainerDir::read(const char *name, size_t limit) const {
    std::string path = path_ + "/" + name;
    Fd fd(::openat(fd_, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ELOOP) return fail(path + ": not a regular file");
        return fail_errno("open " + path);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + path);
    OCI_CHECK(check_ours(st, path, false));
    // (Its size is taken again once the lock is held.)
    OCI_CHECK(lock_file(fd.get(), F_RDLCK, path));
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + path);
    if (static_cast<uint64_t>(st.st_size) > limit)
        return fail_code(EFBIG, path + " is larger than " + std::to_string(limit) + " bytes");
    // No more than fstat said: what grows meanwhile is read short.
    std::string text(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < text.size()) {
        ssize_t n =
            ::pread(fd.get(), text.data() + got, text.size() - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_errno("read " + path);
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    text.resize(got);
    return text;
}

Result<ContainerRecord> ContainerDir::load() const {
    auto text = read("state.json", oci::kMaxConfigSize);
    if (!text) {
        if (text.error().code == ENOENT && busy_)
            return fail("container \"" + id_ + "\" is being created");
        if (text.error().code == ENOENT)
            return fail("container \"" + id_ + "\" has no state (its create did not finish)");
        return forward(std::move(text.error()));
    }
    auto rec = parse_record(*text);
    if (!rec) return forward(std::move(rec.error()), path_ + "/state.json");
    // The record of this directory's container, not another's.
    if (rec->state.id != id_)
        return fail(path_ + "/state.json: the record is of \"" + rec->state.id + "\", not \"" +
                    id_ + "\"");
    // A record from before cgroupsPath was kept: config.json beside it says.
    if (!rec->cgroups_path_recorded && !rec->cgroup_dirs.empty()) {
        auto spec = load_spec();
        if (!spec) return forward(std::move(spec.error()), path_ + ": the configured cgroupsPath");
        rec->cgroups_path = spec->linux_->cgroups_path;
        rec->cgroups_path_recorded = true;
    }
    return rec;
}

Result<oci::Spec> ContainerDir::load_spec() const {
    std::string text = OCI_TRY(read("config.json", oci::kMaxConfigSize));
    auto spec = oci::parse_spec(text);
    if (!spec) return forward(std::move(spec.error()), path_ + "/config.json");
    auto ok = oci::validate_spec(*spec);
    if (!ok) return forward(std::move(ok.error()), path_ + "/config.json");
    return spec;
}

const char *kept_filter_file(KeptFilter which) {
    return which == KeptFilter::guard ? "guard.bpf" : "seccomp.bpf";
}

Result<std::string> ContainerDir::load_compiled(KeptFilter which) const {
    return read(kept_filter_file(which), 1 << 20);
}

Status ContainerDir::save_compiled(KeptFilter which, std::string_view data) const {
    return oci::write_file_atomic(path_ + "/" + kept_filter_file(which), data);
}

// The record rewritten in place: one pwrite at offset 0 under the file's
// write lock, padded with blanks to the old length (JSON allows them; no
// truncate that a kill could separate from the write). Only for state.json
// as this user left it (a regular file of ours with no second link, which
// would be written through) and only within a page, which a write copies
// whole or not at all when the writer is killed. False: replace it instead.
static Result<bool> rewrite_in_place(int dirfd, const std::string &path, std::string_view text) {
    constexpr size_t kPage = 4096;
    Fd fd(::openat(dirfd, "state.json", O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd.valid()) return false; // none yet, or not a file: replaced
    struct stat st;
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + path);
    if (!check_ours(st, path, false) || st.st_nlink != 1) return false;
    OCI_CHECK(lock_file(fd.get(), F_WRLCK, path));
    // (Its size under the lock.)
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + path);
    size_t size = std::max(text.size(), static_cast<size_t>(st.st_size));
    if (size > kPage) return false;
    // The record, then blanks from a static run of them: one pwritev, no copy.
    static const auto blanks = [] {
        std::array<char, 256> b;
        b.fill(' ');
        return b;
    }();
    struct iovec iov[1 + kPage / 256];
    int count = 0;
    iov[count++] = {const_cast<char *>(text.data()), text.size()};
    for (size_t pad = size - text.size(); pad > 0; pad -= iov[count - 1].iov_len)
        iov[count++] = {const_cast<char *>(blanks.data()), std::min(pad, blanks.size())};
    ssize_t n;
    do
        n = ::pwritev(fd.get(), iov, count, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0) return fail_errno("write " + path);
    // Short (which a page-sized write to a file of ours is not): replaced.
    return static_cast<size_t>(n) == size;
}

Status ContainerDir::save(const ContainerRecord &rec) const {
    json::Writer w(false);
    write_record(w, rec);
    std::string path = path_ + "/state.json";
    if (OCI_TRY(rewrite_in_place(fd_, path, w.view()))) return {};
    return oci::write_file_atomic(path, w.view());
}

Result<oci::StagedFile> ContainerDir::stage(const ContainerRecord &rec) const {
    json::Writer w(false);
    write_record(w, rec);
    return oci::stage_file(path_ + "/state.json", w.view());
}

static void remove_tree_at(int dirfd) {
    DIR *d = ::fdopendir(::dup(dirfd));
    if (!d) return;
    while (struct dirent *e = ::readdir(d)) {
        std::string_view n = e->d_name;
        if (n == "." || n == "..") continue;
        if (e->d_type == DT_DIR) {
            int sub = ::openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                remove_tree_at(sub);
                ::close(sub);
            }
            ::unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
        } else {
            ::unlinkat(dirfd, e->d_name, 0);
        }
    }
    ::closedir(d);
}

Status ContainerDir::remove() {
    if (fd_ < 0) return {};
    remove_tree_at(fd_);
    if (::rmdir(path_.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + path_);
    ::close(fd_);
    fd_ = -1;
    return {};
}

Result<std::vector<std::string>> list_ids(const std::string &root) {
    std::vector<std::string> ids;
    struct stat st;
    if (::lstat(root.c_str(), &st) < 0 && errno == ENOENT) return ids;
    Fd root_fd = OCI_TRY(open_root(root));
    DIR *d = ::fdopendir(::openat(root_fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d) return fail_errno("open " + root);
    while (struct dirent *e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == ".." || !validate_id(n)) continue;
        ids.push_back(std::move(n));
    }
    ::closedir(d);
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace ocirun
