#!/bin/bash
# Run every libFuzzer target (or those named) for a bounded time each, on a
# copy of its seed corpus, and sum up like the other suites:
#   tests/fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET [TARGET...]
# BUILD_DIR is configured with -Dfuzzing=true (see tests/fuzz/README.md);
# FUZZ_TIMEOUT (seconds, default 30) is the time one input may take. A
# target passes when it ran its full time with no crash, leak, sanitizer
# report, invariant failure, timeout or out-of-memory. Logs, the grown corpus
# and crash artifacts stay in the directory printed first.
set -u

if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -eq 0 ]; then
    echo "usage: $0 BUILD_DIR SECONDS_PER_TARGET [TARGET...]" >&2
    exit 2
fi
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(config annotations seccomp http_request egress_rules helper_config mount_options
        dns_message intercept_peek)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/oci-run-fuzz.XXXXXX")
mkdir -p "$work/artifacts"
echo "fuzz: logs, corpora and crash artifacts in $work"

passed=0
failed=0
for t in "${targets[@]}"; do
    bin=$build/tests/fuzz/fuzz_$t
    if [ ! -x "$bin" ]; then
        echo "fuzz $t: FAIL: no $bin (configure BUILD_DIR with -Dfuzzing=true)"
        failed=$((failed + 1))
        continue
    fi
    corpus=$work/corpus/$t
    mkdir -p "$corpus"
    cp "$here/corpus/$t/"* "$corpus/" 2>/dev/null
    dict=()
    [ -f "$here/dict/$t.dict" ] && dict=(-dict="$here/dict/$t.dict")
    log=$work/$t.log
    start=$(date +%s)
    # -timeout: one input taking this long (wall clock: 30 s leaves room for
    # a loaded machine, where 10 s gave false alarms) is a hang;
    # -rss_limit_mb: a bound on memory; LeakSanitizer reports leaks.
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0 \
        "$bin" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" "${dict[@]}" \
        "$corpus" >"$log" 2>&1
    rc=$?
    elapsed=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    # A "slow unit" (an input that took over 10 s of wall clock) is a finding
    # only if it is slow alone: on a loaded machine a niced fuzzer waits for
    # the CPU. Each is run again by itself; one taking over a second fails.
    slow_note=
    for unit in "$work/artifacts/$t-slow-unit-"*; do
        [ -e "$unit" ] || continue
        ms=$(ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0 \
            "$bin" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 "$unit" 2>&1 |
            sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p')
        if [ -n "$ms" ] && [ "$ms" -le 1000 ]; then
            slow_note="$slow_note ${ms}ms"
            mv "$unit" "$work/slow-under-load-$(basename "$unit")"
        fi
    done
    [ -n "$slow_note" ] && slow_note=" (slow units under load, each alone:$slow_note)"
    artifact=$(ls "$work/artifacts/$t-"* 2>/dev/null | head -n 1)
    if [ $rc -eq 0 ] && [ -z "$artifact" ] && [ "$elapsed" -ge "$seconds" ]; then
        echo "fuzz $t: ok, ${elapsed}s clean, ${runs:-?} inputs, corpus $(ls "$corpus" | wc -l) files$slow_note"
        passed=$((passed + 1))
    else
        why=$(grep -m 1 -E '^(==[0-9]+==ERROR|SUMMARY|fuzz invariant broken|.*runtime error)' "$log")
        echo "fuzz $t: FAIL after ${elapsed}s (exit $rc): ${why:-see the log}; log $log${artifact:+, input $artifact}"
        failed=$((failed + 1))
    fi
done

echo "suite fuzz: $passed passed, $failed failed, 0 skipped"
# FUZZ_CLEAN=1 (the test command's smoke): nothing to keep when all passed.
if [ $failed -eq 0 ] && [ -n "${FUZZ_CLEAN:-}" ]; then rm -rf "$work"; fi
[ $failed -eq 0 ]
