#!/usr/bin/env python3
"""Runs a sem-test case with HIPEXTSEM_TRACE set and checks the trace file:
valid JSON, the expected events, in a consistent order.  With --crash the
program kills itself mid-way and the file must still be valid JSON."""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    crash = "--crash" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--crash"]
    exe, path = args[0], args[1]
    if os.path.exists(path):
        os.unlink(path)
    env = dict(os.environ, HIPEXTSEM_TRACE=path)
    p = subprocess.run([exe, "trace-crash" if crash else "trace-run"], env=env)
    if crash:
        if p.returncode != -9:
            fail(f"expected the program to die by SIGKILL, got {p.returncode}")
    elif p.returncode != 0:
        fail(f"program failed with {p.returncode}")
    try:
        with open(path) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"trace is not valid JSON: {e}")
    if not isinstance(events, list) or not events:
        fail("trace is not a non-empty JSON array")
    names = {}
    for e in events:
        for k in ("name", "ph", "pid"):
            if k not in e:
                fail(f"event without {k}: {e}")
        names.setdefault(e["name"], []).append(e)
    for want in ("process_name", "thread_name", "import", "wait", "signal"):
        if want not in names:
            fail(f"no '{want}' event; have {sorted(names)}")
    if not crash and "destroy" not in names:
        fail("no 'destroy' event")
    imp = names["import"][0]
    wait = [e for e in names["wait"] if e["ph"] == "X"][0]
    sig = [e for e in names["signal"] if e["ph"] == "X"][0]
    for e in (wait, sig):
        a = e["args"]
        for k in ("semaphore", "value", "stream", "enqueued_us", "satisfied_us"):
            if k not in a:
                fail(f"{e['name']} event lacks args.{k}")
        if e["dur"] < 0:
            fail(f"negative duration: {e}")
    if wait["args"]["semaphore"] != sig["args"]["semaphore"]:
        fail("wait and signal name different semaphores")
    if wait["args"]["stream"] == sig["args"]["stream"]:
        fail("wait and signal should be on different streams")
    if not imp["ts"] <= wait["ts"] <= sig["args"]["satisfied_us"] <= wait["args"]["satisfied_us"]:
        fail(f"order: import {imp['ts']}, wait enqueued {wait['ts']}, signaled "
             f"{sig['args']['satisfied_us']}, wait satisfied {wait['args']['satisfied_us']}")
    if not crash:
        if names["destroy"][0]["ts"] < wait["args"]["satisfied_us"]:
            fail("destroy before the wait was satisfied")
    # Every signal shows its enqueue and the moment its fence was attached:
    # a flow from the enqueue (stream track) to the attach (semaphore track).
    flows = names.get("fence attached", [])
    starts = {e["id"]: e for e in flows if e["ph"] == "s"}
    ends = {e["id"]: e for e in flows if e["ph"] == "f"}
    sigs = [e for e in names["signal"] if e["ph"] == "X"]
    if len(starts) != len(sigs) or set(starts) != set(ends):
        fail(f"{len(sigs)} signals but {len(starts)} flow starts / {len(ends)} ends")
    stream_tid = {s["tid"] for s in sigs}
    for i, st in starts.items():
        en = ends[i]
        a = en["args"]
        if st["tid"] not in stream_tid:
            fail(f"flow {i} does not start on a stream track")
        if abs(st["ts"] - a["enqueued_us"]) > 0.01 or abs(en["ts"] - a["fence_attached_us"]) > 0.01:
            fail(f"flow {i}: timestamps disagree with its args: {st} {en}")
        if a["enqueue_to_attach_us"] < 0 or en["ts"] < st["ts"]:
            fail(f"flow {i}: fence attached before the signal was enqueued: {a}")
        if not any(abs(s["ts"] - st["ts"]) < 0.01 and
                   abs(s["args"]["satisfied_us"] - en["ts"]) < 0.01 for s in sigs):
            fail(f"flow {i} matches no signal slice")
    tracks = {e["args"]["name"] for e in names["thread_name"]}
    if not any(t.startswith("stream ") for t in tracks) or \
       not any(t.startswith("semaphore ") for t in tracks):
        fail(f"missing stream/semaphore tracks: {tracks}")
    print(f"ok: {len(events)} events, {len(starts)} enqueue -> fence-attached flows, "
          f"order import < wait < signal < satisfied"
          + ("" if crash else " < destroy") + (", valid after SIGKILL" if crash else ""))


main()
