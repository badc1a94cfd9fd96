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
  linger INFO RUNTIME
      `--selftest --runtime RUNTIME`, whose constructor starts a process
      that stays in the test process's group and one that leaves it (both
      holding its descriptors and sleeping for minutes): the self-test
      still returns within its deadline plus a few seconds and neither
      process is left running
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


def linger(info, runtime):
    tmp = tempfile.mkdtemp(prefix='hx-linger.')
    pids = []
    try:
        pidfile = os.path.join(tmp, 'pids')
        env = dict(os.environ, HX_HOSTILE_LINGER=pidfile, HX_HOSTILE_SECS='300')
        env.pop('LD_PRELOAD', None)
        deadline = 2.0
        t0 = time.monotonic()
        try:
            p = subprocess.run([info, '--selftest', '--json', '--rounds', '2', '--timeout',
                                str(deadline), '--runtime', runtime],
                               capture_output=True, text=True, env=env, timeout=90)
        except subprocess.TimeoutExpired:
            p = None
        secs = time.monotonic() - t0
        if os.path.exists(pidfile):
            pids = [int(line.split()[1]) for line in open(pidfile) if line.strip()]
        check(p is not None, f'--selftest did not return within 90 s (lingering pids {pids})')
        print(f'--selftest returned in {secs:.1f} s (exit {p.returncode})')
        check(len(pids) == 2, f'the runtime was not loaded as expected: pids {pids}\n{p.stdout}')
        st = json.loads(p.stdout)['selftest']
        # The deadline of a silent child is the wait deadline plus the
        # parent's margin (selftest.c KILL_MARGIN_S, 10 s); the test
        # process here ends early (no render node on the build machine, or
        # a full run in the VM) and what it left must not hold the tool.
        check(secs < deadline + 10 + 5, f'took {secs:.1f} s')
        t1 = time.monotonic()
        while any(alive(x) for x in pids) and time.monotonic() - t1 < 3:
            time.sleep(0.1)
        left = [x for x in pids if alive(x)]
        check(not left, f'processes left running: {left}')
        check(st['elapsed_s'] < deadline + 15, f'selftest elapsed {st["elapsed_s"]}')
        print(f'ok: nothing left running ({pids}); cannot_run: {st["cannot_run"]}')
    finally:
        for x in pids:
            try:
                os.kill(x, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    # meson hands over paths relative to the build directory; cases run
    # programs from other directories.
    case, args = sys.argv[1], [os.path.abspath(a) for a in sys.argv[2:]]
    if case == 'inspect':
        inspect(*args)
    elif case == 'linger':
        linger(*args)
    else:
        sys.exit(f'unknown case {case}')
    print(f'ok: {case}')


if __name__ == '__main__':
    main()
