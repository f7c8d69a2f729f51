#!/bin/sh
# test-vm-run.sh: tests of vm-run.sh's ends other than COMMAND's own: a
# machine whose kernel panics (a soft lockup panics there too) is started
# again with --retry and reported without it; a machine that does not reach
# the command in time is started again, up to three in all; a machine past
# --timeout is not started again. Each boots real machines (about 10 s each here).
# Prints "suite vm: N passed, N failed, N skipped"; where vm-run.sh cannot
# boot a machine (exit 77), its tests are skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
vm=$here/vm-run.sh
work=$(mktemp -d /tmp/oci-run-test-vm-XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0

# check NAME CONDITION...: one assertion of the current test.
ok=1
check() {
    what=$1
    shift
    if ! "$@"; then
        echo "vm/$test: FAIL: $what"
        ok=0
    fi
}
has() { grep -q -e "$2" "$1"; }
lacks() { ! grep -q -e "$2" "$1"; }
begin() {
    test=$1 ok=1
    dir=$work/$1
    mkdir "$dir"
}
# end STATUS: the test's result; 77 from vm-run.sh is a skip.
end() {
    if [ "$1" = 77 ]; then
        echo "vm/$test: SKIP: vm-run.sh cannot boot a machine here"
        skipped=$((skipped + 1))
    elif [ "$ok" = 1 ]; then
        echo "vm/$test: PASS"
        passed=$((passed + 1))
    else
        echo "vm/$test: stderr was:"
        sed 's/^/    /' "$dir/err"
        failed=$((failed + 1))
    fi
}

# A command that crashes the machine's kernel the first time it runs and
# exits 7 the second time; it records what the machine's kernel was told
# to do on a soft lockup.
crash_once='cat /proc/sys/kernel/softlockup_panic >"$0/softlockup_panic"
if [ -e "$0/first" ]; then touch "$0/second"; exit 7; fi
touch "$0/first" && sync && echo c >/proc/sysrq-trigger; sleep 60'

begin a_panicked_machine_runs_the_command_again_with_retry
status=0
"$vm" --retry --share "$dir" -- sh -c "$crash_once" "$dir" >"$dir/out" 2>"$dir/err" || status=$?
if [ "$status" != 77 ]; then
    check "exit status $status, not the second run's 7" [ "$status" = 7 ]
    check "the command ran twice" [ -e "$dir/first" ] && [ -e "$dir/second" ]
    check "the panic's console on stderr" has "$dir/err" "Kernel panic"
    check "stderr says the command runs again" has "$dir/err" "retry: the command once more"
    check "the kernel panics on a soft lockup" [ "$(cat "$dir/softlockup_panic" 2>/dev/null)" = 1 ]
fi
end "$status"

begin a_panicked_machine_without_retry_is_status_125
status=0
"$vm" --share "$dir" -- sh -c "$crash_once" "$dir" >"$dir/out" 2>"$dir/err" || status=$?
if [ "$status" != 77 ]; then
    check "exit status $status, not 125" [ "$status" = 125 ]
    check "the command ran once" [ -e "$dir/first" ] && [ ! -e "$dir/second" ]
    check "stderr says the command's end is unknown" has "$dir/err" "did not say how the command ended"
    check "the panic's console on stderr" has "$dir/err" "Kernel panic"
    check "no second machine" lacks "$dir/err" "once more"
fi
end "$status"

begin a_machine_that_does_not_reach_the_command_is_started_again
status=0
VM_RUN_BOOT_LIMIT=0 "$vm" --retry --share "$dir" -- sh -c 'echo x >>"$0/runs"' "$dir" \
    >"$dir/out" 2>"$dir/err" || status=$?
if [ "$status" != 77 ]; then
    check "exit status $status, not 125" [ "$status" = 125 ]
    check "the command never ran" [ ! -e "$dir/runs" ]
    check "each machine said" has "$dir/err" "did not reach the command within 0 s (boot 1 of 3)"
    check "three machines" has "$dir/err" "(boot 3 of 3)"
    check "stderr says none reached it" has "$dir/err" "three machines in turn did not reach"
    check "not a fourth, not --retry's" lacks "$dir/err" "once more"
fi
end "$status"

begin a_machine_past_its_timeout_is_not_started_again
status=0
"$vm" --retry --timeout 20 --share "$dir" -- sh -c 'echo x >>"$0/runs"; sleep 120' "$dir" \
    >"$dir/out" 2>"$dir/err" || status=$?
if [ "$status" != 77 ]; then
    check "exit status $status, not 125" [ "$status" = 125 ]
    check "stderr names the timeout" has "$dir/err" "did not end within 20 s"
    check "no second machine" lacks "$dir/err" "once more"
    check "the command ran once" [ "$(wc -l <"$dir/runs" 2>/dev/null)" = 1 ]
fi
end "$status"

echo "suite vm: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
