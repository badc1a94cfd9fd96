#!/usr/bin/env python3
"""check_selftest.py CASE INFO [ARGS...]

Runs `hipextsem-info --selftest` (INFO) and checks what it reports.  Cases:
  pass ABI ATTR      in the VM over cpuhip (LD_LIBRARY_PATH set by the test):
                     exit 0, every check passed, every latency figure measured
                     with its ratio, the runtime's ABI, the attribute as ATTR
                     (0 or 1), the asynchronous wait path; the text output too
  broken CHECK WORDS [CHECK WORDS...]
                     in the VM over a CPUHIP_BROKEN mode (set by the test):
                     exit 1 within a minute, each CHECK failed, its reason holds
                     its WORDS (the text output of a failure is checked by
                     real-runtime)
  no-exit-release    in the VM with a library preloaded that drops the shim's
                     release of pending waits at exit (set by the test):
                     exit-with-wait-pending alone fails, within its deadline,
                     and the process it started is gone
  hostwait           in the VM with HIPEXTSEM_HOST_WAIT=1: the self-test says
                     plainly that waits block the calling thread (exit 1)
  real-runtime LIB   on the host, AMD's real runtime LIB and no device: exit 1
                     quickly, with the reason
  probe LIB          on the host: the plain report's wait path over cpuhip LIB
                     (static: nothing loaded, the attribute left to --selftest)
                     and --selftest's (read in its child), with the attribute 1
                     and 0, and with HIPEXTSEM_HOST_WAIT=1; where
                     hipExternalMemoryGetMappedMipmappedArray comes from, with
                     and without CPUHIP_MIPMAP=hidden
  cli                bad usage exits 2; --help documents the self-test
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHECKS = ['runtime-primitives', 'import', 'host-signal-stream-wait-binary',
          'host-signal-stream-wait-timeline', 'wait-before-signal',
          'wait-before-signal-per-thread', 'binary-wait-consumes', 'signal-after-prior-work',
          'signal-after-prior-work-per-thread', 'timeline-values-increase', 'mixed-array',
          'destroy', 'exit-with-wait-pending']
METRICS = ['signal_latency', 'wait_latency', 'signal_enqueue', 'signal_enqueue16', 'wait_enqueue',
           'wait_enqueue16', 'fence_attach']


def check(cond, msg):
    if not cond:
        sys.exit('FAIL: ' + msg)


def run(info, *args, env=None, timeout=120, modes=False):
    # The comparison of the signal modes (two more test processes) only
    # where a case asks for it.
    if '--selftest' in args and not modes:
        args = (*args, '--no-signal-modes')
    t0 = time.monotonic()
    p = subprocess.run([info, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t0


def selftest_json(info, *args, env=None, modes=False):
    rc, out, err, secs = run(info, '--selftest', '--json', *args, env=env, modes=modes)
    try:
        d = json.loads(out)
    except ValueError as e:
        sys.exit(f'FAIL: --selftest --json output is not JSON ({e}):\n{out}\n{err}')
    check('selftest' in d, 'no selftest member')
    st = d['selftest']
    for key in ('passed', 'checks', 'latency', 'wait_path', 'facts', 'cannot_run'):
        check(key in st, f'selftest lacks {key!r}')
    for c in st['checks']:
        check('name' in c and isinstance(c['passed'], bool) and c.get('reason'),
              f'check without name/passed/reason: {c}')
    check(rc == (0 if st['passed'] else 1), f'exit status {rc} but passed={st["passed"]}')
    return rc, d, st, secs


def by_name(items):
    return {i['name']: i for i in items}


def main():
    case, info, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if case == 'pass':
        abi, attr = args[0], int(args[1])
        rc, d, st, secs = selftest_json(info, '--rounds', '20', modes=True)
        failed = [c for c in st['checks'] if not c['passed']]
        check(rc == 0 and st['passed'] and not failed,
              f'self-test failed: {failed or st["cannot_run"]}\n{st["log"]}')
        check([c['name'] for c in st['checks']] == CHECKS,
              f'checks {[c["name"] for c in st["checks"]]}')
        lat = by_name(st['latency'])
        for m in METRICS:
            check(m in lat, f'latency {m} missing')
            x = lat[m]
            check(x['samples'] == 20 and x['p50_ns'] > 0 and x['baseline_p50_ns'] > 0
                  and x['ratio_p50'] > 0 and x['ratio_p99'] > 0, f'latency {x}')
            print(f'{m}: p50 ratio {x["ratio_p50"]:.2f}, p99 ratio {x["ratio_p99"]:.2f} '
                  f'({x["p50_ns"] / 1e6:.3f} ms vs {x["baseline_p50_ns"] / 1e6:.3f} ms)')
        f = st['facts']
        check(f.get('abi') == f'{abi}.x', f'abi {f.get("abi")}')
        check(f.get('render_node', '').startswith('/dev/dri/renderD') and
              f.get('render_driver') == 'virtio_gpu', f'render node {f}')
        check(f.get('interposed', '').startswith('yes'), f'interposed {f.get("interposed")}')
        wp = st['wait_path']
        check(wp['path'] == 'stream' and wp['blocks_caller'] is False, f'wait path {wp}')
        check(wp['attribute'] == attr, f'attribute {wp["attribute"]}, expected {attr}')
        check(d['wait_path']['path'] == 'stream', f'top-level wait path {d["wait_path"]}')
        # The signal modes: each measured in its own process, the poll
        # thread's CPU only where there is one, a recommendation with why.
        sm = d.get('signal_modes')
        check(sm is not None, 'no signal_modes member')
        modes = {m['mode']: m for m in sm['modes']}
        check(sorted(modes) == ['hostfunc', 'poll'], f'modes {sorted(modes)}')
        for name, m in modes.items():
            check(m['measured'] is True and (m['signal_enqueue_p50_ns'] or 0) > 0 and
                  (m['handoff_p50_ns'] or 0) > 0 and (m['signal_latency_p50_ns'] or 0) > 0,
                  f'mode {m}')
        check(modes['hostfunc']['poll_cpu_per_signal_ns'] is None,
              f'hostfunc has a poll thread: {modes["hostfunc"]}')
        check((modes['poll']['poll_cpu_per_signal_ns'] or -1) >= 0,
              f'poll mode without its thread\'s CPU: {modes["poll"]}')
        check(sm['recommended'] in ('hostfunc', 'poll') and sm['why'], f'recommendation {sm}')
        print(f'signal modes: {json.dumps(sm)}')
        rc, out, err, secs = run(info, '--selftest', '--rounds', '3', modes=True)
        print(out, end='')
        check(rc == 0, f'text mode exit {rc}')
        for name in CHECKS:
            check(f'passed {name}: ' in out, f'text output lacks "passed {name}"')
        check(f'Self-test: PASSED: all {len(CHECKS)} checks passed' in out, 'text verdict')
        check('waits are asynchronous' in out, 'text wait path')
        check('Signal modes (HIPEXTSEM_SIGNAL_MODE' in out and '  poll      enqueue ' in out and
              '  recommended: ' in out, 'text signal modes')
    elif case == 'broken':
        pairs = list(zip(args[0::2], args[1::2]))
        check(pairs and len(args) % 2 == 0, f'broken wants CHECK WORDS pairs: {args}')
        rc, d, st, secs = selftest_json(info, '--rounds', '10')
        checks = by_name(st['checks'])
        print(json.dumps(st['checks'], indent=1))
        check(rc == 1 and not st['passed'], f'exit {rc} over CPUHIP_BROKEN')
        for name, words in pairs:
            check(name in checks and not checks[name]['passed'], f'{name} did not fail')
            check(words in checks[name]['reason'],
                  f'{name}: {checks[name]["reason"]!r} lacks {words!r}')
        check(secs < 60, f'took {secs:.1f} s')
    elif case == 'no-exit-release':
        rc, d, st, secs = selftest_json(info, '--rounds', '5')
        checks = by_name(st['checks'])
        print(json.dumps(st['checks'], indent=1))
        check([c['name'] for c in st['checks']] == CHECKS,
              f'checks {[c["name"] for c in st["checks"]]}')
        check('dropped the shim' in st['log'], 'the shim\'s exit handler was not dropped: '
              f'is no_exit_release.c preloaded?\n{st["log"]}')
        c = checks['exit-with-wait-pending']
        check(rc == 1 and not c['passed'] and 'had not exited 10 s later' in c['reason']
              and 'killed' in c['reason'], f'exit {rc}, {c}')
        failed = [c['name'] for c in st['checks'] if not c['passed']]
        check(failed == ['exit-with-wait-pending'], f'failed: {failed}')
        check(secs < 60, f'took {secs:.1f} s')
        # Killed with its group: nothing runs hipextsem-info's hidden exit mode.
        left = subprocess.run(['pgrep', '-f', '--', '--selftest-exit-child'],
                              capture_output=True, text=True).stdout.split()
        check(not left, f'processes left: {left}')
    elif case == 'hostwait':
        env = dict(os.environ, HIPEXTSEM_HOST_WAIT='1')
        rc, d, st, secs = selftest_json(info, '--rounds', '5', env=env)
        checks = by_name(st['checks'])
        check(rc == 1, f'exit {rc}')
        check(st['wait_path']['path'] == 'host' and st['wait_path']['blocks_caller'] is True,
              f'wait path {st["wait_path"]}')
        c = checks['wait-before-signal']
        check(not c['passed'] and 'block the calling thread' in c['reason'], f'{c}')
        check(checks['host-signal-stream-wait-binary']['passed'], 'host-signal check')
        check(secs < 60, f'took {secs:.1f} s')
    elif case == 'real-runtime':
        rc, d, st, secs = selftest_json(info, '--runtime', args[0])
        print(st['cannot_run'])
        check(rc == 1 and not st['passed'], f'exit {rc}')
        check(st['cannot_run'] and ('no HIP device' in st['cannot_run'] or
                                    'render node' in st['cannot_run']),
              f'reason {st["cannot_run"]!r}')
        check(st['facts'].get('abi') == '5.x', f'facts {st["facts"]}')
        check(secs < 30, f'took {secs:.1f} s')
        rc, out, err, secs = run(info, '--selftest', '--runtime', args[0])
        check(rc == 1 and 'Self-test: FAILED: cannot run here: ' in out, f'text:\n{out}')
    elif case == 'probe':
        # The plain report never loads the runtime: it tells the wait path
        # from the rule the shim follows before any call (HIPEXTSEM_HOST_WAIT
        # or the stream wait) and leaves the attribute to --selftest, whose
        # child reads it (before it needs a render node, so also here).
        lib = args[0]
        for extra, attr, path in (({}, 1, 'stream'),
                                  ({'CPUHIP_NO_STREAM_WAIT_VALUE': '1'}, 0, 'stream'),
                                  ({'CPUHIP_DEVICE_ATTRS': 'zero'}, 0, 'stream'),
                                  ({'HIPEXTSEM_HOST_WAIT': '1'}, 1, 'host')):
            env = dict(os.environ, **extra)
            want = ('waits BLOCK the calling thread' if path == 'host'
                    else 'waits are asynchronous, they do not block the calling thread')
            rc, out, err, secs = run(info, '--json', '--runtime', lib, env=env)
            wp = json.loads(out)['wait_path']
            check(wp['probed'] is False and wp['source'] == 'static' and wp['path'] == path
                  and wp['attribute'] is None and 'run --selftest' in wp['attribute_message'],
                  f'{extra}: plain report: {wp}')
            check(wp['blocks_caller'] is (path == 'host'), f'{extra}: {wp}')
            rc, out, err, secs = run(info, '--runtime', lib, env=env)
            check(f'Wait path:      {path}: {want}' in out, f'{extra}: text:\n{out}')
            check('(10013): not read: that needs the runtime loaded and running (run --selftest '
                  'to see)' in out, f'{extra}: attribute in text:\n{out}')
            rc, out, err, secs = run(info, '--selftest', '--json', '--rounds', '2', '--runtime',
                                     lib, env=env)
            wp = json.loads(out)['wait_path']
            check(wp['probed'] is True and wp['source'] == 'selftest' and wp['path'] == path
                  and wp['attribute'] == attr, f'{extra}: --selftest: {wp}')
            check(wp['blocks_caller'] is (path == 'host'), f'{extra}: {wp}')
            rc, out, err, secs = run(info, '--selftest', '--rounds', '2', '--runtime', lib,
                                     env=env)
            check(f'wait path:    {path}: {want}' in out, f'{extra}: text:\n{out}')
            check(f'hipDeviceAttributeCanUseStreamWaitValue (10013) = {attr}' in out,
                  f'{extra}: attribute in text:\n{out}')
        # hipExternalMemoryGetMappedMipmappedArray: not handed out by default;
        # under CPUHIP_MIPMAP=hidden the runtime's hipGetProcAddress hands it
        # out and, through the shim, so does dlsym on the runtime's handle.
        for extra, state, dl in (({}, 'absent', 'no'),
                                 ({'CPUHIP_MIPMAP': 'hidden'}, 'hipGetProcAddress', 'yes')):
            env = dict(os.environ, **extra)
            rc, out, err, secs = run(info, '--selftest', '--json', '--rounds', '1', '--runtime',
                                     lib, env=env)
            d = json.loads(out)
            facts = d['selftest']['facts']
            check(d['runtime']['mipmapped_array'] == state and
                  facts.get('mipmapped_dlsym') == dl,
                  f'{extra}: mipmapped {d["runtime"]["mipmapped_array"]!r}, facts {facts}')
            rc, out, err, secs = run(info, '--selftest', '--rounds', '1', '--runtime', lib,
                                     env=env)
            want = ('hands it out' if dl == 'yes' else
                    "hipGetProcAddress answers not found (error 1, status 1)")
            check('mipmapped:    hipExternalMemoryGetMappedMipmappedArray: ' in out and
                  want in out, f'{extra}: text:\n{out}')
        # Another copy of the shim already in LD_PRELOAD: the self-test
        # preloads only the one it reports, and its log says so.
        shim = json.loads(run(info, '--json', '--runtime', lib)[1])['shim']['path']
        tmp = tempfile.mkdtemp(prefix='hx-two-shims.')
        try:
            other = os.path.join(tmp, 'libextsem.so')
            shutil.copy(shim, other)
            env = dict(os.environ, LD_PRELOAD=other)
            rc, out, err, secs = run(info, '--selftest', '--json', '--rounds', '2', '--runtime',
                                     lib, env=env)
            st = json.loads(out)['selftest']
            check(f'LD_PRELOAD also named {other}: left out' in st['log'], f'log: {st["log"]}')
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    elif case == 'cli':
        for bad in (['--rounds', '5'], ['--selftest', '--rounds', '0'],
                    ['--selftest', '--rounds', 'x'], ['--selftest', '--timeout', 'abc'],
                    ['--selftest', '--timeout', '0'], ['--no-signal-modes']):
            rc, out, err, secs = run(info, *bad)
            check(rc == 2, f'{bad}: exit {rc}')
        rc, out, err, secs = run(info, '--help')
        check(rc == 0 and '--selftest' in out and '--rounds N' in out and '--timeout' in out,
              'help lacks the self-test')
        check('with --selftest, 0 only if every check passed' in out, 'help: exit status')
        check('LOADS AND RUNS the runtime' in out and 'nothing is loaded or run' in out,
              'help does not say when code is loaded')
    else:
        sys.exit(f'unknown case {case}')
    print(f'ok: {case}')


if __name__ == '__main__':
    main()
