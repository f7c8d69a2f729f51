#include "cli.hpp"
#include "runtime/lifecycle/exec.hpp"
#include "runtime/lifecycle/sealed_binary.hpp"

#include <cstdlib>

namespace ocirun::cli {

namespace {
bool parse_u32(const char *s, uint32_t &out) {
    char *end;
    errno = 0;
    unsigned long v = std::strtoul(s, &end, 10);
    if (!*s || *end || errno || v > 0xffffffffUL || s[0] == '-') return false;
    out = static_cast<uint32_t>(v);
    return true;
}
} // namespace

int cmd_exec(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("exec");
    enum { CONSOLE = 500, PID_FILE, CWD, NNP, PRESERVE, IGNORE_PAUSED };
    static const struct option opts[] = {
        {"process", required_argument, nullptr, 'p'},
        {"tty", no_argument, nullptr, 't'},
        {"console-socket", required_argument, nullptr, CONSOLE},
        {"detach", no_argument, nullptr, 'd'},
        {"pid-file", required_argument, nullptr, PID_FILE},
        {"env", required_argument, nullptr, 'e'},
        {"cwd", required_argument, nullptr, CWD},
        {"user", required_argument, nullptr, 'u'},
        {"cap", required_argument, nullptr, 'c'},
        {"no-new-privs", no_argument, nullptr, NNP},
        {"preserve-fds", required_argument, nullptr, PRESERVE},
        {"ignore-paused", no_argument, nullptr, IGNORE_PAUSED},
        {"additional-gids", required_argument, nullptr, 'g'},
        {nullptr, 0, nullptr, 0},
    };
    ExecOptions o;
    o.root = g.root;
    o.sealed = g.sealed;
    char **sealed_argv = g.argv;
    o.reseal = [sealed_argv] { return reexec_sealed(sealed_argv); };
    int rc = parse_flags(cmd, argc, argv, opts, true, [&](int c, const char *arg) -> int {
        switch (c) {
        case 'p':
            o.process_file = arg;
            break;
        case 't':
            o.tty = true;
            break;
        case CONSOLE:
            o.console_socket = arg;
            break;
        case 'd':
            o.detach = true;
            break;
        case PID_FILE:
            o.pid_file = arg;
            break;
        case 'e':
            o.env.push_back(arg);
            break;
        case CWD:
            o.cwd = arg;
            break;
        case 'u': {
            std::string s = arg;
            auto colon = s.find(':');
            uint32_t uid = 0, gid = 0;
            if (!parse_u32(s.substr(0, colon).c_str(), uid) ||
                (colon != std::string::npos && !parse_u32(s.substr(colon + 1).c_str(), gid)))
                return usage_error(cmd.name, "--user: expected UID[:GID], got \"" + s + "\"");
            o.uid = uid;
            if (colon != std::string::npos) o.gid = gid;
            break;
        }
        case 'c':
            o.caps.push_back(arg);
            break;
        case NNP:
            o.no_new_privs = true;
            break;
        case IGNORE_PAUSED:
            o.ignore_paused = true;
            break;
        case PRESERVE: {
            uint32_t n;
            if (!parse_u32(arg, n) || n > 1000)
                return usage_error(
                    cmd.name, std::string("--preserve-fds: expected 0..1000, got \"") + arg + "\"");
            o.preserve_fds = static_cast<int>(n);
            break;
        }
        case 'g': {
            uint32_t gid;
            if (!parse_u32(arg, gid))
                return usage_error(cmd.name,
                                   std::string("--additional-gids: expected a gid, got \"") + arg +
                                       "\"");
            o.additional_gids.push_back(gid);
            break;
        }
        }
        return 0;
    });
    if (rc >= 0) return rc;
    if (optind >= argc) return usage_error(cmd.name, "missing container ID");
    o.id = argv[optind];
    for (int i = optind + 1; i < argc; i++)
        o.args.push_back(argv[i]);
    if (o.process_file.empty() && o.args.empty())
        return usage_error(cmd.name, "missing the command to run (or --process FILE)");
    if (!o.process_file.empty() && !o.args.empty())
        return usage_error(cmd.name, "give either --process FILE or a command, not both");
    auto status = exec_in_container(o);
    return status ? *status : report(status.error());
}

} // namespace ocirun::cli
