#!/usr/bin/env python3
"""check_info.py CASE INFO [ARGS...]

Runs hipextsem-info (INFO) and checks its report.  Cases:
  host        no render node here: says so in text and JSON, exit status 1
  vm          inside the test VM: the virtio_gpu render node with syncobj,
              timeline and eventfd, selected, and a positive verdict (exit 0)
  vm-badnode  HIPEXTSEM_RENDER_NODE=/dev/null: a negative verdict naming it
  runtime5 / runtime6   ARGS[0] is a cpuhip libamdhip64: --runtime reports it
              (hipExternalMemoryGetMappedMipmappedArray: absent / not exported)
  program     ARGS[0] is a program linked against cpuhip abi5: --program
              finds the runtime through its RUNPATH
  llp         LD_LIBRARY_PATH (HX_TEST_LLP, set by the test) is honoured
  by-soname   ARGS are the cpuhip abi6 and abi5 folders, put in LD_LIBRARY_PATH:
              each soname is reported where the loader would find it (the
              .so.5 one in abi5, not the system's), the newest on top
  noshim      HIPEXTSEM_LIBRARY points at a missing file
  cli         --help, --version, bad usage
Exit 77 skips (host case on a machine that has render nodes).
"""
import glob
import json
import os
import subprocess
import sys


def run(info, *args, env=None):
    p = subprocess.run([info, *args], capture_output=True, text=True, env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr


def report(info, *args, env=None, want_rc=None):
    rc, out, err = run(info, '--json', *args, env=env)
    try:
        data = json.loads(out)
    except ValueError as e:
        sys.exit(f'FAIL: --json output is not JSON ({e}):\n{out}\n{err}')
    for key in ('tool', 'version', 'kernel', 'render_nodes', 'render_node_env',
                'selected_render_node', 'runtime', 'shim', 'verdict'):
        check(key in data, f'JSON lacks the key {key!r}')
    check(rc == (0 if data['verdict']['ok'] else 1),
          f'exit status {rc} does not match verdict {data["verdict"]}')
    check('timeline semaphores do not block' in data.get('vulkan_note', ''),
          'JSON lacks the static Vulkan note (binary vs timeline)')
    if want_rc is not None:
        check(rc == want_rc, f'exit status {rc}, expected {want_rc}: {data["verdict"]}')
    return data


def check(cond, msg):
    if not cond:
        sys.exit('FAIL: ' + msg)


def verdict_first(info, out, *args):
    """The text report answers in its first lines: the verdict is line 2,
    right after the tool's name; the shim's export list only with -v."""
    lines = out.splitlines()
    check(len(lines) > 2 and lines[0].startswith('hipextsem-info ') and
          lines[1].startswith('Verdict: '), 'the verdict is not the second line:\n' + '\n'.join(lines[:4]))
    check(sum(ln.startswith('Verdict: ') for ln in lines) == 1, 'more than one verdict line')
    check('exports @' not in out, 'the export list is printed without -v')
    check('  exports:      ' in out, 'the export count is missing')
    rc, vout, _ = run(info, '-v', *args)
    check('exports @hip_4.3 ' in vout and vout.splitlines()[1] == lines[1],
          'hipextsem-info -v lists no exports, or changes the verdict line')
    check(len(vout.splitlines()) > len(lines), '-v prints nothing more')


def main():
    case, info, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    # meson test adds the build's library directories (cpuhip's among them)
    # to LD_LIBRARY_PATH; the search must see only what a case sets.
    os.environ.pop('LD_LIBRARY_PATH', None)
    if os.environ.get('HX_TEST_LLP'):
        os.environ['LD_LIBRARY_PATH'] = os.environ['HX_TEST_LLP']
    if case == 'host':
        if glob.glob('/dev/dri/renderD*'):
            print('render nodes present on this machine: skipped')
            sys.exit(77)
        rc, out, err = run(info)
        print(out, end='')
        check(rc == 1, f'exit status {rc}, expected 1')
        check('Render nodes:   none (/dev/dri/renderD* does not exist' in out,
              'text output does not say that no render node exists')
        check('Verdict: external semaphores will NOT work: no DRM render node exists' in out,
              'verdict does not name the missing render node')
        check('; do ' in out, 'verdict does not say what to do')
        verdict_first(info, out)
        d = report(info, want_rc=1)
        check(d['render_nodes'] == [] and d['selected_render_node'] is None, 'nodes listed')
        check(d['verdict']['ok'] is False, 'verdict ok on a machine without render nodes')
        check('no DRM render node' in d['verdict']['message'], 'JSON verdict message')
        check(d['kernel']['release'] == os.uname().release, 'kernel release')
    elif case == 'vm':
        rc, out, err = run(info)
        print(out, end='')
        d = report(info, want_rc=0)
        nodes = [n for n in d['render_nodes'] if n['path'] == '/dev/dri/renderD128']
        check(len(nodes) == 1, f'renderD128 not reported: {d["render_nodes"]}')
        n = nodes[0]
        check(n['driver'] == 'virtio_gpu', f'driver {n["driver"]!r}')
        check(n['syncobj'] is True and n['timeline'] is True and n['eventfd'] is True,
              f'capabilities {n}')
        check(n['selected'] is True and d['selected_render_node'] == '/dev/dri/renderD128',
              'renderD128 not selected')
        check(d['runtime']['found'] and d['runtime']['abi'] in ('5.x', '6.x'), 'runtime')
        check(d['shim']['found'] and d['shim']['interposes'], f'shim {d["shim"]}')
        check(d['verdict']['message'].startswith('external semaphores will work'), 'verdict')
        check('virtio_gpu' in out and 'syncobj yes' in out and 'timeline yes' in out
              and 'eventfd yes' in out, 'text output lacks the capabilities')
        check(out.splitlines()[1].startswith('Verdict: external semaphores will work'),
              'the positive verdict is not the second line')
        verdict_first(info, out)
    elif case == 'vm-badnode':
        env = dict(os.environ, HIPEXTSEM_RENDER_NODE='/dev/null')
        d = report(info, env=env, want_rc=1)
        check(d['render_node_env'] == '/dev/null', 'HIPEXTSEM_RENDER_NODE not reported')
        check(d['selected_render_node'] is None, 'a node was selected')
        check('HIPEXTSEM_RENDER_NODE=/dev/null' in d['verdict']['message'], d['verdict']['message'])
        env['HIPEXTSEM_RENDER_NODE'] = '/dev/dri/renderD128'
        d = report(info, env=env)
        check(d['selected_render_node'] == '/dev/dri/renderD128', 'forced node not selected')
    elif case in ('runtime5', 'runtime6'):
        abi = case[-1]
        d = report(info, '--runtime', args[0])
        rt = d['runtime']
        check(rt['found'] and rt['found_via'] == '--runtime', f'runtime {rt}')
        check(rt['soname'] == f'libamdhip64.so.{abi}', f'soname {rt["soname"]}')
        check(rt['abi'] == f'{abi}.x', f'abi {rt["abi"]}')
        check(rt['semaphore_calls'] == 'stock' and rt['semaphore_version_node'] == 'hip_4.3',
              f'semaphore calls {rt}')
        check(rt['cpuhip'] is True, 'cpuhip not recognised')
        check(rt['missing_symbols'] == [], f'missing {rt["missing_symbols"]}')
        # hipExternalMemoryGetMappedMipmappedArray: not exported; 5.x has no
        # hipGetProcAddress, a 6.x one is asked only by --selftest.
        want = 'absent' if abi == '5' else 'not_exported'
        check(rt['mipmapped_array'] == want, f'mipmapped_array {rt["mipmapped_array"]!r}')
        check(abi == '5' or 'run --selftest' in rt['mipmapped_array_message'],
              rt['mipmapped_array_message'])
        text = run(info, '--runtime', args[0])[1]
        check('mipmapped:    hipExternalMemoryGetMappedMipmappedArray: ' +
              ('absent' if abi == '5' else 'not exported') in text, f'text:\n{text}')
        sh = d['shim']
        check(sh['found'] and sh['interposes'], f'shim {sh}')
        nodes = {e['name']: e['node'] for e in sh['exports']}
        check(nodes.get('hipImportExternalSemaphore') == 'hip_4.3', f'shim exports {nodes}')
        # A file that is not a HIP runtime: the shim itself.
        d = report(info, '--runtime', sh['path'], want_rc=1)
        check(d['runtime']['semaphore_calls'] == 'hipextsem', 'shim taken for a runtime')
    elif case == 'program':
        d = report(info, '--program', args[0])
        rt = d['runtime']
        check(rt['found'] and rt['soname'] == 'libamdhip64.so.5', f'runtime {rt}')
        check(rt['found_via'] in ('DT_RUNPATH', 'DT_RPATH'), f'found via {rt["found_via"]}')
        check('cpuhip' in rt['real_path'] and rt['abi'] == '5.x', f'runtime {rt}')
        rc, out, err = run(info, '--program', '/no/such/program')
        check(rc == 2 and '/no/such/program' in err, f'missing program: {rc} {err}')
    elif case == 'llp':
        d = report(info)
        rt = d['runtime']
        check(rt['found_via'] == 'LD_LIBRARY_PATH', f'found via {rt["found_via"]}')
        check(rt['soname'] == 'libamdhip64.so.6' and rt['abi'] == '6.x', f'runtime {rt}')
    elif case == 'by-soname':
        env = dict(os.environ, LD_LIBRARY_PATH=':'.join(args[:2]))
        d = report(info, env=env)
        rt = d['runtime']
        by = {e['soname']: e for e in rt['by_soname']}
        check(rt['soname'] == 'libamdhip64.so.6', f'newest runtime on top: {rt["soname"]}')
        for soname, folder in (('libamdhip64.so.6', args[0]), ('libamdhip64.so.5', args[1])):
            e = by.get(soname)
            check(e and e['via'] == 'LD_LIBRARY_PATH' and
                  os.path.dirname(os.path.abspath(e['path'])) == os.path.abspath(folder),
                  f'{soname} resolves to {e}, expected {folder} via LD_LIBRARY_PATH')
        check(by.get('libamdhip64.so.7', {}).get('path') is None, 'no .so.7 here')
        text = run(info, env=env)[1]
        check('by soname:' in text and args[1] in text, 'text report lists each soname')
    elif case == 'noshim':
        env = dict(os.environ, HIPEXTSEM_LIBRARY='/no/such/dir/libextsem.so')
        d = report(info, '--runtime', args[0], env=env, want_rc=1)
        check(d['shim']['found'] is False and d['shim']['found_via'] == 'HIPEXTSEM_LIBRARY',
              f'shim {d["shim"]}')
        if glob.glob('/dev/dri/renderD*'):  # otherwise the render node decides first
            check('shim library is missing' in d['verdict']['message'], d['verdict']['message'])
    elif case == 'cli':
        rc, out, err = run(info, '--help')
        check(rc == 0 and out.startswith('Usage: hipextsem-info [OPTIONS]'), 'help')
        check('Exit status: 0 if external semaphores will work, 1 if not' in out, 'help: status')
        rc, out, err = run(info, '--version')
        check(rc == 0 and out == f'hipextsem-info {args[0]}\n', f'version {out!r}')
        rc, out, err = run(info, '--bogus')
        check(rc == 2, f'bad option exit {rc}')
        rc, out, err = run(info, 'extra')
        check(rc == 2 and 'unexpected argument' in err, f'extra argument exit {rc}')
    else:
        sys.exit(f'unknown case {case}')
    print(f'ok: {case}')


if __name__ == '__main__':
    main()
