// A terminal for `run` and `exec` in the foreground without --console-socket,
// as runc does: the runtime keeps the pty master itself and relays it to its
// own stdin and stdout, with its terminal (when stdin is one) in raw mode and
// the pty's size following it (SIGWINCH).
#pragma once

#include "oci/error.hpp"

#include <sys/types.h>

namespace ocirun {

// Relay between this process's stdio and `master` until `pid` (a child of
// this process) exits; returns its exit status (128 + signal when killed).
// Takes ownership of `master`.
Result<int> relay_terminal(int master, pid_t pid);

} // namespace ocirun
