#!/bin/sh
# vm-run.sh [--memory MIB] [--timeout S] [--retry] [--see DIR]... [--share DIR]... -- COMMAND [ARG...]
#
# Runs COMMAND as root in a virtual machine whose kernel is Debian's own
# (the newest /boot/vmlinuz-VERSION with its modules in /lib/modules, from
# linux-image-amd64) and whose cgroup hierarchy is v2 alone, every
# controller enabled at its root, as on a host that systemd booted in its
# unified mode: what this project's tests cannot see on a host whose
# controllers are bound to v1 hierarchies. qemu-system-x86 runs it (KVM
# where /dev/kvm runs a machine, else emulated).
#
# The machine's root is this machine's /, read-only over 9p, under a tmpfs
# (an overlay: what the command writes stays in the machine); /tmp, /run and
# /dev are its own (a tmpfs: overlayfs cannot be the upper layer of Podman's
# or containerd's own overlays). Each --see DIR (a checkout or a build under
# /tmp, say) is this machine's DIR, read-only at the same path; each
# --share DIR is this machine's DIR, read-write at the same path (results
# come back through it). COMMAND runs in the caller's directory with the
# caller's exported environment; its output comes here as it runs; the
# kernel's console goes to the file $VM_CONSOLE_LOG where that is set.
#
# The machine's kernel panics on a soft lockup (a CPU stuck in the kernel
# for 20 s), and a panic ends the machine at once: emulated, both vCPUs
# have been seen stuck that way for good, where the only other end is the
# --timeout. A machine that has not reached COMMAND 150 s after it started
# (stuck while it boots, the console silent) is stopped and started again,
# up to three machines in all, each said on stderr. With --retry, a machine that ended before saying how COMMAND
# ended (a panic, a lockup, qemu failing), not by the timeout, is started
# once more and COMMAND runs again from the start; stderr says so, with the
# first machine's console. Only for a COMMAND that can run twice.
#
# Exit status: COMMAND's; 77 where this machine cannot boot one (no qemu,
# no kernel image with its 9p modules); 125 when the machine did not boot
# or did not say how COMMAND ended (its console's last lines on stderr).
set -eu
memory=4096 timeout=1800 retry=0 shares= sees=
while [ $# -gt 0 ]; do
    case "$1" in
    --memory) memory=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --retry) retry=1; shift ;;
    --share) shares="$shares $(cd "$2" && pwd)"; shift 2 ;;
    --see) sees="$sees $(cd "$2" && pwd)"; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: vm-run.sh [--memory MIB] [--timeout S] [--retry] [--see DIR]... [--share DIR]... -- COMMAND..." >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "vm-run.sh: no command" >&2; exit 2; }

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "vm-run.sh: no qemu-system-x86_64 (Debian: qemu-system-x86)" >&2; exit 77; }
kernel= version=
for k in $(ls -v /boot/vmlinuz-* 2>/dev/null); do
    v=${k#/boot/vmlinuz-}
    [ -f "/lib/modules/$v/kernel/fs/9p/9p.ko" ] && kernel=$k version=$v
done
[ -n "$kernel" ] || { echo "vm-run.sh: no kernel image with 9p modules (Debian: linux-image-amd64)" >&2; exit 77; }

work=$(mktemp -d /tmp/oci-run-vm-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/xchg" "$work/initrd"

# The first stage, in an initramfs: busybox and the modules that reach the
# root (virtio, 9p, overlay), loaded in order; those built in are absent.
(
    cd "$work/initrd"
    mkdir -p bin dev proc sys host rw newroot modules
    cp /bin/busybox bin/busybox
    for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
        netfs fscache 9pnet 9pnet_virtio 9p overlay; do
        f=$(modinfo -k "$version" -n "$m" 2>/dev/null || true)
        case "$f" in /*.ko) cp "$f" "modules/$m.ko" && echo "$m" >>modules/order ;; esac
    done
    cat >init <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do insmod "/modules/$m.ko"; done
fail() { echo "vm-run: $*" >/dev/console; poweroff -f; }
p9=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$p9,ro,cache=loose" host /host || fail "mount the host's root"
mount -t tmpfs -o mode=755 rw /rw && mkdir /rw/upper /rw/work
mount -t overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work root /newroot ||
    fail "the overlay root"
for d in tmp run; do mount -t tmpfs -o mode=1777,nosuid,nodev "$d" "/newroot/$d"; done
chmod 755 /newroot/run
mkdir -p /newroot/run/vm && mount -t 9p -o "$p9" xchg /newroot/run/vm || fail "mount xchg"
while read -r tag path; do
    mkdir -p "/newroot$path" || fail "mkdir $path"
    if [ "$tag" = see ]; then
        mount -o bind "/host$path" "/newroot$path" || fail "bind $path"
    else
        mount -t 9p -o "$p9" "$tag" "/newroot$path" || fail "mount $path"
    fi
done </newroot/run/vm/shares
umount /proc
exec switch_root /newroot /bin/sh /run/vm/boot
INIT
    chmod 755 init
    find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz"
)

# The second stage, in the machine's root: its own filesystems, the v2
# hierarchy with every controller enabled below its root, loopback; then
# COMMAND, its output on the second serial port.
: >"$work/xchg/shares"
for d in $sees; do echo "see $d" >>"$work/xchg/shares"; done
qargs=
n=0
for s in $shares; do
    echo "share$n $s" >>"$work/xchg/shares"
    qargs="$qargs -fsdev local,id=share$n,path=$s,security_model=none -device virtio-9p-pci,fsdev=share$n,mount_tag=share$n"
    n=$((n + 1))
done
export -p >"$work/xchg/env"
{
    echo "cd '$(pwd)'"
    printf 'exec'
    for a in "$@"; do printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
    echo
} >"$work/xchg/command"
cat >"$work/xchg/boot" <<'BOOT'
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid,mode=755 dev /dev
mkdir -p /dev/pts /dev/shm /dev/mqueue
mount -t devpts -o nosuid,noexec,newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx
mount -t tmpfs -o nosuid,nodev shm /dev/shm && chmod 1777 /dev/shm
mount -t mqueue mqueue /dev/mqueue
mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate cgroup2 /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
    echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control
done
ip link set lo up
hostname ocirun-vm
stty -F /dev/ttyS1 raw -echo
: >/run/vm/booted
(
    . /run/vm/env
    . /run/vm/command
) >/dev/ttyS1 2>&1 </dev/null
echo $? >/run/vm/rc
sync
/bin/busybox poweroff -f
BOOT

# KVM where it runs a machine: /dev/kvm can be there with virtual CPUs that
# never start (seen nested, in a paravirtualised machine), where every boot
# would end at the timeout. A kernel that prints its first line within 15 s
# (it then panics without a root, and -no-reboot ends qemu) says it runs.
kvm_runs() {
    [ -w /dev/kvm ] || return 1
    timeout 15 "$qemu" -accel kvm -smp 1 -m 256 -nodefaults -display none -no-reboot \
        -net none -kernel "$kernel" -append "console=ttyS0 panic=-1" -serial stdio \
        </dev/null 2>/dev/null | grep -q "Linux version"
}
accel=tcg,thread=multi
if kvm_runs; then
    accel=kvm
elif [ -e /dev/kvm ]; then
    echo "vm-run.sh: /dev/kvm did not run a machine within 15 s: emulated (TCG) instead" >&2
fi
console=${VM_CONSOLE_LOG:-$work/console.log}
# How long a machine may take to reach COMMAND (a few seconds, emulated,
# as a rule): one that has not by then is stuck before it (emulated, both
# vCPUs have been seen stuck during boot with nothing on the console), and
# is started again, up to twice; COMMAND has not run, so this is not
# --retry's to allow. ($VM_RUN_BOOT_LIMIT sets it: test-vm-run.sh's 0
# stops every machine at once.)
boot_limit=${VM_RUN_BOOT_LIMIT:-150}
# machine: one machine, COMMAND in it; its status is qemu's (124: the
# timeout), or 200 when it did not reach COMMAND within boot_limit.
machine() {
    rm -f "$work/xchg/rc" "$work/xchg/booted"
    # shellcheck disable=SC2086
    timeout "$timeout" "$qemu" -accel "$accel" -smp "$(nproc)" -m "$memory" \
        -nodefaults -display none -no-reboot -net none \
        -kernel "$kernel" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 softlockup_panic=1 systemd.unified_cgroup_hierarchy=1" \
        -serial "file:$console" -serial stdio \
        -fsdev local,id=host,path=/,security_model=none,readonly=on,multidevs=remap \
        -device virtio-9p-pci,fsdev=host,mount_tag=host \
        -fsdev "local,id=xchg,path=$work/xchg,security_model=none" \
        -device virtio-9p-pci,fsdev=xchg,mount_tag=xchg \
        $qargs </dev/null &
    q=$!
    waited=0
    while [ ! -e "$work/xchg/booted" ] && kill -0 "$q" 2>/dev/null; do
        if [ "$waited" -ge "$boot_limit" ]; then
            kill "$q"
            wait "$q" || true
            return 200
        fi
        sleep 1
        waited=$((waited + 1))
    done
    wait "$q"
}
# boot: a machine that reaches COMMAND, with its status.
boot() {
    for attempt in 1 2 3; do
        s=0
        machine || s=$?
        [ "$s" = 200 ] || return "$s"
        echo "vm-run.sh: the machine did not reach the command within ${boot_limit} s (boot $attempt of 3); its kernel:" >&2
        console_report
    done
    return 200
}
# console_report: what the machine's kernel said went wrong (its first such
# lines: a panic's cause comes before its trace), then the console's end.
console_report() {
    if [ ! -s "$console" ]; then
        echo "vm-run.sh: ... its console is empty" >&2
        return 0
    fi
    grep -m 5 -E "Kernel panic|soft lockup|BUG:|Oops:|self-detected stall" "$console" >&2 || true
    echo "vm-run.sh: ... its console's last lines:" >&2
    tail -n 30 "$console" >&2
}
status=0
boot || status=$?
if [ ! -s "$work/xchg/rc" ] && [ "$retry" = 1 ] && [ "$status" != 124 ] && [ "$status" != 200 ]; then
    echo "vm-run.sh: the machine ended (qemu's status $status) before the command did; its kernel:" >&2
    console_report
    echo "vm-run.sh: --retry: the command once more, in a new machine" >&2
    status=0
    boot || status=$?
fi
if [ ! -s "$work/xchg/rc" ]; then
    if [ "$status" = 124 ]; then
        echo "vm-run.sh: the machine did not end within ${timeout} s; its kernel:" >&2
    elif [ "$status" = 200 ]; then
        echo "vm-run.sh: three machines in turn did not reach the command; the last one's kernel:" >&2
    else
        echo "vm-run.sh: the machine did not say how the command ended; its kernel:" >&2
    fi
    console_report
    exit 125
fi
exit "$(cat "$work/xchg/rc")"
