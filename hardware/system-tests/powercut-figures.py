#!/usr/bin/env python3
"""Sums the per-cut lines of hardware/scenarios/powercut.sh guest logs into the figures bench/RESULTS.md quotes.

  powercut-figures.py GUEST_LOG...

Each cut's summary line ("cut C (FS run R, entry K of N, MODE; replayed ...): fsck exit X; expected E,
lost L, corrupt C, photo files F; after the boot session S (...), repeated R, handed out again H, state
rebuilt B, temps T, kept K, empty E (removed M), read-only O") is read, so a run stopped before its end
still gives figures for the cuts it made. Prints one row per file system.
"""
import re
import sys

LINE = re.compile(
    r"cut \d+ \((?P<fs>\w+) run \d+, entry \d+ of \d+, (?P<mode>\w+);.*?\): fsck exit (?P<fsck>\w+); "
    r"expected (?P<expected>\d+), lost (?P<lost>\d+), corrupt (?P<corrupt>\d+), photo files (?P<files>\d+); "
    r".*?repeated (?P<repeated>\d+), handed out again (?P<again>\d+), state rebuilt (?P<rebuilt>\d+), "
    r"temps (?P<temps>\d+), kept (?P<kept>\d+), empty (?P<empty>\d+) \(removed (?P<removed>\d+)\), read-only (?P<ro>\d+)")
FAILED = re.compile(r"cut \d+ \((?P<fs>\w+)[ ,)].*(mount FAILED|the booth started after the cut exited|did not say fault)")

figures = {}
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        m = LINE.search(line)
        if m:
            f = figures.setdefault(m["fs"], dict.fromkeys(
                ["cuts", "no_fsck", "fsck_repaired", "checked", "lost", "corrupt", "repeated", "again", "rebuilt",
                 "temps", "kept", "empty", "ro", "subset", "failed"], 0))
            f["cuts"] += 1
            f["subset"] += m["mode"] == "subset"
            f["no_fsck"] += m["fsck"] == "none"
            f["fsck_repaired"] += m["fsck"] not in ("none", "0")
            for k, g in [("checked", "expected"), ("lost", "lost"), ("corrupt", "corrupt"), ("repeated", "repeated"),
                         ("again", "again"), ("rebuilt", "rebuilt"), ("temps", "temps"), ("kept", "kept"),
                         ("empty", "empty"), ("ro", "ro")]:
                f[k] += int(m[g])
        m = FAILED.search(line)
        if m and m["fs"] in figures:
            figures[m["fs"]]["failed"] += 1

cols = ["cuts", "subset", "no_fsck", "fsck_repaired", "checked", "lost", "corrupt", "repeated", "again", "rebuilt",
        "temps", "kept", "empty", "ro", "failed"]
names = {"checked": "photos_checked", "again": "handed_again", "rebuilt": "state_rebuilt", "ro": "read_only",
         "failed": "boot_failed", "empty": "empty_after_cut", "subset": "subset_cuts"}
print("fs     " + " ".join(f"{names.get(c, c):>15}" for c in cols))
for fs in ("ext4", "vfat", "exfat"):
    if fs in figures:
        print(f"{fs:<6} " + " ".join(f"{figures[fs][c]:>15}" for c in cols))
