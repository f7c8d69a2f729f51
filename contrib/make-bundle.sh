#!/bin/sh
# make-bundle.sh: make an OCI bundle whose rootfs is Debian's busybox-static.
#
#   contrib/make-bundle.sh [--oci-run PATH] [--rootless] [--terminal] DIR [CMD [ARG...]]
#
# DIR/rootfs gets /bin/busybox with a link per applet, /etc/passwd and
# /etc/group; DIR/config.json comes from `oci-run spec`, with the process
# set to CMD (default: sh) and terminal off unless --terminal. Needs
# busybox-static and jq. Used by the README demo and the integration tests.
set -eu

oci_run=oci-run
spec_flags=
terminal=false
while [ $# -gt 0 ]; do
    case "$1" in
    --oci-run) oci_run=$2; shift 2 ;;
    --rootless) spec_flags=--rootless; shift ;;
    --terminal) terminal=true; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "make-bundle.sh: unknown option $1" >&2; exit 1 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "make-bundle.sh: missing bundle directory" >&2; exit 1; }
dir=$1; shift

busybox=/bin/busybox
[ -x "$busybox" ] || { echo "make-bundle.sh: $busybox missing (apt-get install busybox-static)" >&2; exit 1; }
command -v jq >/dev/null || { echo "make-bundle.sh: jq missing (apt-get install jq)" >&2; exit 1; }

mkdir -p "$dir"
[ ! -e "$dir/config.json" ] || { echo "make-bundle.sh: $dir/config.json exists" >&2; exit 1; }
rootfs=$dir/rootfs
mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" \
    "$rootfs/tmp" "$rootfs/root" "$rootfs/run" "$rootfs/var"
chmod 1777 "$rootfs/tmp"
cp "$busybox" "$rootfs/bin/busybox"
# One link per applet, each pointing at /bin/busybox (inside the rootfs).
"$busybox" --install -s "$rootfs/bin"
ln -sf bin "$rootfs/sbin"
mkdir -p "$rootfs/usr"
ln -sf ../bin "$rootfs/usr/bin"
ln -sf ../bin "$rootfs/usr/sbin"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' > "$rootfs/etc/group"

"$oci_run" spec $spec_flags --bundle "$dir"
if [ $# -eq 0 ]; then set -- sh; fi
args=$(jq -cn '$ARGS.positional' --args -- "$@")
tmp=$dir/config.json.tmp
jq --argjson args "$args" --argjson tty "$terminal" \
    '.process.args = $args | .process.terminal = $tty' "$dir/config.json" > "$tmp"
mv "$tmp" "$dir/config.json"
