// The seccomp compiler without a container: the BPF it emits is run through
// a small classic-BPF interpreter on seccomp_data built here, so the answers
// for each architecture, argument and the clone3 stub are checked exactly.
#include "oci/spec_io.hpp"
#include "runtime/security/seccomp.hpp"
#include "unit_support.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include <cerrno>
#include <cstring>

using namespace ocirun;

namespace {

uint32_t run_program(const std::vector<struct sock_filter> &program, const struct seccomp_data &d) {
    const unsigned char *mem = reinterpret_cast<const unsigned char *>(&d);
    uint32_t A = 0, X = 0, M[16] = {};
    for (size_t pc = 0; pc < program.size(); pc++) {
        const struct sock_filter &i = program[pc];
        switch (BPF_CLASS(i.code)) {
        case BPF_LD:
            if (BPF_MODE(i.code) == BPF_ABS) {
                cr_assert(i.k + 4 <= sizeof d, "load out of seccomp_data at %u", i.k);
                std::memcpy(&A, mem + i.k, 4);
            } else if (BPF_MODE(i.code) == BPF_IMM) {
                A = i.k;
            } else if (BPF_MODE(i.code) == BPF_MEM) {
                A = M[i.k & 15];
            } else {
                cr_assert_fail("unhandled LD 0x%x", i.code);
            }
            break;
        case BPF_LDX:
            X = BPF_MODE(i.code) == BPF_MEM ? M[i.k & 15] : i.k;
            break;
        case BPF_ST:
            M[i.k & 15] = A;
            break;
        case BPF_STX:
            M[i.k & 15] = X;
            break;
        case BPF_ALU: {
            uint32_t v = BPF_SRC(i.code) == BPF_X ? X : i.k;
            switch (BPF_OP(i.code)) {
            case BPF_ADD:
                A += v;
                break;
            case BPF_SUB:
                A -= v;
                break;
            case BPF_AND:
                A &= v;
                break;
            case BPF_OR:
                A |= v;
                break;
            case BPF_LSH:
                A <<= v;
                break;
            case BPF_RSH:
                A >>= v;
                break;
            case BPF_NEG:
                A = -A;
                break;
            default:
                cr_assert_fail("unhandled ALU 0x%x", i.code);
            }
            break;
        }
        case BPF_JMP: {
            uint32_t v = BPF_SRC(i.code) == BPF_X ? X : i.k;
            bool t = false;
            switch (BPF_OP(i.code)) {
            case BPF_JA:
                pc += i.k;
                continue;
            case BPF_JEQ:
                t = A == v;
                break;
            case BPF_JGT:
                t = A > v;
                break;
            case BPF_JGE:
                t = A >= v;
                break;
            case BPF_JSET:
                t = (A & v) != 0;
                break;
            default:
                cr_assert_fail("unhandled JMP 0x%x", i.code);
            }
            pc += t ? i.jt : i.jf;
            break;
        }
        case BPF_RET:
            return BPF_RVAL(i.code) == BPF_A ? A : i.k;
        case BPF_MISC:
            if (BPF_MISCOP(i.code) == BPF_TAX)
                X = A;
            else
                A = X;
            break;
        default:
            cr_assert_fail("unhandled class 0x%x", i.code);
        }
    }
    cr_assert_fail("the filter ran off its end");
    return 0;
}

// Every program of the filter, as the kernel runs a stack of them: the
// last loaded first, and the strictest answer (the lowest action, as a
// signed number) wins; of equal ones, the first run.
uint32_t run_filter(const SeccompFilter &f, uint32_t arch, int nr, uint64_t a0 = 0, uint64_t a1 = 0,
                    uint64_t a2 = 0) {
    struct seccomp_data d {};
    d.nr = nr;
    d.arch = arch;
    d.args[0] = a0;
    d.args[1] = a1;
    d.args[2] = a2;
    cr_assert(!f.programs.empty(), "a filter with no program");
    uint32_t ret = SECCOMP_RET_ALLOW;
    for (auto it = f.programs.rbegin(); it != f.programs.rend(); ++it) {
        uint32_t cur = run_program(*it, d);
        auto action = [](uint32_t r) { return static_cast<int32_t>(r & SECCOMP_RET_ACTION_FULL); };
        if (it == f.programs.rbegin() || action(cur) < action(ret)) ret = cur;
    }
    return ret;
}

oci::Syscall rule(std::vector<std::string> names, const char *action,
                  std::optional<uint32_t> errno_ret = {}) {
    oci::Syscall s;
    s.names = std::move(names);
    s.action = action;
    s.errno_ret = errno_ret;
    return s;
}

oci::SeccompArg arg(uint32_t index, const char *op, uint64_t value, uint64_t value_two = 0) {
    oci::SeccompArg a;
    a.index = index;
    a.op = op;
    a.value = value;
    a.value_two = value_two;
    return a;
}

SeccompFilter compile(const oci::Seccomp &s, const std::vector<std::string> &caps = {},
                      bool per_arch = true) {
    auto f = compile_seccomp(s, caps, per_arch);
    cr_assert(f.has_value(), "%s", f ? "" : f.error().text().c_str());
    return *f;
}

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr int kX32 = 0x40000000;

} // namespace

Test(seccomp_compile, x86_64_only_filter_refuses_the_other_entry_points) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.architectures = {"SCMP_ARCH_X86_64"};
    s.syscalls.push_back(rule({"mkdir"}, "SCMP_ACT_ERRNO"));
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 83), kEperm);         // mkdir
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 39), kAllow);         // getpid
    cr_assert_neq(run_filter(f, AUDIT_ARCH_I386, 39), kAllow);          // i386 mkdir
    cr_assert_neq(run_filter(f, AUDIT_ARCH_X86_64, kX32 | 83), kAllow); // x32 mkdir
}

// runc's -ENOSYS stub: under a profile whose default refuses, a system
// call numbered above every one the profile names (per architecture) is
// newer than the profile and answers ENOSYS, so a C library falls back to
// an older call; the others get the profile's answer. An allowing default
// gets no stub.
Test(seccomp_compile, calls_newer_than_the_profile_answer_enosys) {
    constexpr uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    s.syscalls.push_back(rule({"read", "write", "rseq"}, "SCMP_ACT_ALLOW"));
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 0), kAllow);    // read
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 334), kAllow);  // rseq, the largest
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 39), kEperm);   // getpid: older, not named
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 335), kEnosys); // newer than rseq
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 435), kEnosys); // clone3
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 99999), kEnosys);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_I386, 386), kAllow); // i386 rseq
    cr_assert_eq(run_filter(f, AUDIT_ARCH_I386, 20), kEperm);  // i386 getpid
    cr_assert_eq(run_filter(f, AUDIT_ARCH_I386, 387), kEnosys);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, kX32 | 334), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, kX32 | 39), kEperm);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, kX32 | 600), kEnosys);
    // An architecture the profile does not list is the profile's to refuse.
    cr_assert_neq(run_filter(f, AUDIT_ARCH_AARCH64, 9999), kEnosys);
    cr_assert_neq(run_filter(f, AUDIT_ARCH_AARCH64, 9999), kAllow);
    // x86-64 alone: x32 numbers are not "newer", they are refused.
    s.architectures = {"SCMP_ARCH_X86_64"};
    SeccompFilter x64 = compile(s);
    cr_assert_eq(run_filter(x64, AUDIT_ARCH_X86_64, 335), kEnosys);
    cr_assert_neq(run_filter(x64, AUDIT_ARCH_X86_64, kX32 | 600), kEnosys);
    cr_assert_neq(run_filter(x64, AUDIT_ARCH_X86_64, kX32 | 600), kAllow);
    // A killing default refuses too (as runc, newer calls answer ENOSYS).
    s.default_action = "SCMP_ACT_KILL_PROCESS";
    cr_assert_eq(run_filter(compile(s), AUDIT_ARCH_X86_64, 335), kEnosys);
    cr_assert_eq(run_filter(compile(s), AUDIT_ARCH_X86_64, 39), SECCOMP_RET_KILL_PROCESS);
    // An allowing or logging default has no stub.
    s.default_action = "SCMP_ACT_ALLOW";
    s.syscalls = {rule({"mkdir"}, "SCMP_ACT_ERRNO")};
    cr_assert_eq(run_filter(compile(s), AUDIT_ARCH_X86_64, 500), kAllow);
    s.default_action = "SCMP_ACT_LOG";
    cr_assert_eq(run_filter(compile(s), AUDIT_ARCH_X86_64, 500), SECCOMP_RET_LOG);
}

Test(seccomp_compile, listed_architectures_get_their_own_numbers) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    s.syscalls.push_back(rule({"mkdir"}, "SCMP_ACT_ERRNO"));
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_I386, 39), kEperm);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_I386, 20), kAllow); // i386 getpid
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, kX32 | 83), kEperm);
}

Test(seccomp_compile, actions_and_errno_ret) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.default_errno_ret = EROFS;
    s.architectures = {"SCMP_ARCH_X86_64"};
    s.syscalls.push_back(rule({"getpid"}, "SCMP_ACT_ALLOW"));
    s.syscalls.push_back(rule({"mkdir"}, "SCMP_ACT_KILL_PROCESS"));
    s.syscalls.push_back(rule({"rmdir"}, "SCMP_ACT_TRAP"));
    s.syscalls.push_back(rule({"chdir"}, "SCMP_ACT_LOG"));
    s.syscalls.push_back(rule({"fchdir"}, "SCMP_ACT_TRACE", 7));
    s.syscalls.push_back(rule({"rename"}, "SCMP_ACT_KILL"));
    s.syscalls.push_back(rule({"link"}, "SCMP_ACT_NOTIFY"));
    SeccompFilter f = compile(s);
    cr_assert(f.notify);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 39), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 83), SECCOMP_RET_KILL_PROCESS);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 84), SECCOMP_RET_TRAP);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 80), SECCOMP_RET_LOG);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 81), SECCOMP_RET_TRACE | 7);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 82), SECCOMP_RET_KILL_THREAD);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 86), SECCOMP_RET_USER_NOTIF);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 0), SECCOMP_RET_ERRNO | EROFS);
}

Test(seccomp_compile, argument_comparisons) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.architectures = {"SCMP_ARCH_X86_64"};
    oci::Syscall r = rule({"personality"}, "SCMP_ACT_ERRNO");
    r.args.push_back(arg(0, "SCMP_CMP_NE", 0));
    s.syscalls.push_back(r);
    oci::Syscall m = rule({"openat"}, "SCMP_ACT_ERRNO");
    oci::SeccompArg mask;
    mask.index = 2;
    mask.op = "SCMP_CMP_MASKED_EQ";
    mask.value = 0100; // O_CREAT
    mask.value_two = 0100;
    m.args.push_back(mask);
    s.syscalls.push_back(m);
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 135, 0), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 135, 8), kEperm);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 257, 0, 0, 0), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 257, 0, 0, 0101), kEperm);
}

// Two comparisons of one argument cannot be ANDed by libseccomp: they become
// separate rules (OR), as runc makes them.
Test(seccomp_compile, repeated_argument_index_becomes_separate_rules) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.architectures = {"SCMP_ARCH_X86_64"};
    oci::Syscall r = rule({"personality"}, "SCMP_ACT_ERRNO");
    for (uint64_t v : {8ull, 16ull})
        r.args.push_back(arg(0, "SCMP_CMP_EQ", v));
    s.syscalls.push_back(r);
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 135, 8), kEperm);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 135, 16), kEperm);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 135, 4), kAllow);
}

Test(seccomp_compile, clone3_answers_enosys_when_clone_flags_are_filtered) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.architectures = {"SCMP_ARCH_X86_64"};
    oci::Syscall r = rule({"clone"}, "SCMP_ACT_ALLOW");
    r.args.push_back(arg(0, "SCMP_CMP_MASKED_EQ", 0x7E020000, 0)); // namespace flags
    s.syscalls.push_back(r);
    SeccompFilter f = compile(s);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 435), SECCOMP_RET_ERRNO | ENOSYS);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 56, 0x11), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 56, 0x10000000), kEperm); // CLONE_NEWNS...
}

Test(seccomp_compile, unknown_syscalls_are_skipped_and_bad_names_refused) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.syscalls.push_back(rule({"no_such_call", "mkdir"}, "SCMP_ACT_ERRNO"));
    SeccompFilter f = compile(s);
    cr_assert_eq(f.skipped.size(), 1u);
    unit::expect_eq(f.skipped[0], "no_such_call");
    oci::Seccomp bad = s;
    bad.syscalls[0].action = "SCMP_ACT_EXPLODE";
    auto e = compile_seccomp(bad, {});
    cr_assert(!e.has_value());
    unit::expect_eq(e.error().text(),
                    "linux.seccomp.syscalls[0].action: unknown action \"SCMP_ACT_EXPLODE\"");
    oci::Seccomp arch = s;
    arch.architectures = {"SCMP_ARCH_VAX"};
    auto ea = compile_seccomp(arch, {});
    cr_assert(!ea.has_value());
    cr_assert(ea.error().text().find("linux.seccomp.architectures[0]") != std::string::npos);
    oci::Seccomp op = s;
    oci::SeccompArg a;
    a.op = "SCMP_CMP_SOMETIMES";
    op.syscalls[0].args.push_back(a);
    auto eo = compile_seccomp(op, {});
    cr_assert(!eo.has_value());
    unit::expect_eq(eo.error().text(), "linux.seccomp.syscalls[0].args[0].op: unknown operator "
                                       "\"SCMP_CMP_SOMETIMES\"");
}

Test(seccomp_compile, flags) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ALLOW";
    s.flags = {"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"};
    SeccompFilter f = compile(s);
    cr_assert_eq(f.flags, SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW);
}

Test(seccomp_compile, capability_conditional_rules) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.architectures = {"SCMP_ARCH_X86_64"};
    oci::Syscall r = rule({"mount"}, "SCMP_ACT_ALLOW");
    r.includes_caps = {"CAP_SYS_ADMIN"};
    s.syscalls.push_back(r);
    auto without = compile_seccomp(s, {"CAP_KILL"});
    auto with = compile_seccomp(s, {"CAP_KILL", "CAP_SYS_ADMIN"});
    cr_assert(without.has_value() && with.has_value());
    cr_assert_eq(run_filter(*without, AUDIT_ARCH_X86_64, 165), kEperm);
    cr_assert_eq(run_filter(*with, AUDIT_ARCH_X86_64, 165), kAllow);
}

// ---- the shipped default profile, through the interpreter --------------------

namespace {

// A profile of seccomp-profiles/ (or $OCI_RUN_PROFILES), as a container's
// linux.seccomp.
oci::Seccomp shipped_profile(const char *name) {
    const char *dir = std::getenv("OCI_RUN_PROFILES");
    std::string path = std::string(dir && *dir ? dir : "seccomp-profiles") + "/" + name;
    auto spec = oci::parse_spec(
        "{\"ociVersion\": \"1.2.1\", \"linux\": {\"seccomp\": " + unit::must_read(path) + "}}");
    cr_assert(spec.has_value(), "%s: %s", path.c_str(), spec ? "" : spec.error().text().c_str());
    return *spec->linux_->seccomp;
}

SeccompFilter shipped(const char *name, const std::vector<std::string> &caps) {
    return compile(shipped_profile(name), caps);
}

} // namespace

Test(seccomp_profiles, default_denies_tiocsti_and_tioclinux_with_a_masked_compare) {
    SeccompFilter f = shipped("default.json", {});
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 16, 0, 0x5412), kEperm); // TIOCSTI
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 16, 0, 0x541C), kEperm); // TIOCLINUX
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 16, 0, 0x5401), kAllow); // TCGETS
    // Upper bits set (an ioctl number seen through a 64-bit register) still match.
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 16, 0, 0xffffffff00005412ull), kEperm);
}

Test(seccomp_profiles, default_is_an_allow_list_with_capability_extras) {
    SeccompFilter plain = shipped("default.json", {"CAP_KILL"});
    SeccompFilter admin = shipped("default.json", {"CAP_KILL", "CAP_SYS_ADMIN"});
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 0), kAllow);   // read
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 165), kEperm); // mount
    cr_assert_eq(run_filter(admin, AUDIT_ARCH_X86_64, 165), kAllow);
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 246), kEperm); // kexec_load
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 435), SECCOMP_RET_ERRNO | ENOSYS); // clone3
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 56, 0x11), kAllow);       // fork-like clone
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 56, 0x04000011), kEperm); // + CLONE_NEWUTS
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_X86_64, 135, 0x0040000), kEperm); // personality
    cr_assert_eq(run_filter(plain, AUDIT_ARCH_I386, 39), kAllow);               // i386 mkdir
}

// ---- one program per architecture decides as one program for all -------------

namespace {

// Every answer of the two forms, over the numbers of each architecture
// this kernel can present (and two it cannot, and x32's), with argument
// values the shipped profiles compare against.
void same_answers(const SeccompFilter &split, const SeccompFilter &one) {
    const uint32_t arches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
                               AUDIT_ARCH_ARM, 0x12345678};
    const uint64_t args[][3] = {{0, 0, 0},
                                {0x11, 0, 0},
                                {0x04000011, 0, 0},
                                {0x10000000, 0, 0},
                                {0x0040000, 0, 0},
                                {1, 1, 0},
                                {2, 1, 0},
                                {10, 1, 0},
                                {16, 3, 0},
                                {0, 0x5412, 0},
                                {0xffffffff, 0x541C, 0}};
    std::vector<int> nrs;
    for (int nr = 0; nr < 470; nr++)
        nrs.push_back(nr);
    for (int nr = 0; nr < 560; nr++)
        nrs.push_back(kX32 | nr);
    nrs.push_back(-1);
    for (uint32_t arch : arches)
        for (int nr : nrs)
            for (const auto &a : args) {
                uint32_t s = run_filter(split, arch, nr, a[0], a[1], a[2]);
                uint32_t o = run_filter(one, arch, nr, a[0], a[1], a[2]);
                if (s != o)
                    cr_assert_fail("arch 0x%x nr %d args 0x%llx 0x%llx: per architecture 0x%x, "
                                   "one program 0x%x",
                                   arch, nr, static_cast<unsigned long long>(a[0]),
                                   static_cast<unsigned long long>(a[1]), s, o);
            }
}

} // namespace

Test(seccomp_split, shipped_profiles_answer_as_one_program) {
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) cr_skip("the grid is x86-64's");
    for (const char *name : {"default.json", "sandbox-guard.json"})
        for (const std::vector<std::string> &caps :
             {std::vector<std::string>{}, std::vector<std::string>{"CAP_SYS_ADMIN", "CAP_KILL"}}) {
            oci::Seccomp s = shipped_profile(name);
            SeccompFilter split = compile(s, caps, true);
            SeccompFilter one = compile(s, caps, false);
            // x86-64, x86 and x32 are named: a gate and three programs.
            cr_assert_eq(split.programs.size(), 4u, "%s: %zu programs", name,
                         split.programs.size());
            cr_assert_eq(one.programs.size(), 1u);
            same_answers(split, one);
        }
}

Test(seccomp_split, arguments_errno_and_an_allowing_default_answer_as_one_program) {
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) cr_skip("the grid is x86-64's");
    for (const char *def : {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL_PROCESS"}) {
        oci::Seccomp s;
        s.default_action = def;
        s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86"}; // x32 left to the gate
        auto clone = rule({"clone"}, "SCMP_ACT_ERRNO", 13);
        clone.args.push_back(arg(0, "SCMP_CMP_MASKED_EQ", 0x10000000, 0x10000000));
        s.syscalls.push_back(clone);
        auto sock = rule({"socket"}, "SCMP_ACT_ALLOW");
        sock.args.push_back(arg(0, "SCMP_CMP_EQ", 1));
        s.syscalls.push_back(sock);
        auto twice = rule({"personality"}, "SCMP_ACT_TRAP");
        twice.args.push_back(arg(0, "SCMP_CMP_EQ", 0));
        twice.args.push_back(arg(0, "SCMP_CMP_EQ", 0x0040000));
        s.syscalls.push_back(twice);
        s.syscalls.push_back(rule({"read", "write", "exit_group", "getpid"}, "SCMP_ACT_ALLOW"));
        s.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_LOG"));
        SeccompFilter split = compile(s, {}, true);
        SeccompFilter one = compile(s, {}, false);
        cr_assert_eq(split.programs.size(), 3u, "%s: %zu programs", def, split.programs.size());
        same_answers(split, one);
        // The runtime loads them one by one with seccomp(2) (317), which the
        // profile does not name: only the last loaded may refuse it.
        struct seccomp_data d {};
        d.arch = AUDIT_ARCH_X86_64;
        d.nr = 317;
        for (size_t k = 0; k + 1 < split.programs.size(); k++)
            cr_assert_eq(run_program(split.programs[k], d), kAllow,
                         "%s: program %zu refuses "
                         "seccomp(2) before the last is loaded",
                         def, k);
    }
}

Test(seccomp_split, architectures_this_kernel_cannot_run_are_left_out) {
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) cr_skip("an x86-64 kernel's");
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"};
    s.syscalls.push_back(rule({"read", "getpid"}, "SCMP_ACT_ALLOW"));
    SeccompFilter f = compile(s);
    // x86-64 alone is left: one program, as for a profile that names only it.
    cr_assert_eq(f.programs.size(), 1u);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_X86_64, 39), kAllow);
    cr_assert_eq(run_filter(f, AUDIT_ARCH_AARCH64, 172), SECCOMP_RET_KILL_THREAD);
}

// ---- the programs exec keeps in the state directory --------------------------

Test(seccomp_kept, written_and_read_back_under_the_same_key_only) {
    oci::Seccomp s;
    s.default_action = "SCMP_ACT_ERRNO";
    s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86"};
    s.flags = {"SECCOMP_FILTER_FLAG_LOG"};
    s.syscalls.push_back(rule({"read", "write", "getpid"}, "SCMP_ACT_ALLOW"));
    SeccompFilter f = compile(s);
    const std::string key = seccomp_cache_key({"CAP_KILL"});
    std::string doc = write_compiled(f, key);
    auto back = read_compiled(doc, key);
    cr_assert(back.has_value());
    cr_assert_eq(back->flags, f.flags);
    cr_assert_eq(back->notify, f.notify);
    cr_assert_eq(back->programs.size(), f.programs.size());
    for (size_t i = 0; i < f.programs.size(); i++)
        cr_assert(back->programs[i].size() == f.programs[i].size() &&
                      std::memcmp(back->programs[i].data(), f.programs[i].data(),
                                  f.programs[i].size() * sizeof(sock_filter)) == 0,
                  "program %zu differs", i);
    // Another bounding set's key, a cut or a longer document, a program of a
    // bad length: not taken.
    cr_assert_neq(key, seccomp_cache_key({"CAP_KILL", "CAP_NET_RAW"}));
    cr_assert(!read_compiled(doc, seccomp_cache_key({"CAP_KILL", "CAP_NET_RAW"})));
    cr_assert(!read_compiled(doc.substr(0, doc.size() - 1), key));
    cr_assert(!read_compiled(doc + "x", key));
    cr_assert(!read_compiled(key + "\n", key));
    std::string zero = doc;
    size_t len_at = key.size() + 1 + 3 * sizeof(uint32_t);
    std::memset(zero.data() + len_at, 0, sizeof(uint32_t));
    cr_assert(!read_compiled(zero, key));
}
