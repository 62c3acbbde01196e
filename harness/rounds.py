#!/usr/bin/env python3
"""Times commands in shuffled rounds: each round runs every command once, in an order of its own,
so that neither a drift in the shared machine's load nor the command run just before favours one
command. Without a shell (a shell's start is ~2 ms, a tenth of a 20 ms run), stdout to /dev/null.
Python's standard library only.

    rounds.py ROUNDS OUT.tsv NAME=COMMAND...

Each COMMAND is split as a shell would split it (quotes kept), and run once first, untimed, to
warm the page cache. OUT.tsv gets a line a run: round, its place in the round, name, wall, user
and system seconds (the command's own rusage). report.py makes the tables from it.
"""

import os
import random
import shlex
import subprocess
import sys
import time


def timed(argv, null):
    """One run of `argv`: wall, user and system seconds. A failed run stops the script."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=null)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    # Reaped here, where its rusage is: the Popen must not wait for it again.
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"rounds.py: {shlex.join(argv)} exited with {process.returncode}")
    return wall, usage.ru_utime, usage.ru_stime


def main():
    if len(sys.argv) < 4 or not all("=" in spec for spec in sys.argv[3:]):
        sys.exit(__doc__)
    rounds, out = int(sys.argv[1]), sys.argv[2]
    commands = dict(spec.split("=", 1) for spec in sys.argv[3:])
    argvs = {name: shlex.split(command) for name, command in commands.items()}
    with open(os.devnull, "wb") as null, open(out, "w") as tsv:
        for argv in argvs.values():
            timed(argv, null)
        tsv.write("round\tplace\tname\twall_s\tuser_s\tsystem_s\n")
        for n in range(1, rounds + 1):
            order = list(argvs)
            random.shuffle(order)
            for place, name in enumerate(order, 1):
                wall, user, system = timed(argvs[name], null)
                tsv.write(f"{n}\t{place}\t{name}\t{wall:.6f}\t{user:.6f}\t{system:.6f}\n")


if __name__ == "__main__":
    main()
