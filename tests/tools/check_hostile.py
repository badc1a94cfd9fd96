#!/usr/bin/env python3
"""check_hostile.py CASE ARGS...

The tools pointed at files that do not deserve trust (hostile/hostile_rt.c,
a HIP runtime whose constructor misbehaves).  Cases:
  inspect INFO RUN RUNTIME APP
      the runtime and a program finding it through RUNPATH $ORIGIN are
      copied into a scratch directory; hipextsem-info (plain and --json,
      with --program, with --runtime as a path and as a bare name, through
      LD_LIBRARY_PATH, with a directory named like the program earlier in
      PATH) and `hipextsem-run --check [-v] APP` report on them without
      ever loading the runtime: its constructor leaves no mark
  linger INFO RUNTIME [MOST]
      `--selftest --runtime RUNTIME`, whose constructor starts a process
      that stays in the test process's group and one that leaves it (both
      holding its descriptors and sleeping for minutes; again in the process
      exit-with-wait-pending starts, where that check runs): the self-test
      still returns within its deadline plus a few seconds (or MOST seconds,
      in the VM where it runs in full) and neither process is left running
  linger-hang INFO RUNTIME
      the same with a constructor that never returns: the test process is
      killed at its deadline (0.5 s plus the 10 s margin), its lingering
      processes too, and the self-test says it was killed
  strings INFO RUNTIME
      a copy of RUNTIME under a name with invalid UTF-8 and terminal escape
      sequences, and HIPEXTSEM_RENDER_NODE likewise: --json is valid UTF-8
      JSON carrying them escaped, the text output has no raw control
      character
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def check(cond, msg):
    if not cond:
        sys.exit('FAIL: ' + msg)


def alive(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except OSError:
        return False
    return state not in ('Z', 'X')


def inspect(info, run, runtime, app):
    tmp = tempfile.mkdtemp(prefix='hx-hostile.')
    try:
        lib = os.path.join(tmp, 'libamdhip64.so.5')
        prog = os.path.join(tmp, 'app')
        shutil.copy(runtime, lib)
        shutil.copy(app, prog)
        mark = os.path.join(tmp, 'mark')
        env = dict(os.environ, HX_HOSTILE_MARK=mark)
        env.pop('LD_LIBRARY_PATH', None)
        env.pop('LD_PRELOAD', None)

        def go(what, cmd, cwd=None, extra=None):
            e = dict(env, **(extra or {}))
            p = subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=cwd, timeout=60)
            if os.path.exists(mark):
                check(False, f'{what}: the inspected runtime was loaded (its constructor '
                      f'ran):\n{open(mark).read()}\n{p.stdout}\n{p.stderr}')
            check(p.returncode in (0, 1), f'{what}: exit {p.returncode}\n{p.stderr}')
            print(f'ok: {what}: not loaded')
            return p

        # The reports must have found the hostile file and judged it a
        # runtime the shim interposes on: the case where a probe of the
        # wait path would have loaded it.
        def found(what, p, via=None):
            d = json.loads(p.stdout)
            rt = d['runtime']
            check(rt['found'] and os.path.realpath(rt['real_path']) == os.path.realpath(lib),
                  f'{what}: runtime {rt}')
            check(rt['semaphore_calls'] == 'stock' and d['shim']['interposes'],
                  f'{what}: not a runtime the shim interposes on: {rt} {d["shim"]}')
            check(via is None or rt['found_via'] == via, f'{what}: found via {rt["found_via"]}')
            wp = d['wait_path']
            check(wp['probed'] is False and wp['source'] == 'static' and
                  wp['attribute'] is None and 'run --selftest' in wp['attribute_message'],
                  f'{what}: wait path {wp}')

        found('--program (json)', go('--program --json', [info, '--json', '--program', prog]),
              'DT_RUNPATH')
        go('--program', [info, '--program', prog])
        found('--runtime PATH', go('--runtime PATH', [info, '--json', '--runtime', lib]),
              '--runtime')
        found('--runtime NAME', go('--runtime NAME', [info, '--json', '--runtime',
                                                     'libamdhip64.so.5'], cwd=tmp), '--runtime')
        found('LD_LIBRARY_PATH', go('LD_LIBRARY_PATH', [info, '--json'],
                                    extra={'LD_LIBRARY_PATH': tmp}), 'LD_LIBRARY_PATH')
        go('plain, LD_LIBRARY_PATH', [info], extra={'LD_LIBRARY_PATH': tmp})
        # --program NAME is looked up in PATH as execvp does: a directory
        # of that name earlier in PATH does not shadow the program.
        os.mkdir(os.path.join(tmp, 'shadow'))
        os.mkdir(os.path.join(tmp, 'shadow', 'app'))
        found('--program NAME', go('--program NAME', [info, '--json', '--program', 'app'],
                                   extra={'PATH': os.path.join(tmp, 'shadow') + ':' + tmp +
                                          ':' + os.environ.get('PATH', '/usr/bin:/bin')}),
              'DT_RUNPATH')
        p = go('hipextsem-run --check APP', [run, '--check', prog])
        check('Wait path:' in p.stdout and 'run --selftest' in p.stdout, p.stdout)
        go('hipextsem-run --check -v APP', [run, '--check', '-v', prog])
        go('hipextsem-run -v --check APP', [run, '-v', '--check', prog])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def linger(info, runtime, most=None, hang=False):
    tmp = tempfile.mkdtemp(prefix='hx-linger.')
    pids = []
    try:
        pidfile = os.path.join(tmp, 'pids')
        env = dict(os.environ, HX_HOSTILE_LINGER=pidfile, HX_HOSTILE_SECS='300')
        env.pop('LD_PRELOAD', None)
        deadline = 2.0
        if hang:
            # The test process itself hangs: it is killed when silent for
            # the deadline plus the parent's margin (10 s).
            env['HX_HOSTILE_HANG'] = '1'
            deadline = 0.5
        most = float(most) if most else deadline + 10 + 5
        t0 = time.monotonic()
        try:
            p = subprocess.run([info, '--selftest', '--no-signal-modes', '--json', '--rounds', '2', '--timeout',
                                str(deadline), '--runtime', runtime],
                               capture_output=True, text=True, env=env,
                               timeout=max(90.0, float(most or 0) + 30))
        except subprocess.TimeoutExpired:
            p = None
        secs = time.monotonic() - t0
        if os.path.exists(pidfile):
            pids = [int(line.split()[1]) for line in open(pidfile) if line.strip()]
        check(p is not None, f'--selftest did not return (lingering pids {pids})')
        print(f'--selftest returned in {secs:.1f} s (exit {p.returncode})')
        st = json.loads(p.stdout)['selftest']
        # Loaded by the test process, and again by the process the check
        # exit-with-wait-pending starts when that check runs: two each.
        ran_exit = any(c['name'] == 'exit-with-wait-pending' and
                       not c['reason'].startswith('not run') for c in st['checks'])
        check(len(pids) == (4 if ran_exit else 2),
              f'the runtime was not loaded as expected: pids {pids}\n{p.stdout}')
        # The deadline of a silent child is the wait deadline plus the
        # parent's margin (selftest.c KILL_MARGIN_S, 10 s); the test
        # process here ends early (no render node on the build machine, or
        # a full run in the VM) and what it left must not hold the tool.
        # In the test VM the self-test runs in full (under TCG, slowly):
        # MOST bounds it there; the lingerers sleep for 300 s either way.
        check(secs < most, f'took {secs:.1f} s')
        t1 = time.monotonic()
        while any(alive(x) for x in pids) and time.monotonic() - t1 < 3:
            time.sleep(0.1)
        left = [x for x in pids if alive(x)]
        check(not left, f'processes left running: {left}')
        check(st['elapsed_s'] < most, f'selftest elapsed {st["elapsed_s"]}')
        if hang:
            check('killed' in st['cannot_run'], f'cannot_run: {st["cannot_run"]}')
        print(f'ok: nothing left running ({pids}); cannot_run: {st["cannot_run"]}')
    finally:
        for x in pids:
            try:
                os.kill(x, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def strings(info, runtime):
    """Paths and environment values with bytes that are not UTF-8 and with
    terminal control sequences: --json stays valid UTF-8 JSON that carries
    them escaped, the text output holds no raw control character."""
    tmp = tempfile.mkdtemp(prefix='hx-strings.')
    try:
        hostile = b'lib\x1b]0;owned\x07\x1b[2J\xff\xc3(\xc2\x9b6n\x7f\r.so.6'
        lib = os.path.join(tmp.encode(), hostile)
        shutil.copy(runtime, lib)
        env = dict(os.environ)
        env.pop('LD_LIBRARY_PATH', None)
        env['HIPEXTSEM_RENDER_NODE'] = '/dev/\x1b[31mred\x1b[0m\x08'
        env = {k.encode(): v.encode('utf-8', 'surrogateescape') for k, v in env.items()}
        env[b'HIPEXTSEM_RENDER_NODE'] += b'\xfe'

        p = subprocess.run([info.encode(), b'--json', b'--runtime', lib], capture_output=True,
                           env=env, timeout=60)
        check(p.returncode in (0, 1), f'--json exit {p.returncode}: {p.stderr!r}')
        try:
            text = p.stdout.decode('utf-8')
        except UnicodeDecodeError as e:
            sys.exit(f'FAIL: --json output is not valid UTF-8 ({e}): {p.stdout!r}')
        d = json.loads(text)
        path = d['runtime']['path']
        check('\x1b]0;owned\x07\x1b[2J' in path and '\\xff' in path and '\x9b' in path
              and '\x7f\r' in path, f'the path is not carried, escaped: {path!r}')
        check(d['render_node_env'].endswith('\x08\\xfe'), f'env: {d["render_node_env"]!r}')
        check(all(c not in text for c in '\x1b\x07\x7f\r\x9b\x08'),
              f'raw control characters in the JSON text: {text!r}')
        print('ok: --json is valid UTF-8, hostile bytes escaped')

        p = subprocess.run([info.encode(), b'--runtime', lib], capture_output=True, env=env,
                           timeout=60)
        out = p.stdout
        bad = sorted({b for b in out if (b < 0x20 and b != 0x0a) or b == 0x7f})
        check(not bad, f'raw control bytes {bad} in the text output:\n{out!r}')
        check(b'\xc2\x9b' not in out, 'a raw C1 control (CSI) in the text output')
        check(b'\\x1b]0;owned\\x07\\x1b[2J\\xff' in out and b'\\u009b' in out,
              f'the path is not shown escaped:\n{out!r}')
        out.decode('utf-8')
        print('ok: text output has no raw control characters')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    # meson hands over paths relative to the build directory; cases run
    # programs from other directories.
    case, args = sys.argv[1], [a if a.isdigit() else os.path.abspath(a) for a in sys.argv[2:]]
    if case == 'inspect':
        inspect(*args)
    elif case == 'linger':
        linger(*args)
    elif case == 'linger-hang':
        linger(*args, hang=True)
    elif case == 'strings':
        strings(*args)
    else:
        sys.exit(f'unknown case {case}')
    print(f'ok: {case}')


if __name__ == '__main__':
    main()
