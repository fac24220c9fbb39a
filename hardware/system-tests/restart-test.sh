#!/usr/bin/env bash
# Restart by hand: `kill -TERM old; photoboothd …` while the old simulated booth is still stopping. The new
# one must wait for the old one's lock (it says it is stopping on its socket) and start; a daemon that runs
# and is not stopping is still refused at once (exit 75, "stop it first"). A few seconds.
#
#   hardware/system-tests/restart-test.sh     (PHOTOBOOTHD=path overrides the binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${PHOTOBOOTHD:-$PWD/.build/debug/photoboothd}
[ -x "$BIN" ] || { echo "restart-test: no $BIN (swift build first)"; exit 1; }
work=$(mktemp -d /tmp/photobooth-restart-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "restart-test: FAILED: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -15 "$f"; done; exit 1; }
cd "$work"
opts=(--simulate --socket "$work/control" --set session.preview=0s --set camera.preview_size=320x240
      --set camera.capture_size=320x240 --set storage.min_free=0B)
# Up when its control socket answers (its lock is taken before that).
up() { for _ in $(seq 200); do grep -q "control socket: $work/control\$" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

"$BIN" "${opts[@]}" </dev/null 2>"$work/old.log" &
old=$!; pids+=("$old")
up "$work/old.log" || fail "the first daemon did not open its control socket"

# A second start while the first runs and is not stopping: refused at once.
set +e
timeout 20 "$BIN" "${opts[@]}" </dev/null 2>"$work/refused.log"
rc=$?
set -e
[ "$rc" -eq 75 ] || fail "a second daemon beside a running one exited $rc, expected 75"
grep -q "stop it first" "$work/refused.log" || fail "the refusal does not say to stop the running daemon first"
grep -q "waiting up to" "$work/refused.log" && fail "the refusal waited for a daemon that was not stopping"
echo "PASS: a second daemon beside a running one is refused at once (exit 75)"

# The restart by hand: SIGTERM the old one and start the new one at once.
kill -TERM "$old"
"$BIN" "${opts[@]}" </dev/null 2>"$work/new.log" &
new=$!; pids+=("$new")
wait "$old" || fail "the old daemon did not stop cleanly after SIGTERM"
up "$work/new.log" || fail "the new daemon did not start after the old one stopped (exit 75: $(grep -c 'not starting' "$work/new.log") refusals)"
kill -0 "$new" 2>/dev/null || fail "the new daemon is not running"
grep -q "stopped:" "$work/old.log" || fail "the old daemon did not log its stop"
waited=$(grep -o "released $work/control.lock after [0-9]* ms" "$work/new.log" || true)
echo "PASS: the restart by hand started the new daemon (${waited:-the old one had already ended})"
kill -TERM "$new"
wait "$new" || fail "the new daemon did not stop cleanly"
pids=()
echo "restart-test: passed"
