#!/bin/sh
# run-suites.sh BUILD_DIR: run every Criterion suite of a build and print one
# closing line that sums them all: "N passed, N failed, N skipped".
# Exit status is non-zero when a test failed or a suite did not run at all.
set -u
build=$(cd "${1:?usage: run-suites.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
export OCI_RUN=${OCI_RUN:-$build/src/oci-run}
export OCI_RUN_BUNDLE_MAKER=${OCI_RUN_BUNDLE_MAKER:-$src/contrib/make-bundle.sh}
export OCI_RUN_ARCH_BYPASS=${OCI_RUN_ARCH_BYPASS:-$build/tests/arch-bypass}
export OCI_RUN_SYSCALL_PROBE=${OCI_RUN_SYSCALL_PROBE:-$build/tests/syscall-probe}
export OCI_RUN_PROFILES=${OCI_RUN_PROFILES:-$src/seccomp-profiles}
export OCI_RUN_SHIM=${OCI_RUN_SHIM:-$build/shim/oci-run-shim}
jobs=${OCI_RUN_TEST_JOBS:-2}

total_pass=0 total_fail=0 total_skip=0 broken=0
report=$(mktemp -d /tmp/oci-run-suites-XXXXXX)
trap 'rm -rf "$report"' EXIT

for suite in unit integration clients; do
    bin=$build/tests/$suite-tests
    if [ ! -x "$bin" ]; then
        echo "suite $suite: $bin missing" >&2
        broken=1
        continue
    fi
    echo "== suite $suite"
    "$bin" --jobs "$jobs" --json="$report/$suite.json"
    rc=$?
    if [ ! -s "$report/$suite.json" ]; then
        echo "suite $suite: no results (exit $rc)" >&2
        broken=1
        continue
    fi
    p=$(jq '.passed' "$report/$suite.json")
    f=$(jq '.failed + .errored' "$report/$suite.json")
    s=$(jq '.skipped' "$report/$suite.json")
    jq -r '.test_suites[] as $s | $s.tests[] | select(.status == "SKIPPED")
           | "skipped: \($s.name)::\(.name): \((.messages // [""])[0])"' "$report/$suite.json"
    jq -r '.test_suites[] as $s | $s.tests[] | select(.status != "SKIPPED" and .status != "PASSED")
           | "FAILED: \($s.name)::\(.name): \((.messages // [""]) | join(" / "))"' "$report/$suite.json"
    echo "suite $suite: $p passed, $f failed, $s skipped"
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    total_skip=$((total_skip + s))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "suite $suite: exited $rc with no failed test" >&2
        broken=1
    fi
done

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ] && [ "$broken" -eq 0 ] && [ "$total_pass" -gt 0 ]
