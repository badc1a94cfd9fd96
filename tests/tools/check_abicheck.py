#!/usr/bin/env python3
"""check_abicheck.py ABICHECK RUNTIME SHIM

hipextsem-abicheck refuses what is not what it checks, and says why:
  - a library that is not a HIP runtime (libelf.so.1, which the tool itself
    links) in the runtime's place: exit 2, "is not a HIP runtime";
  - the shim in the runtime's place, the runtime in the shim's: exit 2;
  - a copy of RUNTIME whose dynamic symbol table claims a size of 2^40
    bytes: exit 2 with a message naming the problem, never "0 mismatch(es)";
  - a missing file: exit 2, the system's reason;
while RUNTIME (cpuhip) against SHIM passes (exit 0, "0 mismatch(es)").
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def check(cond, msg):
    if not cond:
        sys.exit('FAIL: ' + msg)


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def libelf_path(abicheck):
    out = subprocess.run(['ldd', abicheck], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if 'libelf' in line and '=>' in line:
            return line.split('=>')[1].split()[0]
    return None


def huge_dynsym(src, dst):
    """Copies the ELF64 little-endian file src to dst with the sh_size of
    its SHT_DYNSYM section header set to 2^40."""
    data = bytearray(open(src, 'rb').read())
    check(data[:4] == b'\x7fELF' and data[4] == 2 and data[5] == 1, 'not ELF64 LE')
    shoff = struct.unpack_from('<Q', data, 0x28)[0]
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    for i in range(shnum):
        off = shoff + i * shentsize
        if struct.unpack_from('<I', data, off + 4)[0] == 11:  # SHT_DYNSYM
            struct.pack_into('<Q', data, off + 0x20, 1 << 40)
            open(dst, 'wb').write(data)
            return
    sys.exit('FAIL: no SHT_DYNSYM in ' + src)


def main():
    abicheck, runtime, shim = (os.path.abspath(a) for a in sys.argv[1:4])
    rc, out, err = run(abicheck, runtime, shim)
    check(rc == 0 and '0 mismatch(es)' in out, f'cpuhip: exit {rc}\n{out}{err}')

    libelf = libelf_path(abicheck)
    check(libelf, 'cannot find the libelf the tool links')
    rc, out, err = run(abicheck, libelf, shim)
    check(rc == 2 and 'is not a HIP runtime' in err and 'mismatch' not in out,
          f'{libelf}: exit {rc}\n{out}{err}')
    print(f'ok: {libelf} refused: {err.strip()}')

    rc, out, err = run(abicheck, shim, shim)
    check(rc == 2 and 'is the hipextsem shim itself' in err, f'shim as runtime: {rc} {err}')
    rc, out, err = run(abicheck, runtime, runtime)
    check(rc == 2 and 'is not the hipextsem shim' in err, f'runtime as shim: {rc} {err}')
    rc, out, err = run(abicheck, '--symbols', runtime)
    check(rc == 2 and 'is not the hipextsem shim' in err, f'--symbols runtime: {rc} {err}')

    tmp = tempfile.mkdtemp(prefix='hx-abicheck.')
    try:
        bad = os.path.join(tmp, 'libamdhip64.so.5')
        huge_dynsym(runtime, bad)
        rc, out, err = run(abicheck, bad, shim)
        check(rc == 2 and 'mismatch' not in out and err.startswith(f'hipextsem-abicheck: {bad}: ')
              and 'no error' not in err.lower(), f'huge sh_size: exit {rc}\n{out}{err}')
        print(f'ok: huge sh_size refused: {err.strip()}')
        rc, out, err = run(abicheck, os.path.join(tmp, 'missing.so'), shim)
        check(rc == 2 and 'No such file or directory' in err, f'missing file: {rc} {err}')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('ok: abicheck')


if __name__ == '__main__':
    main()
