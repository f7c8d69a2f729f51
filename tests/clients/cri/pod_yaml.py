#!/usr/bin/python3
# What kubelet would take from a Pod manifest for the CRI suite
# (tests/clients/test_cri.cpp): pod_yaml.py FILE prints, as one JSON object,
# the pod's name, annotations and runtimeClassName, and each container's
# name, image, command and memory limit in bytes.
import json
import sys

import yaml

UNITS = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}


def bytes_of(q):
    for unit, factor in UNITS.items():
        if q.endswith(unit):
            return int(q[:-len(unit)]) * factor
    return int(q)


doc = yaml.safe_load(open(sys.argv[1]))
spec = doc["spec"]
out = {
    "name": doc["metadata"]["name"],
    "annotations": doc["metadata"].get("annotations", {}),
    "runtimeClassName": spec.get("runtimeClassName", ""),
    "containers": [],
}
for c in spec["containers"]:
    limit = c.get("resources", {}).get("limits", {}).get("memory")
    out["containers"].append({
        "name": c["name"],
        "image": c["image"],
        "command": c.get("command", []) + c.get("args", []),
        "memory": bytes_of(limit) if limit else 0,
    })
print(json.dumps(out))
