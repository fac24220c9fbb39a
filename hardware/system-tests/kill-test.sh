#!/usr/bin/env bash
# Kill test: the simulated booth with --auto-press, SIGKILLed at random moments and restarted, N times
# (default 200). Afterwards: every photo decodes (djpeg), no temp file remains, no session number is
# used twice (in the files, nor handed out twice in the log), and the persisted totals agree with the files.
#
#   hardware/system-tests/kill-test.sh [ITERATIONS]     (PHOTOBOOTHD=path overrides the binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-200}
BIN=${PHOTOBOOTHD:-$PWD/.build/debug/photoboothd}
[ -x "$BIN" ] || { echo "kill-test: no $BIN (swift build first)"; exit 1; }
command -v djpeg >/dev/null || { echo "kill-test: missing prerequisite: djpeg (apt-get install libjpeg-turbo-progs)"; exit 1; }
command -v python3 >/dev/null || { echo "kill-test: missing prerequisite: python3 (apt-get install python3)"; exit 1; }
work=$(mktemp -d /tmp/photobooth-kill-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
opts=(--simulate --auto-press --socket "$work/control"
      --set session.preview=0s --set session.countdown=0s --set session.review=1s
      --set camera.preview_size=320x240 --set camera.capture_size=320x240 --set storage.min_free=0B)
killed_saving=0
for i in $(seq 1 "$N"); do
  "$BIN" "${opts[@]}" </dev/null 2>>"$work/log" &
  pid=$!
  # 0 to 1.6 s: before the first press, mid-capture, mid-save, in review, between sessions.
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % 1600) / 1000 }')"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if ls photos/*/.tmp-* >/dev/null 2>&1; then killed_saving=$((killed_saving + 1)); fi
done
# One clean start: temps from the last kill are removed at start; --sessions 1 then SIGTERM-free exit.
"$BIN" "${opts[@]}" --sessions 1 </dev/null 2>>"$work/log" || { echo "kill-test: the clean start after the kills failed:"; tail -20 "$work/log"; exit 1; }
fail=0
files=$(find photos -name 'booth-*.jpg' | sort)
count=$(printf '%s\n' "$files" | grep -c . || true)
echo "kill-test: $N kills ($killed_saving left a temp file behind), $count photos"
for f in $files; do
  djpeg "$f" >/dev/null 2>"$work/djpeg.err" && ! grep -q . "$work/djpeg.err" \
    || { echo "kill-test: $f does not decode: $(cat "$work/djpeg.err")"; fail=1; }
done
temps=$(find photos -name '.tmp-*')
[ -z "$temps" ] || { echo "kill-test: temp files remain: $temps"; fail=1; }
# A session's captures (and its picture) share its number; the same name in two date folders is a number used twice.
dups=$(printf '%s\n' "$files" | sed -n 's#.*/\(booth-[0-9]*-[0-9a-z]*\)\.jpg#\1#p' | sort | uniq -d)
[ -z "$dups" ] || { echo "kill-test: session numbers used twice: $dups"; fail=1; }
# A number handed out is never handed out again, even when the kill came before any of its photos was saved.
begun=$(sed -n 's/.*session \([0-9]*\) begins.*/\1/p' "$work/log" | sort -n | uniq -d | tr '\n' ' ')
[ -z "$begun" ] || { echo "kill-test: session numbers handed out twice: $begun"; fail=1; }
python3 - "$work/photos" <<'PY' || fail=1
import json, os, re, sys
photos = sys.argv[1]
stats = json.load(open(os.path.join(photos, ".photobooth-stats.json")))
sessions = [int(m.group(1)) for d in os.listdir(photos) if re.fullmatch(r"\d{4}-\d\d-\d\d", d)
            for f in os.listdir(os.path.join(photos, d)) for m in [re.fullmatch(r"booth-(\d+)-\d+\.jpg", f)] if m]
ok = True
def check(cond, what):
    global ok
    print(("ok  " if cond else "BAD ") + what)
    ok = ok and cond
check(stats["captures"] == len(sessions), f"captures in the totals ({stats['captures']}) == photo files ({len(sessions)})")
check(stats["lastSession"] >= max(sessions, default=0), f"lastSession {stats['lastSession']} >= highest session in the files {max(sessions, default=0)}")
check(stats["sessions"] >= len(set(sessions)), f"sessions in the totals ({stats['sessions']}) >= sessions with a photo ({len(set(sessions))})")
sys.exit(0 if ok else 1)
PY
[ "$fail" -eq 0 ] && echo "kill-test: passed" || { echo "kill-test: FAILED (log: kept in /tmp/photobooth-kill.log)"; cp "$work/log" /tmp/photobooth-kill.log; exit 1; }
