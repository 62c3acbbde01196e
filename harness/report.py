#!/usr/bin/env python3
"""Tables and plot data made from the harness's raw data (hyperfine's JSON, batched's --stats,
cachegrind's output files). Python's standard library only. Markdown goes to stdout.

    report.py table --bytes B [--reference NAME] RUN.json
    report.py medians ROUND.json...            (name, median wall, user, system, tab-separated)
    report.py sweep --bytes B --knob K [--divisor D] --references REF.json RUN.json SERIES-DAT REFS-DAT
    report.py scaling --bytes B --stats DIR --references REF.json SERIES.json... SERIES-DAT REFS-DAT
    report.py cachegrind --lines N LABEL EMPTY-OUT OUT [LABEL EMPTY-OUT OUT]...
"""

import argparse
import gzip
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
    return statistics.median(result["times"])


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


def table(args):
    runs = results(args.json)
    reference = next((r for r in runs if r["command"] == args.reference), None)
    print(header(["command", "median s", "min-max s", "MiB/s in", f"time / {args.reference}",
                  "user s", "system s", "CPU s/GiB"], 1))
    for r in runs:
        wall = median_wall(r)
        ratio = f"{wall / median_wall(reference):.2f}" if reference else "-"
        print(row([f"`{r['command']}`", f"{wall:.3f}", f"{min(r['times']):.3f}-{max(r['times']):.3f}",
                   f"{args.bytes / wall / MIB:.0f}", ratio, f"{r['user']:.3f}", f"{r['system']:.3f}",
                   f"{cpu_seconds(r) / (args.bytes / GIB):.2f}"]))


def medians(args):
    """Per-round files (one run of each command a file) merged: the median of each figure."""
    figures = {}
    for path in args.json:
        for r in results(path):
            figures.setdefault(r["command"], []).append((r["times"][0], r["user"], r["system"]))
    for name, rounds in figures.items():
        wall, user, system = (statistics.median(column) for column in zip(*rounds))
        print(f"{name}\t{wall:.4f}\t{user:.4f}\t{system:.4f}")


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


def write_blocks(path, blocks):
    """Plot data for harness/plots/against.gnuplot: per (title, points) a block, the title in
    quotes on its first line, "x y" lines, two blank lines after."""
    with open(path, "w") as data:
        for title, points in blocks:
            data.write(f'"{title}"\n' + "".join(f"{x} {y:.1f}\n" for x, y in points) + "\n\n")


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


def cachegrind_counts(path):
    """The totals of a cachegrind output file, by event name (its `events:` and `summary:`)."""
    events, summary = [], []
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = [int(v) for v in line.split()[1:]]
    count = dict(zip(events, summary))
    if "D1mr" not in count:
        sys.exit(f"{path}: no cache figures (run cachegrind with --cache-sim=yes)")
    return count


def cachegrind(args):
    """Per line: instructions, D1 misses and LL misses (reads and writes). Each command ran twice,
    on empty input and on the lines; the difference over the lines leaves out starting and
    stopping (a runtime's threads, its allocations), which no number of lines pays again.
    args.out holds label, empty run's file, full run's file, for each command in turn."""
    print(header(["command", "instructions / line", "D1 misses / line", "LL misses / line",
                  "of which data", "start and stop, instructions"], 1))
    for command, empty_path, path in zip(args.out[::3], args.out[1::3], args.out[2::3]):
        empty, full = cachegrind_counts(empty_path), cachegrind_counts(path)
        per = lambda *names: sum(full[n] - empty[n] for n in names) / args.lines  # noqa: E731
        print(row([f"`{command}`", f"{per('Ir'):.1f}", f"{per('D1mr', 'D1mw'):.3f}",
                   f"{per('ILmr', 'DLmr', 'DLmw'):.4f}", f"{per('DLmr', 'DLmw'):.4f}", f"{empty['Ir']:,}"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="what", required=True)
    p = commands.add_parser("table")
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--reference", default="cat")
    p.add_argument("json")
    p = commands.add_parser("medians")
    p.add_argument("json", nargs="+")
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
    p.add_argument("out", nargs="+")
    args = parser.parse_args()
    {"table": table, "medians": medians, "sweep": sweep, "scaling": scaling, "cachegrind": cachegrind}[args.what](args)


if __name__ == "__main__":
    main()
