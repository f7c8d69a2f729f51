// Running a program from a test and capturing what it printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace test {

struct Output {
    int status = -1; // exit status, or 128 + signal
    std::string out, err;
};

// Run argv (argv[0] is looked up in PATH) with `input` on stdin.
Output run(const std::vector<std::string> &argv, const std::string &input = "");

// The oci-run binary under test ($OCI_RUN, else "oci-run" from PATH).
std::string oci_run_path();

// oci-run with the given arguments.
Output oci(const std::vector<std::string> &args, const std::string &input = "");

// `name` as exec would find it: a path with a slash if executable, else the
// first executable $PATH entry; "" when there is none.
std::string find_in_path(const std::string &name);
// `p` made absolute (symlinks resolved) when it names a file; a bare name is
// returned as it is.
std::string absolute_path(const std::string &p);

// A fresh directory under $TMPDIR (or /tmp), removed by rm_rf.
std::string make_temp_dir(const char *tag);
void rm_rf(const std::string &path);

std::string read_file(const std::string &path);
// read_file once what a container's process prints there has arrived: the
// file ends a line and holds `needle` (any complete line when it is empty).
// Waits up to 10 s (a loaded machine or a sanitizer build can take far
// longer than a fixed pause would allow), then returns whatever is there.
std::string read_output(const std::string &path, const std::string &needle = "");
// Everything `fd` gives until EOF (it stays open).
std::string read_to_eof(int fd);
// The hex field `key` of a /proc/PID/status text ("CapBnd", "SigIgn"), or 0.
uint64_t status_hex(const std::string &status, const char *key);
void write_file(const std::string &path, const std::string &content);
bool exists(const std::string &path);
// The link of /proc/PID/ns/NS ("mnt:[4026531832]"; pid 0: this process's),
// or "" when it cannot be read.
std::string ns_link(long pid, const char *ns);

} // namespace test
