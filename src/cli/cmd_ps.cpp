#include "cli.hpp"
#include "oci/text.hpp"
#include "runtime/lifecycle/container.hpp"
#include "runtime/process/spawn.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>

namespace ocirun::cli {

namespace {

// `ps ARGS` (default -ef), filtered to the container's PIDs, as runc prints it.
int print_table(const std::vector<pid_t> &pids, std::vector<std::string> args) {
    if (args.empty()) args = {"-ef"};
    // ps's stderr goes to a pipe too: when it refuses its arguments its
    // usage text would follow ours on stderr; its first line goes into our
    // one-line error instead. It is read after stdout's EOF: what ps says
    // there is far below a pipe's capacity.
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) < 0) return report(Error{errno, "ps: pipe"});
    if (::pipe2(err, O_CLOEXEC) < 0) {
        int e = errno;
        ::close(out[0]);
        ::close(out[1]);
        return report(Error{e, "ps: pipe"});
    }
    ocirun::SpawnSpec ps;
    ps.path = "ps";
    ps.search = true;
    ps.args = {"ps"};
    ps.args.insert(ps.args.end(), args.begin(), args.end());
    ps.out = out[1];
    ps.err = err[1];
    auto spawned = ocirun::spawn_program(ps, "ps: run ps");
    ::close(out[1]);
    ::close(err[1]);
    if (!spawned) {
        ::close(out[0]);
        ::close(err[0]);
        return report(spawned.error());
    }
    pid_t pid = *spawned;
    auto drain = [](int fd) {
        std::string text;
        char buf[8192];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            if (n > 0) text.append(buf, static_cast<size_t>(n));
        ::close(fd);
        return text;
    };
    std::string text = drain(out[0]);
    std::string said = drain(err[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string first = said.substr(0, said.find('\n'));
        return report("ps: ps " + args[0] + " failed" + (first.empty() ? "" : ": " + first));
    }
    // A warning from a ps that succeeded is passed on as it was.
    std::fputs(said.c_str(), stderr);
    std::string_view body(text);
    size_t nl = body.find('\n');
    std::string header(body.substr(0, nl));
    body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
    // The PID column: its position in the header.
    size_t col = SIZE_MAX;
    auto names = words(header);
    for (size_t i = 0; i < names.size(); i++)
        if (names[i] == "PID") col = i;
    if (col == SIZE_MAX) return report("ps: no PID column in the output of ps " + args[0]);
    std::set<pid_t> want(pids.begin(), pids.end());
    std::printf("%s\n", header.c_str());
    for_each_line(body, [&](std::string_view line) {
        auto f = words(line);
        auto pid = col < f.size() ? number<pid_t>(f[col]) : std::nullopt;
        if (pid && want.count(*pid))
            std::printf("%.*s\n", static_cast<int>(line.size()), line.data());
    });
    return 0;
}

} // namespace

int cmd_ps(const Globals &g, int argc, char **argv) {
    const Command &cmd = *find_command("ps");
    static const struct option opts[] = {{"format", required_argument, nullptr, 'f'},
                                         {nullptr, 0, nullptr, 0}};
    std::string format = "table";
    // Stop at the ID: what follows is for ps.
    int rc = parse_flags(cmd, argc, argv, opts, true, [&](int, const char *v) {
        format = v;
        return 0;
    });
    if (rc >= 0) return rc;
    if (format != "table" && format != "json")
        return usage_error(cmd.name, "--format: expected table or json, got \"" + format + "\"");
    if (optind >= argc) return expect_args(cmd, argc, argv, 1);
    auto pids = container_pids(g.root, argv[optind]);
    if (!pids) return report(pids.error());
    if (format == "json") {
        std::string out = "[";
        for (size_t i = 0; i < pids->size(); i++)
            out += (i ? "," : "") + std::to_string((*pids)[i]);
        std::printf("%s]\n", out.c_str());
        return 0;
    }
    return print_table(*pids, std::vector<std::string>(argv + optind + 1, argv + argc));
}

} // namespace ocirun::cli
