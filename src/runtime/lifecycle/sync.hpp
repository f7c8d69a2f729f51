// The sync socket between the runtime and the container's init: small typed
// messages, with errors from the child carried as (errno, text) so the CLI
// prints them as one line.
#pragma once

#include "oci/error.hpp"

#include <cstdint>
#include <string>

namespace ocirun::sync {

enum class Msg : uint32_t {
    proceed = 1,        // parent -> child: id maps written, cgroup joined
    ready = 2,          // child -> parent: set up, waiting for start
    error = 3,          // child -> parent: setup failed (errno + text)
    init_hello = 4,     // init -> parent, when it is a grandchild: its PID travels as
                        // SCM_CREDENTIALS (the kernel translates it to the runtime's view)
    hooks = 5,          // child -> parent: mounts done, run prestart + createRuntime
    hooks_done = 6,     // parent -> child: they passed; `value` is the init's host PID
    seccomp_notify = 7, // child -> parent: the seccomp listener fd (SCM_RIGHTS)
    listener = 8,       // child -> parent: a listening socket in the container's netns
                        // (SCM_RIGHTS), one per NetworkPolicy::listen_ports() entry
    fs_rule = 9,        // init -> parent: a filesystem rule as resolved (JSON in text)
    fs_way = 10,        // init -> parent: another way to rule `value`'s object (JSON)
    fs_made = 11,       // init -> parent: a placeholder directory it made (JSON)
    bind_source = 13,   // parent -> init, before proceed: a bind's source opened in the init's
                        // mount namespace (SCM_RIGHTS), one per passes_source() op, in order
    time_offsets = 12,  // init -> parent: its new time namespace (in a user namespace, where
                        // its own /proc files are not its to write) awaits linux.timeOffsets;
                        // the parent writes them and answers proceed
    cgroup_join = 14,   // parent -> init, before proceed: a v1 hierarchy's `tasks` file of the
                        // container's cgroup (SCM_RIGHTS; its directory in text), which the
                        // init writes "0" to at once (runtime/cgroups/cgroup.hpp join_self)
};

struct Packet {
    Msg type;
    int32_t value; // errno for error, PID for hooks_done
    char text[2048];
    int32_t sender; // set by receive: the sender's PID when the socket has SO_PASSCRED
    int32_t fd;     // set by receive: an fd that came with the packet (SCM_RIGHTS), or -1
};

Status send(int fd, Msg type, int32_t value = 0, const char *text = nullptr);
// A packet carrying `passed` (SCM_RIGHTS), and `text` if any.
Status send_with_fd(int fd, Msg type, int passed, const char *text = nullptr);
// Receive one packet; an EOF is an error naming `peer`.
Result<Packet> receive(int fd, const char *peer);
// Send an Error as an error packet (child side).
void send_error(int fd, const Error &e);

// Connect to a UNIX stream socket (the --console-socket); errors name `what`.
Result<int> connect_unix(const std::string &path, const char *what);

// Send `len` bytes of `data` with `fd` attached (SCM_RIGHTS), whole or not at
// all; errors start with `what`.
Status send_with_rights(int sock, const void *data, size_t len, int fd, const std::string &what);

// Send / receive one fd with SCM_RIGHTS.
Status send_fd(int sock, int fd);
Result<int> receive_fd(int sock);

} // namespace ocirun::sync
