#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the benchmark result files into one table.

    report.py RESULTS_DIR MARKDOWN_OUT PNG_OUT
    report.py --vulkan-only RESULTS_DIR MARKDOWN_OUT   (update that section only)

RESULTS_DIR holds one file per benchmark (written by hxbench and
forward-compare: lines 'lat NAME p50 p99 n' and 'val NAME value').  Prints
the table, writes it (with notes) to MARKDOWN_OUT and plots wait latency
against the number of pending semaphores to PNG_OUT with gnuplot.
"""
import os
import subprocess
import sys
import tempfile


def load(results):
    data = {}
    for fn in sorted(os.listdir(results)):
        if not fn.endswith('.txt'):
            continue
        bench = fn[:-4]
        d = data.setdefault(bench, {})
        with open(os.path.join(results, fn)) as f:
            for line in f:
                w = line.split()
                if len(w) >= 5 and w[0] == 'lat':
                    d[w[1]] = (int(w[2]), int(w[3]), int(w[4]))
                elif len(w) >= 3 and w[0] == 'val':
                    d[w[1]] = float(w[2])
    return data


def us(ns):
    return '%.1f' % (ns / 1000.0)


class Table:
    def __init__(self):
        self.rows = []
        self.misses = []

    def lat(self, what, m, b, bname, target, unit='us'):
        """m, b: (p50, p99, n) or None; target: max ratio or None."""
        if not m or not b:
            self.rows.append([what, 'missing', 'missing', '', bname, '', 'NO DATA'])
            self.misses.append('%s: no data' % what)
            return
        r50 = m[0] / b[0] if b[0] > 0 else float('inf')
        r99 = m[1] / b[1] if b[1] > 0 else float('inf')
        if unit == 'us':
            mv = '%s / %s' % (us(m[0]), us(m[1]))
            bv = '%s / %s' % (us(b[0]), us(b[1]))
        else:
            mv = '%d / %d' % (m[0], m[1])
            bv = '%d / %d' % (b[0], b[1])
        verdict = ''
        if target is not None:
            ok = r50 <= target
            verdict = ('ok' if ok else 'MISS') + ' (<= %.3gx)' % target
            if not ok:
                self.misses.append('%s: p50 %.2fx of %s (target %.3gx)' % (what, r50, bname, target))
        self.rows.append([what, mv, bv, '%.2f (%.2f)' % (r50, r99), bname, 'n=%d' % m[2],
                          verdict])

    def val(self, what, m, b, bname, verdict='', fmt='%.0f'):
        ratio = ''
        if m is not None and b not in (None, 0):
            ratio = '%.2f' % (m / b)
        self.rows.append([what, fmt % m if m is not None else 'missing',
                          fmt % b if b is not None else '', ratio, bname, '', verdict])

    def render(self):
        head = ['benchmark', 'measured p50 / p99', 'baseline p50 / p99', 'ratio p50 (p99)',
                'baseline', 'samples', 'target']
        rows = [head] + self.rows
        w = [max(len(r[i]) for r in rows) for i in range(len(head))]
        text = []
        for k, r in enumerate(rows):
            text.append('  '.join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
            if k == 0:
                text.append('  '.join('-' * w[i] for i in range(len(head))))
        md = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
        for r in self.rows:
            md.append('| ' + ' | '.join(c.replace('|', '/') for c in r) + ' |')
        return '\n'.join(text), '\n'.join(md)


def vulkan_section(data):
    """The Vulkan side (tests/vulkan/vkconsumer): blocking of the consumer's
    submitting thread, as a ratio to the HIP stream's remaining work."""
    head = ['semaphore', "consumer's wait submitted", 'submitting thread blocked p50 / p99 [us]',
            'stream work remaining at submit p50 [us]', 'ratio blocked / remaining p50 (p99)',
            'samples']
    rows = []
    for typ in ('binary', 'timeline'):
        for order in ('before', 'after'):
            d = data.get('vulkan-%s-%s' % (typ, order), {})
            k = 'hip2vk-%s-%s' % (typ, order)
            b, rem, r = d.get(k + '.blocked'), d.get(k + '.remaining'), d.get(k + '.ratio_ppm')
            work = d.get(k + '.work_us')
            when = ('before the signal ran' if order == 'before' else
                    'after the signal ran')
            if not b or not r:
                rows.append([typ, when, 'missing', '', '', ''])
                continue
            if order == 'before':
                ratio = '%.3f (%.3f)' % (r[0] / 1e6, r[1] / 1e6)
                remv = us(rem[0])
            else:
                ratio = '%.3f (%.3f) of the %.0f us queued' % (r[0] / 1e6, r[1] / 1e6, work or 0)
                remv = '0 (signal already ran)'
            rows.append([typ, when, '%s / %s' % (us(b[0]), us(b[1])), remv, ratio,
                         'n=%d' % b[2]])
    allr = [head] + rows
    w = [max(len(x[i]) for x in allr) for i in range(len(head))]
    text = ['  '.join(c.ljust(w[i]) for i, c in enumerate(x)).rstrip() for x in allr]
    text.insert(1, '  '.join('-' * w[i] for i in range(len(head))))
    md = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    md += ['| ' + ' | '.join(rr) + ' |' for rr in rows]
    intro = ('HIP signals a semaphore after 2 ms of prior stream work; a consumer that '
             'behaves like Mesa/RADV (tests/vulkan/vkconsumer) submits a wait on it, right '
             'after `hipSignalExternalSemaphoresAsync` returned or after the signal ran.  '
             '"Blocked" is the time its submitting thread spends in the emulated '
             '`vkQueueSubmit`; the baseline is the HIP stream\'s remaining work at that '
             'moment (until the stream reaches the signal).')
    return '\n'.join(text), intro + '\n\n' + '\n'.join(md) + '\n'


VULKAN_HEAD = '## The Vulkan side: consumer blocking\n'

# Hand-written sections of MARKDOWN_OUT (analysis of measured figures) that
# a regeneration of the table keeps as they are.
# Hand-written sections of docs/bench.md a new run keeps, in this order.
KEPT_HEADS = ['## Running and reading the benchmarks\n', '## Enqueue cost on the calling thread\n',
              "## Enqueue cost on AMD's real runtimes (fake device)\n",
              "## Signal modes on AMD's real runtimes (fake device)\n",
              '## The fallback at scale\n']


def kept_sections(md_out):
    old = open(md_out).read() if os.path.exists(md_out) else ''
    out = ''
    for head in KEPT_HEADS:
        i = old.find(head)
        if i < 0:
            continue
        j = old.find('\n## ', i + len(head))
        out += old[i:j + 1 if j >= 0 else len(old)].rstrip('\n') + '\n\n'
    return out


def splice_vulkan(results, md_out):
    """Replaces (or appends) only the Vulkan section of an existing table."""
    text, md = vulkan_section(load(results))
    md = md.rstrip('\n') + ('\n\nThis section comes from a separate run of the `vulkan-*` '
                            'benchmarks (`report.py --vulkan-only`), not from the run above.\n')
    print(text)
    old = open(md_out).read() if os.path.exists(md_out) else '# Benchmark results\n\n'
    i = old.find(VULKAN_HEAD)
    if i >= 0:
        j = old.find('\n## ', i + len(VULKAN_HEAD))
        rest = old[j + 1:] if j >= 0 else ''
        old = old[:i] + VULKAN_HEAD + '\n' + md + ('\n' + rest if rest else '')
    else:
        old = old.rstrip('\n') + '\n\n' + VULKAN_HEAD + '\n' + md
    with open(md_out, 'w') as f:
        f.write(old)


def main():
    if sys.argv[1] == '--vulkan-only':
        splice_vulkan(sys.argv[2], sys.argv[3])
        return
    results, md_out, png_out = sys.argv[1:4]
    data = load(results)
    g = lambda b, k: data.get(b, {}).get(k)
    t = Table()

    # Latency (latency figures in microseconds).
    for mode, sfx in (('eventfd', ''), ('fallback', '-fallback')):
        t.lat('signal latency [%s]' % mode, g('signal' + sfx, 'signal.shim'),
              g('signal' + sfx, 'signal.primitive'), 'hostfunc+ioctl+eventfd', 1.5)
    t.lat('  (bare kernel: ioctl -> eventfd wake)', g('signal', 'signal.kernel'),
          g('signal', 'signal.kernel'), 'itself', None)
    for mode, sfx in (('eventfd', ''), ('fallback', '-fallback')):
        t.lat('wait latency [%s]' % mode, g('wait' + sfx, 'wait.shim'),
              g('wait' + sfx, 'wait.primitive'), 'ioctl+eventfd+waitvalue', 1.5)
    t.lat('  (runtime wait-value release alone)', g('wait', 'wait.runtime'),
          g('wait', 'wait.kernel'), 'bare kernel path', None)

    # Enqueue cost (CPU ns per call): a signal against the one host function
    # it enqueues; a wait against what it must do at least, the stream wait
    # plus one eventfd arm ioctl per semaphore (issue targets: 1.3x).
    e = lambda k: g('enqueue', k)
    for n in (1, 16):
        t.lat('enqueue signal, %d sem(s) [ns CPU]' % n, e('enqueue.signal%d' % n),
              e('enqueue.launchhostfunc'), 'hipLaunchHostFunc', 1.3, unit='ns')
    for n in (1, 16):
        w, v, a = e('enqueue.wait%d' % n), e('enqueue.waitvalue64'), e('enqueue.arm%d' % n)
        floor = (v[0] + a[0], v[1] + a[1], a[2]) if v and a else None
        t.lat('enqueue wait, %d sem(s) [ns CPU]' % n, w, floor,
              'WaitValue64+%d eventfd arm ioctl' % n, 1.3, unit='ns')
    t.lat('  (hipStreamWaitValue64 alone)', e('enqueue.waitvalue64'),
          e('enqueue.launchhostfunc'), 'hipLaunchHostFunc', None, unit='ns')

    # Stream stall (elapsed stream time, us).
    s = lambda k: g('stall', k)
    t.lat('stream time with a signal', s('stall.shim'), s('stall.hostfunc'),
          'same with hipLaunchHostFunc(noop)', 1.0 + 0.05)
    if s('stall.shim') and s('stall.plain') and s('stall.hostfunc'):
        pl = s('stall.plain')[0]
        t.val('  added stall: signal [us]', (s('stall.shim')[0] - pl) / 1000.0,
              (s('stall.hostfunc')[0] - pl) / 1000.0, 'hipLaunchHostFunc(noop) stall',
              fmt='%.1f')

    # Scale.
    plot = []
    for mode, sfx in (('eventfd', ''), ('fallback', '-fallback')):
        base10 = g('scale%s-10' % sfx, 'scale.10.shim')
        for n in (10, 1000, 10000):
            b = 'scale%s-%d' % (sfx, n)
            k = lambda x: g(b, 'scale.%d.%s' % (n, x))
            t.lat('scale %5d: wait latency [%s]' % (n, mode), k('shim'), k('primitive'),
                  'primitive, same N', 1.5)
            fl = lambda x: g('floor-%d' % n, 'floor.%d.%s' % (n, x))
            if mode == 'fallback' and fl('multi'):
                # The kernel's share of every fallback release (tests/bench/floor.c).
                t.lat('scale %5d:   (kernel: %d-handle wait, signal -> return)' % (n, n),
                      fl('multi'), fl('single'), 'same, 1 handle', None)
            if n != 10:
                t.lat('scale %5d: flatness [%s]' % (n, mode), k('shim'), base10,
                      'shim at N=10', 1.5)
            if k('wait_failures'):
                t.misses.append('scale %d [%s]: %d wait call(s) failed (first error %d)' %
                                (n, mode, k('wait_failures'), k('wait_first_error') or 0))
                t.rows.append(['scale %5d: FAILED waits [%s]' % (n, mode),
                               '%d' % k('wait_failures'), '', '', 'error %d' %
                               (k('wait_first_error') or 0), '', 'MISS'])
            th, th10 = k('threads_shim'), g('scale%s-10' % sfx, 'scale.10.threads_shim')
            if th is not None:
                t.val('scale %5d: shim threads [%s]' % (n, mode), th, th10, 'shim threads at N=10',
                      'ok (fixed)' if th == th10 else 'MISS')
                if th != th10:
                    t.misses.append('scale %d [%s]: %d shim threads vs %d at N=10' %
                                    (n, mode, th, th10))
            heap = k('heap_shim_per_sem')
            if heap is not None:
                ok = heap < 1024
                t.val('scale %5d: shim heap/sem [B] [%s]' % (n, mode), heap, 1024,
                      'target 1 KiB', 'ok' if ok else 'MISS')
                if not ok:
                    t.misses.append('scale %d [%s]: %.0f B heap per semaphore' % (n, mode, heap))
                # RSS moves by pages and Slab by KiB: over 10 semaphores
                # either is noise (a negative slab "per semaphore" at times).
                if n >= 1000:
                    t.val('scale %5d:   RSS/sem, kernel slab/sem [B]' % n, k('rss_per_sem'),
                          (k('slab_import_per_sem') or 0) + (k('slab_wait_per_sem') or 0),
                          'RSS vs slab (import+wait)')
            if k('shim') and k('primitive'):
                plot.append((mode, n, k('shim'), k('primitive')))
        nof = g('scale%s-10000' % sfx, 'scale.nofile_soft')
        if nof is not None:
            t.val('RLIMIT_NOFILE soft raised to hard [%s]' % mode, nof,
                  g('scale%s-10000' % sfx, 'scale.nofile_soft_before'), 'soft limit at start')

    # Forwarding.
    fs, fw = g('forward', 'forward.ir_stock'), g('forward', 'forward.ir_shim')
    if fs is not None and fw is not None:
        ok = fw == fs
        t.val('forwarding: Ir, 20000 calls', fw, fs, 'no preload', 'ok (identical)' if ok else 'MISS')
        if not ok:
            t.misses.append('forwarding: %d vs %d instructions' % (fw, fs))
        if g('forward', 'forward.bound_to_runtime') == 0:
            t.misses.append('forwarding: calls bound to the shim')
    else:
        t.rows.append(['forwarding', 'missing', '', '', '', '', 'NO DATA'])
        t.misses.append('forwarding: no data')

    for b, d in sorted(data.items()):
        if d.get('time_budget_hit'):
            t.misses.append('%s stopped at its time budget (fewer samples)' % b)

    text, md = t.render()
    vtext, vmd = vulkan_section(data)
    print(text)
    print()
    print(vtext)
    print()
    if t.misses:
        print('Misses:')
        for m in t.misses:
            print('  - ' + m)
    else:
        print('Every target met.')

    kept = kept_sections(md_out)
    with open(md_out, 'w') as f:
        f.write('# Benchmark results\n\n')
        f.write('Generated by `scripts/bench`: latencies in microseconds (p50 / p99), '
                'enqueue cost in CPU nanoseconds per call, every figure next to a baseline '
                'measured in the same run.  Measured in a TCG-emulated VM on the CPU '
                'reference runtime: compare ratios, not absolute values.\n\n')
        f.write(md + '\n\n')
        if t.misses:
            f.write('Misses:\n\n' + ''.join('- %s\n' % m for m in t.misses) + '\n')
        f.write('![wait latency vs pending semaphores](%s)\n\n' % os.path.basename(png_out))
        f.write(kept)
        f.write(VULKAN_HEAD + '\n' + vmd)

    if plot:
        draw(plot, png_out)


def draw(plot, png_out):
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for mode, n, m, b in plot:
            files.setdefault(mode, []).append((n, m, b))
        dat = []
        for mode, rows in files.items():
            p = os.path.join(tmp, mode + '.dat')
            with open(p, 'w') as f:
                for n, m, b in rows:
                    f.write('%d %.1f %.1f %.1f %.1f\n' % (n, m[0] / 1e3, m[1] / 1e3, b[0] / 1e3,
                                                         b[1] / 1e3))
            dat.append((mode, p))
        ymax = max(max(m[1], b[1]) for _, _, m, b in plot) / 1e3 * 1.15
        gp = [
            'set terminal pngcairo size 900,560 font "DejaVu Sans,11"',
            'set output "%s"' % png_out,
            'set title "hipextsem: wait latency (signal ioctl -> next stream op) vs pending semaphores"',
            'set xlabel "semaphores with a pending wait (64 streams, 4 HW queues)"',
            'set ylabel "latency (log scale), TCG VM"',
            'set logscale xy', 'set xrange [5:20000]', 'set yrange [20:%.0f]' % (ymax * 2),
            'set ytics ("0.1 ms" 100, "0.3 ms" 300, "1 ms" 1000, "3 ms" 3000, "10 ms" 10000, '
            '"30 ms" 30000, "100 ms" 100000, "300 ms" 300000)',
            'set xtics ("10" 10, "100" 100, "1,000" 1000, "10,000" 10000)',
            'set grid', 'set key bottom right box opaque',
        ]
        styles = {'eventfd': (1, 'shim, eventfd waiter'), 'fallback': (2, 'shim, multi-wait fallback')}
        series = []
        for mode, p in dat:
            c, label = styles.get(mode, (3, mode))
            series.append('"%s" u 1:2 w lp lw 2 pt 7 lc %d t "%s p50"' % (p, c, label))
            series.append('"%s" u 1:3 w lp lw 2 pt 6 dt 2 lc %d t "%s p99"' % (p, c, label))
        p = dat[0][1]
        series.append('"%s" u 1:4 w lp lw 2 pt 5 lc rgb "gray30" t "baseline (ioctl+eventfd+wait-value) p50"' % p)
        series.append('"%s" u 1:5 w lp lw 2 pt 4 dt 2 lc rgb "gray30" t "baseline p99"' % p)
        gp.append('plot ' + ', '.join(series))
        script = os.path.join(tmp, 'plot.gp')
        with open(script, 'w') as f:
            f.write('\n'.join(gp) + '\n')
        subprocess.run(['gnuplot', script], check=True)


if __name__ == '__main__':
    main()
