#!/usr/bin/env python3
"""modecost-table.py FILE...: the table of docs/bench.md ("Signal modes on
AMD's real runtimes") from the rows tests/realrt/run-modecost collected
(MODE|ROW|version|mode|round|writes|hf|signal|drain|drain+signals|four hand-offs and
MODE|POLL|version|mode|cpu per signal|signals|idle wake-ups).  Each figure
is the median over every round of every process, with the lowest and
highest in brackets.  hostfunc's times come from the fake device and say
nothing of a GPU; poll's are ratios to them, measured in the same boot,
and each busy column is a ratio to the same mode's column before it.
Exits 1 if a file has no rows for a mode."""
import statistics
import sys



def spread(values, fmt):
    values = sorted(values)
    return "%s [%s-%s]" % (fmt % statistics.median(values), fmt % values[0], fmt % values[-1])


def main(paths):
    status = 0
    print("| release | mode | signal enqueue / host function | stream time per signal | "
          "hand-off, idle stream | same, callback thread busy | hand-off behind 2 ms of work | "
          "same, callback thread busy | poll thread CPU per signal | wake-ups in 0.5 s idle |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        rows = {"hostfunc": [], "poll": []}
        polls = {"hostfunc": [], "poll": []}
        version = "?"
        with open(path) as f:
            for line in f:
                p = line.strip().split("|")
                if len(p) == 14 and p[1] == "ROW" and p[0] in rows:
                    version = p[2]
                    k, hf, sig, base, drained, h0, h1, h2, h3 = (int(x) for x in p[5:14])
                    rows[p[0]].append(dict(enq=sig / hf, stall=(drained - base) / (k - 1),
                                           write=base / (k - 1), h=(h0, h1, h2, h3)))
                elif len(p) == 7 and p[1] == "POLL" and p[0] in polls:
                    polls[p[0]].append(dict(cpu=int(p[4]), signals=int(p[5]), wake=int(p[6])))
        if not rows["hostfunc"] or not rows["poll"] or not polls["poll"]:
            print("%s: rows missing for a mode" % path, file=sys.stderr)
            status = 1
            continue
        ref = rows["hostfunc"]
        ref_stall = statistics.median(r["stall"] for r in ref)
        ref_h = [statistics.median(r["h"][k] for r in ref) for k in range(4)]
        for mode in ("hostfunc", "poll"):
            r = rows[mode]
            cells = [spread([x["enq"] for x in r], "%.2fx")]
            if mode == "hostfunc":
                cells.append("%s us" % spread([x["stall"] / 1000 for x in r], "%.0f"))
                for k in (0, 2):
                    cells.append("%s us" % spread([x["h"][k] / 1000 for x in r], "%.0f"))
                    own = statistics.median(x["h"][k] for x in r)
                    cells.append(spread([x["h"][k + 1] / own for x in r], "%.2fx"))
            else:
                cells.append("%s of hostfunc's, %s of one stream write" % (
                    spread([100 * x["stall"] / ref_stall for x in r], "%.1f%%"),
                    spread([x["stall"] / x["write"] for x in r], "%.2fx")))
                for k in (0, 2):
                    cells.append("%s of hostfunc's" % spread([x["h"][k] / ref_h[k] for x in r], "%.2fx"))
                    own = statistics.median(x["h"][k] for x in r)
                    cells.append(spread([x["h"][k + 1] / own for x in r], "%.2fx"))
            cpu = [x["cpu"] / 1000 for x in polls[mode] if x["cpu"] >= 0]
            wake = [x["wake"] for x in polls[mode] if x["wake"] >= 0]
            cells.append(spread(cpu, "%.1f") + " us" if cpu else "-")
            cells.append(spread(wake, "%d") if wake else "-")
            print("| %s | %s | %s |" % (version, mode, " | ".join(cells)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
