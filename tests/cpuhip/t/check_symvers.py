#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the symbol versions of cpuhip with a real libamdhip64.

usage: check_symvers.py CPUHIP_LIB REAL_LIB|--real-from EXE
                        [--expect NAME@NODE ...] [--forbid NAME ...]
                        [--added-later NAME ...]

Every function exported by CPUHIP_LIB that the real library also exports
must carry the same version node (otherwise an application linked against
the real library fails with "version ... not found").  Symbols the real
library lacks must be test-only (node CPUHIP_TEST) or in a node the real
library does not define (a later ABI).  --forbid lists names that must not
be exported at all; --expect pins a symbol to a node.  --real-from EXE takes
the real library from `ldd EXE` (a program linked against it).
--added-later names symbols a later release added to a node the real
library already has (clr put hipStreamGetDevice, new in 5.6, in hip_4.2).
"""
import os
import subprocess
import sys


def exports(path):
    out = subprocess.run(['readelf', '--wide', '--dyn-syms', path], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[6] in ('UND', 'ABS') or f[3] not in ('FUNC', 'OBJECT'):
            continue
        if f[4] not in ('GLOBAL', 'WEAK'):
            continue
        name = f[7]
        ver = None
        if '@' in name:
            name, _, ver = name.partition('@')
            ver = ver.lstrip('@')
        syms[name] = ver
    return syms


def real_from(exe):
    env = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
    out = subprocess.run(['ldd', exe], check=True, capture_output=True, text=True,
                         env=env).stdout
    for line in out.splitlines():
        if 'libamdhip64' in line and '=>' in line:
            return line.split('=>')[1].split()[0]
    sys.exit(f'{exe} is not linked against libamdhip64')


def take_list(args, flag):
    if flag not in args:
        return args, []
    i = args.index(flag)
    j = i + 1
    while j < len(args) and not args[j].startswith('--'):
        j += 1
    return args[:i] + args[j:], args[i + 1:j]


def main():
    args = sys.argv[1:]
    args, later = take_list(args, '--added-later')
    args, forbid = take_list(args, '--forbid')
    args, expect = take_list(args, '--expect')
    args, real_exe = take_list(args, '--real-from')
    real_path = real_from(real_exe[0]) if real_exe else args[1]
    print(f'cpuhip: {args[0]}\nreal:   {real_path}')
    mine, real = exports(args[0]), exports(real_path)
    real_nodes = set(real.values())
    bad = 0
    checked = 0
    for name, ver in sorted(mine.items()):
        if ver is None:
            print(f'FAIL {name}: exported without a version')
            bad += 1
        elif name in real:
            checked += 1
            if real[name] != ver:
                print(f'FAIL {name}: {ver}, real library has {real[name]}')
                bad += 1
        elif ver != 'CPUHIP_TEST' and ver in real_nodes and name not in later:
            print(f'FAIL {name}: {ver} but the real library does not export it')
            bad += 1
    for spec in expect:
        name, _, node = spec.partition('@')
        if mine.get(name) != node:
            print(f'FAIL {name}: expected in {node}, found {mine.get(name)}')
            bad += 1
    for name in forbid:
        if name in mine:
            print(f'FAIL {name}: must not be exported')
            bad += 1
    print(f'{checked} shared symbols compared, {len(mine)} exported, {bad} problem(s)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
