#include "runtime/lifecycle/exec_stage.hpp"

#include "build_config.h"
#include "runtime/lifecycle/exec_stage_protocol.hpp"
#include "runtime/lifecycle/sealed_binary.hpp"
#include "runtime/lifecycle/sync.hpp"
#include "runtime/log.hpp"
#include "runtime/network/shim_launch.hpp"
#include "runtime/process/proc.hpp"
#include "runtime/process/process_setup.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ocirun {

// The stage writes the sync socket's packets itself.
static_assert(sizeof(exec_stage::Packet) == sizeof(sync::Packet));
static_assert(offsetof(exec_stage::Packet, text) == offsetof(sync::Packet, text));
static_assert(sizeof(exec_stage::Packet::text) == sizeof(sync::Packet::text));
static_assert(exec_stage::kProceed == static_cast<unsigned>(sync::Msg::proceed));
static_assert(exec_stage::kReady == static_cast<unsigned>(sync::Msg::ready));
static_assert(exec_stage::kError == static_cast<unsigned>(sync::Msg::error));
static_assert(exec_stage::kHello == static_cast<unsigned>(sync::Msg::init_hello));
static_assert(exec_stage::kSeccompNotify == static_cast<unsigned>(sync::Msg::seccomp_notify));

namespace {

// Where the other helpers are found (helper_path: beside this binary, in
// ../libexec/oci-run/ of a prefix, else the configured $libexecdir).
std::string find_stage() {
    const char *env = std::getenv("OCI_RUN_EXEC_STAGE");
    if (env && *env) return ::access(env, X_OK) == 0 ? env : "";
    std::string path = helper_path("oci-run-exec-stage", OCIRUN_EXEC_STAGE_PATH);
    return ::access(path.c_str(), X_OK) == 0 ? path : "";
}

// Any rule that may notify (whatever capabilities it is conditional on).
bool may_notify(const oci::Seccomp &s) {
    if (s.default_action == "SCMP_ACT_NOTIFY") return true;
    for (const auto &sc : s.syscalls)
        if (sc.action == "SCMP_ACT_NOTIFY") return true;
    return false;
}

// The stage's path, or "" with the reason at debug (`why`: why not, or null).
std::string stage_unless(const char *why) {
    if (why) {
        log::debug(std::string("exec stage not used: ") + why);
        return "";
    }
    std::string path = find_stage();
    if (path.empty()) log::debug("exec stage not used: oci-run-exec-stage is not installed");
    return path;
}

bool new_pid_namespace(const oci::Spec &spec) {
    const oci::Namespace *pid = spec.linux_->find_namespace(oci::NsType::pid);
    return pid && pid->path.empty();
}

} // namespace

std::string exec_stage_for(const oci::Spec &spec) {
    const auto &seccomp = spec.linux_->seccomp;
    const char *why = nullptr;
    if (!new_pid_namespace(spec))
        why = "the PID namespace is not a new one";
    else if (spec.hooks &&
             (!spec.hooks->create_container.empty() || !spec.hooks->start_container.empty()))
        why = "hooks run in the container's namespaces";
    else if (seccomp && (!spec.process->no_new_privileges || may_notify(*seccomp)))
        why = "the seccomp filter goes in before the exec";
    return stage_unless(why);
}

std::string exec_stage_for_join(const oci::Process &p, bool pid_namespace_is_ours,
                                bool runtime_mapped) {
    const char *why = nullptr;
    if (pid_namespace_is_ours)
        why = "the container's PID namespace is the runtime's";
    else if (runtime_mapped)
        why = "the container's user namespace maps the runtime's uid or gid";
    else if (p.scheduler && std::find(p.scheduler->flags.begin(), p.scheduler->flags.end(),
                                      "SCHED_FLAG_RESET_ON_FORK") != p.scheduler->flags.end())
        why = "process.scheduler resets on fork";
    return stage_unless(why);
}

Result<Fd> stage_filters(const std::vector<const SeccompFilter *> &filters) {
    std::string data;
    for (const SeccompFilter *f : filters)
        for (const auto &program : f->programs) {
            uint32_t head[2] = {f->load_flags(), static_cast<uint32_t>(program.size())};
            data.append(reinterpret_cast<const char *>(head), sizeof head);
            data.append(reinterpret_cast<const char *>(program.data()),
                        program.size() * sizeof program[0]);
        }
    return sealed_memfd("oci-run-seccomp", data, "exec stage: the seccomp filters' memfd");
}

Result<Fd> open_join_stage(const std::string &path) {
    auto mem = memfd_copy_of(path, "oci-run-exec-stage");
    if (!mem) return mem;
    if (::fchmod(mem->get(), 0111) < 0)
        return fail_errno("exec stage: make the sealed copy execute-only");
    return mem;
}

Result<Fd> open_exec_stage(const std::string &path) {
    return sealed_copy_of(path, "oci-run-exec-stage");
}

Status prepare_exec_stage(ExecStage &stage, const oci::Process &p,
                          const std::vector<const SeccompFilter *> &filters, StageFds fds) {
    if (!filters.empty()) stage.filters = OCI_TRY(stage_filters(filters));
    ExecCandidates c = exec_candidates(p);
    stage.args = {exec_stage::kName,
                  std::to_string(fds.fifo_read),
                  std::to_string(fds.fifo_write),
                  std::to_string(fds.result),
                  std::to_string(stage.filters.get()),
                  p.args[0],
                  c.dirs,
                  std::to_string(c.files.size())};
    stage.args.insert(stage.args.end(), c.files.begin(), c.files.end());
    stage.args.insert(stage.args.end(), p.args.begin(), p.args.end());
    return {};
}

Error enter_exec_stage(ExecStage &stage, const oci::Process &p, StageFds fds) {
    // These four outlive the exec; the stage closes or marks them.
    for (int fd : {fds.fifo_read, fds.fifo_write, fds.result, stage.filters.get()})
        if (fd >= 0 && ::fcntl(fd, F_SETFD, 0) < 0)
            return Error{errno, "exec stage: keep fd " + std::to_string(fd) + " open"};
    std::vector<char *> argv = exec_strings(stage.args), envp = exec_strings(p.env);
    ::syscall(SYS_execveat, stage.view.get(), "", argv.data(), envp.data(), AT_EMPTY_PATH);
    return Error{errno, "exec stage: execute oci-run-exec-stage"};
}

} // namespace ocirun
