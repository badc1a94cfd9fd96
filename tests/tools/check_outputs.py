#!/usr/bin/env python3
"""check_outputs.py LIBEXTSEM TRACE_OPEN

The shim's log and trace files (HIPEXTSEM_LOG_FILE, HIPEXTSEM_TRACE) against
planted paths, with TRACE_OPEN (trace_open.c) run with LIBEXTSEM preloaded:
  - a symbolic link at the trace path, and at the log path, pointing at a
    file of the user's: the file is left untouched, the link stays, and the
    log says why nothing was written there;
  - a new trace or log file is created with mode 0600, and the trace is
    valid JSON;
  - /dev/stderr and /dev/fd/N keep working for both (a trace there is a
    stream of events);
  - a forked child writes its own <path>.<pid>, also 0600, valid JSON.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import shutil


def check(cond, msg):
    if not cond:
        sys.exit('FAIL: ' + msg)


def run(lib, prog, *args, env=None, **kw):
    e = dict(os.environ, LD_PRELOAD=lib)
    for k in ('HIPEXTSEM_TRACE', 'HIPEXTSEM_LOG_FILE', 'HIPEXTSEM_DEBUG'):
        e.pop(k, None)
    e.update(env or {})
    return subprocess.run([prog, *args], capture_output=True, text=True, env=e, timeout=60,
                          **kw)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def main():
    lib, prog = (os.path.abspath(a) for a in sys.argv[1:3])
    tmp = tempfile.mkdtemp(prefix='hx-outputs.')
    try:
        precious = os.path.join(tmp, 'precious')
        with open(precious, 'w') as f:
            f.write('keep me\n')

        # A link at the trace path: not followed, not truncated.
        link = os.path.join(tmp, 'trace.json')
        os.symlink(precious, link)
        p = run(lib, prog, env={'HIPEXTSEM_TRACE': link})
        check(open(precious).read() == 'keep me\n', 'the trace followed the link')
        check(os.path.islink(link), 'the link was replaced')
        check('symbolic link' in p.stderr and link in p.stderr, f'no reason given: {p.stderr}')
        print('ok: trace link not followed:', p.stderr.strip().splitlines()[-1])

        # A link at the log path: same.
        loglink = os.path.join(tmp, 'shim.log')
        os.symlink(precious, loglink)
        p = run(lib, prog, env={'HIPEXTSEM_LOG_FILE': loglink, 'HIPEXTSEM_DEBUG': '2'})
        check(open(precious).read() == 'keep me\n', 'the log followed the link')
        check('symbolic link' in p.stderr and 'HIPEXTSEM_LOG_FILE' in p.stderr,
              f'no reason given: {p.stderr}')
        print('ok: log link not followed')

        # New files: 0600, the trace valid JSON, the log holding lines.
        trace = os.path.join(tmp, 'new.json')
        log = os.path.join(tmp, 'new.log')
        p = run(lib, prog, 'fork', env={'HIPEXTSEM_TRACE': trace, 'HIPEXTSEM_LOG_FILE': log,
                                         'HIPEXTSEM_DEBUG': '2'})
        check(p.returncode == 0, f'trace-open exit {p.returncode}: {p.stderr}')
        check(mode(trace) == 0o600 and mode(log) == 0o600,
              f'modes {oct(mode(trace))} {oct(mode(log))}')
        events = json.load(open(trace))
        check(any(e.get('name') == 'process_name' for e in events), f'trace {events}')
        check('hipextsem: info: tracing to ' + trace in open(log).read(), 'log lines')
        child = int(p.stdout.split()[1])
        ctrace = f'{trace}.{child}'
        check(os.path.exists(ctrace) and mode(ctrace) == 0o600, f'child trace {ctrace}')
        events = json.load(open(ctrace))
        check(any(e.get('pid') == child for e in events), f'child trace {events}')
        print('ok: new files 0600, child trace', ctrace)

        # /dev/stderr and /dev/fd/N.
        p = run(lib, prog, env={'HIPEXTSEM_TRACE': '/dev/stderr'})
        check(p.returncode == 0 and '"process_name"' in p.stderr and 'cannot open' not in p.stderr,
              f'trace to /dev/stderr: {p.stderr}')
        doc = p.stderr[p.stderr.index('['):]
        events = json.loads(doc.rstrip().rstrip(',') + ']')
        check(events and events[0]['name'] == 'process_name', f'stream trace {doc}')
        p = run(lib, prog, env={'HIPEXTSEM_LOG_FILE': '/dev/stderr', 'HIPEXTSEM_DEBUG': '2'})
        check('hipextsem: info:' in p.stderr and 'cannot open' not in p.stderr,
              f'log to /dev/stderr: {p.stderr}')
        fdlog = os.path.join(tmp, 'fd3.log')
        with open(fdlog, 'w') as f:
            p = run(lib, prog, env={'HIPEXTSEM_LOG_FILE': f'/dev/fd/{f.fileno()}',
                                    'HIPEXTSEM_DEBUG': '2'}, pass_fds=(f.fileno(),))
        check('hipextsem: info:' in open(fdlog).read() and 'cannot open' not in p.stderr,
              f'log to /dev/fd/N: {p.stderr}')
        print('ok: /dev/stderr and /dev/fd/N')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('ok: outputs')


if __name__ == '__main__':
    main()
