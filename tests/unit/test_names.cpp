// Name tables: signals, capabilities, rlimits, namespaces and the enumerations.
#include "oci/names.hpp"

#include <criterion/criterion.h>

#include <linux/capability.h>
#include <sys/resource.h>

#include <csignal>
#include <optional>
#include <set>
#include <string>

using namespace ocirun::oci;

namespace {

void expect_signal(const char *name, int want) {
    std::optional<int> got = signal_from_name(name);
    cr_assert(got.has_value(), "signal_from_name(\"%s\") refused", name);
    cr_assert_eq(*got, want, "signal_from_name(\"%s\") = %d, want %d", name, *got, want);
}

void expect_no_signal(const char *name) {
    std::optional<int> got = signal_from_name(name);
    cr_assert(!got.has_value(), "signal_from_name(\"%s\") = %d, want refusal", name,
              got.value_or(-1));
}

} // namespace

// ---------------------------------------------------------------------------
// signal_from_name

Test(names, signal_bare_name) {
    expect_signal("TERM", SIGTERM);
}
Test(names, signal_sig_prefix) {
    expect_signal("SIGTERM", SIGTERM);
}
Test(names, signal_lowercase) {
    expect_signal("sigkill", SIGKILL);
}
Test(names, signal_mixed_case) {
    expect_signal("Hup", SIGHUP);
}
Test(names, signal_number) {
    expect_signal("9", SIGKILL);
}
Test(names, signal_number_max) {
    expect_signal(std::to_string(SIGRTMAX).c_str(), SIGRTMAX);
}
Test(names, signal_rtmin_plus) {
    expect_signal("RTMIN+1", SIGRTMIN + 1);
}
Test(names, signal_rtmin_bare) {
    expect_signal("SIGRTMIN", SIGRTMIN);
}
Test(names, signal_rtmax_minus) {
    expect_signal("SIGRTMAX-1", SIGRTMAX - 1);
}
Test(names, signal_rtmax_lowercase) {
    expect_signal("rtmax", SIGRTMAX);
}
Test(names, signal_aliases) {
    expect_signal("IOT", SIGABRT);
    expect_signal("SIGPOLL", SIGIO);
    expect_signal("CHLD", SIGCHLD);
    expect_signal("WINCH", SIGWINCH);
}

Test(names, signal_rejects_unknown_name) {
    expect_no_signal("FOO");
}
Test(names, signal_rejects_zero) {
    expect_no_signal("0");
}
Test(names, signal_rejects_huge_number) {
    expect_no_signal("99999");
}
Test(names, signal_rejects_empty) {
    expect_no_signal("");
}
Test(names, signal_rejects_above_rtmax) {
    expect_no_signal(std::to_string(SIGRTMAX + 1).c_str());
}
Test(names, signal_rejects_rt_out_of_range) {
    expect_no_signal("RTMIN-1");
    expect_no_signal("RTMAX+1");
    expect_no_signal("RTMIN+99");
}
Test(names, signal_rejects_garbage) {
    expect_no_signal("SIG");
    expect_no_signal("9x");
    expect_no_signal("-9");
    expect_no_signal("RTMINX");
    expect_no_signal("SIGSIGTERM");
    expect_no_signal(" TERM");
}

Test(names, signal_table_round_trips) {
    for (const auto &e : signal_names()) {
        std::optional<int> v = signal_from_name(e.name);
        cr_assert(v.has_value(), "%s refused", e.name);
        cr_assert_eq(*v, e.value, "%s", e.name);
        expect_signal(("SIG" + std::string(e.name)).c_str(), e.value);
    }
}

// ---------------------------------------------------------------------------
// capability_from_name / rlimit_from_name

Test(names, capability_known) {
    cr_assert_eq(capability_from_name("CAP_CHOWN").value_or(-1), CAP_CHOWN);
    cr_assert_eq(capability_from_name("CAP_NET_ADMIN").value_or(-1), CAP_NET_ADMIN);
    cr_assert_eq(capability_from_name("CAP_SYS_ADMIN").value_or(-1), CAP_SYS_ADMIN);
    cr_assert_eq(capability_from_name("CAP_CHECKPOINT_RESTORE").value_or(-1), 40);
}

Test(names, capability_rejects) {
    cr_assert(!capability_from_name("CAP_FOO").has_value());
    cr_assert(!capability_from_name("cap_chown").has_value());
    cr_assert(!capability_from_name("CHOWN").has_value());
    cr_assert(!capability_from_name("").has_value());
}

Test(names, capability_table_is_dense) {
    // 0..40, each value once, each name resolving to its own value.
    std::set<int> seen;
    for (const auto &e : capability_names()) {
        cr_assert(seen.insert(e.value).second, "duplicate value %d", e.value);
        cr_assert_eq(capability_from_name(e.name).value_or(-1), e.value, "%s", e.name);
    }
    cr_assert_eq(seen.size(), 41u);
    cr_assert_eq(*seen.begin(), 0);
    cr_assert_eq(*seen.rbegin(), 40);
}

Test(names, rlimit_known) {
    cr_assert_eq(rlimit_from_name("RLIMIT_NOFILE").value_or(-1), static_cast<int>(RLIMIT_NOFILE));
    cr_assert_eq(rlimit_from_name("RLIMIT_CORE").value_or(-1), static_cast<int>(RLIMIT_CORE));
    cr_assert_eq(rlimit_from_name("RLIMIT_RTTIME").value_or(-1), static_cast<int>(RLIMIT_RTTIME));
    cr_assert_eq(rlimit_from_name("RLIMIT_AS").value_or(-1), static_cast<int>(RLIMIT_AS));
}

Test(names, rlimit_rejects) {
    cr_assert(!rlimit_from_name("RLIMIT_FOO").has_value());
    cr_assert(!rlimit_from_name("NOFILE").has_value());
    cr_assert(!rlimit_from_name("rlimit_nofile").has_value());
    cr_assert(!rlimit_from_name("").has_value());
}

Test(names, rlimit_table_complete) {
    std::set<int> seen;
    for (const auto &e : rlimit_names()) {
        cr_assert(seen.insert(e.value).second, "duplicate value %d (%s)", e.value, e.name);
        cr_assert_eq(rlimit_from_name(e.name).value_or(-1), e.value, "%s", e.name);
    }
    cr_assert_eq(seen.size(), static_cast<size_t>(RLIMIT_NLIMITS));
}

// ---------------------------------------------------------------------------
// Namespaces

Test(names, ns_type_all_eight) {
    struct {
        const char *name;
        NsType type;
    } want[] = {{"pid", NsType::pid},       {"network", NsType::network}, {"mount", NsType::mount},
                {"ipc", NsType::ipc},       {"uts", NsType::uts},         {"user", NsType::user},
                {"cgroup", NsType::cgroup}, {"time", NsType::time}};
    cr_assert_eq(sizeof want / sizeof want[0], static_cast<size_t>(kNsTypeCount));
    for (const auto &w : want) {
        std::optional<NsType> t = ns_type_from_name(w.name);
        cr_assert(t.has_value(), "%s refused", w.name);
        cr_assert_eq(static_cast<int>(*t), static_cast<int>(w.type), "%s", w.name);
        cr_assert_str_eq(ns_type_name(w.type), w.name);
    }
}

Test(names, ns_type_rejects) {
    cr_assert(!ns_type_from_name("pidd").has_value());
    cr_assert(!ns_type_from_name("net").has_value());
    cr_assert(!ns_type_from_name("PID").has_value());
    cr_assert(!ns_type_from_name("").has_value());
}

// ---------------------------------------------------------------------------
// Enumerations

Test(names, enums_accept_and_reject) {
    cr_assert(is_rootfs_propagation("rprivate"));
    cr_assert(is_rootfs_propagation("unbindable"));
    cr_assert(!is_rootfs_propagation("recursive"));
    cr_assert(is_seccomp_action("SCMP_ACT_KILL_PROCESS"));
    cr_assert(!is_seccomp_action("SCMP_ACT_FOO"));
    cr_assert(is_seccomp_operator("SCMP_CMP_MASKED_EQ"));
    cr_assert(!is_seccomp_operator("SCMP_CMP_FOO"));
    cr_assert(is_seccomp_arch("SCMP_ARCH_AARCH64"));
    cr_assert(!is_seccomp_arch("SCMP_ARCH_Z80"));
    cr_assert(is_seccomp_flag("SECCOMP_FILTER_FLAG_TSYNC"));
    cr_assert(!is_seccomp_flag("SECCOMP_FILTER_FLAG_FOO"));
    cr_assert(is_personality_domain("LINUX"));
    cr_assert(!is_personality_domain("linux"));
    cr_assert(is_io_priority_class("IOPRIO_CLASS_BE"));
    cr_assert(!is_io_priority_class("IOPRIO_CLASS_NONE"));
    cr_assert(is_scheduler_policy("SCHED_FIFO"));
    cr_assert(!is_scheduler_policy("SCHED_FOO"));
    cr_assert(is_scheduler_flag("SCHED_FLAG_UTIL_CLAMP_MAX"));
    cr_assert(!is_scheduler_flag("SCHED_FLAG_FOO"));
}

Test(names, enum_tables_match_predicates) {
    for (const char *a : seccomp_actions())
        cr_assert(is_seccomp_action(a), "%s", a);
    for (const char *o : seccomp_operators())
        cr_assert(is_seccomp_operator(o), "%s", o);
    for (const char *a : seccomp_archs())
        cr_assert(is_seccomp_arch(a), "%s", a);
    for (const char *f : seccomp_flags())
        cr_assert(is_seccomp_flag(f), "%s", f);
    cr_assert_eq(seccomp_operators().size(), 7u);
}
