#!/usr/bin/env python3
"""Damaged copies of a compressed file, for harness/peers.sh's outcome table. Python's standard
library only (and `xz --robot -lvv`, which lists an xz file's blocks).

    damage.py FORMAT FILE OUT-DIR

FORMAT is one of gzip, bgzf, pzstd, xz, bzip2, lz4 (what made FILE: gzip -6, bgzip, pzstd,
xz -T2, bzip2 or lbzip2, lz4). Writes six files into OUT-DIR and prints a line for each,
NAME, path and what was done, tab-separated (the path "-" where that damage has no place in
FILE, as a boundary in a file of one unit):

    boundary   cut where one of the format's units (member, frame, block) begins, the unit
               nearest the middle; a gzip -6 file, one member whose deflate blocks end at bits,
               loses its 8-byte trailer instead
    in-header  cut 3 bytes into that unit, inside its header or magic (none for gzip -6)
    mid-block  cut in the middle of that unit
    bit-flip   one bit flipped in the middle of that unit
    garbage    100 random bytes appended (a fixed seed, so every run damages alike)
    zeros      100 zero bytes appended

The units are found from the format's own framing: BGZF's BSIZE, pzstd's skippable frames (each
names the size of the frame after it), xz's block list, bzip2's 48-bit block magic (bits, not
bytes: a cut keeps the byte holding the magic's first bit, so the block before stays whole), and
LZ4 frame blocks' sizes.
"""

import os
import random
import struct
import subprocess
import sys

TRAILING = 100
# Inside every unit's first field: BGZF's and pzstd's magic, an xz block's header, bzip2's 6-byte
# block magic, an LZ4 block's 4-byte size.
IN_HEADER = 3
BZIP2_BLOCK_MAGIC = 0x314159265359


def bgzf_units(data):
    """(start, length) of each BGZF member, from its BSIZE field."""
    units, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 2] != b"\x1f\x8b" or data[pos + 12:pos + 14] != b"BC":
            sys.exit(f"damage.py: no BGZF member at byte {pos}")
        size = struct.unpack_from("<H", data, pos + 16)[0] + 1
        units.append((pos, size))
        pos += size
    return units


def pzstd_units(data):
    """(start, length) of each skippable frame with the zstd frame whose size it holds."""
    units, pos = [], 0
    while pos < len(data):
        magic, size = struct.unpack_from("<II", data, pos)
        if magic & 0xFFFFFFF0 != 0x184D2A50 or size != 4:
            sys.exit(f"damage.py: no pzstd skippable frame at byte {pos}")
        frame = struct.unpack_from("<I", data, pos + 8)[0]
        units.append((pos, 12 + frame))
        pos += 12 + frame
    return units


def xz_units(path):
    """(start, length) of each xz block, as `xz --robot -lvv` lists them."""
    listing = subprocess.run(["xz", "--robot", "-lvv", path], check=True, capture_output=True,
                             text=True).stdout
    return [(int(f[4]), int(f[6])) for f in (line.split("\t") for line in listing.splitlines())
            if f[0] == "block"]


def bzip2_units(data):
    """(start, length) in bytes of each bzip2 block: from the byte after the one its magic's
    first bit is in, rounded up so that the block before is whole."""
    whole = int.from_bytes(data, "big")
    bits = 8 * len(data)
    magic = BZIP2_BLOCK_MAGIC.to_bytes(6, "big")
    starts = []
    for shift in range(8):
        # Shifted right by `shift` bits, a magic that began at bit 8k - shift begins at byte k.
        shifted = (whole >> shift).to_bytes(len(data), "big")
        at = shifted.find(magic)
        while at != -1:
            bit = 8 * at - shift
            if 0 <= bit < bits:
                starts.append(bit)
            at = shifted.find(magic, at + 1)
    starts = sorted(set(starts))
    bytes_at = [(bit + 7) // 8 for bit in starts] + [len(data)]
    return [(a, b - a) for a, b in zip(bytes_at, bytes_at[1:])]


def lz4_units(data):
    """(start, length) of each block of each LZ4 frame, its size field first."""
    units, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 4] != b"\x04\x22\x4d\x18":
            sys.exit(f"damage.py: no LZ4 frame at byte {pos}")
        flags = data[pos + 4]
        pos += 7 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
        block_checksum = 4 if flags & 0x10 else 0
        while True:
            size = struct.unpack_from("<I", data, pos)[0] & 0x7FFFFFFF
            if size == 0:
                pos += 4 + (4 if flags & 0x04 else 0)
                break
            units.append((pos, 4 + size + block_checksum))
            pos += 4 + size + block_checksum
    return units


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    fmt, path, out = sys.argv[1:]
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "gzip":
        boundary, unit = len(data) - 8, (0, len(data))
        boundary_what = f"cut at byte {boundary}: the one member's trailer (CRC and size) gone"
        in_header = None
    else:
        units = {"bgzf": lambda: bgzf_units(data), "pzstd": lambda: pzstd_units(data),
                 "xz": lambda: xz_units(path), "bzip2": lambda: bzip2_units(data),
                 "lz4": lambda: lz4_units(data)}[fmt]()
        if len(units) == 1:
            # No boundary inside (a small text): no cut there, and the unit's middle for the rest.
            index, boundary = 0, None
            boundary_what = "none: the file is one unit"
        else:
            # Not the first unit: a cut before it leaves nothing to decode.
            index = min(range(1, len(units)), key=lambda i: abs(units[i][0] - len(data) // 2))
            boundary = units[index][0]
            boundary_what = f"cut at byte {boundary}, where unit {index + 1} of {len(units)} begins"
        unit = units[index]
        in_header = None if boundary is None else boundary + IN_HEADER
    middle = unit[0] + unit[1] // 2
    flipped = bytearray(data)
    flipped[middle] ^= 0x10
    garbage = random.Random(60).randbytes(TRAILING)
    damaged = [
        ("boundary", None if boundary is None else data[:boundary], boundary_what),
        ("in-header", None if in_header is None else data[:in_header],
         "none: no unit begins inside the file" if in_header is None
         else f"cut at byte {in_header}, {IN_HEADER} bytes into that unit"),
        ("mid-block", data[:middle], f"cut at byte {middle}, the middle of that unit"),
        ("bit-flip", bytes(flipped), f"bit 4 of byte {middle} flipped"),
        ("garbage", data + garbage, f"{TRAILING} random bytes appended"),
        ("zeros", data + bytes(TRAILING), f"{TRAILING} zero bytes appended"),
    ]
    os.makedirs(out, exist_ok=True)
    for name, content, what in damaged:
        if content is None:
            print(f"{name}\t-\t{what}")
            continue
        target = os.path.join(out, f"{os.path.basename(path)}.{name}")
        with open(target, "wb") as f:
            f.write(content)
        print(f"{name}\t{target}\t{what}")


if __name__ == "__main__":
    main()
