#include "runtime/security/report.hpp"

#include "runtime/cgroups/cgroup.hpp"

#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/state.hpp"
#include "oci/text.hpp"
#include "runtime/filesystem/fs_probe.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/lifecycle/pod_network.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/network/firewall.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>

namespace ocirun {

namespace {

// How the network helper holds itself (shim/confine.hpp), from its
// /proc/PID/status: "uid U, no capability, seccomp filter", or what is
// missing after "not confined: ".
std::string helper_confinement(pid_t pid) {
    auto status = oci::read_file("/proc/" + std::to_string(pid) + "/status");
    if (!status) return "not confined: " + status.error().text();
    std::string uid = status_field(*status, "Uid");
    uid = uid.substr(0, uid.find_first_of(" \t"));
    std::string missing;
    auto lacks = [&](bool ok, const std::string &what) {
        if (!ok) missing += (missing.empty() ? "" : ", ") + what;
    };
    lacks(uid != "0" && !uid.empty(), "runs as uid 0");
    lacks(status_field(*status, "CapEff") == "0000000000000000" &&
              status_field(*status, "CapPrm") == "0000000000000000",
          "holds capabilities");
    lacks(status_field(*status, "NoNewPrivs") == "1", "no no_new_privs");
    lacks(status_field(*status, "Seccomp") == "2", "no seccomp filter");
    if (!missing.empty()) return "not confined: " + missing;
    return "uid " + uid + ", no capability, seccomp filter";
}

std::string link_of(const std::string &path) {
    char buf[256];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

const egress::IpAddr kLoopback = {AF_INET, {127, 0, 0, 1}};

// Whether a /proc/PID/net/tcp{,6} table has a listener on addr:port (the
// table of that process's network namespace).
// `state` in /proc/net/{tcp,udp}: 0A a listening TCP socket, 07 a bound UDP one.
bool socket_in(const std::string &table, const egress::IpAddr &addr, uint16_t port,
               const char *state) {
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
        if (f.size() >= 4 && f[1] == want && f[3] == state) found = true;
    });
    return found;
}

bool tcp_listening(const std::string &table, const egress::IpAddr &addr, uint16_t port) {
    return socket_in(table, addr, port, "0A");
}

uint64_t caps_mask(const std::vector<std::string> &caps) {
    uint64_t m = 0;
    for (const auto &c : caps)
        if (auto v = oci::capability_from_name(c)) m |= 1ull << *v;
    return m;
}

// What a policy and config.json promise, one row each, in report order:
// the one list `report`, `report --bundle` and `start` all measure or
// declare.
enum class Dim {
    userns,
    pidns,
    mounts,
    fs_rule,
    network,
    helper,
    local_port,
    publish,
    proxy,
    dns,
    intercept,
    families,
    pids,
    rlimit,
    seccomp,
    nnp,
    caps,
    trace
};
struct Promise {
    Promise(Dim d, std::string dim_name, std::string mech, bool want = true, size_t i = 0)
        : dim(d), dimension(std::move(dim_name)), mechanism(std::move(mech)), wanted(want),
          index(i) {}
    Dim dim;
    std::string dimension, mechanism;
    bool wanted = true;
    size_t index = 0; // the local port, publish entry or rlimit
    std::string kind; // fs_rule: deny, deny-write, deny-rename
    std::string path; // fs_rule: as the policy names it
};

// The helper's bounds, as report shows them.
std::string connection_limits(const NetworkPolicy &net) {
    std::string out = "at most " + std::to_string(net.total_max_connections) + " connections";
    if (!net.local_ports.empty() || !net.publish.empty())
        out += ", " + std::to_string(net.forward_max_connections) + " per port";
    if (net.proxy()) out += ", " + std::to_string(net.max_connections) + " through the proxy";
    return out;
}

std::vector<Promise> promises(const oci::Spec &spec, const SandboxPolicy &policy,
                              const std::string &pod = "") {
    const oci::Linux &lx = *spec.linux_;
    std::vector<Promise> out;
    // The masks are locked in a user namespace the runtime nests inside the
    // container's (or the host's): wanted with them too.
    out.push_back(
        {Dim::userns, "user namespace",
         policy.masks() ? "user namespace (nested: the masks are locked in it)" : "user namespace",
         lx.find_namespace(oci::NsType::user) != nullptr || policy.masks()});
    out.push_back({Dim::pidns, "pid namespace", "pid namespace",
                   lx.find_namespace(oci::NsType::pid) != nullptr || policy.present});
    switch (mount_ns_of(lx)) {
    case MountNs::own:
        out.push_back({Dim::mounts, "mount isolation", "mount namespace + pivot_root", true});
        break;
    case MountNs::inherited:
        out.push_back({Dim::mounts, "mount isolation",
                       "none: the runtime's mount namespace (chroot into root.path)", false});
        break;
    case MountNs::joined:
        out.push_back({Dim::mounts, "mount isolation",
                       "a mount namespace joined by path (chroot into root.path)", false});
        break;
    }
    auto rules = [&](const std::vector<std::string> &paths, const char *kind, const char *mech) {
        for (const auto &p : paths) {
            Promise r{Dim::fs_rule, std::string(kind) + " " + p, mech, true};
            r.kind = kind;
            r.path = p;
            out.push_back(std::move(r));
        }
    };
    rules(policy.deny, "deny", "empty read-only tmpfs or /dev/null");
    rules(policy.deny_write, "deny-write", "recursive read-only bind");
    rules(policy.deny_rename, "deny-rename", "bind onto itself");
    const NetworkPolicy &net = policy.net;
    const oci::Namespace *netns = lx.find_namespace(oci::NsType::network);
    if (net.own_namespace() && !pod.empty())
        out.push_back({Dim::network, "network " + net.mode,
                       "its pod's firewall (container " + pod + "): nftables, loopback only"});
    else if (net.own_namespace() && netns && !netns->path.empty())
        out.push_back({Dim::network, "network " + net.mode,
                       "firewall of the joined network namespace: nftables, loopback only"});
    else if (net.own_namespace())
        out.push_back(
            {Dim::network, "network " + net.mode, "network namespace with loopback only"});
    if (net.helper())
        out.push_back({Dim::helper, "network helper",
                       "oci-run-shim outside the container, charged to its cgroup"});
    for (size_t i = 0; i < net.local_ports.size(); i++)
        out.push_back(
            {Dim::local_port, "local port " + std::to_string(net.local_ports[i].container_port),
             "forward to host 127.0.0.1:" + std::to_string(net.local_ports[i].host_port), true, i});
    for (size_t i = 0; i < net.publish.size(); i++) {
        const PortPublish &p = net.publish[i];
        std::string where = egress::to_string(p.host_addr) + ":" + std::to_string(p.host_port);
        out.push_back(
            {Dim::publish, "publish " + where,
             "host " + where + " to container 127.0.0.1:" + std::to_string(p.container_port), true,
             i});
    }
    if (net.proxy())
        out.push_back(
            {Dim::proxy, "egress proxy",
             std::string("HTTP CONNECT proxy, ") + (net.observe ? "observe mode" : "enforce")});
    if (net.proxy() && netns && !netns->path.empty())
        out.push_back(
            {Dim::dns, "dns", "the namespace's DNS to the helper's stub: allowed names only"});
    if (net.proxy() && net.intercept)
        out.push_back({Dim::intercept, "intercept",
                       "the namespace's TCP to ports 80 and 443 to the helper, decided by the "
                       "HTTP Host header or the TLS server name"});
    if (socket_families(net).restricted)
        out.push_back(
            {Dim::families, "socket families", "sandbox guard: other families EAFNOSUPPORT"});
    if (lx.resources && lx.resources->pids && lx.resources->pids->limit)
        out.push_back({Dim::pids, "pids limit", "cgroup pids.max"});
    for (size_t i = 0; i < spec.process->rlimits.size(); i++)
        out.push_back(
            {Dim::rlimit, "rlimit " + spec.process->rlimits[i].type, "setrlimit", true, i});
    out.push_back(
        {Dim::seccomp, "seccomp", "seccomp filter", lx.seccomp.has_value() || policy.present});
    out.push_back(
        {Dim::nnp, "no_new_privs", "prctl PR_SET_NO_NEW_PRIVS", spec.process->no_new_privileges});
    out.push_back({Dim::caps, "capabilities", "bounding set"});
    if (policy.trace) out.push_back({Dim::trace, "trace", "strace from the host"});
    return out;
}

} // namespace

// The rows of the filesystem rules, tried from inside the container.
Result<std::vector<ReportRow>> measure_fs_rules(const ContainerRecord &rec, const oci::Spec &spec,
                                                const SandboxPolicy &policy) {
    std::vector<ReportRow> rows;
    auto tried = OCI_TRY(probe_fs_rules(rec.state.pid, *spec.linux_, policy.masks(), rec.fs_rules));
    // Around every rule: the raw disks (refused at create in strict mode).
    HostFacts host = detect_host_facts();
    host.devices_cgroup = !rec.cgroup_dirs.empty();
    const std::string disks = tried.empty() ? "" : disks_open(spec, host);
    for (const Promise &p : promises(spec, policy, rec.network_owner)) {
        if (p.dim != Dim::fs_rule) continue;
        const RuleTried *t = nullptr;
        for (const auto &x : tried)
            if (x.rule->kind == p.kind && x.rule->path == p.path) t = &x;
        if (!t)
            rows.push_back({p.dimension, "degraded", p.mechanism, "measured",
                            "the container's init did not record this rule"});
        else if (!disks.empty())
            rows.push_back(
                {p.dimension, "degraded", p.mechanism, "measured", t->detail() + "; " + disks});
        else
            rows.push_back({p.dimension, t->enforced() ? "enforced" : "degraded", p.mechanism,
                            "measured", t->detail()});
    }
    return rows;
}

Result<std::vector<ReportRow>> container_report(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    return measure_container(dir, rec);
}

Result<std::vector<ReportRow>> measure_container(const ContainerDir &dir,
                                                 const ContainerRecord &rec) {
    oci::Spec spec = OCI_TRY(dir.load_spec());
    SandboxPolicy policy = OCI_TRY(container_policy(rec, spec));
    return measure_container(dir, rec, spec, policy, true);
}

Result<std::vector<ReportRow>> measure_container(const ContainerDir &dir,
                                                 const ContainerRecord &rec, const oci::Spec &spec,
                                                 const SandboxPolicy &policy, bool with_fs) {
    const std::string &id = rec.state.id;
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail("report: container \"" + id + "\" is not running");
    const oci::Linux &lx = *spec.linux_;
    std::string proc = "/proc/" + std::to_string(rec.state.pid);
    std::string status = OCI_TRY(oci::read_file(proc + "/status"));
    std::string limits = OCI_TRY(oci::read_file(proc + "/limits"));
    std::vector<ReportRow> fs;
    if (with_fs) fs = OCI_TRY(measure_fs_rules(rec, spec, policy));
    size_t next_fs = 0;
    std::vector<ReportRow> rows;
    // Namespaces: the init's against this process's.
    auto own_ns = [&](const char *ns) {
        return link_of(proc + "/ns/" + ns) != link_of(std::string("/proc/self/ns/") + ns);
    };
    const NetworkPolicy &net = policy.net;
    // In a pod's network namespace, the helper is its owner's.
    std::optional<ContainerRecord> pod;
    if (!rec.network_owner.empty()) pod = network_owner_record(dir.root(), rec);
    const ContainerRecord &helper = pod ? *pod : rec;
    bool alive = helper.shim_pid > 0 && process_alive(helper.shim_pid, helper.shim_start_time);
    const std::string inside = proc + "/net/tcp";
    for (const Promise &p : promises(spec, policy, rec.network_owner)) {
        auto row = [&](bool seen, std::string detail) {
            rows.push_back({p.dimension,
                            !p.wanted ? "off"
                            : seen    ? "enforced"
                                      : "degraded",
                            p.mechanism, "measured", std::move(detail)});
        };
        switch (p.dim) {
        case Dim::userns: {
            std::string uid_map = OCI_TRY(oci::read_file(proc + "/uid_map"));
            std::string squeezed;
            for (auto w : words(uid_map)) {
                if (!squeezed.empty()) squeezed += ' ';
                squeezed += w;
            }
            row(own_ns("user"), "uid_map " + squeezed);
            break;
        }
        case Dim::pidns:
            row(own_ns("pid"), link_of(proc + "/ns/pid"));
            break;
        case Dim::mounts:
            row(own_ns("mnt"), link_of(proc + "/ns/mnt"));
            break;
        case Dim::fs_rule:
            if (with_fs && next_fs < fs.size()) rows.push_back(fs[next_fs++]);
            break;
        case Dim::network: {
            std::string ifaces;
            for (const auto &d : net_devices(rec.state.pid))
                ifaces += (ifaces.empty() ? "" : ",") + d.name;
            std::string where = "netns " + link_of(proc + "/ns/net") + ", interfaces " + ifaces;
            if (rec.netns_ino == 0) { // its own netns, holding nothing but lo
                row(own_ns("net") && ifaces == "lo", where);
                break;
            }
            // A joined one: the firewall as the kernel lists it, the owner's.
            if (!rec.firewall && !pod) {
                row(false,
                    where + "; its pod's container " + rec.network_owner + " is not running");
                break;
            }
            auto ns = open_namespace(rec.state.pid, "net");
            auto seen = ns ? check_firewall(ns->get(), helper.state.id, net.firewall_need())
                           : Result<FirewallSeen>(std::unexpected(ns.error()));
            if (!seen)
                row(false, where + "; " + seen.error().text());
            else
                row(seen->exact, where + "; table inet oci_run " +
                                     (seen->exact     ? "as installed"
                                      : seen->present ? "changed"
                                                      : "absent"));
            break;
        }
        case Dim::helper: {
            // Charged to the container: listed in each of its helper cgroups.
            int listed = 0, made = 0;
            for (const auto &d : helper.cgroup_dirs) {
                auto procs = oci::read_file(d + "/" + kHelperCgroup + "/cgroup.procs");
                if (!procs) continue;
                made++;
                for (auto w : words(*procs))
                    if (w == std::to_string(helper.shim_pid)) listed++;
            }
            bool charged = helper.cgroup_dirs.empty() || (made > 0 && listed == made);
            std::string whose = pod ? "the pod's (container " + pod->state.id + ")"
                                    : std::string("the container's");
            std::string held = alive ? helper_confinement(helper.shim_pid) : "";
            bool confined = alive && !held.starts_with("not confined");
            row(alive && charged && confined,
                (alive ? "pid " + std::to_string(helper.shim_pid) + " (" + held + ")"
                       : "not running") +
                    (helper.cgroup_dirs.empty() ? ""
                     : charged                  ? ", in " + whose + " cgroup"
                                                : ", not in " + whose + " cgroup") +
                    "; " + connection_limits(net));
            break;
        }
        case Dim::local_port: {
            uint16_t port = net.local_ports[p.index].container_port;
            bool l = tcp_listening(inside, kLoopback, port);
            row(l && alive, l ? "listening on 127.0.0.1:" + std::to_string(port) : "no listener");
            break;
        }
        case Dim::publish: {
            const PortPublish &pp = net.publish[p.index];
            bool l = alive &&
                     tcp_listening("/proc/" + std::to_string(helper.shim_pid) +
                                       (pp.host_addr.family == AF_INET6 ? "/net/tcp6" : "/net/tcp"),
                                   pp.host_addr, pp.host_port);
            row(l, l ? "listening on the host" : "no listener");
            break;
        }
        case Dim::proxy: {
            bool l = tcp_listening(inside, kLoopback, kProxyPort);
            row(l && alive, "allow " +
                                (net.domains.empty() ? std::string("nothing") : net.domains) +
                                (net.deny_domains.empty() ? "" : "; deny " + net.deny_domains) +
                                "; at most " + std::to_string(net.max_connections) + " tunnels");
            break;
        }
        case Dim::dns: {
            bool l = socket_in(proc + "/net/udp", kLoopback, kDnsStubPort, "07") &&
                     tcp_listening(inside, kLoopback, kDnsStubPort);
            row(l && alive, l ? "answering on udp and tcp 127.0.0.1:" + std::to_string(kDnsStubPort)
                              : "no stub");
            break;
        }
        case Dim::intercept: {
            bool l = tcp_listening(inside, kLoopback, kInterceptHttpPort) &&
                     tcp_listening(inside, kLoopback, kInterceptTlsPort);
            row(l && alive, l ? "listening on 127.0.0.1:" + std::to_string(kInterceptHttpPort) +
                                    " (80) and " + std::to_string(kInterceptTlsPort) + " (443)"
                              : "no listener");
            break;
        }
        case Dim::families: {
            // The guard is a filter of the process: loaded, it holds these rules.
            std::string seccomp = status_field(status, "Seccomp");
            row(seccomp == "2", "allowed " + socket_families(net).text());
            break;
        }
        case Dim::pids: {
            std::string seen;
            for (const auto &d : rec.cgroup_dirs)
                if (auto t = oci::read_file(d + "/pids.max"); t && seen.empty()) seen = *t;
            while (!seen.empty() && seen.back() == '\n')
                seen.pop_back();
            row(seen == pids_max_value(*lx.resources->pids->limit),
                "pids.max " + (seen.empty() ? std::string("unreadable") : seen));
            break;
        }
        case Dim::rlimit: {
            // "Max open files  1024  1024  files" in /proc/PID/limits.
            const auto &r = spec.process->rlimits[p.index];
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
                rows.push_back({p.dimension, "enforced", p.mechanism, "declared", ""});
                break;
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
            row(soft == value(r.soft) && hard == value(r.hard), "soft " + soft + " hard " + hard);
            break;
        }
        case Dim::seccomp: {
            std::string seccomp = status_field(status, "Seccomp");
            row(seccomp == "2",
                "Seccomp " + seccomp + ", filters " + status_field(status, "Seccomp_filters"));
            break;
        }
        case Dim::nnp: {
            std::string nnp = status_field(status, "NoNewPrivs");
            row(nnp == "1", "NoNewPrivs " + nnp);
            break;
        }
        case Dim::caps: {
            uint64_t want =
                spec.process->capabilities ? caps_mask(spec.process->capabilities->bounding) : 0;
            uint64_t bnd = std::strtoull(status_field(status, "CapBnd").c_str(), nullptr, 16);
            char buf[32];
            std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bnd));
            row(bnd == want, std::string("CapBnd ") + buf);
            break;
        }
        case Dim::trace: {
            std::string tracer = status_field(status, "TracerPid");
            row(!tracer.empty() && tracer != "0", "TracerPid " + tracer);
            break;
        }
        }
    }
    return rows;
}

Result<std::vector<ReportRow>> bundle_report(const std::string &bundle) {
    oci::Spec spec = OCI_TRY(oci::load_bundle_spec(bundle));
    SandboxPolicy policy = OCI_TRY(parse_sandbox_policy(spec.annotations));
    HostFacts host = detect_host_facts();
    const oci::Linux &lx = *spec.linux_;
    const NetworkPolicy &net = policy.net;
    std::vector<ReportRow> rows;
    for (const Promise &p : promises(spec, policy)) {
        bool possible = true;
        std::string detail;
        switch (p.dim) {
        case Dim::fs_rule:
            possible = host.mount_setattr;
            break;
        case Dim::network: {
            const oci::Namespace *ns = lx.find_namespace(oci::NsType::network);
            possible = ns && (ns->path.empty() || host.firewall);
            break;
        }
        case Dim::helper:
            possible = host.shim;
            detail = shim_path() + "; " + connection_limits(net);
            break;
        case Dim::families:
            detail = "allowed " + socket_families(net).text();
            break;
        case Dim::local_port:
            possible = host.shim;
            break;
        case Dim::publish:
            possible = host.shim && host.privileged;
            break;
        case Dim::proxy:
            possible = host.shim;
            detail = "allow " + (net.domains.empty() ? std::string("nothing") : net.domains);
            break;
        case Dim::pids:
            detail = "pids.max " + pids_max_value(*lx.resources->pids->limit);
            break;
        case Dim::rlimit: {
            const auto &r = spec.process->rlimits[p.index];
            detail = "soft " + std::to_string(r.soft) + " hard " + std::to_string(r.hard);
            break;
        }
        case Dim::seccomp:
            detail = std::string(lx.seccomp ? "config" : "") +
                     (lx.seccomp && policy.present ? " + " : "") +
                     (policy.present ? "sandbox-guard" : "");
            break;
        case Dim::caps:
            detail = std::to_string(spec.process->capabilities
                                        ? spec.process->capabilities->bounding.size()
                                        : 0) +
                     " capabilities";
            break;
        case Dim::trace:
            possible = host.strace;
            break;
        default:
            break;
        }
        rows.push_back({p.dimension,
                        !p.wanted  ? "off"
                        : possible ? "enforced"
                                   : "unsupported",
                        p.mechanism, "declared", detail});
    }
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
