#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char **environ;

namespace test {

Output run(const std::vector<std::string> &argv, const std::string &input) {
    Output o;
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return o;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        close(err[0]);
        o.err = std::string("spawn failed: ") + std::strerror(rc);
        return o;
    }
    // Feed stdin and drain both outputs without deadlocking.
    size_t written = 0;
    if (input.empty()) {
        close(in[1]);
        in[1] = -1;
    }
    bool out_open = true, err_open = true;
    while (out_open || err_open || in[1] >= 0) {
        struct pollfd p[3];
        int n = 0;
        int io = -1, oo = -1, eo = -1;
        if (in[1] >= 0) {
            p[n] = {in[1], POLLOUT, 0};
            io = n++;
        }
        if (out_open) {
            p[n] = {out[0], POLLIN, 0};
            oo = n++;
        }
        if (err_open) {
            p[n] = {err[0], POLLIN, 0};
            eo = n++;
        }
        if (poll(p, n, -1) < 0 && errno != EINTR) break;
        char buf[65536];
        if (io >= 0 && p[io].revents) {
            ssize_t w = write(in[1], input.data() + written, input.size() - written);
            if (w > 0) written += static_cast<size_t>(w);
            if (w < 0 || written == input.size()) {
                close(in[1]);
                in[1] = -1;
            }
        }
        if (oo >= 0 && p[oo].revents) {
            ssize_t r = read(out[0], buf, sizeof buf);
            if (r > 0)
                o.out.append(buf, static_cast<size_t>(r));
            else
                out_open = false;
        }
        if (eo >= 0 && p[eo].revents) {
            ssize_t r = read(err[0], buf, sizeof buf);
            if (r > 0)
                o.err.append(buf, static_cast<size_t>(r));
            else
                err_open = false;
        }
    }
    close(out[0]);
    close(err[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return o;
}

std::string oci_run_path() {
    const char *p = std::getenv("OCI_RUN");
    return p && *p ? p : "oci-run";
}

Output oci(const std::vector<std::string> &args, const std::string &input) {
    std::vector<std::string> argv{oci_run_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, input);
}

std::string make_temp_dir(const char *tag) {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/oci-run-test-" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return {};
    return buf.data();
}

void rm_rf(const std::string &path) {
    if (path.size() < 8 || path.find("/oci-run-test-") == std::string::npos)
        return; // only ever remove what make_temp_dir made
    run({"rm", "-rf", "--one-file-system", path});
}

std::string read_to_eof(int fd) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) out.append(buf, static_cast<size_t>(n));
    return out;
}

uint64_t status_hex(const std::string &status, const char *key) {
    size_t at = status.find(std::string(key) + ":");
    if (at == std::string::npos) return 0;
    return std::strtoull(status.c_str() + at + std::strlen(key) + 1, nullptr, 16);
}

std::string read_file(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string read_output(const std::string &path, const std::string &needle) {
    for (int waited_ms = 0;; waited_ms += 20) {
        std::string s = read_file(path);
        bool whole = !s.empty() && s.back() == '\n' && s.find(needle) != std::string::npos;
        if (whole || waited_ms >= 10000) return s;
        ::usleep(20000);
    }
}

void write_file(const std::string &path, const std::string &content) {
    std::ofstream f(path, std::ios::trunc);
    f << content;
}

std::string ns_link(long pid, const char *ns) {
    char buf[128];
    std::string path = (pid > 0 ? "/proc/" + std::to_string(pid) : "/proc/self") + "/ns/" + ns;
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

bool exists(const std::string &path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

std::string find_in_path(const std::string &name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
    const char *path = std::getenv("PATH");
    std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string d = dirs.substr(start, end - start);
        start = end + 1;
        std::string p = (d.empty() ? "." : d) + "/" + name;
        if (::access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
}

std::string absolute_path(const std::string &p) {
    if (p.find('/') == std::string::npos) return p;
    char *r = ::realpath(p.c_str(), nullptr);
    if (!r) return p;
    std::string s = r;
    std::free(r);
    return s;
}

} // namespace test
