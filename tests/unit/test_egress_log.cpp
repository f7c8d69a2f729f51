// The network helper's egress log (shim/egress_log.cpp): what a client
// sends decides its lines, and it lives on the host's tmpfs, so a text
// field is cut and the file stops growing at its limit, saying so, with the
// events it dropped counted.
#include "oci/json.hpp"
#include "shim/egress_log.hpp"
#include "unit_support.hpp"

#include <criterion/criterion.h>

#include <string>
#include <vector>

using ocirun::shim::EgressEvent;
using ocirun::shim::EgressLog;

namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    size_t at = 0, nl;
    while ((nl = text.find('\n', at)) != std::string::npos) {
        out.push_back(text.substr(at, nl - at));
        at = nl + 1;
    }
    cr_assert_eq(at, text.size(), "a line without its newline");
    return out;
}

EgressEvent refused(std::string host) {
    EgressEvent e;
    e.event = "refused";
    e.method = "CONNECT";
    e.host = std::move(host);
    e.port = 443;
    e.blocked = true;
    e.reason = e.host + ":443 is not in dev.ocirun.domains";
    return e;
}

} // namespace

// A host of 5,000 bytes (as a client sent it) is written cut to 256 bytes,
// at a character's start, with "truncated"; a short one as it is.
Test(egress_log, a_long_field_is_cut_and_marked) {
    std::string dir = unit::make_tmpdir();
    std::string path = dir + "/egress.jsonl";
    {
        EgressLog log;
        cr_assert(log.open(path, "c1"));
        log.write(refused(std::string(5000, 'y')));
        // "é" is 2 bytes: after "a", byte 256 is the second of one.
        std::string accented = "a";
        while (accented.size() < 5000)
            accented += "\xc3\xa9";
        log.write(refused(accented));
        log.write(refused("a.test"));
    }
    auto lines = lines_of(unit::must_read(path));
    unit::rm_rf(dir);
    cr_assert_eq(lines.size(), 3u);
    for (size_t i = 0; i < 2; i++) {
        auto v = ocirun::json::Document::parse(lines[i]);
        cr_assert(v.has_value(), "line %zu: %s", i, lines[i].c_str());
        cr_assert(lines[i].find("\"truncated\":true") != std::string::npos, "%s", lines[i].c_str());
        cr_assert(lines[i].size() < 800, "line %zu has %zu bytes", i, lines[i].size());
        cr_assert(lines[i].find("U+FFFD") == std::string::npos, "cut inside a character: %s",
                  lines[i].c_str());
    }
    cr_assert(lines[2].find("\"host\":\"a.test\"") != std::string::npos, "%s", lines[2].c_str());
    cr_assert(lines[2].find("truncated") == std::string::npos, "%s", lines[2].c_str());
}

// A flood of events stops at the limit: the file holds whole lines up to
// it, then one "dropped" event saying why, and, when the helper stops, one
// with the count of the events not written. A limit already reached by the
// file (a helper started again) is counted from its size.
Test(egress_log, the_file_stops_at_its_limit_and_counts_what_it_dropped) {
    std::string dir = unit::make_tmpdir();
    std::string path = dir + "/egress.jsonl";
    constexpr uint64_t kLimit = 64 * 1024;
    {
        EgressLog log;
        cr_assert(log.open(path, "c1", kLimit));
        for (int i = 0; i < 5000; i++)
            log.write(refused("host" + std::to_string(i) + std::string(300, 'h')));
        log.flush();
    }
    std::string text = unit::must_read(path);
    auto lines = lines_of(text);
    size_t written = lines.size() - 2;
    std::string notice = lines[written], count = lines[written + 1];
    // Opened again at the limit: no more events (of that size), only the
    // notice and the count.
    {
        EgressLog log;
        cr_assert(log.open(path, "c1", kLimit));
        log.write(refused("again" + std::string(300, 'h')));
        log.write(refused("again" + std::string(300, 'h')));
        log.flush();
    }
    auto after = lines_of(unit::must_read(path));
    unit::rm_rf(dir);
    cr_assert(text.size() <= kLimit + 512, "%zu bytes", text.size());
    cr_assert(written > 50 && written < 5000, "%zu events written", written);
    for (size_t i = 0; i < written; i++)
        cr_assert(lines[i].find("\"event\":\"refused\"") != std::string::npos, "%s",
                  lines[i].c_str());
    cr_assert(notice.find("\"event\":\"dropped\"") != std::string::npos &&
                  notice.find("reached 65536 bytes") != std::string::npos,
              "%s", notice.c_str());
    std::string want = "\"count\":" + std::to_string(5000 - written);
    cr_assert(count.find("\"event\":\"dropped\"") != std::string::npos &&
                  count.find(want) != std::string::npos,
              "%s (want %s)", count.c_str(), want.c_str());
    cr_assert_eq(after.size(), lines.size() + 2, "%s", after.back().c_str());
    cr_assert(after[lines.size()].find("reached") != std::string::npos);
    cr_assert(after[lines.size() + 1].find("\"count\":2") != std::string::npos, "%s",
              after[lines.size() + 1].c_str());
}
