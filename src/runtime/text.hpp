// Small text helpers shared by the parsers of the runtime library.
#pragma once

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

} // namespace ocirun
