// Reading a 64-bit ELF executable the tests hold in memory (the binary under
// test, read whole with test::read_file).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace test {

// A dynamically linked executable has a PT_INTERP program header.
bool elf_has_interpreter(const std::string &elf);

// The names defined in its symbol table (.symtab) that start with `prefix`;
// nullopt when it has none (stripped) or is not a 64-bit ELF.
std::optional<std::vector<std::string>> elf_defined_symbols(const std::string &elf,
                                                            std::string_view prefix);

} // namespace test
