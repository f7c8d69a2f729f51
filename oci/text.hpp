// Small text helpers shared by the parsers of the runtime library.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

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

// Calls f(word) for each word of s (split on blanks: space, tab, newline),
// without making a list.
template <class F> void for_each_word(std::string_view s, F &&f) {
    size_t i = 0;
    while (true) {
        i = s.find_first_not_of(" \t\n", i);
        if (i == std::string_view::npos) break;
        size_t end = s.find_first_of(" \t\n", i);
        if (end == std::string_view::npos) end = s.size();
        f(s.substr(i, end - i));
        i = end;
    }
}

// Calls f(field) for each field of s between `sep`s ("a,,b": "a", "", "b"),
// without making a list.
template <class F> void for_each_field(std::string_view s, char sep, F &&f) {
    while (true) {
        size_t end = s.find(sep);
        f(s.substr(0, end));
        if (end == std::string_view::npos) break;
        s.remove_prefix(end + 1);
    }
}

// The pieces joined in one allocation of the exact size: `dir + "/" + file`
// makes two (the second, growing the first, about twice the size).
template <class... S> std::string concat(const S &...pieces) {
    std::string out;
    out.reserve((std::string_view(pieces).size() + ...));
    (out.append(std::string_view(pieces)), ...);
    return out;
}

// "a,b,,c" -> {"a", "b", "", "c"}: every field, empty ones too.
inline std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    for_each_field(s, sep, [&](std::string_view f) { out.emplace_back(f); });
    return out;
}

// The words of s, split on blanks (space, tab, newline).
inline std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    for_each_word(s, [&](std::string_view w) { out.push_back(w); });
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
