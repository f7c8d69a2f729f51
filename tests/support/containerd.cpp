#include "containerd.hpp"

#include "harness.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

namespace test {

using Argv = std::vector<std::string>;

std::vector<std::string> cgroup_mounts() {
    std::vector<std::string> out;
    std::istringstream in(read_file("/proc/self/mountinfo"));
    std::string line;
    while (std::getline(in, line)) {
        size_t dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
        std::string f, mnt, type;
        for (int i = 0; i < 5 && pre >> f; i++)
            mnt = f;
        post >> type;
        if (type == "cgroup" || type == "cgroup2") out.push_back(mnt);
    }
    return out;
}

off_t size_of(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

namespace {

std::string sha256_of(const std::string &path) {
    Output o = run(Argv{"sha256sum", path});
    return o.status == 0 ? o.out.substr(0, 64) : "";
}

// Move `file` into the layout's blobs; returns "sha256:<hex>" ("" on failure)
// and its size in `size`.
std::string add_blob(const std::string &layout, const std::string &file, off_t &size) {
    std::string hex = sha256_of(file);
    size = size_of(file);
    if (hex.empty() || size < 0) return "";
    if (rename(file.c_str(), (layout + "/blobs/sha256/" + hex).c_str()) != 0) return "";
    return "sha256:" + hex;
}

std::string add_json_blob(const std::string &layout, const std::string &name,
                          const std::string &json, off_t &size) {
    write_file(layout + "/" + name, json);
    return add_blob(layout, layout + "/" + name, size);
}

} // namespace

std::string oci_archive(const std::string &work, const std::string &rootfs, const std::string &ref,
                        const std::string &cmd_json, std::string &why) {
    std::string layout = work + "/layout";
    mkdir(work.c_str(), 0700);
    mkdir(layout.c_str(), 0700);
    mkdir((layout + "/blobs").c_str(), 0700);
    mkdir((layout + "/blobs/sha256").c_str(), 0700);

    std::string layer = layout + "/layer.tar";
    Output t = run(
        Argv{"tar", "--numeric-owner", "--owner=0", "--group=0", "-C", rootfs, "-cf", layer, "."});
    if (t.status != 0) {
        why = "tar of the rootfs: " + t.err;
        return "";
    }
    // An uncompressed layer: its digest is also its diff_id.
    off_t layer_size, config_size, manifest_size;
    std::string layer_digest = add_blob(layout, layer, layer_size);
    std::string config_digest = add_json_blob(
        layout, "config.json",
        R"({"architecture":"amd64","os":"linux","config":{"Env":)"
        R"(["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],)"
        R"("Cmd":)" +
            cmd_json + R"(,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":[")" +
            layer_digest + R"("]}})",
        config_size);
    std::string manifest_digest = add_json_blob(
        layout, "manifest.json",
        R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
        R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
            config_digest + R"(","size":)" + std::to_string(config_size) +
            R"(},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":")" +
            layer_digest + R"(","size":)" + std::to_string(layer_size) + "}]}",
        manifest_size);
    if (layer_digest.empty() || config_digest.empty() || manifest_digest.empty()) {
        why = "writing the layout's blobs failed";
        return "";
    }
    write_file(layout + "/index.json",
               R"({"schemaVersion":2,"manifests":[{"mediaType":)"
               R"("application/vnd.oci.image.manifest.v1+json","digest":")" +
                   manifest_digest + R"(","size":)" + std::to_string(manifest_size) +
                   R"(,"annotations":{"org.opencontainers.image.ref.name":")" + ref + R"("}}]})");
    write_file(layout + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    std::string archive = work + "/image.tar";
    t = run(Argv{"tar", "-C", layout, "-cf", archive, "."});
    if (t.status != 0) {
        why = "tar of the layout: " + t.err;
        return "";
    }
    return archive;
}

std::string containerd_config(const std::string &dir, bool cri, const std::string &rest) {
    std::string t = std::string(R"(version = 2
root = "@/root"
state = "@/state"
disabled_plugins = [)") +
                    (cri ? "" : "\"io.containerd.grpc.v1.cri\", ") +
                    R"("io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "@/containerd.sock"
[ttrpc]
  address = "@/containerd.sock.ttrpc"
[debug]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "@/opt"
)" + rest;
    for (size_t at; (at = t.find('@')) != std::string::npos;)
        t.replace(at, 1, dir);
    return t;
}

pid_t start_containerd(const std::string &config, const std::string &log) {
    std::string bin = find_in_path("containerd");
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (out < 0 || in < 0 || unshare(CLONE_NEWNS) != 0 ||
            mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        close_range(3, ~0U, 0);
        execl(bin.c_str(), bin.c_str(), "--config", config.c_str(), static_cast<char *>(nullptr));
        _exit(127);
    }
    return pid;
}

} // namespace test
