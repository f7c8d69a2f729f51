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
    w.end_object();
    std::string line(w.view());
    line += '\n';
    (void)!::write(fd_, line.data(), line.size());
}

} // namespace ocirun::shim
