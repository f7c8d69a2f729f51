#include "report.hpp"

#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "proc.hpp"
#include "sandbox_policy.hpp"
#include "shim_launch.hpp"
#include "store.hpp"
#include "text.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>

namespace ocirun {

namespace {

std::string status_field(const std::string &status, const std::string &key) {
    std::string found;
    for_each_line(status, [&](std::string_view line) {
        if (found.empty() && line.starts_with(key + ":")) {
            std::string_view v = line.substr(key.size() + 1);
            size_t a = v.find_first_not_of(" \t");
            if (a != std::string_view::npos) found = v.substr(a);
        }
    });
    return found;
}

std::string link_of(const std::string &path) {
    char buf[256];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Mount options of the topmost mount at `point` in a mountinfo text ("" if none).
std::string mount_opts(const std::string &mountinfo, const std::string &point) {
    std::string found;
    for_each_line(mountinfo, [&](std::string_view line) {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
        auto f = words(line);
        if (f.size() >= 6 && f[4] == point) found = f[5];
    });
    return found;
}

const egress::IpAddr kLoopback = {AF_INET, {127, 0, 0, 1}};

// Whether a /proc/PID/net/tcp{,6} table has a listener on addr:port (the
// table of that process's network namespace).
bool tcp_listening(const std::string &table, const egress::IpAddr &addr, uint16_t port) {
    auto text = oci::read_file(table);
    if (!text) return false;
    // Local addresses are the kernel's words printed in hex, in host order.
    char want[40] = {};
    const auto *w = reinterpret_cast<const uint32_t *>(addr.bytes);
    if (addr.family == AF_INET)
        std::snprintf(want, sizeof want, "%08X:%04X", w[0], port);
    else
        std::snprintf(want, sizeof want, "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3], port);
    bool found = false;
    for_each_line(*text, [&](std::string_view line) {
        // SLOT LOCAL REMOTE STATE ...
        auto f = words(line);
        if (f.size() >= 4 && f[1] == want && f[3] == "0A") found = true;
    });
    return found;
}

uint64_t caps_mask(const std::vector<std::string> &caps) {
    uint64_t m = 0;
    for (const auto &c : caps)
        if (auto v = oci::capability_from_name(c)) m |= 1ull << *v;
    return m;
}

} // namespace

Result<std::vector<ReportRow>> container_report(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    oci::ContainerRecord rec = OCI_TRY(dir.load());
    return measure_container(dir, rec);
}

Result<std::vector<ReportRow>> measure_container(const ContainerDir &dir,
                                                 const oci::ContainerRecord &rec) {
    const std::string &id = rec.state.id;
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("report: container \"" + id + "\" is not running");
    oci::Spec spec = OCI_TRY(oci::load_bundle_spec(dir.path()));
    SandboxPolicy policy = OCI_TRY(parse_sandbox_policy(spec.annotations));
    const oci::Linux &lx = *spec.linux_;
    std::string proc = "/proc/" + std::to_string(rec.state.pid);
    std::string status = OCI_TRY(oci::read_file(proc + "/status"));
    std::string mountinfo = OCI_TRY(oci::read_file(proc + "/mountinfo"));
    std::string limits = OCI_TRY(oci::read_file(proc + "/limits"));
    std::vector<ReportRow> rows;
    auto row = [&](std::string dim, bool wanted, bool seen, std::string mech, std::string detail) {
        rows.push_back({std::move(dim),
                        !wanted ? "off"
                        : seen  ? "enforced"
                                : "degraded",
                        std::move(mech), "measured", std::move(detail)});
    };
    // Namespaces: the init's against this process's.
    auto own_ns = [&](const char *ns) {
        return link_of(proc + "/ns/" + ns) != link_of(std::string("/proc/self/ns/") + ns);
    };
    std::string uid_map = OCI_TRY(oci::read_file(proc + "/uid_map"));
    while (!uid_map.empty() && uid_map.back() == '\n')
        uid_map.pop_back();
    std::string squeezed;
    for (auto w : words(uid_map)) {
        if (!squeezed.empty()) squeezed += ' ';
        squeezed += w;
    }
    row("user namespace", lx.find_namespace(oci::NsType::user) != nullptr || policy.present,
        own_ns("user"), "user namespace", "uid_map " + squeezed);
    row("pid namespace", lx.find_namespace(oci::NsType::pid) != nullptr, own_ns("pid"),
        "pid namespace", link_of(proc + "/ns/pid"));
    row("mount isolation", true, own_ns("mnt"), "mount namespace + pivot_root",
        link_of(proc + "/ns/mnt"));
    for (const auto &p : policy.deny) {
        std::string o = mount_opts(mountinfo, p);
        row("deny " + p, true, !o.empty(), "empty read-only tmpfs or /dev/null",
            o.empty() ? "no mount at the path" : "mounted " + o);
    }
    for (const auto &p : policy.deny_write) {
        std::string o = mount_opts(mountinfo, p);
        bool ro = ("," + o + ",").find(",ro,") != std::string::npos;
        row("deny-write " + p, true, ro, "recursive read-only bind",
            o.empty() ? "no mount at the path" : "mounted " + o);
    }
    for (const auto &p : policy.deny_rename) {
        std::string o = mount_opts(mountinfo, p);
        row("deny-rename " + p, true, !o.empty(), "bind onto itself",
            o.empty() ? "no mount at the path" : "mounted " + o);
    }
    const NetworkPolicy &net = policy.net;
    if (net.own_namespace()) {
        // Its own netns, holding nothing but lo.
        std::string ifaces;
        for (const auto &d : net_devices(rec.state.pid))
            ifaces += (ifaces.empty() ? "" : ",") + d.name;
        row("network " + net.mode, true, own_ns("net") && ifaces == "lo",
            "network namespace with loopback only",
            "netns " + link_of(proc + "/ns/net") + ", interfaces " + ifaces);
    }
    if (net.helper()) {
        bool alive = rec.shim_pid > 0 && process_alive(rec.shim_pid, rec.shim_start_time);
        row("network helper", true, alive, "oci-run-shim outside the container",
            alive ? "pid " + std::to_string(rec.shim_pid) : "not running");
        const std::string inside = proc + "/net/tcp";
        for (const auto &f : net.local_ports) {
            bool l = tcp_listening(inside, kLoopback, f.container_port);
            row("local port " + std::to_string(f.container_port), true, l && alive,
                "forward to host 127.0.0.1:" + std::to_string(f.host_port),
                l ? "listening on 127.0.0.1:" + std::to_string(f.container_port) : "no listener");
        }
        for (const auto &p : net.publish) {
            std::string where = egress::to_string(p.host_addr) + ":" + std::to_string(p.host_port);
            bool l = alive &&
                     tcp_listening("/proc/" + std::to_string(rec.shim_pid) +
                                       (p.host_addr.family == AF_INET6 ? "/net/tcp6" : "/net/tcp"),
                                   p.host_addr, p.host_port);
            row("publish " + where, true, l,
                "host " + where + " to container 127.0.0.1:" + std::to_string(p.container_port),
                l ? "listening on the host" : "no listener");
        }
        if (net.proxy()) {
            bool l = tcp_listening(inside, kLoopback, kProxyPort);
            row("egress proxy", true, l && alive,
                std::string("HTTP CONNECT proxy, ") + (net.observe ? "observe mode" : "enforce"),
                "allow " + (net.domains.empty() ? std::string("nothing") : net.domains) +
                    (net.deny_domains.empty() ? "" : "; deny " + net.deny_domains) + "; at most " +
                    std::to_string(net.max_connections) + " tunnels");
        }
    }
    // The cgroup's pids.max.
    if (lx.resources && lx.resources->pids) {
        std::string seen;
        for (const auto &d : rec.cgroup_dirs)
            if (auto t = oci::read_file(d + "/pids.max"); t && seen.empty()) seen = *t;
        while (!seen.empty() && seen.back() == '\n')
            seen.pop_back();
        int64_t want = lx.resources->pids->limit;
        row("pids limit", true, seen == (want > 0 ? std::to_string(want) : "max"),
            "cgroup pids.max", "pids.max " + (seen.empty() ? std::string("unreadable") : seen));
    }
    // Each rlimit from /proc/PID/limits ("Max open files  1024  1024  files").
    for (const auto &r : spec.process->rlimits) {
        static const std::pair<const char *, const char *> names[] = {
            {"RLIMIT_NOFILE", "Max open files"},   {"RLIMIT_NPROC", "Max processes"},
            {"RLIMIT_CORE", "Max core file size"}, {"RLIMIT_STACK", "Max stack size"},
            {"RLIMIT_AS", "Max address space"},    {"RLIMIT_CPU", "Max cpu time"},
            {"RLIMIT_FSIZE", "Max file size"},     {"RLIMIT_MEMLOCK", "Max locked memory"},
            {"RLIMIT_NICE", "Max nice priority"},  {"RLIMIT_MSGQUEUE", "Max msgqueue size"}};
        const char *label = nullptr;
        for (const auto &[k, v] : names)
            if (r.type == k) label = v;
        if (!label) {
            rows.push_back({"rlimit " + r.type, "enforced", "setrlimit", "declared", ""});
            continue;
        }
        std::string soft, hard;
        for_each_line(limits, [&](std::string_view line) {
            if (!line.starts_with(label)) return;
            auto f = words(line.substr(std::string_view(label).size()));
            soft = f.size() > 0 ? std::string(f[0]) : "";
            hard = f.size() > 1 ? std::string(f[1]) : "";
        });
        auto value = [](uint64_t v) {
            return v == UINT64_MAX ? std::string("unlimited") : std::to_string(v);
        };
        row("rlimit " + r.type, true, soft == value(r.soft) && hard == value(r.hard), "setrlimit",
            "soft " + soft + " hard " + hard);
    }
    std::string seccomp = status_field(status, "Seccomp");
    row("seccomp", lx.seccomp.has_value() || policy.present, seccomp == "2", "seccomp filter",
        "Seccomp " + seccomp + ", filters " + status_field(status, "Seccomp_filters"));
    std::string nnp = status_field(status, "NoNewPrivs");
    row("no_new_privs", spec.process->no_new_privileges, nnp == "1", "prctl PR_SET_NO_NEW_PRIVS",
        "NoNewPrivs " + nnp);
    uint64_t want_bnd =
        spec.process->capabilities ? caps_mask(spec.process->capabilities->bounding) : 0;
    uint64_t bnd = std::strtoull(status_field(status, "CapBnd").c_str(), nullptr, 16);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bnd));
    row("capabilities", true, bnd == want_bnd, "bounding set", std::string("CapBnd ") + buf);
    return rows;
}

Result<std::vector<ReportRow>> bundle_report(const std::string &bundle) {
    oci::Spec spec = OCI_TRY(oci::load_bundle_spec(bundle));
    SandboxPolicy policy = OCI_TRY(parse_sandbox_policy(spec.annotations));
    HostFacts host = detect_host_facts();
    const oci::Linux &lx = *spec.linux_;
    std::vector<ReportRow> rows;
    auto row = [&](std::string dim, bool wanted, bool possible, std::string mech,
                   std::string detail) {
        rows.push_back({std::move(dim),
                        !wanted    ? "off"
                        : possible ? "enforced"
                                   : "unsupported",
                        std::move(mech), "declared", std::move(detail)});
    };
    row("user namespace", lx.find_namespace(oci::NsType::user) != nullptr || !policy.deny.empty(),
        true, "user namespace", "");
    row("pid namespace", lx.find_namespace(oci::NsType::pid) != nullptr, true, "pid namespace", "");
    row("mount isolation", true, true, "mount namespace + pivot_root", "");
    for (const auto &p : policy.deny)
        row("deny " + p, true, host.mount_setattr, "empty read-only tmpfs or /dev/null", "");
    for (const auto &p : policy.deny_write)
        row("deny-write " + p, true, host.mount_setattr, "recursive read-only bind", "");
    for (const auto &p : policy.deny_rename)
        row("deny-rename " + p, true, host.mount_setattr, "bind onto itself", "");
    const NetworkPolicy &net = policy.net;
    if (net.own_namespace()) {
        const oci::Namespace *ns = lx.find_namespace(oci::NsType::network);
        row("network " + net.mode, true, ns && ns->path.empty(),
            "network namespace with loopback only", "");
    }
    if (net.helper())
        row("network helper", true, host.shim, "oci-run-shim outside the container", shim_path());
    for (const auto &f : net.local_ports)
        row("local port " + std::to_string(f.container_port), true, host.shim,
            "forward to host 127.0.0.1:" + std::to_string(f.host_port), "");
    for (const auto &p : net.publish)
        row("publish " + egress::to_string(p.host_addr) + ":" + std::to_string(p.host_port), true,
            host.shim && host.privileged,
            "host port to container 127.0.0.1:" + std::to_string(p.container_port), "");
    if (net.proxy())
        row("egress proxy", true, host.shim,
            std::string("HTTP CONNECT proxy, ") + (net.observe ? "observe mode" : "enforce"),
            "allow " + (net.domains.empty() ? std::string("nothing") : net.domains));
    if (lx.resources && lx.resources->pids)
        row("pids limit", true, true, "cgroup pids.max",
            "pids.max " + std::to_string(lx.resources->pids->limit));
    for (const auto &r : spec.process->rlimits)
        row("rlimit " + r.type, true, true, "setrlimit",
            "soft " + std::to_string(r.soft) + " hard " + std::to_string(r.hard));
    row("seccomp", lx.seccomp.has_value() || policy.present, true, "seccomp filter",
        std::string(lx.seccomp ? "config" : "") + (lx.seccomp && policy.present ? " + " : "") +
            (policy.present ? "sandbox-guard" : ""));
    row("no_new_privs", spec.process->no_new_privileges, true, "prctl PR_SET_NO_NEW_PRIVS", "");
    row("capabilities", true, true, "bounding set",
        std::to_string(spec.process->capabilities ? spec.process->capabilities->bounding.size()
                                                  : 0) +
            " capabilities");
    if (policy.trace) row("trace", true, host.strace, "strace", "");
    return rows;
}

std::string report_table(const std::vector<ReportRow> &rows) {
    size_t w[4] = {9, 5, 9, 6};
    for (const auto &r : rows) {
        w[0] = std::max(w[0], r.dimension.size());
        w[1] = std::max(w[1], r.state.size());
        w[2] = std::max(w[2], r.mechanism.size());
        w[3] = std::max(w[3], r.source.size());
    }
    auto pad = [](const std::string &s, size_t n) {
        return s + std::string(n - s.size() + 2, ' ');
    };
    std::string out = pad("DIMENSION", w[0]) + pad("STATE", w[1]) + pad("MECHANISM", w[2]) +
                      pad("SOURCE", w[3]) + "DETAIL\n";
    for (const auto &r : rows)
        out += pad(r.dimension, w[0]) + pad(r.state, w[1]) + pad(r.mechanism, w[2]) +
               pad(r.source, w[3]) + r.detail + "\n";
    return out;
}

std::string report_json(const std::vector<ReportRow> &rows) {
    json::Writer w(false);
    w.begin_array();
    for (const auto &r : rows)
        w.begin_object()
            .kv("dimension", r.dimension)
            .kv("state", r.state)
            .kv("mechanism", r.mechanism)
            .kv("source", r.source)
            .kv("detail", r.detail)
            .end_object();
    w.end_array();
    return std::string(w.view());
}

} // namespace ocirun
