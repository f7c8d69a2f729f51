// The state directory (--root): one subdirectory per container holding
// state.json and config.json, each guarded by an flock so commands on one
// ID are serialised while commands on different IDs run in parallel.
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"
#include "oci/state.hpp"
#include "runtime/lifecycle/record.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ocirun {

// The compiled seccomp programs a container's state directory keeps:
// config.json's profile and the sandbox guard.
enum class KeptFilter { profile, guard };
const char *kept_filter_file(KeptFilter which); // "seccomp.bpf", "guard.bpf"

// ^[A-Za-z0-9][A-Za-z0-9_.-]{0,1023}$ : no "/", no "..", no leading dot.
Status validate_id(const std::string &id);

class ContainerDir {
  public:
    ContainerDir() = default;
    ContainerDir(ContainerDir &&o) noexcept;
    ContainerDir &operator=(ContainerDir &&o) noexcept;
    ~ContainerDir();

    // Make <root>/<id> (refusing an existing one) and lock it.
    static Result<ContainerDir> create(const std::string &root, const std::string &id);
    // Open and lock an existing container's directory.
    static Result<ContainerDir> open(const std::string &root, const std::string &id);
    // For readers (state, list): a shared lock when it is free at once, else
    // none (busy() tells: a create, start or delete holds it). state.json is
    // replaced by rename, or rewritten in place under its OFD write lock,
    // which read() waits for (save), so what load() reads is whole either
    // way; waiting for the directory would queue every reader behind every
    // create in progress.
    static Result<ContainerDir> observe(const std::string &root, const std::string &id);
    bool busy() const { return busy_; }

    const std::string &path() const { return path_; } // ROOT/ID
    const std::string &root() const { return root_; }
    const std::string &id() const { return id_; }
    int fd() const { return fd_; }

    // The record and the config.json create copied here, each only if it
    // is a regular file of this user's that group and others cannot write
    // (as the directory and the root are checked to be on open): they decide
    // what is killed, removed and run as hooks.
    Result<ContainerRecord> load() const;
    Result<oci::Spec> load_spec() const;
    // In place when the record and the old one fit a page (create saves
    // three times: no new inode for each), else by rename.
    Status save(const ContainerRecord &rec) const;
    // save() in two steps, for a change that must be recorded once made:
    // the record is written beside state.json now, renamed over it by
    // commit() (which needs no room on the filesystem).
    Result<oci::StagedFile> stage(const ContainerRecord &rec) const;
    // Seccomp programs exec compiled, kept for the next exec (exec.cpp
    // kept_or_compiled) in ROOT/ID/kept_filter_file(which); read as the
    // record is.
    Result<std::string> load_compiled(KeptFilter which) const;
    Status save_compiled(KeptFilter which, std::string_view data) const;
    // Remove the directory and everything in it; the object is then empty.
    Status remove();

  private:
    Result<std::string> read(const char *name, size_t limit) const;
    static Result<ContainerDir> open_as(const std::string &root, const std::string &id,
                                        bool reader);
    std::string root_, path_, id_;
    int fd_ = -1;       // directory fd, flock'ed
    bool busy_ = false; // observe(): another command holds the lock
};

// IDs of the containers under root (directories with a state.json).
Result<std::vector<std::string>> list_ids(const std::string &root);

} // namespace ocirun
