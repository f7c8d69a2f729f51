#include "egress_log.hpp"

#include "oci/json.hpp"
#include "oci/state.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace ocirun::shim {

EgressLog::~EgressLog() {
    if (fd_ >= 0) ::close(fd_);
}

bool EgressLog::open(const std::string &path, const std::string &id) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    id_ = id;
    return fd_ >= 0;
}

void EgressLog::write(const EgressEvent &e) {
    if (fd_ < 0) return;
    json::Writer w(false);
    w.begin_object();
    w.kv("type", "egress");
    w.kv("time", oci::rfc3339_now());
    w.kv("id", id_);
    w.kv("event", e.event);
    w.opt_str("method", e.method);
    w.kv("host", e.host);
    w.kv_u64("port", e.port);
    w.opt_str("address", e.address);
    w.opt_str("matched", e.matched);
    w.kv_bool("blocked", e.blocked);
    w.kv("mode", e.observe ? "observe" : "enforce");
    w.opt_str("reason", e.reason);
    if (e.bytes) {
        w.kv_u64("bytesUp", e.bytes_up);
        w.kv_u64("bytesDown", e.bytes_down);
    }
    if (e.count > 0) w.kv_u64("count", e.count);
    // A host or reason with bytes that are not UTF-8 (as a client sent it):
    // written with U+FFFD in their place, and the event says so.
    if (w.replaced() > 0) w.kv("note", "invalid UTF-8 replaced by U+FFFD");
    w.end_object();
    std::string line(w.view());
    line += '\n';
    (void)!::write(fd_, line.data(), line.size());
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
}

} // namespace ocirun::shim
