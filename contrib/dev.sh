#!/bin/sh
# dev.sh demo|test: the README's two commands. Installs the Debian packages
# oci-run needs, builds it, then runs the demo container or the whole suite.
# Run as root on Debian 12.
set -eu
cd "$(dirname "$0")/.."
what=${1:?usage: contrib/dev.sh demo|test}

packages="meson ninja-build pkg-config g++ libseccomp-dev libyajl-dev libmnl-dev
    libidn2-dev libunistring-dev libnftables-dev libsystemd-dev libcriterion-dev scdoc busybox-static jq uidmap
    strace"
# The client suites (tests/clients) drive oci-run through real Podman and
# containerd; they skip themselves where these are missing. valgrind checks
# the CLI paths (tests/integration/test_valgrind.cpp); gcc's libasan and
# libubsan come with g++. systemd and dbus: the systemd driver's suite boots
# the host's systemd as a node (tests/integration/test_systemd.cpp), with a
# user's manager and its bus (dbus-user-session). qemu-system-x86 and
# linux-image-amd64 (cpio and kmod make its initramfs): the suite
# integration-v2 runs those tests and the cgroups suite on Debian 12's kernel
# in a virtual machine whose cgroups are v2 alone (tests/vm/vm-run.sh).
if [ "$what" = test ]; then
    packages="$packages podman catatonit containerd python3-grpcio python3-protobuf python3-websocket
        systemd dbus dbus-user-session qemu-system-x86 linux-image-amd64 cpio kmod
        protobuf-compiler valgrind clang-16 libclang-rt-16-dev"
fi
missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
fi

started=$(date +%s)
build=${OCI_RUN_BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
    # fault_injection: the crash tests' OCI_RUN_FAULT hook (runtime/fault.hpp);
    # an installed build is set up without it. -g1: line tables (what
    # backtraces and valgrind's reports use) without the full debug info,
    # which was a fifth of the build's time.
    meson setup "$build" -Dwerror=true -Dfault_injection=true -Dcpp_args=-g1
fi
ninja -C "$build"

case "$what" in
demo)
    demo=$(mktemp -d /tmp/oci-run-demo-XXXXXX)
    trap 'rm -rf "$demo"' EXIT
    contrib/make-bundle.sh --oci-run "$build/src/oci-run" "$demo/bundle" \
        sh -c 'echo "hello from $(hostname): pid $$, uid $(id -u)"; cat /proc/self/status | grep -E "^(NoNewPrivs|CapEff)"'
    "$build/src/oci-run" --root "$demo/state" run --bundle "$demo/bundle" demo
    ;;
test)
    # The unit and integration suites run a second time against a build with
    # AddressSanitizer and UndefinedBehaviorSanitizer (-fno-sanitize-recover:
    # any UB aborts): its unit suite, and the plain build's integration suite
    # driving its oci-run, helper and stage. Dynamic dependencies (the sanitizer runtimes are shared
    # libraries), -O1 (the sanitizers' usual level; it also compiles much
    # faster) and -g1: line tables are all a report needs, and the tests that
    # force the sealed memfd (OCI_RUN_SEAL=memfd) copy the whole binary, which
    # full debug info makes much larger. Only what the suites run is built
    # (the static test programs come from the plain build). Linked without
    # PIE: the sanitizers' metadata made 275,000 relative relocations, and
    # applying them was half of every sanitized process's start-up (144 ->
    # 90 ms for `oci-run --version`; each test of the unit suite is a process
    # too). The product builds keep PIE.
    asan=${OCI_RUN_ASAN_BUILD:-build-asan}
    if [ ! -f "$asan/build.ninja" ]; then
        meson setup "$asan" -Dwerror=true -Dfault_injection=true -Db_sanitize=address,undefined \
            -Db_lundef=false -Dstatic_deps=false -Doptimization=1 \
            -Dcpp_args='-g1 -fno-sanitize-recover=undefined' \
            -Dcpp_link_args='-fno-sanitize-recover=undefined -no-pie'
    fi
    ninja -C "$asan" src/oci-run src/oci-run-exec-stage shim/oci-run-shim shim/oci-run-firewall \
        shim/oci-run-systemd \
        tests/unit-tests
    # The libFuzzer targets (tests/fuzz): clang 16 (libstdc++ 12's <expected>
    # is beyond Debian's default clang 14), only the targets built.
    fuzz=${OCI_RUN_FUZZ_BUILD:-build-fuzz}
    if [ ! -f "$fuzz/build.ninja" ]; then
        CC=clang-16 CXX=clang++-16 meson setup "$fuzz" -Dfuzzing=true -Dtests=false \
            -Dstatic_deps=false
    fi
    ninja -C "$fuzz" fuzz
    echo "dev.sh: packages and builds took $(($(date +%s) - started)) s"
    OCI_RUN_FUZZ_BUILD=$fuzz tests/run-suites.sh "$build" "$asan"
    ;;
*)
    echo "usage: contrib/dev.sh demo|test" >&2
    exit 1
    ;;
esac
