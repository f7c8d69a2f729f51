// Whole-config checks (runc's validate pass): what one field cannot tell alone.
#include "names.hpp"
#include "spec_io.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <set>

namespace ocirun::oci {

namespace {

std::string idx(const char *base, size_t i, const char *field = nullptr) {
    std::string s = base;
    s += '[';
    s += std::to_string(i);
    s += ']';
    if (field) {
        s += '.';
        s += field;
    }
    return s;
}

std::unexpected<Error> bad(const std::string &path, const std::string &what) {
    return fail(path + ": " + what);
}

bool absolute(const std::string &p) {
    return !p.empty() && p[0] == '/';
}

// Sysctls that need their own namespace to be safe to set (runc's list).
Status check_sysctl(const Linux &lx) {
    auto has = [&](NsType t) {
        const Namespace *ns = lx.find_namespace(t);
        return ns != nullptr;
    };
    for (const auto &[key, value] : lx.sysctl) {
        std::string path = "linux.sysctl." + key;
        if (key.empty() || key.find("..") != std::string::npos || key.find('/') == 0)
            return bad(path, "invalid sysctl name");
        bool ipc = key.rfind("kernel.msg", 0) == 0 || key.rfind("kernel.sem", 0) == 0 ||
                   key.rfind("kernel.shm", 0) == 0 || key.rfind("fs.mqueue.", 0) == 0;
        if (ipc) {
            if (!has(NsType::ipc)) return bad(path, "requires a new IPC namespace");
            continue;
        }
        if (key.rfind("net.", 0) == 0) {
            if (!has(NsType::network)) return bad(path, "requires a network namespace");
            continue;
        }
        if (key == "kernel.hostname" || key == "kernel.domainname")
            return bad(path, "set hostname/domainname in config.json instead");
        return bad(path, "not namespaced: refusing to change it for the whole host");
    }
    return {};
}

Status check_id_mappings(const char *name, const std::vector<IdMapping> &maps) {
    for (size_t i = 0; i < maps.size(); i++)
        for (size_t j = i + 1; j < maps.size(); j++) {
            const auto &a = maps[i], &b = maps[j];
            bool c = a.container_id < uint64_t(b.container_id) + b.size &&
                     b.container_id < uint64_t(a.container_id) + a.size;
            if (c) return bad(idx(name, j, "containerID"), "overlaps " + idx(name, i));
            bool h = a.host_id < uint64_t(b.host_id) + b.size &&
                     b.host_id < uint64_t(a.host_id) + a.size;
            if (h) return bad(idx(name, j, "hostID"), "overlaps " + idx(name, i));
        }
    return {};
}

} // namespace

Status validate_spec(const Spec &spec) {
    if (spec.oci_version.rfind("1.", 0) != 0)
        return bad("ociVersion", "unsupported version \"" + spec.oci_version +
                                     "\" (this runtime implements 1.x, up to " + kSpecVersion +
                                     ")");
    if (!spec.root) return bad("root", "required field is missing");
    if (spec.root->path.empty()) return bad("root.path", "must not be empty");
    if (!spec.process) return bad("process", "required field is missing");
    const Process &proc = *spec.process;
    if (proc.args.empty()) return bad("process.args", "must contain at least the program to run");
    if (proc.args[0].empty()) return bad("process.args[0]", "must not be empty");
    if (!absolute(proc.cwd))
        return bad("process.cwd", "must be an absolute path, got \"" + proc.cwd + "\"");
    if (proc.console_size && !proc.terminal)
        return bad("process.consoleSize", "set without process.terminal");
    {
        std::set<int> seen;
        for (size_t i = 0; i < proc.rlimits.size(); i++)
            if (!seen.insert(proc.rlimits[i].resource).second)
                return bad(idx("process.rlimits", i, "type"),
                           "duplicate rlimit \"" + proc.rlimits[i].type + "\"");
    }
    for (size_t i = 0; i < spec.mounts.size(); i++) {
        const Mount &m = spec.mounts[i];
        if (!absolute(m.destination))
            return bad(idx("mounts", i, "destination"),
                       "must be an absolute path, got \"" + m.destination + "\"");
        if (m.uid_mappings.empty() != m.gid_mappings.empty())
            return bad(idx("mounts", i), "uidMappings and gidMappings must be set together");
    }

    if (spec.hooks) {
        auto check = [](const char *kind, const std::vector<Hook> &hooks) -> Status {
            std::string base = std::string("hooks.") + kind;
            for (size_t i = 0; i < hooks.size(); i++)
                if (!absolute(hooks[i].path))
                    return bad(idx(base.c_str(), i, "path"),
                               "must be an absolute path, got \"" + hooks[i].path + "\"");
            return {};
        };
        const Hooks &h = *spec.hooks;
        OCI_CHECK(check("prestart", h.prestart));
        OCI_CHECK(check("createRuntime", h.create_runtime));
        OCI_CHECK(check("createContainer", h.create_container));
        OCI_CHECK(check("startContainer", h.start_container));
        OCI_CHECK(check("poststart", h.poststart));
        OCI_CHECK(check("poststop", h.poststop));
    }

    if (!spec.linux_) return bad("linux", "required field is missing (this is a Linux runtime)");
    const Linux &lx = *spec.linux_;
    bool seen[kNsTypeCount] = {};
    for (size_t i = 0; i < lx.namespaces.size(); i++) {
        const Namespace &ns = lx.namespaces[i];
        int t = static_cast<int>(ns.type);
        if (seen[t])
            return bad(idx("linux.namespaces", i, "type"),
                       std::string("duplicate namespace \"") + ns_type_name(ns.type) + "\"");
        seen[t] = true;
        if (!ns.path.empty() && !absolute(ns.path))
            return bad(idx("linux.namespaces", i, "path"),
                       "must be an absolute path, got \"" + ns.path + "\"");
    }
    const Namespace *userns = lx.find_namespace(NsType::user);
    bool new_userns = userns && userns->path.empty();
    if (!lx.uid_mappings.empty() || !lx.gid_mappings.empty()) {
        if (!userns)
            return bad(lx.uid_mappings.empty() ? "linux.gidMappings" : "linux.uidMappings",
                       "set without a user namespace in linux.namespaces");
        if (!new_userns)
            return bad("linux.uidMappings", "set for a user namespace that is joined by path");
    }
    if (new_userns) {
        if (lx.uid_mappings.empty())
            return bad("linux.uidMappings", "required when a new user namespace is requested");
        if (lx.gid_mappings.empty())
            return bad("linux.gidMappings", "required when a new user namespace is requested");
    }
    OCI_CHECK(check_id_mappings("linux.uidMappings", lx.uid_mappings));
    OCI_CHECK(check_id_mappings("linux.gidMappings", lx.gid_mappings));
    if (!lx.time_offsets.empty()) {
        const Namespace *tns = lx.find_namespace(NsType::time);
        if (!tns)
            return bad("linux.timeOffsets", "set without a time namespace in linux.namespaces");
        if (!tns->path.empty())
            return bad("linux.timeOffsets", "set for a time namespace that is joined by path");
    }
    if (!spec.hostname.empty() && !lx.find_namespace(NsType::uts))
        return bad("hostname", "set without a UTS namespace in linux.namespaces");
    if (!spec.domainname.empty() && !lx.find_namespace(NsType::uts))
        return bad("domainname", "set without a UTS namespace in linux.namespaces");
    for (size_t i = 0; i < lx.devices.size(); i++)
        if (!absolute(lx.devices[i].path))
            return bad(idx("linux.devices", i, "path"),
                       "must be an absolute path, got \"" + lx.devices[i].path + "\"");
    for (size_t i = 0; i < lx.masked_paths.size(); i++)
        if (!absolute(lx.masked_paths[i]))
            return bad(idx("linux.maskedPaths", i),
                       "must be an absolute path, got \"" + lx.masked_paths[i] + "\"");
    for (size_t i = 0; i < lx.readonly_paths.size(); i++)
        if (!absolute(lx.readonly_paths[i]))
            return bad(idx("linux.readonlyPaths", i),
                       "must be an absolute path, got \"" + lx.readonly_paths[i] + "\"");
    if (lx.seccomp && !lx.seccomp->listener_path.empty() && !absolute(lx.seccomp->listener_path))
        return bad("linux.seccomp.listenerPath", "must be an absolute path");
    if (lx.resources && lx.resources->cpu) {
        const Cpu &cpu = *lx.resources->cpu;
        if (cpu.period && *cpu.period != 0 && (*cpu.period < 1000 || *cpu.period > 1000000))
            return bad("linux.resources.cpu.period", "must be between 1000 and 1000000");
    }
    OCI_CHECK(check_sysctl(lx));
    return {};
}

namespace {

// `<bundle>/config.json` opened for reading, and its size. It is first
// reached with O_PATH beneath the bundle directory: a symlink may lead
// elsewhere in the bundle but not out of it (runc follows it anywhere; here
// a config.json that is really some other file of the host is refused, not
// read), and only a regular file is then opened for reading, through the
// O_PATH descriptor, so a FIFO cannot hang us and a device is never opened
// (opening one can act: /dev/watchdog arms the watchdog).
Result<int> open_config(const std::string &bundle, const std::string &path, off_t &size) {
    int dir = ::open(bundle.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return fail_errno("bundle " + bundle);
    struct open_how how = {};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    int at = static_cast<int>(::syscall(SYS_openat2, dir, "config.json", &how, sizeof how));
    // Without openat2 (a kernel before 5.6, valgrind 3.19): stricter, no
    // symlink at all (O_PATH | O_NOFOLLOW opens the link itself, which the
    // regular-file check below refuses).
    if (at < 0 && errno == ENOSYS)
        at = ::openat(dir, "config.json", O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    ::close(dir);
    if (at < 0 && e == EXDEV)
        return fail("config.json: " + path + " is a symlink that leads out of the bundle");
    if (at < 0) return fail_code(e, "config.json: open " + path);
    struct stat st;
    if (::fstat(at, &st) < 0) {
        e = errno;
        ::close(at);
        return fail_code(e, "config.json: stat " + path);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(at);
        return fail("config.json: " + path + " is not a regular file");
    }
    if (static_cast<uint64_t>(st.st_size) > kMaxConfigSize) {
        ::close(at);
        return fail("config.json: " + path + " is larger than " +
                    std::to_string(kMaxConfigSize >> 20) + " MiB");
    }
    int fd =
        ::open(("/proc/self/fd/" + std::to_string(at)).c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    e = errno;
    ::close(at);
    if (fd < 0) return fail_code(e, "config.json: open " + path);
    size = st.st_size;
    return fd;
}

} // namespace

Result<Spec> load_bundle_spec(const std::string &bundle) {
    std::string path = bundle + "/config.json";
    off_t size = 0;
    int fd = OCI_TRY(open_config(bundle, path, size));
    // No more than fstat said: a file that grows meanwhile is read short and
    // fails to parse, it cannot make us read past the limit.
    std::string text;
    text.resize(static_cast<size_t>(size));
    size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            ::close(fd);
            return fail_code(e, "config.json: read " + path);
        }
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    auto spec = parse_spec(text);
    if (!spec) return forward(std::move(spec.error()), "config.json");
    auto ok = validate_spec(*spec);
    if (!ok) return forward(std::move(ok.error()), "config.json");
    return spec;
}

} // namespace ocirun::oci
