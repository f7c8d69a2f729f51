// oci-run-systemd: the D-Bus side of the systemd cgroup driver
// (--systemd-cgroup), run by oci-run for create, update and delete; it talks
// to systemd through sd-bus (libsystemd), never through systemctl.
//
//   oci-run-systemd [--user] start UNIT DESC  StartTransientUnit of scope UNIT
//   oci-run-systemd [--user] set UNIT DESC    SetUnitProperties (runtime)
//   oci-run-systemd [--user] stop UNIT DESC   StopUnit, then ResetFailedUnit
//   oci-run-systemd [--user] check UNIT DESC  fails unless UNIT is not loaded or is DESC's
//   oci-run-systemd [--user] attach UNIT DESC AttachProcessesToUnit (exec)
//   oci-run-systemd [--user] result UNIT DESC prints the unit's Result ("oom-kill"...)
//   oci-run-systemd [--user] root             prints the manager's ControlGroup
//
// set, stop, check, attach and result act only on a unit whose Description is DESC
// (what start gave it: "oci-run container ID"): the unit's name comes from a
// state file, and a name such as session-1.scope must not stop someone's
// login session.
//
// start, set and attach read {"pid": N, "properties": [...]} on stdin
// (runtime/cgroups/systemd_unit.hpp, systemd_request); start puts process N
// in the scope (by PIDFDs where systemd takes them, else PIDs), attach moves
// it there. start and stop wait for their job and fail unless it is "done"
// (stop: a unit that is not loaded is stopped already). --user: the caller's
// user manager (the user's bus, $DBUS_SESSION_BUS_ADDRESS or
// $XDG_RUNTIME_DIR/bus, as runc; else the manager's private socket
// $XDG_RUNTIME_DIR/systemd/private), else the system's (its private socket
// as root, as systemctl, else the system bus). root prints the cgroup the
// manager's units are below ("/user.slice/user-1000.slice/user@1000.service"
// for a user's; "/" for the system's).
// Errors, one line on stderr: the unit, the call and the D-Bus error.
#include "oci/json.hpp"

#include <systemd/sd-bus.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace ocirun;

constexpr const char *kDest = "org.freedesktop.systemd1";
constexpr const char *kPath = "/org/freedesktop/systemd1";
constexpr const char *kManager = "org.freedesktop.systemd1.Manager";
constexpr uint64_t kJobTimeoutUsec = 60ull * 1000 * 1000;

[[noreturn]] void die(const std::string &msg) {
    std::fprintf(stderr, "oci-run-systemd: %s\n", msg.c_str());
    std::exit(1);
}

std::string bus_error(const sd_bus_error &e, int r) {
    if (sd_bus_error_is_set(&e)) return std::string(e.name) + ": " + (e.message ? e.message : "");
    return std::strerror(-r);
}

struct Prop {
    std::string name, type, value;
    std::vector<uint8_t> bytes;
    std::vector<std::pair<std::string, std::string>> pairs;
};

struct Request {
    int pid = 0;
    std::vector<Prop> props;
};

Request read_request() {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto doc = json::Document::parse(text);
    if (!doc) die("the request: " + doc.error().text());
    Request r;
    json::Path root;
    if (auto s = json::get_int(doc->root(), root, "pid", r.pid, 0, 1 << 22); !s)
        die("the request: " + s.error().text());
    auto s = json::for_each_object(
        doc->root(), root, "properties", [&](yajl_val o, const json::Path &p) -> Status {
            Prop x;
            OCI_CHECK(json::get_string(o, p, "name", x.name, true));
            OCI_CHECK(json::get_string(o, p, "type", x.type, true));
            OCI_CHECK(json::get_string(o, p, "value", x.value));
            if (yajl_val b = json::member(o, "bytes"))
                for (size_t i = 0; YAJL_IS_ARRAY(b) && i < b->u.array.len; i++)
                    x.bytes.push_back(static_cast<uint8_t>(YAJL_GET_INTEGER(b->u.array.values[i])));
            if (yajl_val a = json::member(o, "pairs"))
                for (size_t i = 0; YAJL_IS_ARRAY(a) && i < a->u.array.len; i++) {
                    yajl_val pr = a->u.array.values[i];
                    if (!YAJL_IS_ARRAY(pr) || pr->u.array.len != 2)
                        return json::fail_at(p.field("pairs").at(i), "expected two strings");
                    const char *k = YAJL_GET_STRING(pr->u.array.values[0]);
                    const char *v = YAJL_GET_STRING(pr->u.array.values[1]);
                    if (!k || !v)
                        return json::fail_at(p.field("pairs").at(i), "expected two strings");
                    x.pairs.push_back({k, v});
                }
            r.props.push_back(std::move(x));
            return Status{};
        });
    if (!s) die("the request: " + s.error().text());
    return r;
}

// The a(sv) array of `props` (and the process, unless pid is 0: by pidfd
// when `pidfd` >= 0, else by PID).
int append_props(sd_bus_message *m, const Request &r, int pidfd) {
    int e = sd_bus_message_open_container(m, 'a', "(sv)");
    for (const auto &p : r.props) {
        if (e < 0) return e;
        e = sd_bus_message_open_container(m, 'r', "sv");
        if (e >= 0) e = sd_bus_message_append(m, "s", p.name.c_str());
        if (e < 0) return e;
        if (p.type == "t") {
            e = sd_bus_message_append(m, "v", "t", std::strtoull(p.value.c_str(), nullptr, 10));
        } else if (p.type == "b") {
            e = sd_bus_message_append(m, "v", "b", p.value == "true");
        } else if (p.type == "s") {
            e = sd_bus_message_append(m, "v", "s", p.value.c_str());
        } else if (p.type == "ay") {
            e = sd_bus_message_open_container(m, 'v', "ay");
            if (e >= 0) e = sd_bus_message_append_array(m, 'y', p.bytes.data(), p.bytes.size());
            if (e >= 0) e = sd_bus_message_close_container(m);
        } else if (p.type == "a(ss)") {
            e = sd_bus_message_open_container(m, 'v', "a(ss)");
            if (e >= 0) e = sd_bus_message_open_container(m, 'a', "(ss)");
            for (const auto &[a, b] : p.pairs)
                if (e >= 0) e = sd_bus_message_append(m, "(ss)", a.c_str(), b.c_str());
            if (e >= 0) e = sd_bus_message_close_container(m);
            if (e >= 0) e = sd_bus_message_close_container(m);
        } else {
            die("property " + p.name + ": unknown type " + p.type);
        }
        if (e >= 0) e = sd_bus_message_close_container(m);
    }
    if (e >= 0 && r.pid > 0) {
        if (pidfd >= 0)
            e = sd_bus_message_append(m, "(sv)", "PIDFDs", "ah", 1, pidfd);
        else
            e = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, static_cast<uint32_t>(r.pid));
    }
    if (e >= 0) e = sd_bus_message_close_container(m);
    return e;
}

// A direct connection to a manager's private socket (no message bus).
int open_private(sd_bus **bus, const std::string &socket) {
    int r = sd_bus_new(bus);
    if (r >= 0) r = sd_bus_set_address(*bus, ("unix:path=" + socket).c_str());
    if (r >= 0) r = sd_bus_start(*bus);
    return r;
}

sd_bus *connect(bool user) {
    sd_bus *bus = nullptr;
    int r;
    if (user) {
        const char *xdg = std::getenv("XDG_RUNTIME_DIR");
        r = sd_bus_open_user(&bus);
        if (r < 0 && xdg && *xdg) {
            std::string priv = std::string(xdg) + "/systemd/private";
            if (::access(priv.c_str(), F_OK) == 0) {
                sd_bus_unref(bus);
                bus = nullptr;
                r = open_private(&bus, priv);
            }
        }
        if (r < 0)
            die(std::string("connect to the user's systemd manager (the user's bus: "
                            "$DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus") +
                (xdg && *xdg ? "" : "; XDG_RUNTIME_DIR is not set") + "): " + std::strerror(-r));
    } else if (::geteuid() == 0 && ::access("/run/systemd/private", F_OK) == 0) {
        // As root, systemd's own socket: no message bus needed (as systemctl).
        r = open_private(&bus, "/run/systemd/private");
    } else {
        r = sd_bus_open_system(&bus);
    }
    if (r < 0) die(std::string("connect to systemd: ") + std::strerror(-r));
    return bus;
}

// JobRemoved results by job path, as they arrive.
std::map<std::string, std::string> g_jobs;

int on_job_removed(sd_bus_message *m, void *, sd_bus_error *) {
    uint32_t id;
    const char *path, *unit, *result;
    if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0) g_jobs[path] = result;
    return 0;
}

uint64_t now_usec() {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

void wait_job(sd_bus *bus, const std::string &job, const std::string &what) {
    uint64_t deadline = now_usec() + kJobTimeoutUsec;
    while (!g_jobs.count(job)) {
        int r = sd_bus_process(bus, nullptr);
        if (r < 0) die(what + ": " + std::strerror(-r));
        if (r > 0) continue;
        uint64_t now = now_usec();
        if (now >= deadline) die(what + ": no answer from systemd's job " + job + " in 60 s");
        r = sd_bus_wait(bus, deadline - now);
        if (r < 0) die(what + ": " + std::strerror(-r));
    }
    if (g_jobs[job] != "done") die(what + ": job " + g_jobs[job]);
}

// The job a method call returned, with JobRemoved already watched.
std::string call_job(sd_bus *bus, sd_bus_message *m, const std::string &what, bool *no_unit) {
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = nullptr;
    int r = sd_bus_call(bus, m, 0, &err, &reply);
    if (r < 0) {
        if (no_unit && sd_bus_error_has_name(&err, "org.freedesktop.systemd1.NoSuchUnit")) {
            *no_unit = true;
            sd_bus_error_free(&err);
            return "";
        }
        die(what + ": " + bus_error(err, r));
    }
    const char *job = nullptr;
    if (sd_bus_message_read(reply, "o", &job) < 0 || !job) die(what + ": no job in the reply");
    std::string out = job;
    sd_bus_message_unref(reply);
    return out;
}

void watch_jobs(sd_bus *bus) {
    int r = sd_bus_match_signal(bus, nullptr, kDest, kPath, kManager, "JobRemoved", on_job_removed,
                                nullptr);
    if (r < 0) die(std::string("watch systemd's jobs: ") + std::strerror(-r));
    // Signals go to subscribed clients only.
    sd_bus_error err = SD_BUS_ERROR_NULL;
    r = sd_bus_call_method(bus, kDest, kPath, kManager, "Subscribe", &err, nullptr, "");
    if (r < 0 && !sd_bus_error_has_name(&err, "org.freedesktop.systemd1.AlreadySubscribed"))
        die("Subscribe: " + bus_error(err, r));
    sd_bus_error_free(&err);
}

sd_bus_message *new_call(sd_bus *bus, const char *method) {
    sd_bus_message *m = nullptr;
    int r = sd_bus_message_new_method_call(bus, &m, kDest, kPath, kManager, method);
    if (r < 0) die(std::string(method) + ": " + std::strerror(-r));
    return m;
}

void start(sd_bus *bus, const std::string &unit, const Request &req) {
    const std::string what = "StartTransientUnit " + unit;
    watch_jobs(bus);
    int pidfd = req.pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, req.pid, 0)) : -1;
    for (;;) {
        sd_bus_message *m = new_call(bus, "StartTransientUnit");
        int r = sd_bus_message_append(m, "ss", unit.c_str(), "fail");
        if (r >= 0) r = append_props(m, req, pidfd);
        if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0) die(what + ": " + std::strerror(-r));
        sd_bus_error err = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = nullptr;
        r = sd_bus_call(bus, m, 0, &err, &reply);
        sd_bus_message_unref(m);
        // A systemd before 253 does not know PIDFDs ("unknown property"):
        // by PID then.
        if (r < 0 && pidfd >= 0 && err.message && std::strstr(err.message, "PIDFDs")) {
            sd_bus_error_free(&err);
            ::close(pidfd);
            pidfd = -1;
            continue;
        }
        if (r < 0) die(what + ": " + bus_error(err, r));
        const char *job = nullptr;
        if (sd_bus_message_read(reply, "o", &job) < 0 || !job) die(what + ": no job in the reply");
        std::string j = job;
        sd_bus_message_unref(reply);
        wait_job(bus, j, what);
        return;
    }
}

// The object path of `unit`, "" when it is not loaded; a loaded unit's
// Description must be `desc`.
std::string our_unit(sd_bus *bus, const std::string &unit, const std::string &desc,
                     const std::string &what) {
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = nullptr;
    int r =
        sd_bus_call_method(bus, kDest, kPath, kManager, "GetUnit", &err, &reply, "s", unit.c_str());
    if (r < 0) {
        if (sd_bus_error_has_name(&err, "org.freedesktop.systemd1.NoSuchUnit")) {
            sd_bus_error_free(&err);
            return "";
        }
        die(what + ": GetUnit: " + bus_error(err, r));
    }
    const char *path = nullptr;
    if (sd_bus_message_read(reply, "o", &path) < 0 || !path) die(what + ": GetUnit: no path");
    std::string p = path;
    sd_bus_message_unref(reply);
    char *d = nullptr;
    r = sd_bus_get_property_string(bus, kDest, p.c_str(), "org.freedesktop.systemd1.Unit",
                                   "Description", &err, &d);
    if (r < 0) die(what + ": its Description: " + bus_error(err, r));
    std::string seen = d ? d : "";
    std::free(d);
    if (seen != desc)
        die(what + ": the unit is not the container's (its description is \"" + seen +
            "\", not \"" + desc + "\"): refused");
    return p;
}

void set(sd_bus *bus, const std::string &unit, const std::string &desc, const Request &req) {
    const std::string what = "SetUnitProperties " + unit;
    if (our_unit(bus, unit, desc, what).empty()) die(what + ": the unit is not loaded");
    sd_bus_message *m = new_call(bus, "SetUnitProperties");
    int r = sd_bus_message_append(m, "sb", unit.c_str(), 1);
    if (r >= 0) r = append_props(m, req, -1);
    if (r < 0) die(what + ": " + std::strerror(-r));
    sd_bus_error err = SD_BUS_ERROR_NULL;
    r = sd_bus_call(bus, m, 0, &err, nullptr);
    sd_bus_message_unref(m);
    if (r < 0) die(what + ": " + bus_error(err, r));
}

void attach(sd_bus *bus, const std::string &unit, const std::string &desc, const Request &req) {
    const std::string what = "AttachProcessesToUnit " + unit;
    if (our_unit(bus, unit, desc, what).empty()) die(what + ": the unit is not loaded");
    if (req.pid <= 0) die(what + ": no process");
    sd_bus_error err = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(bus, kDest, kPath, kManager, "AttachProcessesToUnit", &err, nullptr,
                               "ssau", unit.c_str(), "/", 1, static_cast<uint32_t>(req.pid));
    if (r < 0) die(what + ": " + bus_error(err, r));
}

// The unit's Result ("success", "oom-kill", ...; nothing when it is not
// loaded): what systemd saw end it, for events once its cgroup is gone.
void print_result(sd_bus *bus, const std::string &unit, const std::string &desc) {
    const std::string what = "the Result of " + unit;
    std::string path = our_unit(bus, unit, desc, what);
    if (path.empty()) return;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    char *r = nullptr;
    int e = sd_bus_get_property_string(bus, kDest, path.c_str(), "org.freedesktop.systemd1.Scope",
                                       "Result", &err, &r);
    if (e < 0) die(what + ": " + bus_error(err, e));
    std::printf("%s\n", r ? r : "");
    std::free(r);
}

// The manager's own cgroup, below which its units' are.
void print_root(sd_bus *bus) {
    sd_bus_error err = SD_BUS_ERROR_NULL;
    char *cg = nullptr;
    int r = sd_bus_get_property_string(bus, kDest, kPath, kManager, "ControlGroup", &err, &cg);
    if (r < 0) die("the manager's ControlGroup: " + bus_error(err, r));
    std::printf("%s\n", cg && *cg ? cg : "/");
    std::free(cg);
}

void stop(sd_bus *bus, const std::string &unit, const std::string &desc) {
    const std::string what = "StopUnit " + unit;
    if (our_unit(bus, unit, desc, what).empty()) return; // stopped and gone already
    watch_jobs(bus);
    sd_bus_message *m = new_call(bus, "StopUnit");
    if (sd_bus_message_append(m, "ss", unit.c_str(), "replace") < 0) die(what + ": append");
    bool gone = false;
    std::string job = call_job(bus, m, what, &gone);
    sd_bus_message_unref(m);
    if (!gone) wait_job(bus, job, what);
    // A scope whose processes were killed may be left "failed": forget it.
    sd_bus_error err = SD_BUS_ERROR_NULL;
    (void)sd_bus_call_method(bus, kDest, kPath, kManager, "ResetFailedUnit", &err, nullptr, "s",
                             unit.c_str());
    sd_bus_error_free(&err);
}

} // namespace

int main(int argc, char **argv) {
    int i = 1;
    bool user = false;
    if (i < argc && std::string(argv[i]) == "--user") {
        user = true;
        i++;
    }
    // The verbs: whether each reads a request on stdin, and what it does.
    using Verb = void (*)(sd_bus *, const std::string &, const std::string &, const Request &);
    static const struct {
        const char *name;
        bool request;
        Verb run;
    } kVerbs[] = {
        {"start", true,
         [](sd_bus *b, const auto &u, const auto &, const auto &r) { start(b, u, r); }},
        {"set", true,
         [](sd_bus *b, const auto &u, const auto &d, const auto &r) { set(b, u, d, r); }},
        {"attach", true,
         [](sd_bus *b, const auto &u, const auto &d, const auto &r) { attach(b, u, d, r); }},
        {"stop", false,
         [](sd_bus *b, const auto &u, const auto &d, const auto &) { stop(b, u, d); }},
        {"check", false,
         [](sd_bus *b, const auto &u, const auto &d, const auto &) {
             (void)our_unit(b, u, d, "check " + u);
         }},
        {"result", false,
         [](sd_bus *b, const auto &u, const auto &d, const auto &) { print_result(b, u, d); }},
    };
    if (argc - i == 1 && std::string(argv[i]) == "root") {
        sd_bus *bus = connect(user);
        print_root(bus);
        sd_bus_flush_close_unref(bus);
        return 0;
    }
    if (argc - i != 3) {
        std::fprintf(stderr, "usage: oci-run-systemd [--user] start|set|attach|stop|check|result "
                             "UNIT DESCRIPTION\n       oci-run-systemd [--user] root\n");
        return 2;
    }
    std::string verb = argv[i], unit = argv[i + 1], desc = argv[i + 2];
    for (const auto &v : kVerbs) {
        if (verb != v.name) continue;
        Request req;
        if (v.request) req = read_request();
        sd_bus *bus = connect(user);
        v.run(bus, unit, desc, req);
        sd_bus_flush_close_unref(bus);
        return 0;
    }
    die("unknown verb " + verb);
}
