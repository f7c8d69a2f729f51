// Egress events: one JSON line per decision of the proxy and per tunnel
// closed, appended to egress.jsonl in the container's state directory, where
// `oci-run events` reads them.
//   {"type":"egress","time":"...","id":"...","event":"allowed|refused|close",
//    "method":"CONNECT","host":"a.com","port":443,"address":"93.184.216.34",
//    "matched":"*.a.com","blocked":false,"mode":"enforce","reason":"...",
//    "bytesUp":N,"bytesDown":N}
// In observe mode "blocked" says what enforce would have done, and the
// connection goes ahead.
#pragma once

#include <cstdint>
#include <string>

namespace ocirun::shim {

struct EgressEvent {
    std::string event; // allowed, refused, close
    std::string method, host, address, matched, reason;
    uint16_t port = 0;
    bool blocked = false;
    bool observe = false;
    bool bytes = false; // bytes_up/down are set (close)
    uint64_t bytes_up = 0, bytes_down = 0;
};

class EgressLog {
  public:
    EgressLog() = default;
    ~EgressLog();
    // Opens (creates) the file for appending; false with errno on failure.
    bool open(const std::string &path, const std::string &id);
    // One write(2) per line: readers never see half a line.
    void write(const EgressEvent &e);

  private:
    int fd_ = -1;
    std::string id_;
};

} // namespace ocirun::shim
