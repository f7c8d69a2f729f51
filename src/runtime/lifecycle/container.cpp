#include "runtime/lifecycle/container.hpp"
#include "runtime/lifecycle/container_impl.hpp"

#include "oci/fd.hpp"
#include "oci/json.hpp"
#include "oci/names.hpp"
#include "oci/spec_io.hpp"
#include "oci/text.hpp"
#include "runtime/cgroups/cgroup.hpp"
#include "runtime/cgroups/systemd_driver.hpp"
#include "runtime/fault.hpp"
#include "runtime/filesystem/host_reach.hpp"
#include "runtime/filesystem/mount_api.hpp"
#include "runtime/filesystem/mount_plan.hpp"
#include "runtime/filesystem/mount_table.hpp"
#include "runtime/lifecycle/exec_stage.hpp"
#include "runtime/lifecycle/hooks.hpp"
#include "runtime/lifecycle/init.hpp"
#include "runtime/lifecycle/pod_network.hpp"
#include "runtime/lifecycle/store.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/lifecycle/tty_relay.hpp"
#include "runtime/log.hpp"
#include "runtime/network/netlink.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/caps.hpp"
#include "runtime/process/namespaces.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/spawn.hpp"
#include "runtime/process/userns.hpp"
#include "runtime/security/report.hpp"
#include "runtime/security/sandbox_policy.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

namespace ocirun {

std::string hook_state(const ContainerRecord &rec, oci::ContainerStatus status) {
    oci::State st = rec.state;
    st.status = status;
    return oci::write_state(st);
}

// poststop failures are warnings (runtime-spec Lifecycle step 13).
void run_poststop(const oci::Spec &spec, const ContainerRecord &rec) {
    if (!spec.hooks) return;
    run_hooks_warning(spec.hooks->poststop, "poststop",
                      hook_state(rec, oci::ContainerStatus::stopped));
}

// Status from the live process, never from the record alone.
// `host` is needed only for a record with cgroup directories (paused).
oci::ContainerStatus live_status(const ContainerDir &dir, const CgroupHost &host,
                                 const ContainerRecord &rec) {
    // A create still running (it holds the lock) may not have an init yet.
    if (rec.state.status == oci::ContainerStatus::creating && dir.busy())
        return oci::ContainerStatus::creating;
    if (!process_alive(rec.state.pid, rec.init_start_time)) return oci::ContainerStatus::stopped;
    if (rec.state.status == oci::ContainerStatus::creating) return oci::ContainerStatus::creating;
    if (!rec.cgroup_dirs.empty() && cgroup_frozen(host, rec.cgroup_dirs))
        return oci::ContainerStatus::paused;
    if (rec.release_pipe) {
        // Created while the init still holds the pipe `start` releases it
        // through (its exec closes it).
        // (As start.cpp init_pipe checks what it opened.)
        auto init = open_process_dir(rec.state.pid, rec.init_start_time);
        std::string fd = "fd/" + std::to_string(rec.release_fd);
        struct stat st;
        if (init && ::fstatat(init->get(), fd.c_str(), &st, 0) == 0 && S_ISFIFO(st.st_mode) &&
            st.st_ino == rec.release_pipe)
            return oci::ContainerStatus::created;
        return oci::ContainerStatus::running;
    }
    struct stat st; // (a record from before the pipes: its exec fifo)
    if (::fstatat(dir.fd(), kFifo, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return oci::ContainerStatus::created;
    return oci::ContainerStatus::running;
}

Status check_init_is_the_containers(const CgroupHost &host, const ContainerRecord &rec) {
    if (!rec.cgroup_dirs.empty() && !init_in_cgroup(host, rec) && !init_in_own_pid_namespace(rec))
        return fail_code(ESRCH, "container not running (process " + std::to_string(rec.state.pid) +
                                    " is not in its cgroup: gone, or not its init)");
    return {};
}

// The record's init, and with `members` every other process of its own PID
// namespace, signalled only when it is the container's: the process that
// started at the recorded time and, when the record has a cgroup, is in it
// (the PID is read back from the state directory).
Status signal_init(const CgroupHost &host, const ContainerRecord &rec, int sig, bool members) {
    if (!process_alive(rec.state.pid, rec.init_start_time))
        return fail_code(ESRCH, "container not running (its init is gone)");
    OCI_CHECK(check_init_is_the_containers(host, rec));
    if (members) signal_pidns_members(rec.state.pid, rec.init_start_time, sig);
    return signal_process(rec.state.pid, rec.init_start_time, sig);
}

// The host's hierarchies when the record has a cgroup (else an empty map),
// with the record's cgroup checked to be the container's own before any
// command acts on it.
Result<CgroupHost> host_for(const ContainerRecord &rec, const CgroupHost *known) {
    if (rec.cgroup_dirs.empty()) return CgroupHost{};
    CgroupHost host = known ? *known : OCI_TRY(detect_cgroup_host());
    OCI_CHECK(check_own_cgroup(host, rec));
    return host;
}

// A record as start writes it (create stages run's from the same function).
void mark_running(ContainerRecord &rec) {
    rec.started = true;
    rec.state.status = oci::ContainerStatus::running;
}

// The placeholder directories the init made (deepest first), each only if
// it is still the directory recorded and empty: the record is read back from
// the state directory, and what the container put there is not ours.
void remove_placeholders(const ContainerRecord &rec) {
    for (auto it = rec.placeholders.rbegin(); it != rec.placeholders.rend(); ++it) {
        size_t slash = it->path.rfind('/');
        if (slash == std::string::npos || slash + 1 >= it->path.size()) continue;
        std::string parent = slash == 0 ? "/" : it->path.substr(0, slash);
        std::string name = it->path.substr(slash + 1);
        struct open_how how {};
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        Fd dir(
            static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, parent.c_str(), &how, sizeof how)));
        struct stat st;
        if (!dir.valid() || ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_ino != it->ino ||
            static_cast<uint64_t>(st.st_dev) != it->dev) {
            log::debug("placeholder " + it->path + " is not the one made: left");
            continue;
        }
        if (::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) < 0)
            log::debug("placeholder " + it->path + " not removed: " + std::strerror(errno));
    }
}

namespace {

// A container's record and cgroup for the commands that need the cgroup.
struct WithCgroup {
    ContainerDir dir;
    ContainerRecord rec;
    CgroupHost host;
    oci::ContainerStatus status;
};

Result<WithCgroup> open_with_cgroup(const std::string &root, const std::string &id,
                                    const char *cmd) {
    WithCgroup w;
    w.dir = OCI_TRY(ContainerDir::open(root, id));
    w.rec = OCI_TRY(w.dir.load());
    if (w.rec.cgroup_dirs.empty())
        return fail(std::string(cmd) + ": container \"" + id +
                    "\" has no cgroup (an unprivileged user's container without resources)");
    w.host = OCI_TRY(host_for(w.rec));
    w.status = live_status(w.dir, w.host, w.rec);
    return w;
}

Status set_frozen(const std::string &root, const std::string &id, bool frozen) {
    const char *cmd = frozen ? "pause" : "resume";
    WithCgroup w = OCI_TRY(open_with_cgroup(root, id, cmd));
    auto want = frozen ? oci::ContainerStatus::running : oci::ContainerStatus::paused;
    if (w.status != want)
        return fail(std::string(cmd) + ": container \"" + id + "\" is " +
                    oci::status_name(w.status) + ", not " + oci::status_name(want));
    auto r = freeze_cgroup(w.host, w.rec.cgroup_dirs, frozen);
    if (!r) return forward(std::move(r.error()), cmd);
    return {};
}

} // namespace

Result<oci::State> container_state(const std::string &root, const std::string &id) {
    ContainerDir dir = OCI_TRY(ContainerDir::observe(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    CgroupHost host = OCI_TRY(host_for(rec));
    rec.state.status = live_status(dir, host, rec);
    if (rec.state.status == oci::ContainerStatus::stopped) rec.state.pid = 0;
    if (rec.trace) rec.state.annotations[kTraceLogAnnotation] = dir.path() + "/" + kTraceLog;
    return rec.state;
}

Status kill_container(const std::string &root, const std::string &id, int sig, bool all) {
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    ContainerRecord rec = OCI_TRY(dir.load());
    CgroupHost host = OCI_TRY(host_for(rec));
    oci::ContainerStatus st = live_status(dir, host, rec);
    if (st == oci::ContainerStatus::stopped) {
        // As runc: --all still reaches what is left in the cgroup (where it
        // can be the container's), and is not an error (containerd's `task
        // delete --force` sends it); a signal for the init alone is, worded
        // as the runc shim expects.
        if (all && !rec.cgroup_dirs.empty() && outlives_init(rec))
            (void)signal_cgroup(host, rec.cgroup_dirs, sig);
        if (all) return {};
        return fail("kill: container not running (\"" + id + "\" has stopped)");
    }
    if (all) {
        // Every process of the container: its cgroup, or without one (an
        // unprivileged user's container) its own PID namespace.
        if (!rec.cgroup_dirs.empty()) {
            // The init with the rest.
            if (auto r = signal_cgroup(host, rec.cgroup_dirs, sig); !r)
                return forward(std::move(r.error()), "kill --all");
            return {};
        } else if (!has_own_pid_namespace(rec.state.pid)) {
            return fail("kill --all: container \"" + id +
                        "\" has no cgroup and no PID namespace of its own (it shares the "
                        "runtime's or joined another's): its processes cannot be told apart");
        } else {
            signal_pidns_members(rec.state.pid, rec.init_start_time, sig);
        }
    }
    auto r = signal_init(host, rec, sig);
    if (!r) return forward(std::move(r.error()), "kill");
    return {};
}

Status pause_container(const std::string &root, const std::string &id) {
    return set_frozen(root, id, true);
}

Status resume_container(const std::string &root, const std::string &id) {
    return set_frozen(root, id, false);
}

Result<std::vector<pid_t>> container_pids(const std::string &root, const std::string &id) {
    WithCgroup w = OCI_TRY(open_with_cgroup(root, id, "ps"));
    if (w.status == oci::ContainerStatus::stopped && !outlives_init(w.rec))
        return std::vector<pid_t>{};
    auto pids = cgroup_pids(w.host, w.rec.cgroup_dirs);
    if (!pids) return forward(std::move(pids.error()), "ps");
    return pids;
}

// delete with the container's directory already open and locked.
Status remove_container(ContainerDir &dir, bool force, const oci::Spec *known,
                        const CgroupHost *known_host, const RunInit *made) {
    const std::string id = dir.id();
    auto rec = dir.load();
    if (made && rec && (rec->state.pid != made->pid || rec->init_start_time != made->start_time)) {
        log::warning("run: container \"" + id +
                     "\" is no longer the one this run made (deleted and made again "
                     "meanwhile): not deleted");
        return {};
    }
    // A record whose cgroup (or systemd unit) is not the container's own:
    // refused, or with --force the state goes and nothing it names is
    // killed or removed. True when the record may be acted on.
    auto own = [&](Status owned) {
        if (owned) return true;
        if (force)
            log::warning("delete --force: " + owned.error().text() +
                         "; nothing it names is killed or removed");
        rec = std::unexpected(std::move(owned.error()));
        return false;
    };
    CgroupHost host;
    if (rec) {
        auto h = host_for(*rec, known_host);
        if (own(h ? Status{} : Status(std::unexpected(h.error())))) host = std::move(*h);
    }
    // A systemd scope is the container's only with its description (the
    // name comes from the state file): checked before anything in its
    // cgroup is killed.
    std::optional<SystemdScope> scope;
    if (rec && rec->systemd_cgroup) {
        auto s = recorded_scope(*rec);
        if (own(s ? check_scope_owner(*s) : Status(std::unexpected(s.error()))))
            scope = std::move(*s);
    }
    if (rec) {
        oci::ContainerStatus st = live_status(dir, host, *rec);
        // Whether what the cgroup holds may be killed as the container's.
        bool kill_left = st != oci::ContainerStatus::stopped || outlives_init(*rec);
        if (st != oci::ContainerStatus::stopped) {
            if ((st == oci::ContainerStatus::running || st == oci::ContainerStatus::paused) &&
                !force)
                return fail("delete: container \"" + id + "\" is " + oci::status_name(st) +
                            ": stop it first or use --force");
            if (!rec->cgroup_dirs.empty()) (void)signal_cgroup(host, rec->cgroup_dirs, SIGKILL);
            (void)signal_init(host, *rec, SIGKILL, true);
            if (st == oci::ContainerStatus::paused)
                (void)freeze_cgroup(host, rec->cgroup_dirs, false);
            if (!wait_process_gone(rec->state.pid, 10000))
                return fail("delete: container \"" + id + "\": init " +
                            std::to_string(rec->state.pid) + " did not exit after SIGKILL");
            fault_point("delete:killed");
        }
        if (!rec->cgroup_dirs.empty()) {
            // The helper first where nothing is killed wholesale: it is the
            // one process of the container's outside its PID namespace.
            if (!kill_left) stop_shim(rec->shim_pid, rec->shim_start_time, id, dir.path());
            if (auto r = destroy_cgroup(host, rec->cgroup_dirs, kill_left); !r) {
                if (kill_left) return forward(std::move(r.error()), "delete");
                log::warning("delete: " + r.error().text() +
                             ": its processes are not the container's (every one of those "
                             "ended with its init), so it stays");
            }
        }
        // The scope is empty by now: systemd's job ends at once.
        if (scope)
            if (auto r = stop_scope(*scope); !r) return forward(std::move(r.error()), "delete");
        fault_point("delete:cgroup");
    } else if (!force) {
        return forward(std::move(rec.error()), "delete");
    }
    // The network helper leaves with the init; make sure it has.
    if (rec) stop_shim(rec->shim_pid, rec->shim_start_time, id, dir.path());
    fault_point("delete:shim");
    if (rec) remove_network_firewall(dir, *rec);
    std::optional<oci::Spec> spec;
    if (rec && rec->has_hooks && known) {
        spec = *known;
    } else if (rec && rec->has_hooks) {
        auto s = dir.load_spec();
        if (s)
            spec = std::move(*s);
        else
            log::warning("delete: poststop hooks not run: " + s.error().text());
    }
    if (rec) remove_placeholders(*rec);
    auto r = dir.remove();
    if (!r) return forward(std::move(r.error()), "delete");
    if (spec) run_poststop(*spec, *rec);
    return {};
}

Status delete_container(const std::string &root, const std::string &id, bool force,
                        const oci::Spec *known, const CgroupHost *known_host, const RunInit *made) {
    // runc's behaviour, which Podman relies on after a failed create:
    // --force of a container that is not there is done already.
    struct stat st;
    if (force && validate_id(id) && ::lstat((root + "/" + id).c_str(), &st) < 0 && errno == ENOENT)
        return {};
    ContainerDir dir = OCI_TRY(ContainerDir::open(root, id));
    return remove_container(dir, force, known, known_host, made);
}

Result<std::vector<ContainerInfo>> list_containers(const std::string &root) {
    std::vector<ContainerInfo> out;
    CgroupHost host;
    for (const auto &id : OCI_TRY(list_ids(root))) {
        auto dir = ContainerDir::observe(root, id);
        if (!dir) continue;
        auto rec = dir->load();
        if (!rec) continue;
        ContainerInfo info;
        info.state = rec->state;
        if (!rec->cgroup_dirs.empty() && host.hierarchies.empty())
            if (auto h = detect_cgroup_host()) host = std::move(*h);
        info.state.status = live_status(*dir, host, *rec);
        if (info.state.status == oci::ContainerStatus::stopped) info.state.pid = 0;
        info.created = rec->created;
        info.owner = rec->owner;
        out.push_back(std::move(info));
    }
    return out;
}

} // namespace ocirun
