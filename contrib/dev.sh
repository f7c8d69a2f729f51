#!/bin/sh
# dev.sh demo|test: the README's two commands. Installs the Debian packages
# oci-run needs, builds it, then runs the demo container or the whole suite.
# Run as root on Debian 12.
set -eu
cd "$(dirname "$0")/.."
what=${1:?usage: contrib/dev.sh demo|test}

packages="meson ninja-build pkg-config g++ libseccomp-dev libyajl-dev libmnl-dev
    libcgroup-dev libidn2-dev libcriterion-dev scdoc busybox-static jq uidmap strace"
# The client suites (tests/clients) drive oci-run through real Podman and
# containerd; they skip themselves where these are missing.
if [ "$what" = test ]; then
    packages="$packages podman containerd"
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

build=${OCI_RUN_BUILD:-build}
if [ ! -f "$build/build.ninja" ]; then
    # fault_injection: the crash tests' OCI_RUN_FAULT hook (runtime/fault.hpp);
    # an installed build is set up without it.
    meson setup "$build" -Dwerror=true -Dfault_injection=true
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
    tests/run-suites.sh "$build"
    ;;
*)
    echo "usage: contrib/dev.sh demo|test" >&2
    exit 1
    ;;
esac
