#include "runtime/security/seccomp.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/log.hpp"
#include "version.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

namespace ocirun {

namespace {

struct Ctx {
    scmp_filter_ctx ctx;
    ~Ctx() {
        if (ctx) seccomp_release(ctx);
    }
};

Result<uint32_t> action(const std::string &name, std::optional<uint32_t> errno_ret,
                        const std::string &field) {
    uint32_t err = errno_ret.value_or(EPERM);
    if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") return SCMP_ACT_KILL_THREAD;
    if (name == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
    if (name == "SCMP_ACT_TRAP") return SCMP_ACT_TRAP;
    if (name == "SCMP_ACT_ERRNO") return SCMP_ACT_ERRNO(err);
    if (name == "SCMP_ACT_TRACE") return SCMP_ACT_TRACE(err);
    if (name == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
    if (name == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
    if (name == "SCMP_ACT_NOTIFY") return SCMP_ACT_NOTIFY;
    return fail(field + ": unknown action \"" + name + "\"");
}

Result<scmp_compare> compare(const std::string &op, const std::string &field) {
    static const std::map<std::string, scmp_compare> ops = {
        {"SCMP_CMP_NE", SCMP_CMP_NE},
        {"SCMP_CMP_LT", SCMP_CMP_LT},
        {"SCMP_CMP_LE", SCMP_CMP_LE},
        {"SCMP_CMP_EQ", SCMP_CMP_EQ},
        {"SCMP_CMP_GE", SCMP_CMP_GE},
        {"SCMP_CMP_GT", SCMP_CMP_GT},
        {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};
    auto it = ops.find(op);
    if (it == ops.end()) return fail(field + ": unknown operator \"" + op + "\"");
    return it->second;
}

std::string lower_arch(const std::string &arch) {
    std::string s = arch.rfind("SCMP_ARCH_", 0) == 0 ? arch.substr(10) : arch;
    for (char &c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

} // namespace

unsigned int seccomp_flag_bit(const std::string &f) {
    if (f == "SECCOMP_FILTER_FLAG_TSYNC") return SECCOMP_FILTER_FLAG_TSYNC;
    if (f == "SECCOMP_FILTER_FLAG_LOG") return SECCOMP_FILTER_FLAG_LOG;
    if (f == "SECCOMP_FILTER_FLAG_SPEC_ALLOW") return SECCOMP_FILTER_FLAG_SPEC_ALLOW;
    if (f == "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") return 1u << 5;
    return 0;
}

bool seccomp_flag_supported(unsigned int bit) {
    // With a null program the kernel answers EFAULT once it accepts the flag
    // (WAIT_KILLABLE_RECV only together with NEW_LISTENER).
    if (bit == 1u << 5) bit |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, bit, nullptr) < 0 && errno == EFAULT;
}

namespace {

// The largest number of a system call the profile names, per architecture
// (the profile's architectures and the native one). Numbers libseccomp
// gives as negative are its pseudo calls (socketcall's multiplexed ones).
std::map<uint32_t, uint32_t> largest_known(const oci::Seccomp &s) {
    std::vector<uint32_t> arches = {seccomp_arch_native()};
    for (const auto &a : s.architectures)
        if (uint32_t arch = seccomp_arch_resolve_name(lower_arch(a).c_str()))
            arches.push_back(arch);
    std::map<uint32_t, uint32_t> out;
    for (uint32_t arch : arches)
        for (const auto &sc : s.syscalls)
            for (const auto &name : sc.names) {
                int nr = seccomp_syscall_resolve_name_arch(arch, name.c_str());
                if (nr < 0) continue;
                uint32_t &max = out[arch];
                max = std::max(max, static_cast<uint32_t>(nr));
            }
    return out;
}

} // namespace

std::vector<struct sock_filter> enosys_stub(const std::map<uint32_t, uint32_t> &largest) {
    // seccomp_data: nr at 0, arch at 4. Each architecture's section: if the
    // arch matches, a number above its largest known answers ENOSYS, any
    // other goes to the profile. x86-64 and x32 share an AUDIT_ARCH: x32's
    // numbers carry bit 30.
    constexpr uint32_t kX32Bit = 0x40000000;
    std::vector<struct sock_filter> body;
    // Jumps to ENOSYS and to the profile are patched once the length is known.
    enum Target : uint8_t { next = 0, enosys = 1, profile = 2 };
    struct Patch {
        size_t at;
        Target jt, jf;
    };
    std::vector<Patch> patches;
    auto jump = [&](uint16_t code, uint32_t k, Target jt, Target jf) {
        patches.push_back({body.size(), jt, jf});
        body.push_back(BPF_JUMP(code, k, 0, 0));
    };
    body.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4));
    for (const auto &[arch, max] : largest) {
        // x32's numbers come as x86-64's AUDIT_ARCH: within x86-64's section,
        // or (x32 without x86-64: its own program) a section of that
        // AUDIT_ARCH where x86-64's numbers go to the profile.
        bool x32_alone = arch == SCMP_ARCH_X32 && !largest.contains(SCMP_ARCH_X86_64);
        if (arch == SCMP_ARCH_X32 && !x32_alone) continue;
        // if (arch != A) skip this section
        size_t skip_at = body.size();
        body.push_back(
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, x32_alone ? SCMP_ARCH_X86_64 : arch, 0, 0));
        body.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0));
        if (x32_alone) {
            body.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1));
            jump(BPF_JMP | BPF_JGT | BPF_K, max, enosys, profile);
            jump(BPF_JMP | BPF_JA, 0, profile, profile);
        } else if (arch == SCMP_ARCH_X86_64) {
            auto x32 = largest.find(SCMP_ARCH_X32);
            // x32 numbers: above x32's largest, or all of them when the
            // profile has no x32 (the profile then refuses them itself).
            body.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 1, 0));
            jump(BPF_JMP | BPF_JGT | BPF_K, max, enosys, profile);
            if (x32 != largest.end())
                jump(BPF_JMP | BPF_JGT | BPF_K, x32->second, enosys, profile);
            else
                jump(BPF_JMP | BPF_JA, 0, profile, profile);
        } else {
            jump(BPF_JMP | BPF_JGT | BPF_K, max, enosys, profile);
        }
        // The reload of the arch for the next section.
        body.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4));
        body[skip_at].jf = static_cast<uint8_t>(body.size() - skip_at - 1);
    }
    patches.push_back({body.size(), profile, profile});
    body.push_back(BPF_STMT(BPF_JMP | BPF_JA, 0));
    size_t enosys_at = body.size();
    body.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
    size_t profile_at = body.size();
    for (const auto &p : patches) {
        auto offset = [&](Target t) {
            size_t to = t == enosys ? enosys_at : profile_at;
            return static_cast<uint32_t>(to - p.at - 1);
        };
        sock_filter &ins = body[p.at];
        if (BPF_OP(ins.code) == BPF_JA) {
            ins.k = offset(p.jt);
        } else {
            ins.jt = static_cast<uint8_t>(offset(p.jt));
            ins.jf = static_cast<uint8_t>(offset(p.jf));
        }
    }
    return body;
}

namespace {

// runc's ENOSYS stub is for profiles that refuse what they do not name:
// an allowing, logging, traced or notified default decides itself.
bool refusing_default(uint32_t def, const oci::Seccomp &s) {
    if (def == SCMP_ACT_ALLOW || def == SCMP_ACT_LOG || def == SCMP_ACT_NOTIFY) return false;
    if ((def & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_TRACE) return false;
    return !(s.default_action == "SCMP_ACT_ERRNO" && s.default_errno_ret == ENOSYS);
}

// The architectures a kernel of the native one's can hand a filter (an
// x86-64 kernel: x86-64, its x32 numbers and i386; arm64: arm64 and arm),
// or empty when not known here (then every one named is kept).
std::vector<uint32_t> runnable_arches() {
    switch (seccomp_arch_native()) {
    case SCMP_ARCH_X86_64:
        return {SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32};
    case SCMP_ARCH_AARCH64:
        return {SCMP_ARCH_AARCH64, SCMP_ARCH_ARM};
    default:
        return {};
    }
}

// One rule for libseccomp, checked and resolved once for every program.
struct Rule {
    uint32_t act;
    int nr;
    std::vector<scmp_arg_cmp> args;
    std::string what; // "linux.seccomp.syscalls[i]: add a rule for NAME"
};

// A libseccomp context with `def`, for `arches` (the native one when
// empty), answering `bad_arch` for any other; with `rules`; exported.
Result<std::vector<struct sock_filter>>
build_program(uint32_t def, const std::vector<uint32_t> &arches, uint32_t bad_arch,
              const std::vector<Rule> &rules, const std::string &base) {
    Ctx c{seccomp_init(def)};
    if (!c.ctx) return fail(base + ": seccomp_init failed");
    // We load the program ourselves and set no_new_privs ourselves.
    seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
    seccomp_attr_set(c.ctx, SCMP_FLTATR_ACT_BADARCH, bad_arch);
    const uint32_t native = seccomp_arch_native();
    bool native_kept = arches.empty();
    for (uint32_t arch : arches) {
        if (arch == native) {
            native_kept = true;
            continue;
        }
        int r = seccomp_arch_add(c.ctx, arch);
        if (r < 0 && r != -EEXIST) return fail_code(-r, base + ": add an architecture");
    }
    if (!native_kept) {
        int r = seccomp_arch_remove(c.ctx, native);
        if (r < 0) return fail_code(-r, base + ": remove the native architecture");
    }
    for (const Rule &rule : rules) {
        int r = seccomp_rule_add_array(c.ctx, rule.act, rule.nr,
                                       static_cast<unsigned>(rule.args.size()),
                                       rule.args.empty() ? nullptr : rule.args.data());
        if (r < 0) return fail_code(-r, rule.what);
    }
    // Export the BPF program (into a memfd, read back).
    Fd mem(::memfd_create("seccomp", MFD_CLOEXEC));
    if (!mem.valid()) return fail_errno(base + ": memfd_create");
    int r = seccomp_export_bpf(c.ctx, mem.get());
    if (r < 0) return fail_code(-r, base + ": export the BPF program");
    off_t size = ::lseek(mem.get(), 0, SEEK_END);
    if (size <= 0 || size % static_cast<off_t>(sizeof(struct sock_filter)) != 0)
        return fail(base + ": libseccomp exported no program");
    std::vector<struct sock_filter> program(static_cast<size_t>(size) / sizeof(struct sock_filter));
    if (::pread(mem.get(), program.data(), static_cast<size_t>(size), 0) != size)
        return fail_errno(base + ": read the BPF program");
    return program;
}

} // namespace

Result<SeccompFilter> compile_seccomp(const oci::Seccomp &s, const std::vector<std::string> &caps,
                                      bool per_arch) {
    SeccompFilter out;
    const std::string base = "linux.seccomp";
    uint32_t def = OCI_TRY(action(s.default_action, s.default_errno_ret, base + ".defaultAction"));
    const std::vector<uint32_t> runnable = runnable_arches();
    std::vector<uint32_t> arches = {seccomp_arch_native()};
    for (size_t i = 0; i < s.architectures.size(); i++) {
        std::string f = base + ".architectures[" + std::to_string(i) + "]";
        uint32_t arch = seccomp_arch_resolve_name(lower_arch(s.architectures[i]).c_str());
        if (arch == 0) return fail(f + ": \"" + s.architectures[i] + "\" is unknown to libseccomp");
        if (!runnable.empty() &&
            std::find(runnable.begin(), runnable.end(), arch) == runnable.end())
            continue; // never seen by this kernel's filters
        if (std::find(arches.begin(), arches.end(), arch) == arches.end()) arches.push_back(arch);
    }
    for (size_t i = 0; i < s.flags.size(); i++) {
        unsigned int bit = seccomp_flag_bit(s.flags[i]);
        if (!bit)
            return fail(base + ".flags[" + std::to_string(i) + "]: unknown flag \"" + s.flags[i] +
                        "\"");
        out.flags |= bit;
    }
    std::vector<Rule> rules;
    bool clone_args = false, has_clone3 = false;
    for (size_t i = 0; i < s.syscalls.size(); i++) {
        const oci::Syscall &sc = s.syscalls[i];
        std::string f = base + ".syscalls[" + std::to_string(i) + "]";
        bool held = true;
        for (const auto &need : sc.includes_caps) {
            bool found = false;
            for (const auto &c : caps)
                if (c == need) found = true;
            if (!found) held = false;
        }
        if (!held) continue; // a capability-conditional rule for someone else
        uint32_t act = OCI_TRY(action(sc.action, sc.errno_ret, f + ".action"));
        if (act == SCMP_ACT_NOTIFY) out.notify = true;
        std::vector<scmp_arg_cmp> args;
        bool repeated_index = false;
        for (size_t a = 0; a < sc.args.size(); a++) {
            const auto &arg = sc.args[a];
            std::string af = f + ".args[" + std::to_string(a) + "]";
            if (arg.index > 5) return fail(af + ".index: " + std::to_string(arg.index) + " > 5");
            scmp_compare op = OCI_TRY(compare(arg.op, af + ".op"));
            for (const auto &prev : args)
                if (prev.arg == arg.index) repeated_index = true;
            args.push_back({arg.index, op, arg.value, arg.value_two});
        }
        for (const auto &name : sc.names) {
            if (name == "clone" && !args.empty()) clone_args = true;
            if (name == "clone3") has_clone3 = true;
            int nr = seccomp_syscall_resolve_name(name.c_str());
            if (nr == __NR_SCMP_ERROR) {
                // Unknown here (newer than this libseccomp, or another arch): skipped, as runc.
                out.skipped.push_back(name);
                log::debug(f + ": syscall \"" + name + "\" is unknown to libseccomp, skipped");
                continue;
            }
            if (act == def) continue; // the default already does it
            std::string what = f + ": add a rule for " + name;
            if (!repeated_index) {
                rules.push_back({act, nr, args, what});
            } else {
                // libseccomp cannot AND two comparisons of one argument: one
                // rule each (they then match as OR), as runc does.
                for (const auto &a : args)
                    rules.push_back({act, nr, {a}, what});
            }
        }
    }
    // A filter that looks at clone's flags cannot see clone3's (they are in
    // memory): clone3 answers ENOSYS so the libc falls back to clone.
    if (clone_args && !has_clone3 && def != SCMP_ACT_ALLOW) {
        int nr = seccomp_syscall_resolve_name("clone3");
        if (nr != __NR_SCMP_ERROR) rules.push_back({SCMP_ACT_ERRNO(ENOSYS), nr, {}, base});
    }
    // A system call newer than every one the profile names answers ENOSYS,
    // not the default's EPERM, so that a C library falls back to an older
    // call it knows (runc's -ENOSYS stub, in front of libseccomp's program;
    // in front of each architecture's, which all answer alike).
    std::map<uint32_t, uint32_t> largest;
    const bool stub = refusing_default(def, s);
    if (stub) {
        largest = largest_known(s);
        std::erase_if(largest, [&](const auto &e) {
            return std::find(arches.begin(), arches.end(), e.first) == arches.end();
        });
    }
    // In front of a program: the stub's sections for `only` (every
    // architecture when empty). x86-64's includes x32's numbers, which come
    // under its AUDIT_ARCH (-1 among them).
    auto add = [&](std::vector<struct sock_filter> program,
                   std::optional<uint32_t> only) -> Status {
        if (stub) {
            std::map<uint32_t, uint32_t> mine = largest;
            if (only)
                std::erase_if(mine, [&](const auto &e) {
                    return e.first != *only &&
                           !(*only == SCMP_ARCH_X86_64 && e.first == SCMP_ARCH_X32);
                });
            auto head = enosys_stub(mine);
            program.insert(program.begin(), head.begin(), head.end());
        }
        if (program.size() > BPF_MAXINSNS)
            return fail(base + ": the filter is " + std::to_string(program.size()) +
                        " BPF instructions, above the kernel's " + std::to_string(BPF_MAXINSNS));
        out.programs.push_back(std::move(program));
        return {};
    };
    if (!per_arch || out.notify || arches.size() < 2) {
        OCI_CHECK(add(OCI_TRY(build_program(def, arches, SCMP_ACT_KILL_THREAD, rules, base)), {}));
        return out;
    }
    // The gate: the architectures named pass, any other is killed (the one
    // program's bad-architecture answer). Then each architecture's rules,
    // with its own part of the stub, the native one's last: the runtime
    // loads the rest with seccomp(2), which only that one may refuse.
    out.programs.push_back(
        OCI_TRY(build_program(SCMP_ACT_ALLOW, arches, SCMP_ACT_KILL_THREAD, {}, base)));
    std::stable_partition(arches.begin(), arches.end(),
                          [](uint32_t a) { return a != seccomp_arch_native(); });
    for (uint32_t arch : arches)
        OCI_CHECK(add(OCI_TRY(build_program(def, {arch}, SCMP_ACT_ALLOW, rules, base)), arch));
    return out;
}

std::string seccomp_cache_key(const std::vector<std::string> &caps) {
    const scmp_version *v = seccomp_version();
    std::string key = std::string("oci-run ") + OCIRUN_COMMIT + " libseccomp " +
                      std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                      std::to_string(v->micro) + " caps";
    for (const auto &c : caps)
        key += " " + c;
    return key;
}

// The key's line, then (host order, this machine's own) flags, notify, the
// number of programs, and each program's length and instructions.
std::string write_compiled(const SeccompFilter &f, const std::string &key) {
    std::string out = key + "\n";
    auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char *>(&v), sizeof v); };
    u32(f.flags);
    u32(f.notify ? 1 : 0);
    u32(static_cast<uint32_t>(f.programs.size()));
    for (const auto &p : f.programs) {
        u32(static_cast<uint32_t>(p.size()));
        out.append(reinterpret_cast<const char *>(p.data()), p.size() * sizeof p[0]);
    }
    return out;
}

std::optional<SeccompFilter> read_compiled(std::string_view data, const std::string &key) {
    if (data.size() <= key.size() || data.substr(0, key.size()) != key || data[key.size()] != '\n')
        return std::nullopt;
    data.remove_prefix(key.size() + 1);
    auto u32 = [&](uint32_t &v) {
        if (data.size() < sizeof v) return false;
        std::memcpy(&v, data.data(), sizeof v);
        data.remove_prefix(sizeof v);
        return true;
    };
    SeccompFilter f;
    uint32_t notify = 0, count = 0;
    if (!u32(f.flags) || !u32(notify) || notify > 1 || !u32(count) || count == 0 || count > 16)
        return std::nullopt;
    f.notify = notify == 1;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t len = 0;
        if (!u32(len) || len == 0 || len > BPF_MAXINSNS || data.size() < len * sizeof(sock_filter))
            return std::nullopt;
        std::vector<struct sock_filter> p(len);
        std::memcpy(p.data(), data.data(), len * sizeof(sock_filter));
        data.remove_prefix(len * sizeof(sock_filter));
        f.programs.push_back(std::move(p));
    }
    if (!data.empty() || (f.notify && count != 1)) return std::nullopt;
    return f;
}

unsigned int SeccompFilter::load_flags() const {
    return flags | (notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0);
}

Result<int> load_seccomp(const SeccompFilter &f) {
    long r = -1;
    for (const auto &program : f.programs) {
        struct sock_fprog prog;
        prog.len = static_cast<unsigned short>(program.size());
        prog.filter = const_cast<struct sock_filter *>(program.data());
        r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, f.load_flags(), &prog);
        if (r < 0) return fail_errno("linux.seccomp: load the filter");
    }
    return f.notify ? static_cast<int>(r) : -1;
}

Status load_seccomp_and_pass(int sync_fd, const SeccompFilter &f) {
    int fd = OCI_TRY(load_seccomp(f));
    if (fd < 0) return {};
    auto r = sync::send_with_fd(sync_fd, sync::Msg::seccomp_notify, fd);
    ::close(fd);
    return r;
}

Status send_seccomp_listener(const oci::Seccomp &s, int notify_fd, pid_t pid,
                             const oci::State &state) {
    const std::string what = "linux.seccomp.listenerPath";
    if (s.listener_path.empty()) return fail(what + ": an SCMP_ACT_NOTIFY rule needs a listener");
    Fd sock(OCI_TRY(sync::connect_unix(s.listener_path, what.c_str())));
    json::Writer w(false);
    w.begin_object();
    w.kv("ociVersion", state.oci_version);
    w.key("fds").begin_array().str("seccompFd").end_array();
    w.kv_i64("pid", pid);
    w.kv("metadata", s.listener_metadata);
    w.key("state").begin_object();
    oci::write_state_members(w, state);
    w.end_object();
    w.end_object();
    std::string msg(w.view());
    return sync::send_with_rights(sock.get(), msg.data(), msg.size(), notify_fd,
                                  what + ": send to " + s.listener_path);
}

} // namespace ocirun
