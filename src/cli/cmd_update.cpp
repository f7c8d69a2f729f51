#include "cli.hpp"
#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/update.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ocirun::cli {

namespace {

// "1024", "64k", "100M", "1g" (as runc's units.RAMInBytes); -1 = unlimited.
bool parse_bytes(const char *s, int64_t &out) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || end == s) return false;
    int64_t mult = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1LL << 10;
        end++;
        break;
    case 'm':
    case 'M':
        mult = 1LL << 20;
        end++;
        break;
    case 'g':
    case 'G':
        mult = 1LL << 30;
        end++;
        break;
    case 't':
    case 'T':
        mult = 1LL << 40;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'b' || *end == 'B') end++;
    if (*end) return false;
    if (v == -1) {
        out = -1;
        return mult == 1;
    }
    if (v < 0 || v > INT64_MAX / mult) return false;
    out = v * mult;
    return true;
}

bool parse_u64(const char *s, uint64_t &out) {
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-') return false;
    out = v;
    return true;
}

bool parse_i64(const char *s, int64_t &out) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    out = v;
    return true;
}

} // namespace

int cmd_update(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("update");
    enum {
        RESOURCES = 'r',
        BLKIO = 256,
        CPU_PERIOD,
        CPU_QUOTA,
        CPU_SHARE,
        CPU_RT_PERIOD,
        CPU_RT_RUNTIME,
        CPUS,
        MEMS,
        MEMORY,
        MEMORY_RES,
        MEMORY_SWAP,
        KMEM,
        KMEM_TCP,
        PIDS,
        L3,
        MEMBW
    };
    static const struct option opts[] = {
        {"resources", required_argument, nullptr, RESOURCES},
        {"blkio-weight", required_argument, nullptr, BLKIO},
        {"cpu-period", required_argument, nullptr, CPU_PERIOD},
        {"cpu-quota", required_argument, nullptr, CPU_QUOTA},
        {"cpu-share", required_argument, nullptr, CPU_SHARE},
        {"cpu-rt-period", required_argument, nullptr, CPU_RT_PERIOD},
        {"cpu-rt-runtime", required_argument, nullptr, CPU_RT_RUNTIME},
        {"cpuset-cpus", required_argument, nullptr, CPUS},
        {"cpuset-mems", required_argument, nullptr, MEMS},
        {"memory", required_argument, nullptr, MEMORY},
        {"memory-reservation", required_argument, nullptr, MEMORY_RES},
        {"memory-swap", required_argument, nullptr, MEMORY_SWAP},
        {"kernel-memory", required_argument, nullptr, KMEM},
        {"kernel-memory-tcp", required_argument, nullptr, KMEM_TCP},
        {"pids-limit", required_argument, nullptr, PIDS},
        {"l3-cache-schema", required_argument, nullptr, L3},
        {"mem-bw-schema", required_argument, nullptr, MEMBW},
        {nullptr, 0, nullptr, 0}};
    std::string file;
    oci::Resources flags;
    auto memory = [&]() -> oci::Memory & {
        return flags.memory ? *flags.memory : flags.memory.emplace();
    };
    auto cpu = [&]() -> oci::Cpu & { return flags.cpu ? *flags.cpu : flags.cpu.emplace(); };
    int rc = parse_flags(cmd, argc, argv, opts, false, [&](int c, const char *v) -> int {
        auto bad = [&](const char *flag, const char *what) {
            return usage_error(cmd.name, std::string("--") + flag + ": expected " + what +
                                             ", got \"" + v + "\"");
        };
        uint64_t u;
        int64_t i;
        switch (c) {
        case RESOURCES:
            file = v;
            return 0;
        case BLKIO:
            // 0 leaves it as it is (runc's default); the kernel takes 10..1000.
            if (!parse_u64(v, u) || (u != 0 && (u < 10 || u > 1000)))
                return bad("blkio-weight", "10..1000");
            if (u == 0) return 0;
            (flags.block_io ? *flags.block_io : flags.block_io.emplace()).weight =
                static_cast<uint16_t>(u);
            return 0;
        case CPU_PERIOD:
            if (!parse_u64(v, u)) return bad("cpu-period", "microseconds");
            cpu().period = u;
            return 0;
        case CPU_QUOTA:
            if (!parse_i64(v, i)) return bad("cpu-quota", "microseconds or -1");
            cpu().quota = i;
            return 0;
        case CPU_SHARE:
            if (!parse_u64(v, u)) return bad("cpu-share", "a number");
            cpu().shares = u;
            return 0;
        case CPU_RT_PERIOD:
            if (!parse_u64(v, u)) return bad("cpu-rt-period", "microseconds");
            cpu().realtime_period = u;
            return 0;
        case CPU_RT_RUNTIME:
            if (!parse_i64(v, i)) return bad("cpu-rt-runtime", "microseconds");
            cpu().realtime_runtime = i;
            return 0;
        case CPUS:
            cpu().cpus = v;
            return 0;
        case MEMS:
            cpu().mems = v;
            return 0;
        case MEMORY:
            if (!parse_bytes(v, i)) return bad("memory", "bytes (k, m, g suffixes) or -1");
            memory().limit = i;
            return 0;
        case MEMORY_RES:
            if (!parse_bytes(v, i)) return bad("memory-reservation", "bytes or -1");
            memory().reservation = i;
            return 0;
        case MEMORY_SWAP:
            if (!parse_bytes(v, i)) return bad("memory-swap", "bytes or -1");
            memory().swap = i;
            return 0;
        case KMEM:
            if (!parse_bytes(v, i)) return bad("kernel-memory", "bytes or -1");
            memory().kernel = i;
            return 0;
        case KMEM_TCP:
            if (!parse_bytes(v, i)) return bad("kernel-memory-tcp", "bytes or -1");
            memory().kernel_tcp = i;
            return 0;
        case PIDS:
            if (!parse_i64(v, i)) return bad("pids-limit", "a number (-1: unlimited)");
            flags.pids.emplace().limit = i;
            return 0;
        default:
            return report(std::string("update: --") +
                          (c == L3 ? "l3-cache-schema" : "mem-bw-schema") +
                          ": Intel RDT is not implemented yet");
        }
    });
    if (rc >= 0) return rc;
    if ((rc = expect_args(cmd, argc, argv, 1)) >= 0) return rc;
    oci::Resources delta;
    if (!file.empty()) {
        auto text = oci::read_file(file == "-" ? "/dev/stdin" : file, 0, oci::kMaxConfigSize);
        if (!text) return report(text.error().wrap("update: --resources"));
        auto parsed = oci::parse_resources(*text);
        if (!parsed) return report(parsed.error().wrap("update: --resources " + file));
        delta = std::move(*parsed);
    }
    merge_resources(delta, flags); // flags win over the file, as in runc
    auto r = update_container(g.root, argv[optind], delta);
    return r ? 0 : report(r.error());
}

} // namespace ocirun::cli
