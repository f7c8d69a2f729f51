#!/bin/bash
# network.sh: network figures for oci-run's local-ports relay, side by side
# with pasta -T and slirp4netns, in one run. Figures, not assertions.
#
#   bench/network.sh [--seconds N] [--repeat N] [--port N] [--json] [--samples]
#                    [--oci-run PATH] [--shim PATH] [--make-bundle PATH]
#                    [--conn-rate PATH]
#
# From inside each method's network namespace to a server on the host's
# 127.0.0.1: iperf3 throughput with 1 and 4 streams (-P 4), and connections
# per second (conn_rate, 1 and 4 clients in parallel); plus the set-up
# latency of an HTTP CONNECT through oci-run's egress proxy. Methods:
#   direct       client in the host's namespace (the floor)
#   oci-run      a busybox container with dev.ocirun.local-ports, client
#                run in its netns with nsenter (the oci-run-shim relay)
#   pasta -T     pasta --config-net -T (splice relay into the host loopback)
#   slirp4netns  slirp4netns --configure, host loopback reached at 10.0.2.2
# Each figure is the median of --repeat runs (default 3), the methods
# interleaved (A B C A B C); --samples lists every run's figure too, --json
# gives medians and samples as JSON. A method whose tool is missing is
# skipped, with a line saying so. Nothing is installed; on Debian:
#   apt-get install iperf3 passt slirp4netns jq busybox-static
# Needs root (namespaces, nsenter, /dev/net/tun). Ports PORT (iperf3) and
# PORT+1 (conn_rate) on 127.0.0.1 must be free; PORT defaults to 5201.
# Paths also come from the environment: OCI_RUN, OCI_RUN_SHIM, MAKE_BUNDLE,
# CONN_RATE. Everything started is stopped by PID and removed at exit.
set -u

here=$(cd "$(dirname "$0")" && pwd)
seconds=5
repeat=3
port=5201
json=false
show_samples=false
proxy_n=1000
oci_run=${OCI_RUN:-}
shim=${OCI_RUN_SHIM:-}
make_bundle=${MAKE_BUNDLE:-}
conn_rate=${CONN_RATE:-}

usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; }
die() { echo "network.sh: $*" >&2; exit 1; }
note() { echo "network.sh: $*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --json) json=true; shift ;;
    --samples) show_samples=true; shift ;;
    --oci-run) oci_run=$2; shift 2 ;;
    --shim) shim=$2; shift 2 ;;
    --make-bundle) make_bundle=$2; shift 2 ;;
    --conn-rate) conn_rate=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument $1" ;;
    esac
done
case "$seconds$repeat$port" in *[!0-9]*) die "--seconds, --repeat and --port take whole numbers" ;; esac
if [ "$seconds" -lt 1 ] || [ "$repeat" -lt 1 ] || [ "$port" -lt 1 ] || [ "$port" -ge 65535 ]; then
    die "--seconds and --repeat must be at least 1, --port below 65535"
fi
iperf_port=$port
conn_port=$((port + 1))

# Defaults: the build directory next to the sources, then PATH.
first_of() { for p in "$@"; do [ -x "$p" ] && { echo "$p"; return; }; done; }
[ -n "$oci_run" ] || oci_run=$(first_of "$here/../build/src/oci-run" "$(command -v oci-run)")
[ -n "$shim" ] || shim=$(first_of "$here/../build/shim/oci-run-shim")
[ -n "$make_bundle" ] || make_bundle=$here/../contrib/make-bundle.sh
[ -n "$conn_rate" ] || conn_rate=$(first_of "$here/../build/bench/conn_rate")

# 77: meson's "skipped".
[ "$(id -u)" = 0 ] || { echo "network.sh: needs root (namespaces, nsenter, /dev/net/tun); skipped"; exit 77; }
[ -x "$conn_rate" ] || die "conn_rate not found (build it: ninja -C build bench/conn_rate, or pass --conn-rate)"
command -v jq >/dev/null || die "jq missing (apt-get install jq)"
command -v nsenter >/dev/null || die "nsenter missing (util-linux)"

have_iperf=true
command -v iperf3 >/dev/null || { have_iperf=false; note "iperf3 missing (apt-get install iperf3): no throughput figures"; }

# --- clean-up: everything by PID, then the work directory -------------------

work=$(mktemp -d /tmp/oci-run-bench-net.XXXXXX) || die "mktemp failed"
pids=()          # processes to stop, in order
container=       # the oci-run container id, once created
cleanup() {
    trap - EXIT INT TERM
    if [ -n "$container" ]; then
        "$oci_run" --root "$work/root" delete -f "$container" >/dev/null 2>&1 ||
            note "oci-run delete -f $container failed"
    fi
    local p
    for p in "${pids[@]}"; do
        # SIGKILL: a namespace's init (pasta's child) ignores SIGTERM.
        kill -KILL "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Wait up to 5 s for a command to succeed.
wait_for() {
    local _
    for _ in $(seq 50); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
# Whether PID has left our network namespace yet.
other_netns() { [ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }
listening() { nsenter --net="/proc/$1/ns/net" cat /proc/net/tcp | awk -v p="$(printf ':%04X' "$2")" '$2 ~ p"$" && $4 == "0A" {f=1} END {exit !f}'; }

# --- the servers on the host's loopback --------------------------------------

for p in "$iperf_port" "$conn_port"; do
    if awk -v p="$(printf ':%04X' "$p")" '$2 ~ p"$" && $4 == "0A" {f=1} END {exit !f}' /proc/net/tcp /proc/net/tcp6; then
        die "127.0.0.1:$p is in use (another iperf3?); pick other ports with --port"
    fi
done
if $have_iperf; then
    iperf3 -s -B 127.0.0.1 -p "$iperf_port" >"$work/iperf3-server.log" 2>&1 </dev/null &
    pids+=($!)
fi
"$conn_rate" serve "$conn_port" >"$work/conn-server.log" 2>&1 </dev/null &
pids+=($!)
wait_for listening $$ "$conn_port" || die "conn_rate serve did not listen: $(cat "$work/conn-server.log")"
if $have_iperf; then
    wait_for listening $$ "$iperf_port" || die "iperf3 -s did not listen: $(cat "$work/iperf3-server.log")"
fi

# --- the methods: each gets a namespace PID (or "" for the host) and the ----
# --- address the host's loopback has from inside it --------------------------

methods=()                    # in table order
declare -A ns_pid target skipped

methods+=(direct)
ns_pid[direct]=
target[direct]=127.0.0.1

setup_oci_run() {
    local b=$work/bundle
    [ -x "$oci_run" ] || { skipped[oci-run]="oci-run not found (--oci-run PATH)"; return; }
    [ -x "$shim" ] || { skipped[oci-run]="oci-run-shim not found (--shim PATH)"; return; }
    [ -x /bin/busybox ] || { skipped[oci-run]="busybox missing (apt-get install busybox-static)"; return; }
    "$make_bundle" --oci-run "$oci_run" "$b" sleep 1000000 >"$work/oci-run.log" 2>&1 ||
        { skipped[oci-run]="make-bundle.sh failed: $(tail -1 "$work/oci-run.log")"; return; }
    jq --arg ports "$iperf_port:$iperf_port,$conn_port:$conn_port" --arg dom "127.0.0.1:$conn_port" \
        '.annotations["dev.ocirun.local-ports"] = $ports | .annotations["dev.ocirun.domains"] = $dom' \
        "$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
    local id=bench-net-$$
    if ! OCI_RUN_SHIM=$shim "$oci_run" --root "$work/root" create --bundle "$b" "$id" >>"$work/oci-run.log" 2>&1; then
        skipped[oci-run]="oci-run create failed: $(tail -1 "$work/oci-run.log")"
        return
    fi
    container=$id
    "$oci_run" --root "$work/root" start "$id" >>"$work/oci-run.log" 2>&1 ||
        { skipped[oci-run]="oci-run start failed: $(tail -1 "$work/oci-run.log")"; return; }
    local pid
    pid=$("$oci_run" --root "$work/root" state "$id" | jq -r .pid)
    wait_for listening "$pid" "$conn_port" ||
        { skipped[oci-run]="nothing listens on 127.0.0.1:$conn_port in the container"; return; }
    ns_pid[oci-run]=$pid
    target[oci-run]=127.0.0.1
}

setup_pasta() {
    command -v pasta >/dev/null || { skipped[pasta]="pasta missing (apt-get install passt)"; return; }
    # pasta runs `sleep` in a namespace of its own and relays that
    # namespace's 127.0.0.1:PORT to the host's (-T). --runas 0: started as
    # root, pasta would drop to nobody, who may not open /dev/net/tun.
    pasta -f -q --runas 0 --config-net -t none -u none -U none \
        -T "$iperf_port,$conn_port" -- sleep 1000000 >"$work/pasta.log" 2>&1 </dev/null &
    local pp=$! child=
    pids+=("$pp")
    wait_for pgrep -P "$pp" -x sleep || { skipped[pasta]="pasta did not start: $(grep -v syslog "$work/pasta.log" | tail -1)"; return; }
    child=$(pgrep -P "$pp" -x sleep)
    pids=("$child" "${pids[@]}")
    wait_for listening "$child" "$conn_port" || { skipped[pasta]="pasta -T does not listen in its namespace"; return; }
    ns_pid[pasta]=$child
    target[pasta]=127.0.0.1
}

setup_slirp() {
    command -v slirp4netns >/dev/null || { skipped[slirp4netns]="slirp4netns missing (apt-get install slirp4netns)"; return; }
    unshare --net sleep 1000000 </dev/null &
    local holder=$!
    pids+=("$holder")
    wait_for other_netns "$holder" || { skipped[slirp4netns]="unshare --net did not start"; return; }
    # Host loopback access (10.0.2.2) is slirp4netns' default; the MTU is the
    # one rootlesskit and podman use with it.
    slirp4netns --configure --mtu=65520 "$holder" tap0 >"$work/slirp4netns.log" 2>&1 </dev/null &
    pids=("$!" "${pids[@]}")
    wait_for nsenter --net="/proc/$holder/ns/net" "$conn_rate" latency 10.0.2.2 "$conn_port" 1 ||
        { skipped[slirp4netns]="10.0.2.2:$conn_port unreachable: $(tail -1 "$work/slirp4netns.log")"; return; }
    ns_pid[slirp4netns]=$holder
    target[slirp4netns]=10.0.2.2
}

setup_oci_run; methods+=(oci-run)
setup_pasta; methods+=(pasta)
setup_slirp; methods+=(slirp4netns)

active=()
for m in "${methods[@]}"; do
    if [ -n "${skipped[$m]:-}" ]; then
        note "skipping $m: ${skipped[$m]}"
    else
        active+=("$m")
    fi
done

# --- measuring ---------------------------------------------------------------

mkdir -p "$work/samples"
# in_ns METHOD CMD...: CMD in the method's network namespace.
in_ns() {
    local m=$1; shift
    if [ -n "${ns_pid[$m]}" ]; then nsenter --net="/proc/${ns_pid[$m]}/ns/net" "$@"; else "$@"; fi
}
record() { echo "$3" >>"$work/samples/$1.$2"; }

# Gbit/s received by the server, or nothing on failure.
iperf() {
    local m=$1 streams=$2 out
    out=$(in_ns "$m" iperf3 -c "${target[$m]}" -p "$iperf_port" -t "$seconds" -P "$streams" -J 2>&1)
    local bps
    bps=$(jq -r '.end.sum_received.bits_per_second // empty' <<<"$out" 2>/dev/null)
    if [ -z "$bps" ]; then
        note "$m: iperf3 -P $streams failed: $(jq -r '.error // empty' <<<"$out" 2>/dev/null || echo "$out" | tail -1)"
        return
    fi
    awk -v b="$bps" 'BEGIN {printf "%.2f\n", b / 1e9}'
}

conns() {
    local m=$1 parallel=$2 out
    out=$(in_ns "$m" "$conn_rate" connect "${target[$m]}" "$conn_port" "$seconds" "$parallel" 2>"$work/conn.err")
    [ -s "$work/conn.err" ] && note "$m: $(cat "$work/conn.err")"
    sed -n 's/^rate=\([0-9]*\).*/\1/p' <<<"$out"
}

# Median set-up latency in microseconds of the CONNECTs, or nothing.
proxy_latency() {
    local out
    out=$(in_ns oci-run "$conn_rate" connect-proxy 3128 "127.0.0.1:$conn_port" "$proxy_n" 2>"$work/conn.err")
    [ -s "$work/conn.err" ] && note "oci-run proxy: $(cat "$work/conn.err")"
    sed -n 's/^median_us=\([0-9.]*\).*/\1/p' <<<"$out"
}
plain_latency() {
    local m=$1 out
    out=$(in_ns "$m" "$conn_rate" latency "${target[$m]}" "$conn_port" "$proxy_n" 2>"$work/conn.err")
    [ -s "$work/conn.err" ] && note "$m: $(cat "$work/conn.err")"
    sed -n 's/^median_us=\([0-9.]*\).*/\1/p' <<<"$out"
}

runs_per_round=2
$have_iperf && runs_per_round=4
total=$(( ${#active[@]} * repeat * runs_per_round * seconds ))
note "${active[*]}: $repeat rounds of ${seconds}s runs, about ${total}s"
# The figures are only as good as the machine is idle: say when it is not.
# cpu_idle: the share of CPU time (percent) left idle over the next second.
cpu_idle() {
    local a b
    a=$(head -1 /proc/stat); sleep 1; b=$(head -1 /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN {
        n = split(a, x); split(b, y); t = 0 # guest time is in user already
        for (i = 2; i <= 9 && i <= n; i++) t += y[i] - x[i]
        print (t > 0 ? int(100 * (y[5] + y[6] - x[5] - x[6]) / t) : 100) }'
}
idle_before=$(cpu_idle)
[ "$idle_before" -ge 90 ] ||
    note "only ${idle_before}% of the CPUs idle before the run: other work competes, expect noisy figures"
have_proxy=false
for m in "${active[@]}"; do [ "$m" = oci-run ] && have_proxy=true; done
for r in $(seq "$repeat"); do
    for m in "${active[@]}"; do
        if $have_iperf; then
            v=$(iperf "$m" 1); [ -n "$v" ] && record "$m" tcp1 "$v"
            v=$(iperf "$m" 4); [ -n "$v" ] && record "$m" tcp4 "$v"
        fi
        v=$(conns "$m" 1); [ -n "$v" ] && record "$m" conn1 "$v"
        v=$(conns "$m" 4); [ -n "$v" ] && record "$m" conn4 "$v"
        v=$(plain_latency "$m"); [ -n "$v" ] && record "$m" lat "$v"
        if [ "$m" = oci-run ]; then
            v=$(proxy_latency); [ -n "$v" ] && record "$m" proxy "$v"
        fi
    done
    note "round $r of $repeat done"
done

# --- the table ---------------------------------------------------------------

median() {
    local f=$work/samples/$1.$2
    [ -s "$f" ] || return 0
    sort -g "$f" | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
samples() { [ -s "$work/samples/$1.$2" ] && paste -sd, "$work/samples/$1.$2"; }
metrics=(tcp1 tcp4 conn1 conn4 lat proxy)

if $json; then
    {
        for m in "${methods[@]}"; do
            if [ -n "${skipped[$m]:-}" ]; then
                jq -n --arg m "$m" --arg why "${skipped[$m]}" '{($m): {skipped: $why}}'
                continue
            fi
            for k in "${metrics[@]}"; do
                s=$(samples "$m" "$k") || continue
                jq -n --arg m "$m" --arg k "$k" --argjson med "$(median "$m" "$k")" --argjson s "[$s]" \
                    '{($m): {($k): {median: $med, samples: $s}}}'
            done
        done
    } | jq -s --argjson seconds "$seconds" --argjson repeat "$repeat" \
        --argjson cpus "$(nproc)" --arg kernel "$(uname -r)" \
        --argjson idle_before "$idle_before" --argjson idle_after "$(cpu_idle)" \
        '{seconds: $seconds, repeat: $repeat, cpus: $cpus, kernel: $kernel,
          cpu_idle_percent_before: $idle_before, cpu_idle_percent_after: $idle_after,
          units: {tcp1: "Gbit/s, 1 stream", tcp4: "Gbit/s, 4 streams", conn1: "conn/s, 1 client",
                  conn4: "conn/s, 4 clients", lat: "us, connect + first byte",
                  proxy: "us, HTTP CONNECT set-up through the egress proxy"},
          methods: (reduce .[] as $x ({}; . * $x))}'
    exit 0
fi

cell() { local v; v=$(median "$1" "$2"); echo "${v:--}"; }
echo
echo "Host 127.0.0.1 from inside each namespace; median of $repeat, ${seconds}s runs"
echo "$(nproc) CPUs, kernel $(uname -r); CPUs idle before the run: ${idle_before}%, after: $(cpu_idle)%"
printf '%-13s %10s %10s %10s %10s %12s\n' method "Gbit/s x1" "Gbit/s x4" "conn/s x1" "conn/s x4" "connect us"
for m in "${methods[@]}"; do
    label=$m
    [ "$m" = pasta ] && label="pasta -T"
    if [ -n "${skipped[$m]:-}" ]; then
        printf '%-13s skipped: %s\n' "$label" "${skipped[$m]}"
        continue
    fi
    printf '%-13s %10s %10s %10s %10s %12s\n' "$label" "$(cell "$m" tcp1)" "$(cell "$m" tcp4)" \
        "$(cell "$m" conn1)" "$(cell "$m" conn4)" "$(cell "$m" lat)"
done
if $show_samples; then
    echo
    echo "Samples, in round order:"
    for m in "${methods[@]}"; do
        [ -z "${skipped[$m]:-}" ] || continue
        line=
        for k in "${metrics[@]}"; do
            v=$(samples "$m" "$k") && line+=" $k=$v"
        done
        printf '%-13s%s\n' "$m" "$line"
    done
fi
if $have_proxy; then
    echo
    echo "oci-run egress proxy: HTTP CONNECT set-up (connect, request, 200 answer), median of $proxy_n: $(cell oci-run proxy) us"
fi
echo "(direct: client in the host's namespace, the floor. connect us: connect until the server's first byte, median of $proxy_n.)"
