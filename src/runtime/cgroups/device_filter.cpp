#include "runtime/cgroups/device_filter.hpp"

#include "oci/fd.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace ocirun {

namespace {

struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
    struct bpf_insn i {};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    return i;
}

constexpr uint8_t kLdxW = BPF_LDX | BPF_W | BPF_MEM;
constexpr uint8_t kAndK = BPF_ALU | BPF_AND | BPF_K;
constexpr uint8_t kRshK = BPF_ALU | BPF_RSH | BPF_K;
constexpr uint8_t kMovX = BPF_ALU | BPF_MOV | BPF_X;
constexpr uint8_t kMov64K = BPF_ALU64 | BPF_MOV | BPF_K;
constexpr uint8_t kJneK = BPF_JMP | BPF_JNE | BPF_K;
constexpr uint8_t kJeqK = BPF_JMP | BPF_JEQ | BPF_K;
constexpr uint8_t kExit = BPF_JMP | BPF_EXIT;

int32_t access_bits(const std::string &access) {
    std::string a = access.empty() ? "rwm" : access;
    int32_t bits = 0;
    for (char c : a) {
        if (c == 'r') bits |= BPF_DEVCG_ACC_READ;
        if (c == 'w') bits |= BPF_DEVCG_ACC_WRITE;
        if (c == 'm') bits |= BPF_DEVCG_ACC_MKNOD;
    }
    return bits;
}

} // namespace

std::vector<struct bpf_insn> device_program(const std::vector<oci::DeviceRule> &rules) {
    // r2 = type, r3 = access, r4 = major, r5 = minor (struct bpf_cgroup_dev_ctx).
    std::vector<struct bpf_insn> p = {
        insn(kLdxW, 2, 1, 0, 0),  insn(kAndK, 2, 0, 0, 0xffff), insn(kLdxW, 3, 1, 0, 0),
        insn(kRshK, 3, 0, 0, 16), insn(kLdxW, 4, 1, 4, 0),      insn(kLdxW, 5, 1, 8, 0),
    };
    // Last rule first: the first block that matches returns.
    for (auto it = rules.rbegin(); it != rules.rend(); ++it) {
        const oci::DeviceRule &r = *it;
        std::vector<struct bpf_insn> block;
        std::vector<size_t> jumps; // indexes of jumps to the next block
        if (r.type == "c" || r.type == "b") {
            jumps.push_back(block.size());
            block.push_back(
                insn(kJneK, 2, 0, 0, r.type == "c" ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
        }
        int32_t bits = access_bits(r.access);
        block.push_back(insn(kMovX, 6, 3, 0, 0));
        if (r.allow) {
            // Every access asked for is granted: (asked & ~bits) == 0.
            block.push_back(insn(kAndK, 6, 0, 0, ~bits & 7));
            jumps.push_back(block.size());
            block.push_back(insn(kJneK, 6, 0, 0, 0));
        } else {
            // Any access asked for is denied: (asked & bits) != 0.
            block.push_back(insn(kAndK, 6, 0, 0, bits));
            jumps.push_back(block.size());
            block.push_back(insn(kJeqK, 6, 0, 0, 0));
        }
        bool all = r.type.empty() || r.type == "a";
        if (!all && r.major && *r.major >= 0) {
            jumps.push_back(block.size());
            block.push_back(insn(kJneK, 4, 0, 0, static_cast<int32_t>(*r.major)));
        }
        if (!all && r.minor && *r.minor >= 0) {
            jumps.push_back(block.size());
            block.push_back(insn(kJneK, 5, 0, 0, static_cast<int32_t>(*r.minor)));
        }
        block.push_back(insn(kMov64K, 0, 0, 0, r.allow ? 1 : 0));
        block.push_back(insn(kExit, 0, 0, 0, 0));
        for (size_t j : jumps)
            block[j].off = static_cast<int16_t>(block.size() - j - 1);
        p.insert(p.end(), block.begin(), block.end());
    }
    p.push_back(insn(kMov64K, 0, 0, 0, 1));
    p.push_back(insn(kExit, 0, 0, 0, 0));
    return p;
}

Status attach_device_program(const std::vector<oci::DeviceRule> &rules,
                             const std::string &cgroup_dir, bool replace) {
    std::vector<struct bpf_insn> prog = device_program(rules);
    static char license[] = "Apache-2.0";
    auto load = [&](char *log, uint32_t size) {
        union bpf_attr a;
        std::memset(&a, 0, sizeof a);
        a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        a.insns = reinterpret_cast<uint64_t>(prog.data());
        a.insn_cnt = static_cast<uint32_t>(prog.size());
        a.license = reinterpret_cast<uint64_t>(license);
        if (log) {
            a.log_buf = reinterpret_cast<uint64_t>(log);
            a.log_size = size;
            a.log_level = 1;
        }
        return static_cast<int>(::syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a));
    };
    Fd fd(load(nullptr, 0));
    if (!fd.valid()) {
        int e = errno;
        // Again with the verifier's log, for the reason.
        std::vector<char> log(1 << 16, '\0');
        int again = load(log.data(), static_cast<uint32_t>(log.size()));
        if (again >= 0) ::close(again);
        std::string why(log.data());
        if (why.size() > 300) why = why.substr(why.size() - 300);
        while (!why.empty() && why.back() == '\n')
            why.pop_back();
        return fail_code(e, "linux.resources.devices: load the eBPF device program" +
                                (why.empty() ? std::string() : " (" + why + ")"));
    }
    Fd cg(::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg.valid()) return fail_errno("linux.resources.devices: open " + cgroup_dir);
    // What is attached now, to detach once the new program holds.
    std::vector<Fd> before;
    if (replace) {
        uint32_t ids[64] = {};
        union bpf_attr q;
        std::memset(&q, 0, sizeof q);
        q.query.target_fd = static_cast<uint32_t>(cg.get());
        q.query.attach_type = BPF_CGROUP_DEVICE;
        q.query.prog_ids = reinterpret_cast<uint64_t>(ids);
        q.query.prog_cnt = 64;
        if (::syscall(SYS_bpf, BPF_PROG_QUERY, &q, sizeof q) < 0)
            return fail_errno("linux.resources.devices: query the device programs of " +
                              cgroup_dir);
        for (uint32_t i = 0; i < q.query.prog_cnt && i < 64; i++) {
            union bpf_attr g;
            std::memset(&g, 0, sizeof g);
            g.prog_id = ids[i];
            Fd old(static_cast<int>(::syscall(SYS_bpf, BPF_PROG_GET_FD_BY_ID, &g, sizeof g)));
            if (!old.valid())
                return fail_errno("linux.resources.devices: open device program " +
                                  std::to_string(ids[i]) + " of " + cgroup_dir);
            before.push_back(std::move(old));
        }
    }
    union bpf_attr attach;
    std::memset(&attach, 0, sizeof attach);
    attach.target_fd = static_cast<uint32_t>(cg.get());
    attach.attach_bpf_fd = static_cast<uint32_t>(fd.get());
    attach.attach_type = BPF_CGROUP_DEVICE;
    attach.attach_flags = BPF_F_ALLOW_MULTI;
    if (::syscall(SYS_bpf, BPF_PROG_ATTACH, &attach, sizeof attach) < 0)
        return fail_errno("linux.resources.devices: attach the eBPF device program to " +
                          cgroup_dir);
    for (const Fd &old : before) {
        union bpf_attr d;
        std::memset(&d, 0, sizeof d);
        d.target_fd = static_cast<uint32_t>(cg.get());
        d.attach_bpf_fd = static_cast<uint32_t>(old.get());
        d.attach_type = BPF_CGROUP_DEVICE;
        if (::syscall(SYS_bpf, BPF_PROG_DETACH, &d, sizeof d) < 0)
            return fail_errno("linux.resources.devices: detach the previous device program from " +
                              cgroup_dir);
    }
    return {};
}

} // namespace ocirun
