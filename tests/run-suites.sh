#!/bin/sh
# run-suites.sh BUILD_DIR [ASAN_BUILD_DIR]: run every Criterion suite of a
# build, then (given a second build made with -Db_sanitize=address,undefined)
# that build's unit suite as `unit-asan` and the integration suite again
# against that build's binaries as `integration-asan`, and print one closing
# line that sums them all:
# "N passed, N failed, N skipped".
# Exit status is non-zero when a test failed, a sanitizer reported, or a
# suite did not run at all.
#
# A suite is either a Criterion binary (criterion_suite) or any script that
# prints "suite NAME: N passed, N failed, N skipped" (script_suite); adding
# one is one line at the bottom.
set -u
build=$(cd "${1:?usage: run-suites.sh BUILD_DIR [ASAN_BUILD_DIR]}" && pwd)
asan_build=
if [ -n "${2:-}" ]; then asan_build=$(cd "$2" && pwd); fi
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${OCI_RUN_TEST_JOBS:-2}

total_pass=0 total_fail=0 total_skip=0 broken=0
report=$(mktemp -d /tmp/oci-run-suites-XXXXXX)
# Sanitizer logs are written by whatever process reports, rootless ones
# included (as nobody), so the directory must be reachable and writable.
chmod 755 "$report"
trap 'rm -rf "$report"' EXIT

# tally NAME PASSED FAILED SKIPPED: print the suite's line (and how long it
# took since the last one: CI's budget is the sum), add to the totals.
last_tally=$(date +%s)
tally() {
    now=$(date +%s)
    echo "suite $1 took $((now - last_tally)) s"
    last_tally=$now
    echo "suite $1: $2 passed, $3 failed, $4 skipped"
    total_pass=$((total_pass + $2))
    total_fail=$((total_fail + $3))
    total_skip=$((total_skip + $4))
}

# The environment the integration suites read: the binaries of build $1,
# where the caller has not named others (another runtime's binary, say).
use_build() {
    # The valgrind suite's binary: the static oci-run's dynamically linked
    # twin, unless the caller named another runtime.
    if [ -z "${OCI_RUN:-}" ] && [ -x "$1/src/oci-run-dynamic" ]; then
        export OCI_RUN_DYNAMIC="${OCI_RUN_DYNAMIC:-$1/src/oci-run-dynamic}"
    fi
    export OCI_RUN="${OCI_RUN:-$1/src/oci-run}"
    export OCI_RUN_BUNDLE_MAKER="${OCI_RUN_BUNDLE_MAKER:-$src/contrib/make-bundle.sh}"
    export OCI_RUN_CRI_CLIENT="${OCI_RUN_CRI_CLIENT:-$src/tests/clients/cri/client.py}"
    export OCI_RUN_ARCH_BYPASS="${OCI_RUN_ARCH_BYPASS:-$1/tests/arch-bypass}"
    export OCI_RUN_SYSCALL_PROBE="${OCI_RUN_SYSCALL_PROBE:-$1/tests/syscall-probe}"
    export OCI_RUN_EXEC_HIJACK="${OCI_RUN_EXEC_HIJACK:-$1/tests/exec-hijack}"
    export OCI_RUN_FAIL_SYSCALL="${OCI_RUN_FAIL_SYSCALL:-$1/tests/fail-syscall}"
    export OCI_RUN_PROFILES="${OCI_RUN_PROFILES:-$src/seccomp-profiles}"
    export OCI_RUN_SHIM="${OCI_RUN_SHIM:-$1/shim/oci-run-shim}"
}

# criterion_suite NAME BINARY [ARGS...]: run it with --json and --xml (and ARGS, such
# as a --filter), list skipped and failed tests. With $runner set, through
# that command (a virtual machine's, vm_suite).
runner=
criterion_suite() {
    name=$1 bin=$2
    shift 2
    if [ ! -x "$bin" ]; then
        echo "suite $name: $bin missing" >&2
        broken=1
        return
    fi
    echo "== suite $name"
    $runner "$bin" --jobs "$jobs" --json="$report/$name.json" --xml="$report/$name.xml" "$@"
    rc=$?
    if [ "$rc" -eq 77 ] && [ -n "$runner" ] && [ ! -e "$report/$name.json" ]; then
        echo "skipped: $name: no virtual machine can be booted here (see above)"
        suite_pass=0 suite_fail=0 suite_skip=1
        return
    fi
    if [ ! -s "$report/$name.json" ]; then
        echo "suite $name: no results (exit $rc)" >&2
        broken=1
        return
    fi
    # Criterion writes a failure message into its JSON unescaped: a quote in
    # one makes the report unreadable. Its XML report keeps messages in CDATA
    # and says which tests passed and failed (not why one skipped, nor which
    # skipped themselves: those are not counted). Unreadable too, the suite
    # has failed.
    if ! jq empty "$report/$name.json" 2>/dev/null; then
        echo "suite $name: its JSON report is unreadable; counting from its XML report" >&2
        broken=1
        set -- $(python3 -c '
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    sys.exit(1)
passed = failed = 0
for suite in root.iter("testsuite"):
    for test in suite.iter("testcase"):
        if test.get("status") == "PASSED":
            passed += 1
        elif test.get("status") != "SKIPPED":
            failed += 1
            print("FAILED: %s::%s" % (suite.get("name"), test.get("name")), file=sys.stderr)
print(passed, failed)' "$report/$name.xml")
        if [ "$#" -ne 2 ]; then
            echo "suite $name: unreadable results (exit $rc); see the failures above" >&2
            suite_pass=0 suite_fail=1 suite_skip=0
            return
        fi
        suite_pass=$1 suite_fail=$(($2 > 0 ? $2 : 1)) suite_skip=0
        return
    fi
    p=$(jq '.passed' "$report/$name.json")
    f=$(jq '.failed + .errored' "$report/$name.json")
    # A test its --filter left out is "skipped" too, with Criterion's own
    # words: only the tests that ran and skipped themselves count.
    ran='def ran_skipped: select(.status == "SKIPPED" and
                                (.messages // [""])[0] != "The test was skipped.");'
    s=$(jq "$ran"' [.test_suites[].tests[] | ran_skipped] | length' "$report/$name.json")
    jq -r "$ran"' .test_suites[] as $s | $s.tests[] | ran_skipped
           | "skipped: \($s.name)::\(.name): \((.messages // [""])[0])"' "$report/$name.json"
    jq -r '.test_suites[] as $s | $s.tests[] | select(.status != "SKIPPED" and .status != "PASSED")
           | "FAILED: \($s.name)::\(.name): \((.messages // [""]) | join(" / "))"' "$report/$name.json"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "suite $name: exited $rc with no failed test" >&2
        broken=1
    fi
    suite_pass=$p suite_fail=$f suite_skip=$s
}

# script_suite NAME COMMAND...: any program whose output ends with the line
# "suite NAME: N passed, N failed, N skipped".
script_suite() {
    name=$1
    shift
    echo "== suite $name"
    { "$@"; echo $? >"$report/$name.rc"; } 2>&1 | tee "$report/$name.out" | grep -v "^suite $name: "
    rc=$(cat "$report/$name.rc")
    line=$(grep "^suite $name: [0-9]* passed, [0-9]* failed, [0-9]* skipped$" "$report/$name.out" | tail -n 1)
    if [ -z "$line" ]; then
        echo "suite $name: no summary line (exit $rc)" >&2
        broken=1
        return
    fi
    set -- $(echo "$line" | sed 's/^suite [^:]*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/')
    if [ "$rc" -ne 0 ] && [ "$2" -eq 0 ]; then
        echo "suite $name: exited $rc with no failed test" >&2
        broken=1
    fi
    tally "$name" "$1" "$2" "$3"
}

# Print a sanitizer log with the frames in the sealed view of oci-run (which
# the runtime's symbolizer cannot open: "/oci-run+0x..." in its private
# overlay, "/memfd:oci-run (deleted)+0x..." in the memfd copy) resolved
# against the build's binary.
symbolized() {
    while IFS= read -r l; do
        case "$l" in
        *"(/memfd:oci-run (deleted)+0x"* | *"(/oci-run+0x"*)
            off=$(echo "$l" | sed 's/.*oci-run\( (deleted)\)\{0,1\}+\(0x[0-9a-f]*\)).*/\2/')
            echo "$l $(addr2line -f -C -i -p -e "$asan_build/src/oci-run" "$off" | tr '\n' ' ')"
            ;;
        *) echo "$l" ;;
        esac
    done <"$1"
}

# sanitized_suite NAME BINARY: a Criterion suite of the ASan+UBSan build.
# Every report fails the run: the process that reported exits 86 (its test
# fails), and its log (one file per reporting process, read here, so a
# report from a container's init or a helper is not lost in a stderr nobody
# reads) counts as one more failure.
sanitized_suite() {
    name=$1
    logs="$report/$name-sanitizer"
    mkdir -m 1777 "$logs"
    suite_pass=0 suite_fail=0 suite_skip=0
    (
        # This build's runtime and helper, whatever the plain suites ran. The
        # static test programs copied into containers are the plain build's
        # (a sanitized program cannot be linked statically).
        unset OCI_RUN OCI_RUN_SHIM OCI_RUN_DYNAMIC
        use_build "$asan_build"
        export ASAN_OPTIONS="log_path=$logs/asan:exitcode=86:abort_on_error=0:halt_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
        export UBSAN_OPTIONS="log_path=$logs/ubsan:exitcode=86:abort_on_error=0:halt_on_error=1:print_stacktrace=1"
        criterion_suite "$@"
        echo "$suite_pass $suite_fail $suite_skip $broken" >"$report/$name.counts"
    )
    [ -s "$report/$name.counts" ] && read -r suite_pass suite_fail suite_skip broken <"$report/$name.counts"
    for log in "$logs"/*; do
        [ -e "$log" ] || continue
        echo "FAILED: $name: sanitizer report $(basename "$log") (first 80 lines):"
        symbolized "$log" | head -n 80
        suite_fail=$((suite_fail + 1))
    done
    tally "$name" "$suite_pass" "$suite_fail" "$suite_skip"
}

# ---- the suites ------------------------------------------------------------

use_build "$build"
for suite in unit integration clients; do
    suite_pass=0 suite_fail=0 suite_skip=0
    criterion_suite "$suite" "$build/tests/$suite-tests"
    tally "$suite" "$suite_pass" "$suite_fail" "$suite_skip"
done

if [ -n "$asan_build" ]; then
    sanitized_suite unit-asan "$asan_build/tests/unit-tests"
    # Under ASan the runtime is ~5x slower: every integration suite but the
    # load tests (concurrency, exhaustion) and valgrind (which skips an ASan
    # binary). (Exhaustion cannot run sanitized anyway: with the helper out
    # of descriptors, UBSan's vptr check cannot make the pipe it probes
    # memory with and reports a valid object as one with an invalid vptr.)
    # The code under test runs in the sanitized oci-run, helper and stage the
    # suite starts; the test program itself is the plain build's (the unit
    # suite is where the runtime's code runs inside the test, sanitized).
    sanitized_suite integration-asan "$build/tests/integration-tests" \
        --filter '@(cli|lifecycle|exec|hooks|sandbox|cve|crash|bad_input|bad_cli|bad_host|cgroups|mounts|seccomp|terminal|network|podnet|opconfig|systemd|systemd_v1|rootless|conformance)/*'
fi

# What this host cannot show: the integration tests of cgroups and of the
# systemd driver (a user's manager among them) on a host whose cgroups are v2
# alone with every controller, on Debian 12's own kernel, in a virtual
# machine (tests/vm/vm-run.sh) that sees this host's files and writes the
# results here. A machine whose kernel panicked or locked up (seen once,
# emulated: both vCPUs stuck until the timeout) runs the suite once more.
suite_pass=0 suite_fail=0 suite_skip=0
runner="$src/tests/vm/vm-run.sh --retry --see $src --see $build --share $report --"
criterion_suite integration-v2 "$build/tests/integration-tests" --filter "${OCI_RUN_V2_FILTER:-@(cgroups|systemd|systemd_user|rootless)/*}"
runner=
tally integration-v2 "$suite_pass" "$suite_fail" "$suite_skip"
# vm-run.sh's own ends: a panicked machine again with --retry, a timeout not.
script_suite vm "$src/tests/vm/test-vm-run.sh"

# libFuzzer targets, a short smoke of each (tests/fuzz/README.md; longer by hand).
if [ -n "${OCI_RUN_FUZZ_BUILD:-}" ]; then
    export FUZZ_CLEAN=1
    script_suite fuzz "$src/tests/fuzz/run.sh" "$OCI_RUN_FUZZ_BUILD" "${OCI_RUN_FUZZ_SECONDS:-5}"
fi

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ] && [ "$broken" -eq 0 ] && [ "$total_pass" -gt 0 ]
