// Small text helpers shared by the parsers of the runtime library.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

// "a,b,,c" -> {"a", "b", "", "c"}: every field, empty ones too.
inline std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(sep, start);
        if (end == std::string_view::npos) end = s.size();
        out.emplace_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

// Calls f(line) for each line of s, without its '\n' (a last line without
// one too; an empty tail is no line). The runtime parses /proc and cgroup
// files with these rather than iostreams, whose locale machinery would be
// most of the binary's text (and so of every start's page faults).
template <class F> void for_each_line(std::string_view s, F &&f) {
    while (!s.empty()) {
        size_t nl = s.find('\n');
        f(s.substr(0, nl));
        if (nl == std::string_view::npos) break;
        s.remove_prefix(nl + 1);
    }
}

// The words of s, split on blanks (space, tab, newline).
inline std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (true) {
        i = s.find_first_not_of(" \t\n", i);
        if (i == std::string_view::npos) break;
        size_t end = s.find_first_of(" \t\n", i);
        if (end == std::string_view::npos) end = s.size();
        out.push_back(s.substr(i, end - i));
        i = end;
    }
    return out;
}

// A whole word as a decimal number (a leading '-' for signed types).
template <class T> std::optional<T> number(std::string_view w) {
    T v{};
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size() || w.empty()) return std::nullopt;
    return v;
}

} // namespace ocirun
