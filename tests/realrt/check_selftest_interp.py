#!/usr/bin/env python3
"""check_selftest_interp.py INFO LIB: hipextsem-info --selftest started
through an ELF interpreter named on the command line (as
tests/realrt/with-device runs programs on a newer Debian userland:
"ld-linux-x86-64.so.2 --library-path DIR PROG"), on the host over cpuhip
LIB.  There /proc/self/exe is the interpreter, not the tool: the
self-test's child must still be the tool, started through the same
interpreter with the same options, and read the runtime (its facts are
filled: the attribute read, the runtime loaded).  With no render node on
the host the self-test then stops (cannot run), as it does when started
directly.  Fails if the child did not run.
"""
import json
import os
import subprocess
import sys

info, lib = sys.argv[1], sys.argv[2]
interp = '/lib64/ld-linux-x86-64.so.2'
if not os.path.exists(interp):
    print(f'{interp} is missing: this check needs the x86-64 ELF interpreter')
    sys.exit(1)
failed = False
for words in ([interp], [interp, '--library-path', os.path.dirname(os.path.abspath(lib))]):
    cmd = words + [info, '--selftest', '--json', '--rounds', '2', '--runtime', lib]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    try:
        st = json.loads(p.stdout)['selftest']
    except (ValueError, KeyError) as e:
        print(f'{" ".join(words)}: no JSON report ({e}); stderr:\n{p.stderr}')
        failed = True
        continue
    facts = st.get('facts', {})
    ok = (facts.get('attribute_read') == '1' and
          os.path.realpath(facts.get('runtime_loaded', '')) == os.path.realpath(lib))
    print(f'{" ".join(words)}: cannot_run={st.get("cannot_run")!r} facts={facts}')
    if not ok:
        print('FAIL: the self-test child did not run the tool and read the runtime')
        failed = True
sys.exit(1 if failed else 0)
