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
// The file lives in the state directory, on the host's tmpfs (its memory),
// and what a client sends decides the lines: each text field is cut to
// kMaxField bytes (the event then has "truncated":true), and the file stops
// growing at max_bytes. The first event over is replaced by one "dropped"
// event saying so; the events dropped are counted and the count written as
// a second "dropped" event when the helper stops.
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
    static constexpr size_t kMaxField = 256;               // bytes of a text field
    static constexpr uint64_t kMaxBytes = 8 * 1024 * 1024; // of the file

    EgressLog() = default;
    ~EgressLog();
    EgressLog(const EgressLog &) = delete;
    EgressLog &operator=(const EgressLog &) = delete;
    // Opens (creates) the file for appending, counting what it holds against
    // `max_bytes`; false with errno on failure.
    bool open(const std::string &path, const std::string &id, uint64_t max_bytes = kMaxBytes);
    // One write(2) per line: readers never see half a line.
    void write(const EgressEvent &e);

    // A refusal over the limit named `limit` (a run of them, see above).
    void refused_over(const std::string &limit, const EgressEvent &e);
    // A connection let through under `limit`: the run, if any, is written.
    void under(const std::string &limit);
    // Every run still open, written, and the count of the events dropped
    // (the helper stops).
    void flush();

  private:
    struct Run {
        EgressEvent event; // the first refusal, counting the rest
        uint64_t more = 0;
    };
    void dropped(uint64_t count);
    void append(std::string &line);

    int fd_ = -1;
    std::string id_;
    uint64_t size_ = 0, max_bytes_ = kMaxBytes;
    uint64_t dropped_ = 0; // events not written since the file reached max_bytes
    std::map<std::string, Run> runs_;
};

} // namespace ocirun::shim
