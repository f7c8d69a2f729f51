#include "seccomp.hpp"

#include "fd.hpp"
#include "log.hpp"
#include "oci/json.hpp"
#include "sync.hpp"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

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

Result<SeccompFilter> compile_seccomp(const oci::Seccomp &s, const std::vector<std::string> &caps) {
    SeccompFilter out;
    const std::string base = "linux.seccomp";
    uint32_t def = OCI_TRY(action(s.default_action, s.default_errno_ret, base + ".defaultAction"));
    Ctx c{seccomp_init(def)};
    if (!c.ctx) return fail(base + ": seccomp_init failed");
    // We load the program ourselves and set no_new_privs ourselves.
    seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
    for (size_t i = 0; i < s.architectures.size(); i++) {
        std::string f = base + ".architectures[" + std::to_string(i) + "]";
        uint32_t arch = seccomp_arch_resolve_name(lower_arch(s.architectures[i]).c_str());
        if (arch == 0) return fail(f + ": \"" + s.architectures[i] + "\" is unknown to libseccomp");
        int r = seccomp_arch_add(c.ctx, arch);
        if (r < 0 && r != -EEXIST) return fail_code(-r, f + ": add " + s.architectures[i]);
    }
    for (size_t i = 0; i < s.flags.size(); i++) {
        unsigned int bit = seccomp_flag_bit(s.flags[i]);
        if (!bit)
            return fail(base + ".flags[" + std::to_string(i) + "]: unknown flag \"" + s.flags[i] +
                        "\"");
        out.flags |= bit;
    }
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
            auto add = [&](const std::vector<scmp_arg_cmp> &a) -> Status {
                int r = seccomp_rule_add_array(c.ctx, act, nr, static_cast<unsigned>(a.size()),
                                               a.empty() ? nullptr : a.data());
                if (r < 0) return fail_code(-r, f + ": add a rule for " + name);
                return {};
            };
            if (!repeated_index) {
                OCI_CHECK(add(args));
            } else {
                // libseccomp cannot AND two comparisons of one argument: one
                // rule each (they then match as OR), as runc does.
                for (const auto &a : args)
                    OCI_CHECK(add({a}));
            }
        }
    }
    // A filter that looks at clone's flags cannot see clone3's (they are in
    // memory): clone3 answers ENOSYS so the libc falls back to clone.
    if (clone_args && !has_clone3 && def != SCMP_ACT_ALLOW) {
        int nr = seccomp_syscall_resolve_name("clone3");
        if (nr != __NR_SCMP_ERROR) seccomp_rule_add(c.ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
    }
    // Export the BPF program (into a memfd, read back).
    Fd mem(::memfd_create("seccomp", MFD_CLOEXEC));
    if (!mem.valid()) return fail_errno(base + ": memfd_create");
    int r = seccomp_export_bpf(c.ctx, mem.get());
    if (r < 0) return fail_code(-r, base + ": export the BPF program");
    off_t size = ::lseek(mem.get(), 0, SEEK_END);
    if (size <= 0 || size % static_cast<off_t>(sizeof(struct sock_filter)) != 0)
        return fail(base + ": libseccomp exported no program");
    out.program.resize(static_cast<size_t>(size) / sizeof(struct sock_filter));
    if (::pread(mem.get(), out.program.data(), static_cast<size_t>(size), 0) != size)
        return fail_errno(base + ": read the BPF program");
    return out;
}

Result<int> load_seccomp(const SeccompFilter &f) {
    struct sock_fprog prog;
    prog.len = static_cast<unsigned short>(f.program.size());
    prog.filter = const_cast<struct sock_filter *>(f.program.data());
    unsigned int flags = f.flags | (f.notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0);
    long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (r < 0) return fail_errno("linux.seccomp: load the filter");
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
