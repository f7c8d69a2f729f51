// A terminal for `run` and `exec` in the foreground without --console-socket,
// as runc does: the runtime keeps the pty master itself and relays it to its
// own stdin and stdout, with its terminal (when stdin is one) in raw mode and
// the pty's size following it (SIGWINCH).
#pragma once

#include "oci/error.hpp"
#include "oci/spec.hpp"

#include <optional>

#include <sys/types.h>

namespace ocirun {

// The size of the terminal on this process's stdin, if it is one: the
// size a foreground run or exec gives the container's pty before the
// process runs (the relay follows later changes).
std::optional<oci::Box> own_terminal_size();

// Relay between this process's stdio and `master` until `pid` (a child of
// this process) exits; returns its exit status (128 + signal when killed).
// Takes ownership of `master`.
Result<int> relay_terminal(int master, pid_t pid);

} // namespace ocirun
