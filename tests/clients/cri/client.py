#!/usr/bin/python3
# The CRI suite's client (tests/clients/test_cri.cpp): kubelet's side of the
# CRI, one call per line. Run as
#   client.py SOCKET BUILD_DIR
# it compiles cri.proto (beside it) into BUILD_DIR with protoc, connects to
# containerd's CRI on SOCKET, then reads JSON lines {"call": NAME,
# "request": {...}} on stdin (NAME a RuntimeService or ImageService method,
# the request in protobuf's JSON mapping) and writes one JSON line per call:
# {"ok": true, "response": {...}} or {"ok": false, "code": CODE, "error":
# TEXT}. bytes fields come back as text (ExecSync's stdout and stderr).
#
# One call is not a method: "ExecTty" with {"exec": EXEC_REQUEST, "input":
# TEXT, "width": W, "height": H} calls Exec, then attaches to the URL it
# returns as kubectl's websocket client does (containerd's streaming server,
# subprotocol v4.channel.k8s.io: each binary message starts with its
# channel, 0 stdin, 1 stdout, 2 stderr, 3 the final status, 4 resize),
# sends the terminal size, then INPUT, and collects the output until the
# server closes: {"ok": true, "response": {"stdout": ..., "stderr": ...,
# "status": STATUS_JSON}}.
import base64
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sock, build = sys.argv[1], sys.argv[2]
os.makedirs(build, exist_ok=True)
subprocess.run(["protoc", "-I", here, "--python_out", build, os.path.join(here, "cri.proto")],
               check=True)
sys.path.insert(0, build)

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

import cri_pb2  # noqa: E402

channel = grpc.insecure_channel("unix://" + sock)
methods = {}
for service in cri_pb2.DESCRIPTOR.services_by_name.values():
    for m in service.methods:
        req = getattr(cri_pb2, m.input_type.name)
        resp = getattr(cri_pb2, m.output_type.name)
        methods[m.name] = (channel.unary_unary(
            "/%s/%s" % (service.full_name, m.name),
            request_serializer=req.SerializeToString,
            response_deserializer=resp.FromString), req)


def exec_tty(msg):
    import time
    import websocket
    req = msg["request"]
    call, req_type = methods["Exec"]
    resp = call(json_format.ParseDict(req["exec"], req_type()), timeout=msg.get("timeout", 60))
    url = resp.url.replace("http://", "ws://", 1).replace("https://", "wss://", 1)
    ws = websocket.create_connection(url, subprotocols=["v4.channel.k8s.io"],
                                     timeout=msg.get("timeout", 60))
    binary = websocket.ABNF.OPCODE_BINARY
    size = json.dumps({"Width": req.get("width", 80), "Height": req.get("height", 24)})
    ws.send(b"\x04" + size.encode(), opcode=binary)
    # The size first: the process reads its input after the terminal has it.
    time.sleep(0.5)
    ws.send(b"\x00" + req.get("input", "").encode(), opcode=binary)
    out = {"stdout": b"", "stderr": b"", "status": b""}
    names = {1: "stdout", 2: "stderr", 3: "status"}
    while True:
        try:
            opcode, data = ws.recv_data()
        except websocket.WebSocketConnectionClosedException:
            break
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
        if data and data[0] in names:
            out[names[data[0]]] += data[1:]
    ws.close()
    return {k: v.decode("utf-8", "replace") for k, v in out.items()}


def as_text(d):
    # ExecSync's output: base64 in the JSON mapping, text here.
    for k in ("stdout", "stderr"):
        if k in d:
            d[k] = base64.b64decode(d[k]).decode("utf-8", "replace")
    return d


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    try:
        if msg["call"] == "ExecTty":
            out = {"ok": True, "response": exec_tty(msg)}
        else:
            call, req_type = methods[msg["call"]]
            req = json_format.ParseDict(msg.get("request", {}), req_type())
            resp = call(req, timeout=msg.get("timeout", 60))
            out = {"ok": True, "response": as_text(json_format.MessageToDict(
                resp, preserving_proto_field_name=True, use_integers_for_enums=False))}
    except grpc.RpcError as e:
        out = {"ok": False, "code": str(e.code()), "error": e.details()}
    except Exception as e:  # the websocket's errors: the test shows them
        out = {"ok": False, "code": type(e).__name__, "error": str(e)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
