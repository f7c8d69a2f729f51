// Kubernetes' side of oci-run: containerd's CRI plugin driven as kubelet
// drives it, by the suite's own CRI client (tests/clients/cri/client.py on
// Debian's python3-grpcio, speaking the runtime.v1 messages of
// tests/clients/cri/cri.proto), with oci-run as the RuntimeClass handler
// "ocirun" (through the runc v2 shim) and CNI bridge networking: a bridge and
// subnet of the test's own, no NAT, no host firewall rules. Each test gets
// its own containerd (config, root, state, socket and CNI state under one
// temp dir; a private mount namespace with a tmpfs on /run), the images
// imported from a contrib/make-bundle.sh rootfs, and a cgroup parent of its
// own. The pods' "outside" is a server on the bridge's gateway address.
//
// Skipped without root, containerd, /usr/bin/python3 with grpc, or protoc.
#include "oci/json.hpp"
#include "support/bundle.hpp"
#include "support/container_env.hpp"
#include "support/containerd.hpp"
#include "support/harness.hpp"
#include "support/net_server.hpp"
#include "support/process.hpp"
#include "support/systemd_node.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using test::contains;
using test::read_file;
using test::write_file;

namespace {

const char *const kPause = "docker.io/library/ocirun-pause:test";
const char *const kImage = "docker.io/library/ocirun-busybox:test";
const char *const kSubnet = "10.89.78.0/24";
const char *const kGateway = "10.89.78.1";

struct Cri {
    std::string skip, failure;
    // In a systemd node (support/systemd_node.hpp), containerd with
    // SystemdCgroup = true: pods' cgroup parents are slices.
    bool systemd = false;
    std::string dir, sock, state, cgroup_parent, bridge, strict_name, strict_file;
    pid_t daemon = -1;
    pid_t client = -1;
    FILE *to = nullptr, *from = nullptr;
    std::vector<std::string> pods;
};

Cri g;
test::SystemdNode g_node;

bool exists(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

std::string config_toml() {
    std::string t = R"([plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/ocirun-pause:test"
  # The sandbox's oom_score_adj of -998 needs CAP_SYS_RESOURCE: no lower
  # than containerd's own.
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "ocirun"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ocirun]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["dev.ocirun.*"]
      container_annotations = ["dev.ocirun.*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ocirun.options]
        BinaryName = "@/oci-run"
        Root = "@/oci-run-state"
        SystemdCgroup = %SYSTEMD%
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ocirun-strict]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["dev.ocirun.*"]
      container_annotations = ["dev.ocirun.*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ocirun-strict.options]
        BinaryName = "@/%STRICT%"
        Root = "@/oci-run-state"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "@/cni"
    max_conf_num = 1
)";
    for (size_t at; (at = t.find("%STRICT%")) != std::string::npos;)
        t.replace(at, 8, g.strict_name);
    t.replace(t.find("%SYSTEMD%"), 9, g.systemd ? "true" : "false");
    return test::containerd_config(g.dir, true, t);
}

std::string cni_conflist() {
    return std::string(R"({"cniVersion": "0.4.0", "name": "ocirun-cri", "plugins": [)") +
           R"({"type": "bridge", "bridge": ")" + g.bridge +
           R"(", "isGateway": true, "ipMasq": false, "ipam": {"type": "host-local", "dataDir": ")" +
           g.dir + R"(/cni-ipam", "routes": [{"dst": "0.0.0.0/0"}], "ranges": [[{"subnet": ")" +
           kSubnet + R"(", "gateway": ")" + kGateway + R"("}]]}}]})";
}

// One CRI call through the client: the response line.
std::string call(const std::string &name, const std::string &request, int timeout_s = 60) {
    cr_assert(g.to && g.from, "no CRI client");
    std::string line = "{\"call\": \"" + name + "\", \"request\": " + request +
                       ", \"timeout\": " + std::to_string(timeout_s) + "}\n";
    std::fputs(line.c_str(), g.to);
    std::fflush(g.to);
    std::string out;
    int c;
    while ((c = std::fgetc(g.from)) != EOF && c != '\n')
        out += static_cast<char>(c);
    cr_assert(!out.empty(), "the CRI client gave no answer to %s (see %s/client.log)", name.c_str(),
              g.dir.c_str());
    return out;
}

bool ok(const std::string &answer) {
    return answer.rfind("{\"ok\": true", 0) == 0;
}

// A string member at `path` (dot-separated) of the answer's response.
std::string field(const std::string &answer, const std::string &path) {
    auto doc = ocirun::json::Document::parse(answer);
    if (!doc) return "";
    yajl_val v = ocirun::json::member(doc->root(), "response");
    std::istringstream in(path);
    for (std::string part; v && std::getline(in, part, '.');)
        v = ocirun::json::member(v, part.c_str());
    if (v && YAJL_IS_STRING(v)) return YAJL_GET_STRING(v);
    if (v && YAJL_IS_NUMBER(v)) return YAJL_GET_NUMBER(v);
    return "";
}

std::string quoted(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

std::string annotations_json(const std::vector<std::pair<std::string, std::string>> &a) {
    std::string j = "{";
    for (const auto &[k, v] : a)
        j += (j.size() > 1 ? ", " : "") + quoted(k) + ": " + quoted(v);
    return j + "}";
}

std::string pod_config(const std::string &name,
                       const std::vector<std::pair<std::string, std::string>> &annotations) {
    return "{\"metadata\": {\"name\": " + quoted(name) + ", \"uid\": " + quoted(name + "-uid") +
           ", \"namespace\": \"default\", \"attempt\": 0}, \"hostname\": " + quoted(name) +
           ", \"log_directory\": " + quoted(g.dir + "/logs/" + name) +
           ", \"dns_config\": {\"servers\": [\"10.89.78.53\"]}, \"annotations\": " +
           annotations_json(annotations) + ", \"linux\": {\"cgroup_parent\": " +
           quoted(g.systemd ? "ocirun-" + name + ".slice" : g.cgroup_parent + "/" + name) + "}}";
}

// RunPodSandbox: the answer (the ID is field(answer, "pod_sandbox_id")).
std::string run_pod(const std::string &name,
                    const std::vector<std::pair<std::string, std::string>> &annotations,
                    const std::string &handler = "ocirun") {
    ::mkdir((g.dir + "/logs").c_str(), 0700);
    ::mkdir((g.dir + "/logs/" + name).c_str(), 0700);
    std::string a = call("RunPodSandbox", "{\"config\": " + pod_config(name, annotations) +
                                              ", \"runtime_handler\": " + quoted(handler) + "}");
    if (ok(a)) g.pods.push_back(field(a, "pod_sandbox_id"));
    return a;
}

std::string create_container(const std::string &pod, const std::string &pod_name,
                             const std::string &name, const std::string &script,
                             const std::vector<std::pair<std::string, std::string>> &pod_ann,
                             const std::vector<std::pair<std::string, std::string>> &ann = {}) {
    std::string config = "{\"metadata\": {\"name\": " + quoted(name) +
                         "}, \"image\": {\"image\": " + quoted(kImage) +
                         "}, \"command\": [\"sh\", \"-c\", " + quoted(script) +
                         "], \"log_path\": " + quoted(name + ".log") +
                         ", \"annotations\": " + annotations_json(ann) + "}";
    return call("CreateContainer",
                "{\"pod_sandbox_id\": " + quoted(pod) + ", \"config\": " + config +
                    ", \"sandbox_config\": " + pod_config(pod_name, pod_ann) + "}");
}

std::string exec_sync(const std::string &id, const std::string &script) {
    return call("ExecSync", "{\"container_id\": " + quoted(id) + ", \"cmd\": [\"sh\", \"-c\", " +
                                quoted(script) + "], \"timeout\": 20}");
}

std::string id_req(const char *key, const std::string &id) {
    return std::string("{\"") + key + "\": " + quoted(id) + "}";
}

// ---- set-up and teardown --------------------------------------------------------------

std::string python() {
    return exists("/usr/bin/python3") ? "/usr/bin/python3" : "";
}

void start_client() {
    int in[2], out[2];
    cr_assert(::pipe(in) == 0 && ::pipe(out) == 0);
    const char *src = std::getenv("OCI_RUN_CRI_CLIENT");
    std::string client = src && *src ? src : "tests/clients/cri/client.py";
    std::string log = g.dir + "/client.log";
    g.client = ::fork();
    if (g.client == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        int e = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(e, 2);
        ::close_range(3, ~0U, 0);
        std::string py = python();
        std::string build = g.dir + "/cri-py";
        ::execl(py.c_str(), py.c_str(), client.c_str(), g.sock.c_str(), build.c_str(),
                static_cast<char *>(nullptr));
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    g.to = ::fdopen(in[1], "w");
    g.from = ::fdopen(out[0], "r");
}

void cri_setup(bool in_node) {
    g = Cri{};
    g.systemd = in_node;
    if (::geteuid() != 0) {
        g.skip = "the CRI suite needs root";
        return;
    }
    for (const char *bin : {"containerd", "ctr", "containerd-shim-runc-v2", "protoc"})
        if (test::find_in_path(bin).empty()) {
            g.skip = std::string(bin) + " is not installed (Debian: containerd, protobuf-compiler)";
            return;
        }
    if (python().empty() ||
        test::run(std::vector<std::string>{"/usr/bin/python3", "-c", "import grpc"}).status != 0) {
        g.skip = "/usr/bin/python3 with grpc is not installed (Debian: python3-grpcio)";
        return;
    }
    if (in_node) {
        // The build tree and the sources (the client) at the same paths.
        std::string oci = test::absolute_path(test::oci_run_path());
        std::string build = oci.substr(0, oci.rfind('/'));
        build = build.substr(0, build.rfind('/'));
        std::vector<std::string> binds = {build};
        if (const char *c = std::getenv("OCI_RUN_CRI_CLIENT")) {
            std::string src = test::absolute_path(c);
            for (int i = 0; i < 3; i++)
                src = src.substr(0, src.rfind('/'));
            binds.push_back(src);
        }
        test::boot_node(g_node, binds);
        if (!g_node.skip.empty() || !g_node.failure.empty()) {
            g.skip = g_node.skip;
            g.failure = g_node.failure;
            return;
        }
        g.dir = g_node.share + "/cri";
        ::mkdir(g.dir.c_str(), 0755);
    } else {
        g.dir = test::track_dir(test::make_temp_dir("cri"));
    }
    ::chmod(g.dir.c_str(), 0755);
    g.sock = g.dir + "/containerd.sock";
    g.state = g.dir + "/oci-run-state";
    g.cgroup_parent = "/ocirun-cri-" + std::to_string(::getpid());
    g.bridge = "ocri" + std::to_string(::getpid() % 1000000);
    g.strict_name = "oci-run-c" + std::to_string(::getpid());
    ::mkdir((g.dir + "/cni").c_str(), 0700);
    write_file(g.dir + "/cni/10-ocirun.conflist", cni_conflist());
    char real[PATH_MAX];
    cr_assert(::realpath(test::oci_run_path().c_str(), real) != nullptr);
    write_file(g.dir + "/oci-run", std::string("#!/bin/sh\nexec '") + real + "' \"$@\"\n");
    ::chmod((g.dir + "/oci-run").c_str(), 0755);
    // The strict handler: oci-run under a name of its own, whose baseline
    // (network none) a pod may only tighten.
    cr_assert(::symlink(real, (g.dir + "/" + g.strict_name).c_str()) == 0);
    if (!in_node) {
        ::mkdir("/etc/oci-run", 0755);
        g.strict_file = "/etc/oci-run/" + g.strict_name + ".json";
        write_file(g.strict_file, R"({"policy": {"dev.ocirun.network": "none"}})");
    }
    write_file(g.dir + "/config.toml", config_toml());
    // Names the pods' helpers resolve (containerd, its shims and oci-run
    // hand the environment on).
    write_file(g.dir + "/hosts", std::string(kGateway) + " a.test\n");
    ::setenv("OCI_RUN_RESOLVE_HOSTS", (g.dir + "/hosts").c_str(), 1);
    if (in_node)
        // In the node's namespaces, under its systemd (its /run is the node's).
        (void)test::in_node(g_node, {"/bin/sh", "-c",
                                     "(containerd --config " + g.dir + "/config.toml > " + g.dir +
                                         "/containerd.log 2>&1 < /dev/null &)"});
    else
        g.daemon = test::start_containerd(g.dir + "/config.toml", g.dir + "/containerd.log");
    auto ctr = [](std::vector<std::string> args, int ms) {
        std::vector<std::string> argv{"ctr", "--address", g.sock, "--namespace", "k8s.io"};
        argv.insert(argv.end(), args.begin(), args.end());
        return test::run_files(argv, -1, ms);
    };
    bool up = false;
    for (int i = 0; i < 300 && !up; i++) {
        up = exists(g.sock) && ctr({"version"}, 5000).status == 0;
        if (!up) ::usleep(50000);
    }
    if (!up) {
        g.failure = "containerd did not start: " + read_file(g.dir + "/containerd.log");
        return;
    }
    test::Bundle b = test::make_bundle("cri-rootfs");
    test::track_dir(b.dir);
    std::string why;
    int images = 0;
    for (const auto &[ref, cmd] :
         {std::pair<const char *, const char *>{kPause, R"(["sleep", "1000000"])"},
          {kImage, R"(["sh"])"},
          {"docker.io/library/busybox:stable", R"(["sh"])"}}) {
        std::string archive = test::oci_archive(g.dir + "/image-" + std::to_string(images++),
                                                b.rootfs, ref, cmd, why);
        if (archive.empty()) {
            g.failure = "building " + std::string(ref) + ": " + why;
            return;
        }
        auto imp = ctr({"images", "import", archive}, 30000);
        if (imp.status != 0) {
            g.failure = "ctr images import: " + imp.out + imp.err;
            return;
        }
    }
    start_client();
    std::string v = call("Version", "{\"version\": \"v1\"}");
    if (!ok(v)) g.failure = "CRI Version: " + v;
}

void cri_init() {
    cri_setup(false);
}

void cri_node_init() {
    cri_setup(true);
}

void remove_cgroups(const std::string &path) {
    for (const auto &e : test::dir_entries(path)) {
        struct stat st;
        std::string child = path + "/" + e;
        if (::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_cgroups(child);
    }
    for (int i = 0; i < 50 && ::rmdir(path.c_str()) != 0 && errno == EBUSY; i++)
        ::usleep(20000);
}

void cri_fini() {
    if (g.to) {
        for (const auto &p : g.pods) {
            call("StopPodSandbox", id_req("pod_sandbox_id", p));
            call("RemovePodSandbox", id_req("pod_sandbox_id", p));
        }
        std::fclose(g.to);
        g.to = nullptr;
    }
    if (g.from) std::fclose(g.from);
    g.from = nullptr;
    if (g.client > 0) test::wait_bounded(g.client, 5000);
    if (g.daemon > 0) {
        ::kill(g.daemon, SIGTERM);
        test::wait_bounded(g.daemon, 5000);
        // Shims of this daemon: their argv names its socket, unique to the test.
        for (const auto &e : test::dir_entries("/proc")) {
            if (e.find_first_not_of("0123456789") != std::string::npos) continue;
            std::string argv = read_file("/proc/" + e + "/cmdline");
            std::replace(argv.begin(), argv.end(), '\0', ' ');
            if (contains(argv, "containerd-shim-runc-v2 ") && contains(argv, g.sock))
                ::kill(static_cast<pid_t>(std::strtol(e.c_str(), nullptr, 10)), SIGKILL);
        }
    }
    if (!g.cgroup_parent.empty())
        for (const auto &m : test::cgroup_mounts())
            if (exists(m + g.cgroup_parent)) remove_cgroups(m + g.cgroup_parent);
    if (!g.bridge.empty()) test::run(std::vector<std::string>{"ip", "link", "del", g.bridge});
    if (!g.strict_file.empty()) {
        ::unlink(g.strict_file.c_str());
        ::rmdir("/etc/oci-run");
    }
    // Everything in the node goes with it.
    g_node.tear_down();
    test::cleanup_all();
}

void need_cri() {
    if (!g.skip.empty()) cr_skip_test("%s", g.skip.c_str());
    cr_assert(g.failure.empty(), "%s", g.failure.c_str());
}

} // namespace

TestSuite(cri, .init = cri_init, .fini = cri_fini, .timeout = 180);

// kubelet's calls on a pod and its container, each answered (Exec with a
// terminal attached through containerd's streaming server), and nothing of
// oci-run's left once the pod is removed.
Test(cri, pod_and_container_lifecycle) {
    need_cri();
    std::string pod = run_pod("life", {});
    cr_assert(ok(pod), "RunPodSandbox: %s (%s)", pod.c_str(),
              read_file(g.dir + "/containerd.log").c_str());
    std::string pid = field(pod, "pod_sandbox_id");
    std::string c = create_container(pid, "life", "app", "echo started; sleep 600", {});
    cr_assert(ok(c), "CreateContainer: %s", c.c_str());
    std::string cid = field(c, "container_id");
    cr_assert(ok(call("StartContainer", id_req("container_id", cid))));
    std::string st = call("ContainerStatus", id_req("container_id", cid));
    cr_assert(field(st, "status.state") == "CONTAINER_RUNNING", "%s", st.c_str());
    std::string ex = exec_sync(cid, "echo out; echo err >&2; hostname; exit 3");
    cr_assert(ok(ex), "%s", ex.c_str());
    cr_assert(contains(field(ex, "stdout"), "out\nlife\n"), "%s", ex.c_str());
    cr_assert(field(ex, "stderr") == "err\n", "%s", ex.c_str());
    cr_assert(field(ex, "exit_code") == "3", "%s", ex.c_str());
    // Exec with a terminal, attached as kubectl attaches: the process has a
    // pty of the size the client set, reads what the client types (echoed
    // back by the terminal), and the status says it succeeded.
    std::string tty = call(
        "ExecTty", "{\"exec\": {\"container_id\": " + quoted(cid) +
                       ", \"cmd\": [\"sh\", \"-c\", \"read x; tty; stty size; [ -t 1 ] && echo "
                       "isatty; echo got=$x\"], \"tty\": true, \"stdin\": true, \"stdout\": "
                       "true}, \"input\": \"hello\\n\", \"width\": 100, \"height\": 40}");
    cr_assert(ok(tty), "%s", tty.c_str());
    std::string tout = field(tty, "stdout");
    cr_assert(contains(tout, "hello\r\n") && contains(tout, "/dev/pts/") &&
                  contains(tout, "40 100\r\n") && contains(tout, "isatty\r\n") &&
                  contains(tout, "got=hello\r\n"),
              "%s", tty.c_str());
    cr_assert(contains(field(tty, "status"), "Success"), "%s", tty.c_str());
    std::string stats = call("ContainerStats", id_req("container_id", cid));
    cr_assert(ok(stats) && !field(stats, "stats.memory.working_set_bytes.value").empty(), "%s",
              stats.c_str());
    std::string up =
        call("UpdateContainerResources", "{\"container_id\": " + quoted(cid) +
                                             ", \"linux\": {\"memory_limit_in_bytes\": 67108864}}");
    cr_assert(ok(up), "%s", up.c_str());
    std::string lim = exec_sync(cid, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                                     "/sys/fs/cgroup/memory.max 2>/dev/null");
    cr_assert(contains(field(lim, "stdout"), "67108864"), "%s", lim.c_str());
    cr_assert(ok(call("StopContainer", "{\"container_id\": " + quoted(cid) + ", \"timeout\": 2}")));
    st = call("ContainerStatus", id_req("container_id", cid));
    cr_assert(field(st, "status.state") == "CONTAINER_EXITED", "%s", st.c_str());
    cr_assert(ok(call("RemoveContainer", id_req("container_id", cid))));
    cr_assert(ok(call("StopPodSandbox", id_req("pod_sandbox_id", pid))));
    cr_assert(ok(call("RemovePodSandbox", id_req("pod_sandbox_id", pid))));
    g.pods.clear();
    cr_assert(test::dir_entries(g.state + "/k8s.io").empty(), "oci-run's state is left: %s",
              g.state.c_str());
}

// A pod with a network need: its sandbox container installs the firewall in
// the namespace CNI made and starts the helper; its container (which gets the
// pod's annotations from containerd) reaches nothing directly and the allowed
// destination through the proxy; a container asking for more is refused; the
// operator's baseline (the ocirun-strict handler: none) refuses a pod that
// asks for https.
Test(cri, pod_network_policy_is_enforced) {
    need_cri();
    std::vector<std::pair<std::string, std::string>> ann = {{"dev.ocirun.network", "https"},
                                                            {"dev.ocirun.domains", ""}};
    // The bridge and its gateway address come with the first pod.
    std::string first = run_pod("warm", {});
    cr_assert(ok(first), "%s", first.c_str());
    test::Server srv;
    test::serve(srv, kGateway, "PUB:");
    std::string port = std::to_string(srv.port);
    ann[1].second = std::string(kGateway) + ":" + port + ",a.test:" + port;
    // A host loopback service (a model server, a database) through local-ports.
    test::Server local;
    test::serve(local, "127.0.0.1", "LOC:");
    ann.push_back({"dev.ocirun.local-ports", "7000:" + std::to_string(local.port)});
    std::string pod = run_pod("net", ann);
    cr_assert(ok(pod), "RunPodSandbox: %s", pod.c_str());
    std::string pid = field(pod, "pod_sandbox_id");
    std::string c = create_container(pid, "net", "agent", "sleep 600", ann, ann);
    cr_assert(ok(c), "CreateContainer: %s", c.c_str());
    std::string cid = field(c, "container_id");
    cr_assert(ok(call("StartContainer", id_req("container_id", cid))));
    std::string ex =
        exec_sync(cid, std::string("echo proxy=$HTTPS_PROXY; echo hi | nc -w 5 ") + kGateway + " " +
                           port + "; echo tcp=$?; (printf 'CONNECT " + kGateway + ":" + port +
                           " HTTP/1.1\\r\\n\\r\\nping\\n'; sleep 0.5) | nc -w 5 127.0.0.1 3128");
    std::string loc = exec_sync(cid, "echo hi | nc -w 5 127.0.0.1 7000");
    cr_assert(contains(field(loc, "stdout"), "LOC:hi"), "local-ports: %s", loc.c_str());
    std::string out = field(ex, "stdout") + field(ex, "stderr");
    cr_assert(contains(out, "proxy=http://127.0.0.1:3128") && contains(out, "tcp=1") &&
                  !contains(out, "PUB:hi") && contains(out, "PUB:ping"),
              "%s", ex.c_str());
    // DNS: the pod's resolv.conf names the cluster's server (10.89.78.53,
    // from dns_config); the stub answers the allowed name only.
    std::string dns = exec_sync(cid, "nslookup a.test; echo a=$?; nslookup leak.evil.test; echo "
                                     "e=$?");
    std::string answers = field(dns, "stdout") + field(dns, "stderr");
    cr_assert(contains(answers, kGateway) && contains(answers, "a=0") &&
                  contains(answers, "NXDOMAIN") && !contains(answers, "e=0"),
              "%s", dns.c_str());
    auto report = test::oci({"--root", g.state + "/k8s.io", "report", cid});
    cr_assert(contains(report.out, "its pod's firewall") && !contains(report.out, "degraded"),
              "%s%s", report.out.c_str(), report.err.c_str());
    std::string loose =
        create_container(pid, "net", "loose", "true", ann, {{"dev.ocirun.domains", "other.test"}});
    if (ok(loose))
        loose = call("StartContainer", id_req("container_id", field(loose, "container_id")));
    cr_assert(!ok(loose) && contains(loose, "dev.ocirun.domains") &&
                  contains(loose, "more than its pod"),
              "%s", loose.c_str());
    std::string strict = run_pod("strict", ann, "ocirun-strict");
    cr_assert(!ok(strict) && contains(strict, "dev.ocirun.network") &&
                  contains(strict, "runtime configuration"),
              "%s", strict.c_str());
}

// The other needs and the path rules in pods. A pod under the operator's
// baseline (the ocirun-strict handler: none) with no annotations: its sandbox
// installs the baseline's firewall and its container, held to what the
// sandbox recorded, reaches nothing. A pod with network=local, deny and
// deny-write: its container reaches nothing outside, reads nothing of the
// denied file (containerd's /etc/hostname) and cannot write the denied
// directory; a second container tightening the
// pod to none has no way out at all.
Test(cri, pod_needs_paths_and_tightening) {
    need_cri();
    std::string warm = run_pod("warm2", {});
    cr_assert(ok(warm), "%s", warm.c_str());
    test::Server srv;
    test::serve(srv, kGateway, "PUB:");
    const std::string direct = "echo hi | nc -w 5 " + std::string(kGateway) + " " +
                               std::to_string(srv.port) + "; echo tcp=$?";

    std::string strict = run_pod("base", {}, "ocirun-strict");
    cr_assert(ok(strict), "RunPodSandbox under the baseline: %s", strict.c_str());
    std::string spid = field(strict, "pod_sandbox_id");
    std::string sc = create_container(spid, "base", "app", "sleep 600", {});
    cr_assert(ok(sc), "CreateContainer: %s", sc.c_str());
    std::string scid = field(sc, "container_id");
    std::string started = call("StartContainer", id_req("container_id", scid));
    cr_assert(ok(started), "a container in a pod under the baseline: %s", started.c_str());
    std::string sx = exec_sync(scid, direct);
    std::string sout = field(sx, "stdout") + field(sx, "stderr");
    cr_assert(contains(sout, "tcp=1") && !contains(sout, "PUB:hi"), "%s", sx.c_str());

    std::vector<std::pair<std::string, std::string>> ann = {{"dev.ocirun.network", "local"},
                                                            {"dev.ocirun.deny", "/etc/hostname"},
                                                            {"dev.ocirun.deny-write", "/tmp"}};
    std::string pod = run_pod("paths", ann);
    cr_assert(ok(pod), "RunPodSandbox: %s", pod.c_str());
    std::string pid = field(pod, "pod_sandbox_id");
    std::string c = create_container(pid, "paths", "app", "sleep 600", ann, ann);
    cr_assert(ok(c), "CreateContainer: %s", c.c_str());
    std::string cid = field(c, "container_id");
    cr_assert(ok(call("StartContainer", id_req("container_id", cid))));
    std::string x = exec_sync(cid, direct + "; echo \"[$(cat /etc/hostname)]\"; echo x > /tmp/f; "
                                            "echo w=$?");
    std::string out = field(x, "stdout") + field(x, "stderr");
    cr_assert(contains(out, "tcp=1") && !contains(out, "PUB:hi"), "%s", x.c_str());
    // The pod's hostname file (containerd's bind) reads as /dev/null.
    cr_assert(contains(out, "[]\n") && contains(out, "w=1"), "%s", x.c_str());
    std::string t =
        create_container(pid, "paths", "tight", "sleep 600", ann, {{"dev.ocirun.network", "none"}});
    cr_assert(ok(t), "CreateContainer: %s", t.c_str());
    std::string tid = field(t, "container_id");
    std::string ts = call("StartContainer", id_req("container_id", tid));
    cr_assert(ok(ts), "a container tightening its pod: %s", ts.c_str());
    std::string tx = exec_sync(tid, direct);
    std::string tout = field(tx, "stdout") + field(tx, "stderr");
    cr_assert(contains(tout, "tcp=1") && contains(tout, "Address family not supported"), "%s",
              tx.c_str());
    auto report = test::oci({"--root", g.state + "/k8s.io", "report", cid});
    cr_assert(contains(report.out, "its pod's firewall") &&
                  contains(report.out, "deny-write /tmp") && !contains(report.out, "degraded"),
              "%s%s", report.out.c_str(), report.err.c_str());
}

// contrib/kubernetes/pod.yaml as kubelet would run it (its annotations, its
// RuntimeClass's handler, its container's command and memory limit): the
// pod's policy holds in its container.
Test(cri, contrib_pod_yaml_runs_as_written) {
    need_cri();
    const char *src = std::getenv("OCI_RUN_CRI_CLIENT");
    std::string dir = src && *src ? std::string(src).substr(0, std::string(src).rfind('/'))
                                  : std::string("tests/clients/cri");
    std::string manifest = dir + "/../../../contrib/kubernetes/pod.yaml";
    auto parsed =
        test::run(std::vector<std::string>{"/usr/bin/python3", dir + "/pod_yaml.py", manifest});
    cr_assert_eq(parsed.status, 0, "%s", parsed.err.c_str());
    auto doc = ocirun::json::Document::parse(parsed.out);
    cr_assert(doc.has_value());
    yajl_val top = doc->root();
    std::vector<std::pair<std::string, std::string>> ann;
    yajl_val a = ocirun::json::member(top, "annotations");
    for (size_t i = 0; a && i < a->u.object.len; i++)
        ann.push_back({a->u.object.keys[i], YAJL_GET_STRING(a->u.object.values[i])});
    std::string handler = YAJL_GET_STRING(ocirun::json::member(top, "runtimeClassName"));
    yajl_val c0 = YAJL_GET_ARRAY(ocirun::json::member(top, "containers"))->values[0];
    std::string image = YAJL_GET_STRING(ocirun::json::member(c0, "image"));
    yajl_val cmd = ocirun::json::member(c0, "command");
    std::string command = "[";
    for (size_t i = 0; i < YAJL_GET_ARRAY(cmd)->len; i++)
        command += (i ? ", " : "") + quoted(YAJL_GET_STRING(YAJL_GET_ARRAY(cmd)->values[i]));
    command += "]";
    std::string memory = YAJL_GET_NUMBER(ocirun::json::member(c0, "memory"));
    std::string pod = run_pod("agent-sandbox", ann, handler);
    cr_assert(ok(pod), "RunPodSandbox: %s", pod.c_str());
    std::string pid = field(pod, "pod_sandbox_id");
    std::string config =
        "{\"metadata\": {\"name\": \"agent\"}, \"image\": {\"image\": " +
        quoted("docker.io/library/" + image) + "}, \"command\": " + command +
        ", \"log_path\": \"agent.log\", \"annotations\": " + annotations_json(ann) +
        ", \"linux\": {\"resources\": {\"memory_limit_in_bytes\": " + memory + "}}}";
    std::string c = call("CreateContainer",
                         "{\"pod_sandbox_id\": " + quoted(pid) + ", \"config\": " + config +
                             ", \"sandbox_config\": " + pod_config("agent-sandbox", ann) + "}");
    cr_assert(ok(c), "CreateContainer: %s", c.c_str());
    std::string cid = field(c, "container_id");
    std::string s = call("StartContainer", id_req("container_id", cid));
    cr_assert(ok(s), "StartContainer: %s", s.c_str());
    std::string log = g.dir + "/logs/agent-sandbox/agent.log";
    std::string seen;
    for (int i = 0; i < 200 && !contains(seen, "direct refused"); i++) {
        ::usleep(50000);
        seen = read_file(log);
    }
    auto report = test::oci({"--root", g.state + "/k8s.io", "report", cid});
    cr_assert(contains(seen, "read-only") && contains(seen, "direct refused"), "%s", seen.c_str());
    cr_assert(!contains(report.out, "degraded") && contains(report.out, "deny /root/.ssh") &&
                  contains(report.out, "its pod's firewall"),
              "%s%s", report.out.c_str(), report.err.c_str());
}

// Kubernetes' recommended node set-up: containerd's CRI with SystemdCgroup =
// true, on a node whose init is systemd (support/systemd_node.hpp; kubelet
// gives slices as cgroup parents). The pod's and the container's cgroups are
// systemd scopes in the pod's slice, UpdateContainerResources reaches the
// unit's properties, and removing the pod leaves no scope.
TestSuite(cri_systemd, .init = cri_node_init, .fini = cri_fini, .timeout = 180);

Test(cri_systemd, pod_and_container_as_systemd_scopes) {
    need_cri();
    std::string pod = run_pod("sdpod", {});
    cr_assert(ok(pod), "RunPodSandbox: %s (%s)", pod.c_str(),
              read_file(g.dir + "/containerd.log").c_str());
    std::string pid = field(pod, "pod_sandbox_id");
    std::string c = create_container(pid, "sdpod", "app", "sleep 600", {});
    cr_assert(ok(c), "CreateContainer: %s", c.c_str());
    std::string cid = field(c, "container_id");
    cr_assert(ok(call("StartContainer", id_req("container_id", cid))));
    std::string ex = exec_sync(cid, "cat /proc/self/cgroup");
    std::string up =
        call("UpdateContainerResources", "{\"container_id\": " + quoted(cid) +
                                             ", \"linux\": {\"memory_limit_in_bytes\": 67108864}}");
    const std::string unit = "cri-containerd-" + cid + ".scope";
    bool v2 =
        test::in_node(g_node, {"/usr/bin/test", "-f", "/sys/fs/cgroup/cgroup.procs"}).status == 0;
    auto prop = [&](const char *name) {
        return test::unit_property(g_node, unit, "org.freedesktop.systemd1.Scope", name);
    };
    std::string memory = prop(v2 ? "MemoryMax" : "MemoryLimit");
    std::string slice = prop("Slice");
    cr_assert(ok(call("StopContainer", "{\"container_id\": " + quoted(cid) + ", \"timeout\": 1}")));
    cr_assert(ok(call("RemoveContainer", id_req("container_id", cid))));
    cr_assert(ok(call("StopPodSandbox", id_req("pod_sandbox_id", pid))));
    cr_assert(ok(call("RemovePodSandbox", id_req("pod_sandbox_id", pid))));
    g.pods.clear();
    auto gone = test::in_node(g_node, {"/bin/sh", "-c",
                                       "ls -d /sys/fs/cgroup/*/ocirun.slice/ocirun-sdpod.slice/"
                                       "cri-containerd-* /sys/fs/cgroup/ocirun.slice/"
                                       "ocirun-sdpod.slice/cri-containerd-* 2>/dev/null | wc -l"});
    cr_assert(ok(ex) &&
                  contains(field(ex, "stdout"), "/ocirun.slice/ocirun-sdpod.slice/" + unit + "\n"),
              "%s", ex.c_str());
    cr_assert(ok(up), "%s", up.c_str());
    cr_assert(memory == "t 67108864\n", "the unit's memory limit after the update: %s",
              memory.c_str());
    cr_assert(slice == "s \"ocirun-sdpod.slice\"\n", "%s", slice.c_str());
    cr_assert(gone.out == "0\n", "scopes left: %s", gone.out.c_str());
    cr_assert(test::dir_entries(g.state + "/k8s.io").empty(), "oci-run's state is left");
}
