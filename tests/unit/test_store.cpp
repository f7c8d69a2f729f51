// The state directory's record: rewritten in place when it fits a page
// (no new inode for each of create's saves), replaced by rename otherwise,
// never written through a second link, and read whole while it is rewritten.
#include "runtime/lifecycle/store.hpp"

#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

using namespace ocirun;
using namespace unit;

namespace {

ContainerRecord sample(oci::ContainerStatus status, int pid) {
    ContainerRecord rec;
    rec.state.oci_version = "1.2.1";
    rec.state.id = "c1";
    rec.state.status = status;
    rec.state.pid = pid;
    rec.state.bundle = "/var/lib/bundles/c1";
    rec.owner = ::geteuid();
    return rec;
}

ContainerDir must_create(const std::string &root) {
    auto d = ContainerDir::create(root, "c1");
    cr_assert(d.has_value(), "%s", d ? "" : d.error().text().c_str());
    return std::move(*d);
}

void must_save(const ContainerDir &d, const ContainerRecord &rec) {
    auto r = d.save(rec);
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
}

ino_t inode_of(const std::string &path) {
    struct stat st {};
    cr_assert_eq(::stat(path.c_str(), &st), 0, "stat %s: %s", path.c_str(), std::strerror(errno));
    return st.st_ino;
}

ContainerRecord must_load(const ContainerDir &d) {
    auto r = d.load();
    cr_assert(r.has_value(), "%s", r ? "" : r.error().text().c_str());
    return *r;
}

// A container's directory in a new root, its first record (creating, no
// PID) saved, as create's first save leaves it.
struct Saved {
    std::string root = make_tmpdir();
    ContainerDir d = must_create(root);
    std::string path = root + "/c1/state.json";
    Saved() { must_save(d, sample(oci::ContainerStatus::creating, 0)); }
};

// state.json opened here with an OFD write lock, as another writer holds it.
int hold_write_lock(const std::string &path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    cr_assert(fd >= 0, "open %s: %s", path.c_str(), std::strerror(errno));
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    cr_assert_eq(::fcntl(fd, F_OFD_SETLK, &fl), 0, "lock: %s", std::strerror(errno));
    return fd;
}

} // namespace

// create saves the record three times; the later two rewrite the first's
// inode, shorter ones padded with blanks (still one JSON document).
Test(store, a_record_that_fits_a_page_is_rewritten_in_place) {
    Saved s;
    ino_t first = inode_of(s.path);
    must_save(s.d, sample(oci::ContainerStatus::creating, 4242));
    ino_t second = inode_of(s.path);
    ContainerRecord with_pid = must_load(s.d);
    must_save(s.d, sample(oci::ContainerStatus::created, 4242));
    ino_t third = inode_of(s.path);
    ContainerRecord created = must_load(s.d);
    std::string text = must_read(s.path);
    rm_rf(s.root);
    cr_assert_eq(second, first);
    cr_assert_eq(third, first);
    cr_assert_eq(with_pid.state.pid, 4242);
    cr_assert_eq(with_pid.state.status, oci::ContainerStatus::creating);
    cr_assert_eq(created.state.status, oci::ContainerStatus::created);
    cr_assert_eq(text.back(), ' ', "the shorter record is padded: %s", text.c_str());
}

// A rewrite of more than a page could be cut short by a kill between its
// pages: a record that large is replaced by rename, whole or not at all.
Test(store, a_record_larger_than_a_page_is_replaced) {
    Saved s;
    ino_t small = inode_of(s.path);
    ContainerRecord big = sample(oci::ContainerStatus::created, 7);
    big.state.annotations["a"] = std::string(5000, 'x');
    must_save(s.d, big);
    ino_t large = inode_of(s.path);
    ContainerRecord back = must_load(s.d);
    rm_rf(s.root);
    cr_assert_neq(large, small);
    cr_assert_eq(back.state.annotations.at("a").size(), 5000u);
}

// A second link to state.json (made by whoever could write the directory)
// is not written through: the record is replaced, the other name keeps
// what it had.
Test(store, a_hard_linked_record_is_not_written_through) {
    Saved s;
    std::string before = must_read(s.path);
    cr_assert_eq(::link(s.path.c_str(), (s.root + "/other").c_str()), 0, "link: %s",
                 std::strerror(errno));
    must_save(s.d, sample(oci::ContainerStatus::created, 99));
    std::string other = must_read(s.root + "/other");
    ContainerRecord now = must_load(s.d);
    rm_rf(s.root);
    expect_eq(other, before);
    cr_assert_eq(now.state.pid, 99);
}

// A reader (`state` while a create holds the directory) waits for a
// rewrite in progress instead of reading half of it: the writer holds an
// OFD write lock on state.json for its one write.
Test(store, a_reader_waits_for_a_rewrite_in_progress) {
    Saved s;
    std::string whole = must_read(s.path);
    int fd = hold_write_lock(s.path);
    cr_assert_eq(::pwrite(fd, "{\"ociVersion\":", 14, 0), 14);
    cr_assert_eq(::ftruncate(fd, 14), 0);

    std::atomic<bool> done{false};
    std::string seen;
    std::thread reader([&] {
        auto o = ContainerDir::observe(s.root, "c1");
        if (o) {
            auto r = o->load();
            seen = r ? "pid " + std::to_string(r->state.pid) : "error: " + r.error().text();
        } else {
            seen = "error: " + o.error().text();
        }
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    bool early = done;
    cr_assert_eq(::pwrite(fd, whole.data(), whole.size(), 0), static_cast<ssize_t>(whole.size()));
    ::close(fd); // (releases the lock)
    reader.join();
    rm_rf(s.root);
    cr_assert(!early, "the reader did not wait: %s", seen.c_str());
    expect_eq(seen, "pid 0");
}

// The wait is bounded: a lock held past it (a writer stopped halfway, or
// another process of this user holding it) fails the read with the file
// named instead of hanging `state` and `list`.
Test(store, a_reader_does_not_wait_for_ever, .timeout = 20) {
    Saved s;
    int fd = hold_write_lock(s.path);
    auto t0 = std::chrono::steady_clock::now();
    auto r = s.d.load();
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ::close(fd);
    rm_rf(s.root);
    cr_assert(!r.has_value(), "read a record under another's write lock");
    cr_assert(r.error().text().find(s.path + ": held locked") != std::string::npos, "%s",
              r.error().text().c_str());
    cr_assert(waited >= 1.0 && waited < 5.0, "waited %.2f s", waited);
}
