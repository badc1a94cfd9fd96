#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_ops (tests/fuzz/corpus/).  Each seed is a
small program in the harness's encoding (see fuzz_ops.c): one byte picks the
operation (0-1 import, 2-3 signal, 4 wait, 5 destroy, 6 external signal,
7 handle check), the following bytes its arguments."""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def imp(slot, type_byte, kind, raw=None):
    # op, slot, raw?, [desc bytes], type, fd kind, (signaled), out!=NULL, desc!=NULL
    b = [0, slot, 1 if raw is not None else 0]
    if raw is not None:
        b += list(raw)
    b += [type_byte, kind]
    if kind <= 2:
        b += [0]  # created unsignaled
    return b + [0, 0]


def sw(op, elems, stream=1, shape=0):
    b = [op, len(elems), shape]
    for val, handle in elems:
        b += [val] + list(handle)
    return b + [stream]


SLOT = lambda s: [s << 3]
GARBAGE = [7, 0x12, 0x34, 0x56, 0x78]
TAGGED = [6, 0, 0, 0, 1]
STALE = lambda s: [(s << 3) | 4]
NULLH = [5]

seeds = {
    "binary-roundtrip": imp(0, 2, 0) + sw(4, [(0, SLOT(0))]) + [6, 0, 0]
    + sw(2, [(0, SLOT(0))]) + [5, 0],
    "timeline-roundtrip": imp(1, 10, 0) + sw(2, [(4, SLOT(1))]) + sw(4, [(4, SLOT(1))], 2)
    + [6, 1, 9] + [5, 1],
    "mixed-array": imp(0, 2, 0) + imp(1, 10, 0)
    + sw(4, [(0, SLOT(0)), (3, SLOT(1))]) + [6, 0, 0, 6, 1, 3]
    + sw(2, [(0, SLOT(0)), (7, SLOT(1))], 0) + [5, 0, 5, 1],
    "bad-types": imp(2, 0, 6) + imp(2, 4, 7) + imp(2, 7, 8, None) + imp(2, 12, 3)
    + imp(2, 201, 5) + imp(2, 11, 9) + [0x12, 0x34, 0x56, 0x78],
    "garbage-handles": sw(2, [(0xe0, GARBAGE), (0, [0, 0, 0, 0])]) + [0x11, 0x22, 0x33, 0x44]
    + sw(4, [(1, TAGGED)]) + sw(2, [(1, NULLH)]) + [5, 0x80 | 1] + GARBAGE + [7] + TAGGED,
    "stale-and-double-destroy": imp(3, 2, 0) + [5, 3] + sw(2, [(1, STALE(3))]) + [5, 0x80 | 3]
    + STALE(3) + [5, 0x80 | 3] + STALE(3),
    "bad-streams": imp(0, 10, 0) + sw(2, [(1, SLOT(0))], 6) + sw(4, [(1, SLOT(0))], 7) + [0x42]
    + sw(2, [(1, SLOT(0))], 0) + [5, 0],
    "null-arrays": sw(2, [], 1, 0xfe) + sw(4, [], 1, 0xff) + sw(2, [(1, GARBAGE)], 1, 0xfd)
    + sw(4, [], 1, 0),
    "destroy-pending": imp(4, 10, 0) + sw(4, [(9, SLOT(4))]) + [5, 4] + sw(2, [(9, STALE(4))])
    + [6, 4, 9],
    "raw-descriptor": imp(5, 2, 0, raw=bytes(range(96))) + imp(5, 10, 1, raw=b"\xff" * 96),
}

os.makedirs(os.path.join(here, "corpus"), exist_ok=True)
for name, b in seeds.items():
    with open(os.path.join(here, "corpus", name), "wb") as f:
        f.write(bytes(x & 0xff for x in b))
print(len(seeds), "seeds")
