#include "support/elf.hpp"

#include <elf.h>

#include <cstring>

namespace test {

namespace {

// The ELF header, if `elf` is a 64-bit ELF file.
std::optional<Elf64_Ehdr> header(const std::string &elf) {
    Elf64_Ehdr eh;
    if (elf.size() < sizeof eh || std::memcmp(elf.data(), ELFMAG, SELFMAG) != 0 ||
        elf[EI_CLASS] != ELFCLASS64)
        return std::nullopt;
    std::memcpy(&eh, elf.data(), sizeof eh);
    return eh;
}

} // namespace

bool elf_has_interpreter(const std::string &elf) {
    auto eh = header(elf);
    if (!eh) return false;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        size_t off = eh->e_phoff + i * static_cast<size_t>(eh->e_phentsize);
        if (off + sizeof ph > elf.size()) return false;
        std::memcpy(&ph, elf.data() + off, sizeof ph);
        if (ph.p_type == PT_INTERP) return true;
    }
    return false;
}

std::optional<std::vector<std::string>> elf_defined_symbols(const std::string &elf,
                                                            std::string_view prefix) {
    auto eh = header(elf);
    if (!eh) return std::nullopt;
    auto section = [&](size_t i) {
        Elf64_Shdr sh{};
        size_t off = eh->e_shoff + i * static_cast<size_t>(eh->e_shentsize);
        if (off + sizeof sh <= elf.size()) std::memcpy(&sh, elf.data() + off, sizeof sh);
        return sh;
    };
    for (size_t i = 0; i < eh->e_shnum; i++) {
        Elf64_Shdr sh = section(i);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh->e_shnum) continue;
        Elf64_Shdr str = section(sh.sh_link);
        std::vector<std::string> out;
        for (size_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size &&
                                        off + sizeof(Elf64_Sym) <= elf.size();
             off += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            std::memcpy(&sym, elf.data() + off, sizeof sym);
            size_t at = str.sh_offset + sym.st_name;
            if (at >= elf.size() || sym.st_shndx == SHN_UNDEF) continue;
            std::string_view name(elf.data() + at, ::strnlen(elf.data() + at, elf.size() - at));
            if (name.starts_with(prefix)) out.emplace_back(name);
        }
        return out;
    }
    return std::nullopt;
}

} // namespace test
