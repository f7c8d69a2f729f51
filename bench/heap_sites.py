#!/usr/bin/env python3
"""Sum what a process asked of malloc per calling function.

bench/heap_count.cpp, preloaded with OCI_RUN_BENCH_HEAP_SITES=FILE, writes
one line per call ("PID BYTES RETURN-ADDRESSES...") to FILE and the mappings
to FILE.maps. This names each address (addr2line on the mapped file: a
binary with symbols, such as build/src/oci-run-dynamic) and prints bytes,
calls and the first DEPTH frames of the caller, skipping the allocator and
the standard library's containers, largest first.

  OCI_RUN_BENCH_HEAP_SITES=/tmp/sites LD_PRELOAD=build/bench/libheap_count.so \\
      build/src/oci-run-dynamic --root /tmp/r create --bundle B c1
  bench/heap_sites.py /tmp/sites [--pid PID] [--depth N] [--top N]
"""
import argparse
import collections
import subprocess
import sys

SKIP = ("operator new", "std::", "__gnu_cxx", "__cxx", "??", "strdup", "__libc", "_IO_",
        "malloc", "calloc", "realloc", "__GI_")


def short(name):
    """The function's name without its parameter list (which may nest)."""
    end = name.rfind(")")
    if end < 0:
        return name
    depth = 0
    for i in range(end, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i]
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sites")
    ap.add_argument("--pid", help="the process to count (default: the first that is not PID 1)")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()

    segments = []
    with open(a.sites + ".maps") as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[5].startswith("/"):
                lo, hi = (int(x, 16) for x in p[0].split("-"))
                segments.append((lo, hi, p[5]))
    base = {}
    for lo, _, path in segments:
        base[path] = min(lo, base.get(path, lo))

    def where(addr):
        for lo, hi, path in segments:
            if lo <= addr < hi:
                return path, addr - base[path]
        return None, addr

    calls = []
    with open(a.sites) as f:
        for line in f:
            p = line.split()
            if len(p) < 2 or (a.pid and p[0] != a.pid) or (not a.pid and p[0] == "1"):
                continue
            if not a.pid:
                a.pid = p[0]
            calls.append((int(p[1]), [where(int(x, 16)) for x in p[2:]]))

    wanted = collections.defaultdict(set)
    for _, frames in calls:
        for path, off in frames:
            if path:
                wanted[path].add(off)
    names = {}
    for path, offs in wanted.items():
        offs = sorted(offs)
        out = subprocess.run(["addr2line", "-f", "-C", "-e", path] + [hex(o) for o in offs],
                             capture_output=True, text=True, check=False).stdout.split("\n")
        for i, o in enumerate(offs):
            names[(path, o)] = out[2 * i] if 2 * i < len(out) else "??"

    total = collections.Counter()
    count = collections.Counter()
    for n, frames in calls:
        ours = []
        for fr in frames:
            name = names.get(fr, "??")
            if not name.startswith(SKIP):
                ours.append(short(name))
            if len(ours) == a.depth:
                break
        key = " < ".join(ours) or "(allocator or library only)"
        total[key] += n
        count[key] += 1
    print(f"pid {a.pid}: {sum(total.values())} bytes in {sum(count.values())} calls")
    for key, n in total.most_common(a.top):
        print(f"{n:9d} {count[key]:5d}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
