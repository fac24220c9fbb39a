#!/usr/bin/env bash
# Print kill test: the simulated booth printing every picture (print.mode = auto) to a simulated IPP
# Everywhere printer (ippeveprinter behind a private cupsd, Tests/BoothPrintTests/cups-stack.sh),
# SIGKILLed N times (default 10) at a random moment after a picture's save is logged, from 0 to 0.3 s
# (pages at print.dpi 300: before its page is rendered) or from 0 to 2.5 s (at 72 dpi, which renders
# in well under a second: its page rendered, submitted, printed), and restarted; every other start
# takes two shots a session, so the picture is composed (saved before its review begins) rather than
# the one capture (saved after its review began). Then one start
# without --auto-press until the journal has no live request, stopped with SIGTERM.
# Asserts: every saved picture (print.mode promises its print) arrived at the printer exactly once.
#
#   hardware/system-tests/print-kill-test.sh [KILLS]     (PHOTOBOOTHD=path overrides the binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
N=${1:-10}
[[ "$N" =~ ^[0-9]+$ && "$N" -ge 1 && "$N" -le 100 ]] || { echo "print-kill-test: KILLS must be 1…100, got '$N'"; exit 64; }
BIN=${PHOTOBOOTHD:-$root/.build/debug/photoboothd}
[ -x "$BIN" ] || { echo "print-kill-test: no $BIN (swift build first)"; exit 1; }
BIN=$(realpath "$BIN")
for t in ippeveprinter cupsd lpadmin dbus-daemon python3; do
  command -v "$t" >/dev/null || { echo "print-kill-test: needs $t (apt-get install --no-install-recommends cups cups-ipp-utils cups-client dbus python3)"; exit 1; }
done
work=$(mktemp -d /tmp/photobooth-print-kill-XXXXXX)
chmod 0755 "$work"   # cupsd's backend runs as lp and reads the job files below it
daemon=""
cleanup() {
  [ -n "$daemon" ] && kill -KILL "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  "$root/Tests/BoothPrintTests/cups-stack.sh" stop "$work/cups" >/dev/null 2>&1 || true
  if [ "${PRINT_KILL_KEEP:-0}" = 1 ]; then echo "print-kill-test: work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
eval "export $("$root/Tests/BoothPrintTests/cups-stack.sh" start "$work/cups" booth)"
cd "$work"
common=(--simulate --socket "$work/control"
        --set session.preview=0s --set session.countdown=0s --set session.review=5s
        --set camera.preview_size=320x240 --set camera.capture_size=640x480 --set storage.min_free=0B
        --set print.mode=auto --set print.destination=booth
        --set print.journal="$work/print-journal.json" --set print.spool="$work/prints"
        --set print.poll_interval=200ms)
# The saved lines of the pictures print.mode prints: a session's picture (two shots), or its one capture.
touch "$work/log"
saves() { grep -c -E "^<6>$1 saved: " "$work/log" || true; }
for i in $(seq 1 "$N"); do
  if [ $((i % 2)) = 0 ]; then shots=(--set session.shots=2 --set session.between_shots=0s); what="session [0-9]+'s picture"
  else shots=(); what="capture [0-9]+"; fi
  before=$(saves "$what")
  if [ $(( (i / 2) % 2 )) = 0 ]; then window=300; dpi=300; else window=2500; dpi=72; fi
  "$BIN" "${common[@]}" "${shots[@]}" --set print.dpi=$dpi --auto-press </dev/null 2>>"$work/log" &
  daemon=$!
  for _ in $(seq 1 300); do [ "$(saves "$what")" -gt "$before" ] && break; sleep 0.05; done
  [ "$(saves "$what")" -gt "$before" ] || { echo "print-kill-test: no picture saved within 15 s of start $i:"; tail -20 "$work/log"; exit 1; }
  sleep "$(awk -v r="$RANDOM" -v w="$window" 'BEGIN { printf "%.3f", (r % w) / 1000 }')"
  kill -KILL "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  daemon=""
done
# The restart: every print promised and not done is printed; stopped once nothing is live.
"$BIN" "${common[@]}" </dev/null 2>>"$work/log" &
daemon=$!
drained=0
for _ in $(seq 1 600); do
  sleep 0.2
  python3 - "$work/print-journal.json" <<'PY' && { drained=1; break; }
import json, os, sys
if not os.path.exists(sys.argv[1]): sys.exit(0)   # nothing was ever journaled
try: j = json.load(open(sys.argv[1]))
except Exception: sys.exit(1)
sys.exit(1 if any(r["state"] in ("held", "submitting", "submitted") for r in j["requests"]) else 0)
PY
done
kill -TERM "$daemon"; wait "$daemon" || true
daemon=""
[ "$drained" = 1 ] || echo "print-kill-test: the journal still has live requests after 120 s"
python3 - "$work" "$N" <<'PY'
import collections, glob, json, os, re, sys
work, n = sys.argv[1], int(sys.argv[2])
# The pictures print.mode promised, by session number: each saved session's picture, or the one capture
# of a one-shot session (a two-shot session is killed after its picture's save, never before).
files = collections.defaultdict(set)
for p in glob.glob(f"{work}/photos/*/booth-*.jpg"):
    m = re.search(r"booth-(\d+)-(\w+)\.jpg$", p)
    files[int(m.group(1))].add(m.group(2))
saved = {s for s, kinds in files.items() if "picture" in kinds or kinds == {"1"}}
path = f"{work}/print-journal.json"
journal = json.load(open(path)) if os.path.exists(path) else {"tag": "(no journal)", "requests": []}
tag = re.escape(journal["tag"])
source = {r["id"]: r["source"] for r in journal["requests"]}
arrived = collections.Counter()
for env in glob.glob(f"{work}/cups/jobs/*.env"):
    name = dict(l.split("=", 1) for l in open(env).read().splitlines() if "=" in l).get("IPP_JOB_NAME", "")
    m = re.fullmatch(rf"photobooth-{tag}-(\d+)", name)
    s = re.fullmatch(r"session (\d+)", source.get(int(m.group(1)), "")) if m else None
    arrived[int(s.group(1)) if s else -1] += 1
missing = sorted(saved - set(arrived))
twice = sorted(k for k, v in arrived.items() if v > 1)
stray = arrived.get(-1, 0)
print(f"print-kill-test: {n} kills, {len(saved)} pictures saved, {sum(arrived.values())} documents at the printer")
ok = not missing and not twice and not stray and set(arrived) <= saved
if missing: print(f"FAIL saved pictures never printed: sessions {missing}")
if twice: print(f"FAIL printed more than once: sessions {twice}")
if stray or not set(arrived) <= saved: print(f"FAIL documents of no saved picture: {stray} unknown, sessions {sorted(set(arrived) - saved - {-1})}")
print("print-kill-test: passed" if ok else "print-kill-test: FAILED")
sys.exit(0 if ok else 1)
PY
