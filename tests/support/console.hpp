// Terminals in tests: a --console-socket listener that receives the pty
// master as runc's clients do, oci-run started on a pty of our own (its
// foreground terminal), and reading a master until some text shows up.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace test {

// A listening UNIX socket in a tracked temp dir.
struct ConsoleSocket {
    std::string path;
    int listen_fd = -1;
};
ConsoleSocket make_console_socket();
// Accept one connection on `listen_fd` and receive one message with the fd
// it sends (SCM_RIGHTS, close on exec): the fd, -1 on timeout or error (or
// when none came). `data`, when given, gets the message's bytes (up to
// 8 KiB). The listener stays open.
int accept_fd(int listen_fd, int timeout_ms, std::string *data = nullptr);
// accept_fd on the console socket, then the listener closed.
int receive_master(ConsoleSocket &s, int timeout_ms = 5000);

// `oci-run --root ROOT create --console-socket S --bundle BUNDLE ID`, as a
// client does: the pty master it sends (-1 if none came), and how create
// ended.
struct ConsoleCreate {
    int master = -1;
    int status = -1;
    std::string err;
};
ConsoleCreate create_with_console_socket(const std::string &root, const std::string &bundle,
                                         const std::string &id);

// Read `fd` until `needle` appears, EOF/EIO, or the timeout; returns all read.
std::string read_until(int fd, const std::string &needle, int timeout_ms = 5000);

// oci-run with a new pty as its controlling terminal and stdio, sized
// rows x cols; `master` is our side.
struct PtyChild {
    pid_t pid = -1;
    int master = -1;
};
PtyChild spawn_oci_on_pty(const std::vector<std::string> &args, unsigned short rows = 24,
                          unsigned short cols = 80);

} // namespace test
