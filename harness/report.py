#!/usr/bin/env python3
"""Tables and plot data made from the harness's raw data (hyperfine's JSON, batched's --stats,
cachegrind's totals). Python's standard library only. Markdown goes to stdout.

    report.py table --bytes B [--reference NAME [--reference-from OTHER.json]] [--plot DAT] RUN.json
    report.py pv [--reference NAME | --original] [--plot DAT] PV.tsv  (pv's rates, median of the rounds)
    report.py targets [--peak KIB MIB] [--rounds TEXT ROUND.json...]...
                      [--shuffled TEXT ROUNDS.tsv]...  (rounds.py's runs, with the same text's)
    report.py latency --rates RATES PROBE.tsv PLOT-DAT
    report.py ping-pong PROBE.tsv  (latency-probe --ping-pong's runs, against std-baseline)
    report.py sweep --bytes B --knob K [--divisor D] --references REF.json RUN.json SERIES-DAT REFS-DAT
    report.py scaling --bytes B --stats DIR --references REF.json SERIES.json... SERIES-DAT REFS-DAT
    report.py cachegrind --lines N TOTALS.tsv
    report.py linelength RUN-DIR  (harness/linelength.sh's tables and plot data)
    report.py work WORK.tsv  (harness/work.sh's tables, and a 16-core prediction from them)
    report.py peers --bytes B --plain "COUNT DIGEST" CHECK.tsv ROUNDS.tsv DAMAGED.tsv  (harness/peers.sh's)
"""

import argparse
import glob
import json
import re
import statistics
import sys

MIB = 1 << 20
GIB = 1 << 30


def results(path):
    with open(path) as f:
        return json.load(f)["results"]


def median_wall(result):
    """The median wall time; at least a microsecond, since hyperfine, taking the shell's start-up
    off, can report 0 s for a run of a few milliseconds (too_short's note then says so)."""
    return max(statistics.median(result["times"]), 1e-6)


def cpu_seconds(result):
    """User + system CPU of the command and all its children, hyperfine's mean over the runs."""
    return result["user"] + result["system"]


def row(cells):
    """A markdown table row; a `|` in a cell (a shell pipe) is escaped so it stays in its cell."""
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def header(names, right_from):
    """A markdown header; columns from `right_from` on are numbers, aligned right."""
    rules = ["---" if i < right_from else "---:" for i in range(len(names))]
    return row(names) + "\n" + row(rules)


# hyperfine subtracts the shell's start-up, which it can measure only to about this close.
SHORTEST = 0.005


def too_short(walls):
    """A line under a table when some run took less than hyperfine can time closely."""
    if min(walls) < SHORTEST:
        print(f"\nSome runs took under {SHORTEST * 1000:.0f} ms, too short for hyperfine to time closely "
              "(it warns of them in the run's hyperfine.log): a bigger SIZE gives figures to compare.")


def table(args):
    runs = results(args.json)
    if args.reference_from:
        # The reference, timed for another table of the run, is shown first rather than timed again.
        runs = [r for r in results(args.reference_from) if r["command"] == args.reference] + runs
    reference = next((r for r in runs if r["command"] == args.reference), None)
    print(header(["command", "median s", "min-max s", "MiB/s in", f"time / {args.reference}",
                  "user s", "system s", "CPU s/GiB"], 1))
    for r in runs:
        wall = median_wall(r)
        ratio = f"{wall / median_wall(reference):.2f}" if reference else "-"
        print(row([f"`{r['command']}`", f"{wall:.3f}", f"{min(r['times']):.3f}-{max(r['times']):.3f}",
                   f"{args.bytes / wall / MIB:.0f}", ratio, f"{r['user']:.3f}", f"{r['system']:.3f}",
                   f"{cpu_seconds(r) / (args.bytes / GIB):.2f}"]))
    too_short([t for r in runs for t in r["times"]])
    if args.plot:
        # The slowest run is the lowest rate; a run timed at 0 s is floored as median_wall floors it.
        rate = lambda seconds: args.bytes / max(seconds, 1e-6) / MIB  # noqa: E731
        write_bars(args.plot, [(r["command"], rate(median_wall(r)), rate(max(r["times"])), rate(min(r["times"])),
                                cpu_seconds(r) / (args.bytes / GIB)) for r in runs])


def write_bars(path, bars):
    """Plot data for harness/plots/bars.gnuplot: a bar a line, tab-separated: label, median MiB/s,
    the runs' lowest and highest MiB/s, and CPU s/GiB where known ("-" where not)."""
    with open(path, "w") as data:
        for label, rate, low, high, *cpu in bars:
            data.write(f"{label}\t{rate:.1f}\t{low:.1f}\t{high:.1f}\t" + (f"{cpu[0]:.3f}" if cpu else "-") + "\n")


PV_UNITS = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def pv_bytes(rate):
    """pv's rate ("811MiB/s", "8.55GiB/s") in bytes a second."""
    m = re.fullmatch(r"([0-9.]+) ?([KMGT]i)?B/s", rate.strip())
    if not m:
        sys.exit(f"not a pv rate: {rate!r}")
    return float(m.group(1)) * PV_UNITS[m.group(2) or ""]


def pv_form(bytes_per_second):
    """A rate as pv writes it: three figures, a binary unit, "[ 811MiB/s]"."""
    unit = max((u for u, size in PV_UNITS.items() if bytes_per_second >= size), key=PV_UNITS.get, default="")
    value = bytes_per_second / PV_UNITS[unit]
    figures = f"{value:4.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"
    return f"[{figures}{unit}B/s]"


def pv(args):
    """Each command's median rate over the rounds, against the reference's, as a table or in the
    original experiment's form."""
    rates = {}
    with open(args.tsv) as f:
        next(f)
        for line in f:
            command, _, rate = line.rstrip("\n").split("\t")
            rates.setdefault(command, []).append(pv_bytes(rate))
    medians = {command: statistics.median(runs) for command, runs in rates.items()}
    top = medians[args.reference]
    if args.plot:
        write_bars(args.plot, [(command, rate / MIB, min(rates[command]) / MIB, max(rates[command]) / MIB)
                               for command, rate in medians.items()])
    if args.original:
        for command, rate in medians.items():
            print(f"{command}: {pv_form(rate)}  {rate / top:.2f} of {args.reference}")
        return
    print(header(["command", "pv's rate", "MiB/s in", f"of `{args.reference}`", "runs MiB/s"], 1))
    for command, rate in medians.items():
        runs = rates[command]
        print(row([f"`{command}`", pv_form(rate), f"{rate / MIB:.0f}", f"{rate / top:.2f}",
                   f"{min(runs) / MIB:.0f}-{max(runs) / MIB:.0f}"]))


# The performance targets: on which texts, what, the commands whose medians are compared (labels
# of targets.sh's commands), of which figure, and the bound. "cpu" is user + system time.
TARGETS = [
    (("kara", "logs"), "`cat | batched | cat` / `cat | cat | cat` time", "batched-chain", "cat-chain",
     "wall", "<=", 1.15),
    (("kara", "logs"), "perl / `batched F` time", "perl", "batched", "wall", ">=", 10),
    (("kara", "logs"), "`batched F` / `dd bs=1M` time", "batched", "dd", "wall", "<=", 1.0),
    (("kara", "logs"), "perl / `std-baseline F` time", "perl", "std-baseline", "wall", ">=", 4),
    (("man",), "`batched F` / `dd bs=1M` time", "batched", "dd", "wall", "<=", 1.5),
    (("man",), "`batched F` CPU / `cat F`'s", "batched", "cat", "cpu", "<=", 3),
    # The output is 11-12 bytes a line longer, about half again the input on short lines: the
    # fair chain moves as many bytes as batched's pipe does.
    (("man",), "`cat F | batched | cat` / `cat G | cat | cat`, G the output", "batched-chain",
     "output-chain", "wall", "<=", 1.05),
    # Issue 49: decoding in process costs little over ISA-L's own tool writing nowhere, alone.
    (("logs", "man"), "`batched -z F.gz` / `igzip -dc F.gz` time, F its first quarter", "batched-z", "igzip",
     "wall", "<=", 1.10),
    # Issue 61: tallies on the logs (harness/filters.sh), against what users run today.
    (("tallies",), "`count-by 9 F` / `mawk '{c[$9]++} END ...' F` time", "count-by-9", "mawk-9",
     "wall", "<=", 0.10),
    (("tallies",), "`count-by 1 F` / `mawk '{c[$1]++} END ...' F` time", "count-by-1", "mawk-1",
     "wall", "<=", 0.20),
    (("tallies",), "`count-by 9 F` / frawk's parallel mode on 2 workers", "count-by-9", "frawk-9",
     "wall", "<=", 0.8),
    (("tallies",), "`count-by -z 9 F.gz` / `igzip -dc F.gz | mawk ...`", "count-by-z-9", "igzip-mawk-9",
     "wall", "<=", 0.35),
    (("tallies",), "`count-by -z 9 F.gz` / `igzip -dc F.gz` alone", "count-by-z-9", "igzip",
     "wall", "<=", 1.15),
    (("tallies",), "`wc F` example / `wc F`", "wc-example", "wc", "wall", "<=", 0.10),
]
PEAK_MIB = 32


def medians_of(runs):
    """{command: [(wall, user, system) a run]}: each command's median wall, user and system
    seconds over its runs, and its CPU (user + system) median."""
    medians = {}
    for name, rounds in runs.items():
        wall, user, system = (statistics.median(column) for column in zip(*rounds))
        medians[name] = {"wall": wall, "user": user, "system": system,
                         "cpu": statistics.median(u + s for _, u, s in rounds)}
    return medians


def round_medians(paths):
    """Per-round files (one run of each command a file) merged: medians_of their runs."""
    runs = {}
    for path in paths:
        for r in results(path):
            runs.setdefault(r["command"], []).append((r["times"][0], r["user"], r["system"]))
    return medians_of(runs)


def tsv_rows(path):
    """A TSV with a header line: a dict a row."""
    with open(path) as f:
        names = f.readline().rstrip("\n").split("\t")
        return [dict(zip(names, line.rstrip("\n").split("\t"))) for line in f]


def shuffled_medians(path):
    """rounds.py's runs (a line a run): medians_of them."""
    runs = {}
    for r in tsv_rows(path):
        runs.setdefault(r["name"], []).append((float(r["wall_s"]), float(r["user_s"]), float(r["system_s"])))
    return medians_of(runs)


def targets(args):
    """Each target met or not, from medians over interleaved rounds; then every command's medians."""
    texts = {text: round_medians(paths) for text, *paths in args.rounds}
    for text, path in args.shuffled or []:
        texts.setdefault(text, {}).update(shuffled_medians(path))
    print(header(["text", "measure", "target", "figure", "medians", ""], 3))
    for text, medians in texts.items():
        for on, what, a, b, figure, comparison, bound in TARGETS:
            if text not in on:
                continue
            if a not in medians or b not in medians:
                # A peer this machine lacks (filters.sh says which): told, not guessed.
                print(row([text, what, "", "", "not measured", ""]))
                continue
            ratio = medians[a][figure] / max(medians[b][figure], 1e-6)
            met = ratio <= bound if comparison == "<=" else ratio >= bound
            sign = "≤" if comparison == "<=" else "≥"
            print(row([text, what, f"{sign} {bound}", f"{ratio:.3f}",
                       f"{medians[a][figure]:.3f} s / {medians[b][figure]:.3f} s {figure}",
                       "met" if met else "not met"]))
    if args.peak:
        kib, stream_mib = args.peak
        mib = int(kib) / 1024
        print(row(["kara", f"`batched` peak RSS streaming {stream_mib} MiB, defaults", f"≤ {PEAK_MIB} MiB",
                   f"{mib:.1f} MiB", "", "met" if mib <= PEAK_MIB else "not met"]))
    print()
    print(header(["text", "command", "wall s", "user s", "system s"], 2))
    for text, medians in texts.items():
        for name, m in medians.items():
            print(row([text, name, f"{m['wall']:.4f}", f"{m['user']:.4f}", f"{m['system']:.4f}"]))
    too_short([m["wall"] for medians in texts.values() for m in medians.values()])


def latency_medians(tsv):
    """latency-probe's runs: per (label, offered rate), in the order measured, the median of each
    figure over the rounds."""
    cells = {}
    for values in tsv_rows(tsv):
        cells.setdefault((values["label"], values["offered"]), []).append(values)
    figures = ["lines", "achieved", "min_us", "p50_us", "p99_us", "p999_us", "max_us"]
    return {key: {name: statistics.median(float(run[name]) for run in runs) for name in figures}
            for key, runs in cells.items()}


def latency(args):
    """The offered-rate table, and the plot's data (harness/plots/latency.gnuplot): a block per
    label, its label first, then "position rate p50 p99" a rate, the rates evenly spaced in the
    order given."""
    medians = latency_medians(args.tsv)
    print(header(["binary", "offered lines/s", "lines", "achieved lines/s", "min µs", "p50 µs", "p99 µs",
                  "p99.9 µs", "max µs"], 1))
    for (label, offered), m in medians.items():
        print(row([label, offered, f"{m['lines']:.0f}", f"{m['achieved']:.0f}"]
                  + [f"{m[name]:.1f}" for name in ("min_us", "p50_us", "p99_us", "p999_us", "max_us")]))
    rates = args.rates.split()

    def offered(rate):
        """The probe writes 1k as 1000, and max as it is."""
        if rate == "max":
            return rate
        scale = {"k": 1000, "K": 1000, "M": 1000000}.get(rate[-1], 1)
        return str(int(float(rate.rstrip("kKM")) * scale))

    with open(args.plot_dat, "w") as data:
        for label in dict.fromkeys(label for label, _ in medians):
            data.write(f'"{label}"\n')
            for position, rate in enumerate(rates):
                m = medians.get((label, offered(rate)))
                if m:
                    data.write(f"{position} {rate} {m['p50_us']} {m['p99_us']}\n")
            data.write("\n\n")


def ping_pong(args):
    """The ping-pong table: each row's medians, and its p50 over std-baseline's at the same rate,
    both medians of the same rounds."""
    medians = latency_medians(args.tsv)
    base = {rate: m["p50_us"] for (label, rate), m in medians.items() if label == "std-baseline"}
    print(header(["binary", "rate lines/s", "lines", "min µs", "p50 µs", "p99 µs", "max µs",
                  "p50 / std-baseline"], 1))
    for (label, rate), m in medians.items():
        ratio = f"{m['p50_us'] / base[rate]:.2f}" if base.get(rate, 0) > 0 else "-"
        print(row([label, rate, f"{m['lines']:.0f}"]
                  + [f"{m[name]:.1f}" for name in ("min_us", "p50_us", "p99_us", "max_us")] + [ratio]))


def knob_value(command, knob):
    """The number after KNOB in a command line (`--threads 4`, `-j4`), or None."""
    m = re.search(re.escape(knob) + r"[ =]?(\d+)", command)
    return int(m.group(1)) if m else None


def sweep(args):
    """One knob of one binary against its value, beside references; and the plot's data."""
    print(header([args.knob, "median s", "MiB/s in", "CPU s/GiB"], 1))
    gib = args.bytes / GIB
    refs = results(args.references)
    for r in refs:
        print(row([f"`{r['command']}`", f"{median_wall(r):.3f}", f"{args.bytes / median_wall(r) / MIB:.0f}",
                   f"{cpu_seconds(r) / gib:.2f}"]))
    points = []
    for r in results(args.json):
        value = knob_value(r["command"], args.knob)
        rate = args.bytes / median_wall(r) / MIB
        print(row([value, f"{median_wall(r):.3f}", f"{rate:.0f}", f"{cpu_seconds(r) / gib:.2f}"]))
        points.append((value / args.divisor, rate))
    write_blocks(args.series_dat, [(args.knob, points)])
    write_blocks(args.refs_dat, reference_blocks(refs, args.bytes, points[0][0], points[-1][0]))


def write_blocks(path, blocks, y_format=".1f"):
    """Plot data for harness/plots/against.gnuplot: per (title, points) a block, the title in
    quotes on its first line, "x y" lines, two blank lines after."""
    with open(path, "w") as data:
        for title, points in blocks:
            data.write(f'"{title}"\n' + "".join(f"{x} {y:{y_format}}\n" for x, y in points) + "\n\n")


def reference_blocks(refs, bytes_, low, high):
    """Each reference as a flat line across the knob's range."""
    return [(r["command"], [(low, bytes_ / median_wall(r) / MIB), (high, bytes_ / median_wall(r) / MIB)])
            for r in refs]


def reader_share(stats_prefix, series, threads):
    """The reader's busy time over the wall time, from `batched --stats` of that series and N, in
    the file STATS_PREFIX-SERIES-threadsN.txt.

    The first line ends "..., S s, R MiB/s in"; the reader's reads "stage reader: busy B s, ..."."""
    try:
        with open(f"{stats_prefix}-{series}-threads{threads}.txt") as f:
            text = f.read()
    except FileNotFoundError:
        return "-"
    wall = re.search(r"bytes out, ([0-9.]+) s,", text)
    busy = re.search(r"stage reader: busy ([0-9.]+) s", text)
    if not wall or not busy:
        return "-"
    return f"{float(busy.group(1)) / float(wall.group(1)):.0%}"


def scaling(args):
    """One table of every series against its N (threads or jobs), beside the references; and the
    plot's data: a block per series and a flat line per reference, each headed by its title."""
    print(header(["series", "command", "N", "median s", "MiB/s in", "speed-up", "efficiency",
                  "CPU s/GiB", "reader busy"], 2))
    gib = args.bytes / GIB
    refs = results(args.references)
    for r in refs:
        print(row(["reference", f"`{r['command']}`", "", f"{median_wall(r):.3f}",
                   f"{args.bytes / median_wall(r) / MIB:.0f}", "", "", f"{cpu_seconds(r) / gib:.2f}", ""]))
    blocks = []
    for path in args.series:
        runs = results(path)
        series = re.sub(r"^.*scaling-[^-]+-(.*)\.json$", r"\1", path)
        one, points = None, []
        for r in runs:
            n = knob_value(r["command"], "--threads") or knob_value(r["command"], "-j")
            wall = median_wall(r)
            one = one or wall
            speedup = one / wall
            print(row([series, f"`{r['command']}`", n, f"{wall:.3f}", f"{args.bytes / wall / MIB:.0f}",
                       f"{speedup:.2f}", f"{speedup / n:.2f}", f"{cpu_seconds(r) / gib:.2f}",
                       reader_share(args.stats, series, n) if "batched" in r["command"] else "-"]))
            points.append((n, args.bytes / wall / MIB))
        # The plot's title: the series' command without its N.
        blocks.append((re.sub(r" (--threads \d+|-j\d+)", "", runs[0]["command"]), points))
    write_blocks(args.series_dat, blocks)
    top = max(n for _, points in blocks for n, _ in points)
    write_blocks(args.refs_dat, reference_blocks(refs, args.bytes, 1, top))


def cachegrind_totals(path):
    """A run's cachegrind totals (harness/lib.sh's cachegrind_row), by (command, input) and event
    name."""
    with open(path) as f:
        columns = next(f).rstrip("\n").split("\t")
        if "D1mr" not in columns:
            sys.exit(f"{path}: no cache figures (run cachegrind with --cache-sim=yes)")
        totals = {}
        for line in f:
            command, input_name, *counts = line.rstrip("\n").split("\t")
            totals[command, input_name] = dict(zip(columns[2:], map(int, counts)))
    return totals


def mispredicts(counts):
    """Mispredicted branches (conditional and indirect) in a row of totals, or None in a run made
    before cachegrind_row turned the branch simulation on."""
    return counts["Bcm"] + counts["Bim"] if "Bcm" in counts else None


def cachegrind(args):
    """Per line: instructions, mispredicted branches (cachegrind's simulated predictor, whose
    figures are its own, not a CPU's), D1 misses and LL misses (reads and writes). Each command ran twice,
    on empty input ("empty") and on the lines ("log"); the difference over the lines leaves out
    starting and stopping (a runtime's threads, its allocations), which no number of lines pays
    again."""
    totals = cachegrind_totals(args.totals)
    print(header(["command", "instructions / line", "mispredicts / line", "D1 misses / line",
                  "LL misses / line", "of which data", "start and stop, instructions"], 1))
    for command in dict.fromkeys(command for command, _ in totals):
        empty, full = totals[command, "empty"], totals[command, "log"]
        per = lambda *names: sum(full[n] - empty[n] for n in names) / args.lines  # noqa: E731
        missed = mispredicts(full)
        missed = "-" if missed is None else f"{(missed - mispredicts(empty)) / args.lines:.3f}"
        print(row([f"`{command}`", f"{per('Ir'):.1f}", missed, f"{per('D1mr', 'D1mw'):.3f}",
                   f"{per('ILmr', 'DLmr', 'DLmw'):.4f}", f"{per('DLmr', 'DLmw'):.4f}", f"{empty['Ir']:,}"]))


def ratio(a, b):
    """a / b to two places, or "-" where b is not positive: hyperfine takes the shell's start-up
    off each time, which leaves a command of a millisecond or less (dd on a small file) at 0."""
    return f"{a / b:.2f}" if b > 0 else "-"


def fit_fixed_and_per_byte(points):
    """Instructions a line = fixed + per_byte × bytes a line, fitted over (bytes a line,
    instructions a line) points by least squares on the relative error, so that short lines
    weigh as much as long ones. Returns fixed, per_byte and the largest relative misfit, or None
    where a count is not positive (cat, whose work is in the kernel)."""
    if len(points) < 2 or any(y <= 0 for _, y in points):
        return None
    w = [1 / y ** 2 for _, y in points]
    s, sx, sy = sum(w), sum(wi * x for wi, (x, _) in zip(w, points)), sum(wi * y for wi, (_, y) in zip(w, points))
    sxx = sum(wi * x * x for wi, (x, _) in zip(w, points))
    sxy = sum(wi * x * y for wi, (x, y) in zip(w, points))
    per_byte = (s * sxy - sx * sy) / (s * sxx - sx * sx)
    fixed = (sy - per_byte * sx) / s
    misfit = max(abs(fixed + per_byte * x - y) / y for x, y in points)
    return fixed, per_byte, misfit


def linelength(args):
    """harness/linelength.sh's tables, one column a mean line length, and the plot's data."""
    run = args.run_dir.rstrip("/")
    with open(f"{run}/linelength.labels") as f:
        labels = f.read().splitlines()
    fields = ["length", "cg_bytes", "cg_lines", "q_bytes", "q_lines", "bytes", "lines", "out_bytes"]
    with open(f"{run}/linelength.inputs") as f:
        inputs = [dict(zip(fields, map(int, line.split()))) for line in f if line.strip()]
    with open(f"{run}/linelength.about") as f:
        about = f.read().strip()
    lengths = [i["length"] for i in inputs]
    totals = cachegrind_totals(f"{run}/linelength.cachegrind.tsv")
    counts, timed = {}, {}
    for label in labels:
        counts[label, "empty"] = totals[label, "empty"]
        for n in lengths:
            for part in ("full", "quarter"):
                counts[label, n, part] = totals[label, f"{n}-{part}"]
    for n in lengths:
        timed[n] = round_medians(sorted(glob.glob(f"{run}/linelength-{n}-round*.json")))

    def whole(label, i, event):
        """EVENT a line of the whole process, less the same command on empty input."""
        return (counts[label, i["length"], "full"][event] - counts[label, "empty"][event]) / i["cg_lines"]

    def running(label, i, per, *events):
        """EVENTS a line (per "lines") or a byte (per "bytes") between the quarter and the full sample."""
        full, quarter = counts[label, i["length"], "full"], counts[label, i["length"], "quarter"]
        return sum(full[e] - quarter[e] for e in events) / (i[f"cg_{per}"] - i[f"q_{per}"])

    def table(title, rows, note=""):
        print(f"\n## {title}\n")
        if note:
            print(note + "\n")
        print(header(["command"] + [f"{n} B" for n in lengths], 1))
        for name, cells in rows:
            print(row([f"`{name}`"] + cells))

    print("# Along line length\n")
    print(about + "\n")
    print("Columns are the mean line length asked of gen-text, in bytes, newline included. Under")
    print("cachegrind, *whole process* counts are the full sample's less the same command's on empty input")
    print("(as the issues quote them); *running* counts are the full sample's less its first quarter's, over")
    print("the lines or bytes between: what a line costs once the program runs, without what the first")
    print("input costs once (buffers allocated and first touched), which a sample of few lines inflates.")
    table("The inputs", [
        ("bytes a line, timed file", [f"{i['bytes'] / i['lines']:.1f}" for i in inputs]),
        ("bytes a line, cachegrind sample", [f"{i['cg_bytes'] / i['cg_lines']:.1f}" for i in inputs]),
        ("output / input bytes", [f"{i['out_bytes'] / i['bytes']:.2f}" for i in inputs]),
        ("header bytes a line", [f"{(i['out_bytes'] - i['bytes']) / i['lines']:.2f}" for i in inputs]),
    ])
    table("Instructions a line, whole process",
          [(label, [f"{whole(label, i, 'Ir'):.1f}" for i in inputs]) for label in labels])
    table("Instructions a line, running",
          [(label, [f"{running(label, i, 'lines', 'Ir'):.1f}" for i in inputs]) for label in labels])
    def missed(label, i):
        """Mispredicted branches a line, whole process, or "-" in a run made without them."""
        full, empty = (mispredicts(counts[key]) for key in ((label, i["length"], "full"), (label, "empty")))
        return "-" if full is None else f"{(full - empty) / i['cg_lines']:.3f}"

    table("Mispredicted branches a line, whole process (cachegrind's simulated predictor)",
          [(label, [missed(label, i) for i in inputs]) for label in labels])
    table("D1 misses a line, running (reads and writes)",
          [(label, [f"{running(label, i, 'lines', 'D1mr', 'D1mw'):.3f}" for i in inputs]) for label in labels])
    per_byte = [(label, [running(label, i, "bytes", "Ir") for i in inputs]) for label in labels]
    table("Instructions a byte of input, running", [(label, [f"{v:.3f}" for v in cells]) for label, cells in per_byte])

    def cpu_per_gib(name, i):
        return timed[i["length"]][name]["cpu"] / (i["bytes"] / GIB)

    alone = ["dd"] + [f"alone: {label}" for label in labels]
    table("CPU s/GiB, alone: user + system of `X F > /dev/null` a GiB of input (median of the rounds)",
          [(n, [f"{cpu_per_gib(n, i):.3f}" for i in inputs]) for n in alone])
    table("CPU / cat's CPU, alone",
          [(n, [ratio(cpu_per_gib(n, i), cpu_per_gib('alone: cat', i)) for i in inputs]) for n in alone])
    wall = lambda name, i: timed[i["length"]][name]["wall"]  # noqa: E731
    table("Time alone / `dd if=F bs=1M of=/dev/null` (median wall of the rounds)",
          [(n, [ratio(wall(n, i), wall('dd', i)) for i in inputs]) for n in alone])
    pipe = ["cat chain over the output"] + [f"pipe: {label}" for label in labels]
    table("Time in a pipe, `cat F | X | cat`, / a cat chain over a file of the output's size",
          [(n, [ratio(wall(n, i), wall('cat chain over the output', i)) for i in inputs]) for n in pipe],
          "`pipe: cat` is the cat chain over the input: below 1 by what the headers add to the bytes moved.")

    print("\n## Where per-line overhead stops dominating\n")
    print("Running instructions a line fitted as *fixed + per byte × bytes a line* over the lengths (least squares")
    print("on the relative error; misfit: the largest relative gap between fit and count). Per-line")
    print("overhead dominates below the crossover, fixed / per byte: there a line's fixed cost is its bytes'")
    print("cost, and instructions a byte are twice the long-line asymptote (per byte). Per-line share: of the")
    print("instructions at that length, the fixed cost's share. CPU ≤ 2× cat: the first length at which")
    print("`X F`'s CPU s/GiB is at most twice cat's.\n")
    share_at = [n for n in (8, 25, 134) if n in lengths]
    print(header(["command", "fixed / line", "per byte", "crossover, bytes a line"] +
                 [f"per-line share at {n} B" for n in share_at] + ["misfit", "CPU ≤ 2× cat from"], 1))
    points = {}
    for label in labels:
        xy = [((i["cg_bytes"] - i["q_bytes"]) / (i["cg_lines"] - i["q_lines"]), running(label, i, "lines", "Ir"))
              for i in inputs]
        points[label] = xy
        fit = fit_fixed_and_per_byte(xy)
        cheap = next((f"{i['length']} B" for i in inputs
                      if cpu_per_gib(f"alone: {label}", i) <= 2 * cpu_per_gib("alone: cat", i)), f"> {lengths[-1]} B")
        if fit is None:
            print(row([f"`{label}`", "-", "-", "-"] + ["-"] * len(share_at) + ["-", cheap]))
            continue
        fixed, per, misfit = fit
        print(row([f"`{label}`", f"{fixed:.1f}", f"{per:.3f}", f"{fixed / per:.0f}" if per > 0 else "-"] +
                  [f"{fixed / (fixed + per * n):.0%}" for n in share_at] + [f"{misfit:.0%}", cheap]))
    # The plot's data: instructions a byte against bytes a line, a block a command. A count under
    # the plot's floor (cat's, about 0: its work is in the kernel) is drawn on the floor, and its
    # title says so. harness/plots/linelength.gnuplot starts its axis there.
    floor = 0.1
    blocks = []
    for label, cells in per_byte:
        title = label if min(cells) > floor else f"{label} (under {floor}: drawn on the axis)"
        blocks.append((title, [(round(x, 1), max(v, floor)) for (x, _), v in zip(points[label], cells)]))
    write_blocks(f"{run}/linelength-instructions.dat", blocks, ".4g")


# harness/work.sh's measures: the overhead a strategy "stops" at, and the targets (32).
WORK_FREE = 0.10
WORK_TARGETS = {"2 threads / 1": 1.85, "of a perfect split": 0.90, "overhead at 10,000 ns": 0.05}
WORK_PREDICT_CORES = 16


def work_rows(path):
    """work.tsv's rows as {(text, source): {strategy: {ns: row}}}, numbers as floats (None where
    the run was too short to time, an empty cell)."""
    runs = {}
    with open(path) as f:
        names = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(names, line.rstrip("\n").split("\t")))
            for k in ("ns", "lines", "wall_s", "cpu_s", "lines_per_s", "cpu_ns_a_line", "overhead"):
                r[k] = float(r[k]) if r[k] else None
            runs.setdefault((r["text"], r["source"]), {}).setdefault(r["strategy"], {})[int(r["ns"])] = r
    return runs


def work(args):
    """harness/work.sh's tables from its work.tsv: where each strategy's overhead falls under 10 %
    (for good: at that work and every larger one), pipeline against std-baseline, batched's 1 to 2
    thread speed-up and its share of a perfect split, every overhead at the most work, and a
    prediction for 16 cores."""
    runs = work_rows(args.tsv)
    columns = [f"{text}, {source}" for text, source in runs]
    strategies = list(next(iter(runs.values())))
    ns_list = sorted(next(iter(next(iter(runs.values())).values())))
    top = ns_list[-1]

    def percent(share):
        return None if share is None else share * 100

    def figure(value, form):
        return "-" if value is None else format(value, form)

    def free_from(by_ns):
        """The least work a line from which on the overhead stays under WORK_FREE."""
        free = None
        for ns in reversed(ns_list):
            o = by_ns[ns]["overhead"]
            if o is None or o >= WORK_FREE:
                break
            free = ns
        return f"{free:,} ns" if free is not None else f"over {top:,} ns"

    print(f"Work a line from which each strategy's overhead (its CPU a line beyond the work's own, as a share "
          f"of its CPU a line) stays under {WORK_FREE * 100:.0f} %, and its overhead at {top:,} ns:\n")
    print(header(["strategy"] + [f"under {WORK_FREE * 100:.0f} % from: {c}" for c in columns]
                 + [f"% at {top:,} ns: {c}" for c in columns], 1))
    for s in strategies:
        print(row([f"`{s}`"] + [free_from(runs[k][s]) for k in runs]
                  + [figure(percent(runs[k][s][top]["overhead"]), ".1f") for k in runs]))

    def ratios(title, a, b):
        print(f"\n{title}:\n")
        print(header(["ns a line"] + columns, 1))
        for ns in ns_list:
            cells = []
            for k in runs:
                x, y = a(runs[k], ns), b(runs[k], ns)
                cells.append(ratio(x, y) if x is not None and y is not None else "-")
            print(row([f"{ns:,}"] + cells))

    def rate(strategy):
        return lambda by, ns: by[strategy][ns]["lines_per_s"]

    ratios("`pipeline --batch 1000` / `std-baseline`, lines/s", rate("pipeline --batch 1000"), rate("std-baseline"))
    ratios("`batched` (2 threads) / `batched --threads 1`, lines/s", rate("batched"), rate("batched --threads 1"))
    # A perfect split: every core doing only the work, nothing else, at ns a line each.
    cores = args.cores
    ratios(f"`batched` / a perfect split ({cores} cores each doing only the work: {cores} × 1e9 / ns lines/s)",
           rate("batched"), lambda by, ns: cores * 1e9 / ns if ns else None)

    # The prediction: T(N) = serial + parallel / N a line, the serial part (the calling thread's
    # reading and cutting, the one-at-a-time writing, the hand-offs) taken at 0 ns from the 1 and
    # 2 thread runs (2 T2 - T1) and held fixed along the work, which it does not depend on.
    print(f"\n**A prediction, not a measurement**: `batched` on {WORK_PREDICT_CORES} cores, a line's time T(N) = "
          f"serial + (T1 - serial) / N, T1 the measured 1-thread time a line at each work, the serial part "
          f"from the 0 ns runs (2 T2 - T1, at least 0, ns a line: "
          + ", ".join(f"{c} {max(0.0, serial_ns(runs[k])):.1f}" for c, k in zip(columns, runs))
          + f"); speed-up over 1 thread, and lines/s (millions):\n")
    print(header(["ns a line"] + columns, 1))
    for ns in ns_list:
        cells = []
        for k in runs:
            s = max(0.0, serial_ns(runs[k]))
            t1 = 1e9 / runs[k]["batched --threads 1"][ns]["lines_per_s"]
            s = min(s, t1)
            t = s + (t1 - s) / WORK_PREDICT_CORES
            cells.append(f"{t1 / t:.1f}× ({1e3 / t:.2f})")
        print(row([f"{ns:,}"] + cells))


def serial_ns(by_strategy):
    """batched's serial time a line at 0 ns, from its 1 and 2 thread times: T1 = s + p, T2 = s + p / 2."""
    t1 = 1e9 / by_strategy["batched --threads 1"][0]["lines_per_s"]
    t2 = 1e9 / by_strategy["batched"][0]["lines_per_s"]
    return 2 * t2 - t1


# harness/peers.sh: the threads each reader decodes on (2 where it takes a count; decompressed's
# from a pipe: one, but for bzip2), and the readers that run the same C library as decompressed
# on as many threads, whose target is 1.05 rather than 1.0 (issue 60); a reader of one thread's
# is 0.6.
PEER_THREADS = {"decompressed": 2, "noodles-bgzf": 2, "gzp": 2, "liblzma-mt": 2}
# decompressed's Reader on the bench's two threads, and on one (no thread of its own).
OURS = ("decompressed", "decompressed-1")
PEER_SAME_C = {"noodles-bgzf": "libdeflate", "gzp": "libdeflate", "liblzma-mt": "liblzma"}
PEER_BOUNDS = {"one thread": 0.6, "same C library": 1.05, "other": 1.0}


def peer_outcome(r, intact):
    """What a reader made of a damaged file, from its exit status and its count and digest."""
    status = int(r["exit"])
    if status == 0:
        count, digest = r["out"].split(" ") if " " in r["out"] else (r["out"], "")
        if (int(count), digest) == intact:
            return "success, all"
        return "success with less" if int(count) < intact[0] else "success, other bytes"
    return {1: "error", 101: "panic", 124: "hung"}.get(status, f"exit {status}")


def peers(args):
    """harness/peers.sh's tables: the check, decoded MB/s and ratios, and damaged files' outcomes."""
    check = tsv_rows(args.check)
    formats = list(dict.fromkeys(r["format"] for r in check))
    readers = {f: list(dict.fromkeys(r["reader"] for r in check if r["format"] == f)) for f in formats}
    print("## Every reader's decoded bytes, checked first\n")
    print(f"Each reader that takes a format on its file, from the FILE and from a pipe: its count against "
          f"`wc -c` of the text ({args.bytes} bytes), its digest against the text's. Only a reader "
          "right on both is timed.\n")
    print(header(["format", "reader", "FILE", "pipe"], 4))
    wrong = set()
    for f in formats:
        for reader in readers[f]:
            cells = []
            for mode in ("file", "pipe"):
                r = next(r for r in check if (r["format"], r["reader"], r["mode"]) == (f, reader, mode))
                if r["exit"] == "0" and r["out"] == args.plain:
                    cells.append("right")
                    continue
                wrong.add((f, reader))
                if r["exit"] == "0":
                    cells.append(f"**{r['out'].split(' ')[0]} bytes, exit 0**")
                else:
                    cells.append(f"**exit {r['exit']}**: {r['message']}")
            print(row([f, f"`{reader}`", *cells]))

    medians = shuffled_medians(args.rounds)
    print("\n## Decoded MB/s\n")
    print(f"Medians of the shuffled rounds (`rounds.py`, every row in every round); MB/s is {args.bytes} "
          "decoded bytes over the median wall time, in 10^6 bytes a second; CPU is user + system "
          "seconds of every thread of the run (the pipe's copying thread too), whose median beside "
          "the wall time tells a reader that waited for a core from one that worked.\n")
    print(header(["format", "reader", "threads", "FILE MB/s", "pipe MB/s", "FILE s", "pipe s",
                  "FILE CPU s", "pipe CPU s"], 2))
    for f in formats:
        for reader in readers[f]:
            if (f, reader) in wrong:
                print(row([f, f"`{reader}`", "", "not timed: wrong bytes", "", "", "", "", ""]))
                continue
            runs = [medians[f"{f}/{reader}/{mode}"] for mode in ("file", "pipe")]
            threads = PEER_THREADS.get(reader, 1)
            print(row([f, f"`{reader}`", threads, *(f"{args.bytes / m['wall'] / 1e6:.0f}" for m in runs),
                       *(f"{m['wall']:.3f}" for m in runs), *(f"{m['cpu']:.3f}" for m in runs)]))

    print("\n## `decompressed` / the fastest peer, time\n")
    print("The bound is the issue's: ≤ 0.6 where that peer decodes on one thread, ≤ 1.05 where it runs "
          "the same C library as `decompressed` on as many threads, ≤ 1.0 otherwise. `decompressed` on "
          "the bench's two threads, then `decompressed-1` on one (no thread of its own), each judged.\n")
    print(header(["format", "from", "fastest peer", "peer s", "decompressed s", "ratio",
                  "decompressed-1 s", "ratio", "target", "2 threads / 1"], 3))
    for f in formats:
        for mode in ("file", "pipe"):
            peers_timed = [p for p in readers[f] if p not in OURS and (f, p) not in wrong]
            ours = [f"{f}/{reader}/{mode}" for reader in OURS]
            if not peers_timed or any(name not in medians for name in ours):
                print(row([f, mode, "none timed", "", "", "", "", "", "", ""]))
                continue
            fastest = min(peers_timed, key=lambda p: medians[f"{f}/{p}/{mode}"]["wall"])
            kind = ("same C library" if fastest in PEER_SAME_C
                    else "one thread" if PEER_THREADS.get(fastest, 1) == 1 else "other")
            bound = PEER_BOUNDS[kind]
            peer = medians[f"{f}/{fastest}/{mode}"]["wall"]
            walls = [medians[name]["wall"] for name in ours]
            cells = [cell for wall in walls for cell in (f"{wall:.3f}", f"{wall / peer:.3f}")]
            met = " / ".join("met" if wall / peer <= bound else "not met" for wall in walls)
            print(row([f, mode, f"`{fastest}` ({kind})", f"{peer:.3f}", *cells, f"≤ {bound}", met]))

    damaged = tsv_rows(args.damaged)
    # Every intact file decodes to the plain text.
    count, digest = args.plain.split(" ")
    intact = (int(count), digest)
    every = list(dict.fromkeys(r["reader"] for r in damaged))
    print("\n## Damaged files: what each reader makes of them\n")
    print("Each damaged file read from the FILE and from a pipe: `error` (exit 1), `success with less` "
          "(exit 0, fewer bytes than the intact file), `success, all` (exit 0, every byte as intact: the "
          "damage not seen), `success, other bytes`, `panic` (101), `hung` (stopped by `timeout`). "
          "One word where FILE and pipe agree, else FILE / pipe. An empty cell: the reader does not "
          "take the format; `wrong on the intact file`: its check above failed, so its damaged runs tell nothing more.\n")
    print(header(["format", "damage", *(f"`{p}`" for p in every)], 2 + len(every)))
    taken_as_success = {}
    for f in dict.fromkeys(r["format"] for r in damaged):
        for damage in dict.fromkeys(r["damage"] for r in damaged if r["format"] == f):
            cells = []
            for reader in every:
                runs = {r["mode"]: r for r in damaged
                        if (r["format"], r["damage"], r["reader"]) == (f, damage, reader)}
                if not runs:
                    cells.append("")
                    continue
                if (f, reader) in wrong:
                    # Its damaged files say nothing the intact file's check has not.
                    cells.append("wrong on the intact file")
                    continue
                outcomes = {mode: peer_outcome(r, intact) for mode, r in runs.items()}
                for mode, outcome in outcomes.items():
                    if outcome.startswith("success"):
                        taken_as_success.setdefault(reader, []).append((f, damage, mode))
                file_, pipe = outcomes["file"], outcomes["pipe"]
                cells.append(file_ if file_ == pipe else f"{file_} / {pipe}")
            print(row([f, damage, *cells]))
    print("\nDamaged files read as success (exit 0), a FILE and a pipe each counted; zeros after an xz "
          "stream, in fours, are stream padding, which xz allows, and counted apart:\n")
    print(header(["reader", "read as success", "xz padding", "which"], 1))
    for reader in every:
        which = taken_as_success.get(reader, [])
        padding = [w for w in which if w[:2] == ("xz", "zeros")]
        print(row([f"`{reader}`", len(which) - len(padding), len(padding),
                   "; ".join(f"{f} {damage} ({mode})" for f, damage, mode in which if (f, damage) != ("xz", "zeros"))]))
    ours = [r for r in damaged if r["reader"] in OURS and r["exit"] != "0" and r["mode"] == "file"]
    if ours:
        print("\n`decompressed`'s words on each damaged FILE it refused (its error, as the bench prints it):\n")
        print(header(["format", "damage", "reader", "error"], 4))
        for r in ours:
            print(row([r["format"], r["damage"], f"`{r['reader']}`",
                       r["message"].removeprefix(f"peers: {r['reader']}: ")]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="what", required=True)
    p = commands.add_parser("table")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--reference", default="cat")
    p.add_argument("--reference-from", help="the run's JSON that timed the reference, shown first")
    p.add_argument("--plot", help="also write the bars' data for harness/plots/bars.gnuplot")
    p.add_argument("json")
    p = commands.add_parser("pv")
    p.add_argument("--reference", default="yes abcdefg | pv")
    p.add_argument("--original", action="store_true", help="one line a command, as the original printed")
    p.add_argument("--plot", help="also write the bars' data for harness/plots/bars.gnuplot")
    p.add_argument("tsv")
    p = commands.add_parser("targets")
    p.add_argument("--rounds", nargs="+", action="append", default=[], metavar=("TEXT", "ROUND.json"))
    p.add_argument("--peak", nargs=2, metavar=("KIB", "STREAM_MIB"), help="batched's peak RSS streaming")
    p.add_argument("--shuffled", nargs=2, action="append", metavar=("TEXT", "ROUNDS.tsv"))
    p = commands.add_parser("latency")
    p.add_argument("--rates", required=True, help="the offered rates as given to latency.sh")
    p.add_argument("tsv")
    p.add_argument("plot_dat")
    p = commands.add_parser("sweep")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--knob", required=True)
    p.add_argument("--divisor", type=int, default=1, help="the plot's x is the value / DIVISOR")
    p.add_argument("--references", required=True)
    p.add_argument("json")
    p.add_argument("series_dat")
    p.add_argument("refs_dat")
    p = commands.add_parser("scaling")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--stats", required=True, help="prefix of the --stats files")
    p.add_argument("--references", required=True)
    p.add_argument("series", nargs="+")
    p.add_argument("series_dat")
    p.add_argument("refs_dat")
    p = commands.add_parser("cachegrind")
    p.add_argument("--lines", type=int, required=True)
    p.add_argument("totals", help="the run's cachegrind.tsv")
    p = commands.add_parser("ping-pong")
    p.add_argument("tsv")
    p = commands.add_parser("linelength")
    p.add_argument("run_dir")
    p = commands.add_parser("work")
    p.add_argument("--cores", type=int, default=2, help="the cores of a perfect split: the measuring machine's")
    p.add_argument("tsv")
    p = commands.add_parser("peers")
    p.add_argument("--bytes", type=int, required=True, help="the plain text's bytes")
    p.add_argument("--plain", required=True, help="the plain text's `peers --digest` output")
    p.add_argument("check", help="every reader once on each intact file, FILE and pipe")
    p.add_argument("rounds", help="rounds.py's runs")
    p.add_argument("damaged", help="every reader on each damaged file")
    args = parser.parse_args()
    {"peers": peers, "table": table, "pv": pv, "targets": targets, "latency": latency, "sweep": sweep, "scaling": scaling, "cachegrind": cachegrind,
     "ping-pong": ping_pong, "linelength": linelength, "work": work}[args.what](args)


if __name__ == "__main__":
    main()
