// Egress events: one JSON line per decision of the proxy and per tunnel
// closed, appended to egress.jsonl in the container's state directory, where
// `oci-run events` reads them.
//   {"type":"egress","time":"...","id":"...","event":"allowed|refused|close",
//    "method":"CONNECT","host":"a.com","port":443,"address":"93.184.216.34",
//    "matched":"*.a.com","blocked":false,"mode":"enforce","reason":"...",
//    "bytesUp":N,"bytesDown":N}
// In observe mode "blocked" says what enforce would have done, and the
// connection goes ahead. Refusals for being over a connection limit come in
// runs: the first of a run is written at once, the others counted and
// written as one event with "count" when the run ends (a connection is let
// through again, or the helper stops), so a flood cannot fill the disk.
#pragma once

#include <cstdint>
#include <map>
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
    uint64_t count = 0; // refusals this event stands for (0: one, not written)
};

class EgressLog {
  public:
    EgressLog() = default;
    ~EgressLog();
    // Opens (creates) the file for appending; false with errno on failure.
    bool open(const std::string &path, const std::string &id);
    // One write(2) per line: readers never see half a line.
    void write(const EgressEvent &e);

    // A refusal over the limit named `limit` (a run of them, see above).
    void refused_over(const std::string &limit, const EgressEvent &e);
    // A connection let through under `limit`: the run, if any, is written.
    void under(const std::string &limit);
    // Every run still open, written (the helper stops).
    void flush();

  private:
    struct Run {
        EgressEvent event; // the first refusal, counting the rest
        uint64_t more = 0;
    };
    int fd_ = -1;
    std::string id_;
    std::map<std::string, Run> runs_;
};

} // namespace ocirun::shim
