#!/usr/bin/env python3
"""The live-line probe loop of harness/liveline.sh: lines written one at a time to a binary whose
stdin stays open, each rendering awaited before the next line goes, as tests/contract.rs's
`live_lines_come_out_while_stdin_stays_open` does. Each round starts the command afresh and sends
LINES lines, so the first line of a round also pays the binary's start-up, as in the test.

Beside each probe the prober times its own wake-up from a 1 ms sleep: the scheduler's delay of the
probing process itself, to tell a slow binary from a machine that runs nobody on time.

usage: liveline.py probe TSV CONDITION PROBES LINES LABEL COMMAND...
Appends a row a probe to TSV: condition, label, round, line (1 = the first after start-up),
latency in microseconds (-1: none within 5 s), the prober's wake-up delay in microseconds, and
whether the rendering was right. Exits 1 if any probe got a wrong rendering or none at all.

usage: liveline.py report TSV LIMIT_MS
Prints a markdown table of the TSV: per condition and command, latency percentiles over all
probes, the probes over LIMIT_MS, the first lines' (start-up included) and the later lines' worst,
and the prober's own wake-up delay.
"""

import os
import select
import subprocess
import sys
import time

# Far past any limit: a probe waits this long before it counts as lost.
GIVE_UP = 5.0


def expected(line):
    spaces = line.count(b" ")
    return b"[spaces: %s]" % (b">6" if spaces > 6 else str(spaces).encode()) + line


def wake_up_delay():
    """How late the prober wakes from a 1 ms sleep, in seconds."""
    started = time.perf_counter()
    time.sleep(0.001)
    return max(0.0, time.perf_counter() - started - 0.001)


def probe(stdin, stdout, line, want):
    """Writes LINE and waits for WANT: (seconds or None, whether it came back right)."""
    started = time.perf_counter()
    os.write(stdin, line)
    got = b""
    while len(got) < len(want):
        left = GIVE_UP - (time.perf_counter() - started)
        if left <= 0 or not select.select([stdout], [], [], left)[0]:
            return None, False
        chunk = os.read(stdout, 4096)
        if not chunk:
            return None, False
        got += chunk
    return time.perf_counter() - started, got == want


def run_probes(tsv, condition, probes, lines, label, *command):
    probes, lines = int(probes), int(lines)
    command = list(command)
    faults = 0
    with open(tsv, "a") as out:
        for round_ in range((probes + lines - 1) // lines):
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            stdin, stdout = child.stdin.fileno(), child.stdout.fileno()
            for n in range(1, lines + 1):
                delay = wake_up_delay()
                line = b"probe %d of round %d%s\n" % (n, round_, b" " * (n % 9))
                # The control, cat, gives each line back as it is.
                want = line if label == "cat" else expected(line)
                seconds, right = probe(stdin, stdout, line, want)
                if seconds is None or not right:
                    faults += 1
                micros = -1 if seconds is None else round(seconds * 1e6)
                out.write(f"{condition}\t{label}\t{round_}\t{n}\t{micros}\t"
                          f"{round(delay * 1e6)}\t{int(right)}\n")
                if seconds is None:
                    break
            child.stdin.close()
            try:
                child.wait(timeout=GIVE_UP)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                faults += 1
            child.stdout.close()
    if faults:
        print(f"liveline.py: {label}, {condition}: {faults} probes lost or wrong", file=sys.stderr)
        sys.exit(1)


def percentile(values, fraction):
    values = sorted(values)
    return values[min(len(values) - 1, int(fraction * len(values)))]


def report(tsv, limit_ms):
    limit = float(limit_ms) * 1000
    cells = {}
    with open(tsv) as rows:
        for row in rows:
            condition, label, _round, line, micros, delay, _right = row.rstrip("\n").split("\t")
            micros = float(micros) if float(micros) >= 0 else float("inf")
            cells.setdefault((condition, label), []).append((int(line), micros, float(delay)))
    ms = lambda micros: "lost" if micros == float("inf") else f"{micros / 1000:.2f}"
    print(f"| condition | command | probes | p50 ms | p99 ms | p99.9 ms | max ms | over {limit_ms} ms |"
          " first line: p50, max ms | later lines: max ms | prober wake-up: p99, max ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (condition, label), probes in cells.items():
        latencies = [micros for _, micros, _ in probes]
        first = [micros for line, micros, _ in probes if line == 1]
        later = [micros for line, micros, _ in probes if line > 1]
        delays = [delay for _, _, delay in probes]
        over = sum(micros > limit for micros in latencies)
        print(f"| {condition} | `{label}` | {len(probes)} | {ms(percentile(latencies, 0.5))} | "
              f"{ms(percentile(latencies, 0.99))} | {ms(percentile(latencies, 0.999))} | "
              f"{ms(max(latencies))} | {over} | {ms(percentile(first, 0.5))}, {ms(max(first))} | "
              f"{ms(max(later)) if later else '-'} | "
              f"{ms(percentile(delays, 0.99))}, {ms(max(delays))} |")


if __name__ == "__main__":
    {"probe": run_probes, "report": report}[sys.argv[1]](*sys.argv[2:])
