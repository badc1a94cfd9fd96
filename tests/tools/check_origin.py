#!/usr/bin/env python3
"""check_origin.py HIPEXTSEM_INFO PROGRAM RUNTIME

hipextsem-info applies $ORIGIN as ld.so does (glibc elf/dl-load.c:
is_dst, _dl_init_paths):
  - in LD_LIBRARY_PATH, $ORIGIN is the directory of the program
    (--program), so a runtime beside the program is found "via
    LD_LIBRARY_PATH";
  - "$ORIGINfoo" is no token: a directory literally named so is searched
    as written.
PROGRAM is any executable whose DT_NEEDED names the runtime's soname;
RUNTIME a library with that soname.  Both are copied into a scratch tree.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def info(tool, prog, llp):
    env = dict(os.environ, LD_LIBRARY_PATH=llp)
    for k in ('ROCM_PATH', 'HIPEXTSEM_LIBRARY'):
        env.pop(k, None)
    r = subprocess.run([tool, '--json', '--program', prog], capture_output=True, text=True,
                       env=env, timeout=60)
    try:
        return json.loads(r.stdout)['runtime']
    except (ValueError, KeyError) as e:
        sys.exit('FAIL: no JSON runtime object (%s): %s %s' % (e, r.stdout[-500:], r.stderr[-500:]))


def main():
    tool, prog, rt = sys.argv[1:4]
    soname = os.path.basename(rt)
    with tempfile.TemporaryDirectory() as d:
        bindir = os.path.join(d, 'bin')
        os.mkdir(bindir)
        app = os.path.join(bindir, 'app')
        shutil.copy(prog, app)
        # Beside the program, reached only through LD_LIBRARY_PATH=$ORIGIN
        # (the copy's RUNPATH, if any, names the build tree, not bindir).
        shutil.copy(rt, os.path.join(bindir, soname))
        got = info(tool, app, '$ORIGIN')
        if got.get('path') != os.path.join(bindir, soname) or got.get('found_via') != 'LD_LIBRARY_PATH':
            sys.exit('FAIL: LD_LIBRARY_PATH=$ORIGIN with --program: found %r via %r, want %s via '
                     'LD_LIBRARY_PATH' % (got.get('path'), got.get('found_via'),
                                           os.path.join(bindir, soname)))
        os.remove(os.path.join(bindir, soname))
        # A directory literally named "$ORIGINfoo": searched as written.
        lit = os.path.join(d, '$ORIGINfoo')
        os.mkdir(lit)
        shutil.copy(rt, os.path.join(lit, soname))
        got = info(tool, app, lit)
        if got.get('path') != os.path.join(lit, soname):
            sys.exit('FAIL: LD_LIBRARY_PATH=%s: found %r, want the literal directory' %
                     (lit, got.get('path')))
    print('ok: $ORIGIN in LD_LIBRARY_PATH is the program\'s directory; $ORIGINfoo is literal')


main()
