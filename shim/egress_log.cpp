#include "egress_log.hpp"

#include "oci/json.hpp"
#include "oci/state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

namespace ocirun::shim {

namespace {

// `s` cut to EgressLog::kMaxField bytes, at the start of a UTF-8 sequence;
// `cut` set when it was.
std::string_view clip(std::string_view s, bool &cut) {
    if (s.size() <= EgressLog::kMaxField) return s;
    cut = true;
    size_t n = EgressLog::kMaxField;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        n--;
    return s.substr(0, n);
}

} // namespace

EgressLog::~EgressLog() {
    if (fd_ >= 0) ::close(fd_);
}

bool EgressLog::open(const std::string &path, const std::string &id, uint64_t max_bytes) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    id_ = id;
    max_bytes_ = max_bytes;
    struct stat st;
    if (fd_ < 0 || ::fstat(fd_, &st) < 0) return false;
    size_ = static_cast<uint64_t>(st.st_size);
    return true;
}

void EgressLog::append(std::string &line) {
    line += '\n';
    ssize_t n = ::write(fd_, line.data(), line.size());
    if (n > 0) size_ += static_cast<uint64_t>(n);
}

// A "dropped" event: the first (count 0) says that the limit was reached,
// the last how many events it cost.
void EgressLog::dropped(uint64_t count) {
    json::Writer w(false);
    w.begin_object();
    w.kv("type", "egress");
    w.kv("time", oci::rfc3339_now());
    w.kv("id", id_);
    w.kv("event", "dropped");
    if (count > 0)
        w.kv_u64("count", count);
    else
        w.kv("reason", "egress.jsonl reached " + std::to_string(max_bytes_) +
                           " bytes: the events after this one are counted, not written");
    w.end_object();
    std::string line(w.view());
    append(line);
}

void EgressLog::write(const EgressEvent &e) {
    if (fd_ < 0) return;
    json::Writer w(false);
    w.begin_object();
    w.kv("type", "egress");
    w.kv("time", oci::rfc3339_now());
    w.kv("id", id_);
    w.kv("event", e.event);
    bool cut = false;
    w.opt_str("method", clip(e.method, cut));
    w.kv("host", clip(e.host, cut));
    w.kv_u64("port", e.port);
    w.opt_str("address", clip(e.address, cut));
    w.opt_str("matched", clip(e.matched, cut));
    w.kv_bool("blocked", e.blocked);
    w.kv("mode", e.observe ? "observe" : "enforce");
    w.opt_str("reason", clip(e.reason, cut));
    if (e.bytes) {
        w.kv_u64("bytesUp", e.bytes_up);
        w.kv_u64("bytesDown", e.bytes_down);
    }
    if (e.count > 0) w.kv_u64("count", e.count);
    // A host or reason with bytes that are not UTF-8 (as a client sent it):
    // written with U+FFFD in their place, and the event says so.
    if (w.replaced() > 0) w.kv("note", "invalid UTF-8 replaced by U+FFFD");
    if (cut) w.kv_bool("truncated", true);
    w.end_object();
    std::string line(w.view());
    if (dropped_ > 0 || size_ + line.size() + 1 > max_bytes_) {
        if (dropped_++ == 0) dropped(0); // (past max_bytes: its two lines are small)
        return;
    }
    append(line);
}

void EgressLog::refused_over(const std::string &limit, const EgressEvent &e) {
    auto it = runs_.find(limit);
    if (it != runs_.end()) {
        it->second.more++;
        return;
    }
    EgressEvent first = e;
    first.count = 1;
    write(first);
    runs_[limit] = Run{e, 0};
}

void EgressLog::under(const std::string &limit) {
    auto it = runs_.find(limit);
    if (it == runs_.end()) return;
    if (it->second.more > 0) {
        EgressEvent rest = it->second.event;
        rest.count = it->second.more;
        write(rest);
    }
    runs_.erase(it);
}

void EgressLog::flush() {
    while (!runs_.empty())
        under(runs_.begin()->first);
    if (fd_ >= 0 && dropped_ > 0) {
        dropped(dropped_);
        dropped_ = 0;
    }
}

} // namespace ocirun::shim
