#!/usr/bin/env python3
"""The checks of hardware/scenarios/powercut.sh on the disk one power cut left (mounted at MNT).

  powercut_check.py before MNT LIST CUT FINAL_SHA   (after fsck and mount, before the booth starts again)
      LIST: log-replay --list of the run; CUT: the log entry the cut came at; FINAL_SHA: sha256sum lines
      of the photo files of the uncut disk (paths below MNT). Every capture and picture marked
      "saved:<path>" before CUT must be there with the uncut disk's bytes (lost, corrupt otherwise); every
      other photo file there must be one of the uncut disk's, byte for byte (corrupt otherwise).
      A photo file of 0 bytes not marked saved is a save the cut interrupted (empty=, not corrupt).
      Prints: checked= lost= corrupt= empty= files= numbers=<comma list> max_saved= max_begun=, then a line per problem.
  powercut_check.py still MNT LIST CUT FINAL_SHA SNAPSHOT   (after the booth's session, page cache dropped)
      The files marked saved before CUT that were intact in SNAPSHOT (sha256sum lines taken before the
      restart) still hold the uncut disk's bytes. Prints: changed=, then a line each.
  powercut_check.py after MNT [no-print-journaled]    (after the booth's session on that disk)
      No photo file is empty; the stats file decodes and counts exactly the capture files, the session-number file holds 15 digits
      and a newline, at least the highest session on disk (else stats_ok=0); the print journal decodes; no temp file
      (.tmp-*) is anywhere on the disk. Prints: stats_ok= journal_ok= temps= kept= (.kept-* files: temps
      the booth kept on vfat/exFAT because they held their file's bytes), then a line per problem or kept file.
"""
import hashlib
import json
import os
import re
import sys

PHOTO = re.compile(r"booth-(\d+)-(\d+|picture)\.jpg")
DATE = re.compile(r"\d{4}-\d\d-\d\d")


def photo_files(mnt):
    """Paths below mnt of every photo file in the date folders (temps are not photo files)."""
    out = []
    photos = os.path.join(mnt, "photos")
    for d in sorted(os.listdir(photos)) if os.path.isdir(photos) else []:
        if DATE.fullmatch(d) and os.path.isdir(os.path.join(photos, d)):
            out += [f"photos/{d}/{f}" for f in sorted(os.listdir(os.path.join(photos, d))) if PHOTO.fullmatch(f)]
    return out


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def before(mnt, listing, cut, final_sha):
    final = {}
    for line in open(final_sha):
        s, p = line.split(None, 1)
        final[p.strip()] = s
    expected, begun = [], []
    for line in open(listing):
        w = line.split()
        if len(w) == 3 and w[0] == "mark" and int(w[1]) < cut:
            if w[2].startswith("saved:"):
                expected.append(w[2][6:])
            elif w[2].startswith("begins:"):
                begun.append(int(w[2][7:]))
    present = {p: sha(os.path.join(mnt, p)) for p in photo_files(mnt)}
    problems, lost, corrupt = [], 0, 0
    for p in expected:
        if p not in present:
            lost += 1
            problems.append(f"LOST {p} (saved before the cut)")
        elif present[p] != final.get(p):
            corrupt += 1
            problems.append(f"CORRUPT {p} (saved before the cut; {os.path.getsize(os.path.join(mnt, p))} bytes, not the saved bytes)")
    empty = 0
    for p, s in present.items():
        if p in expected or s == final.get(p):
            continue
        size = os.path.getsize(os.path.join(mnt, p))
        if size == 0:
            # A save the cut interrupted between its directory's fsync and its file's (vfat, exFAT): never
            # saved; the booth's start must remove it (the after check fails on any empty photo file left).
            empty += 1
            problems.append(f"empty {p} (a save the cut interrupted)")
        else:
            corrupt += 1
            problems.append(f"CORRUPT {p} (a photo file that is not one the booth saved; {size} bytes)")
    numbers = sorted({int(PHOTO.fullmatch(os.path.basename(p)).group(1)) for p in present})
    saved_numbers = [int(PHOTO.fullmatch(os.path.basename(p)).group(1)) for p in expected]
    print(f"checked={len(expected)} lost={lost} corrupt={corrupt} empty={empty} files={len(present)} "
          f"numbers={','.join(map(str, numbers))} max_saved={max(saved_numbers, default=0)} max_begun={max(begun, default=0)}")
    for p in problems:
        print(p)


def after(mnt):
    problems = []
    stats_ok = journal_ok = 0
    photos = os.path.join(mnt, "photos")
    captures = [p for p in photo_files(mnt) if not p.endswith("-picture.jpg")]
    try:
        stats = json.load(open(os.path.join(photos, ".photobooth-stats.json")))
        if stats["captures"] == len(captures):
            stats_ok = 1
        else:
            problems.append(f"STATS count {stats['captures']} captures, the disk has {len(captures)}")
    except (OSError, ValueError, KeyError) as e:
        problems.append(f"STATS unreadable after the restart: {e}")
    try:
        raw = open(os.path.join(photos, ".photobooth-session"), "rb").read()
        highest = max((int(PHOTO.fullmatch(os.path.basename(p)).group(1)) for p in photo_files(mnt)), default=0)
        if not re.fullmatch(rb"\d{15}\n", raw) or int(raw) < highest:
            problems.append(f"SESSIONFILE {raw!r} after the restart (highest session on disk {highest})")
            stats_ok = 0
    except OSError as e:
        problems.append(f"SESSIONFILE unreadable after the restart: {e}")
        stats_ok = 0
    journal = os.path.join(mnt, "print-journal.json")
    if not os.path.exists(journal) and len(sys.argv) > 3 and sys.argv[3] == "no-print-journaled":
        # No journal before the restart (the cut came before the run's first print was journaled) and the
        # restart prints nothing: none is expected.
        journal_ok = 1
    else:
        try:
            json.load(open(journal))
            journal_ok = 1
        except (OSError, ValueError) as e:
            problems.append(f"JOURNAL unreadable after the restart: {e}")
    for p in photo_files(mnt):
        if os.path.getsize(os.path.join(mnt, p)) == 0:
            problems.append(f"EMPTY photo file {p} left after the restart")
            stats_ok = 0
    files = [os.path.relpath(os.path.join(d, f), mnt) for d, _, fs in os.walk(mnt) for f in fs]
    temps = [f for f in files if os.path.basename(f).startswith(".tmp-")]
    kept = [f for f in files if os.path.basename(f).startswith(".kept-")]
    for t in temps:
        problems.append(f"TEMP {t} left after the restart")
    for k in kept:
        problems.append(f"kept {k} (it held its file's bytes: a cut mid-rename on a FAT file system)")
    print(f"stats_ok={stats_ok} journal_ok={journal_ok} temps={len(temps)} kept={len(kept)}")
    for p in problems:
        print(p)


def still(mnt, listing, cut, final_sha, snapshot):
    """After the restart (page cache dropped): the captures and pictures saved before the cut that were
    intact before it (in SNAPSHOT, sha256sum lines taken then, with the saved bytes) still hold them (a
    cluster freed twice, or reused under a kept file, shows here once the new session wrote its files).
    Those already lost or corrupt before the restart were counted then, not again."""
    final = dict((p.strip(), s) for s, p in (line.split(None, 1) for line in open(final_sha)))
    before = dict((p.strip(), s) for s, p in (line.split(None, 1) for line in open(snapshot)))
    expected = [w[2][6:] for w in (line.split() for line in open(listing))
                if len(w) == 3 and w[0] == "mark" and int(w[1]) < cut and w[2].startswith("saved:")]
    problems = []
    for p in expected:
        if p not in before or before[p] != final.get(p):
            continue
        path = os.path.join(mnt, p)
        if not os.path.exists(path):
            problems.append(f"LOST {p} after the restart (it was there, intact, before)")
        elif sha(path) != final.get(p):
            problems.append(f"CORRUPT {p} after the restart ({os.path.getsize(path)} bytes; intact before it)")
    print(f"changed={len(problems)}")
    for p in problems:
        print(p)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "before":
        before(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) == 7 and sys.argv[1] == "still":
        still(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "after":
        after(sys.argv[2])
    else:
        sys.exit(__doc__)
