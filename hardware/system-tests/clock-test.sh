#!/usr/bin/env bash
# Clock test: the simulated booth (--simulate --auto-press --sessions 3) under a wall clock that stands
# still, crawls or is set back while the daemon runs. libfaketime (Debian's `faketime`) fakes
# CLOCK_REALTIME only (DONT_FAKE_MONOTONIC=1), so the booth's timers must not notice: every run has to
# finish its sessions in about the time they take on a true clock, and SIGTERM has to end the daemon
# within 3 s (6 s under the crawling clock, see below). A Raspberry Pi has no real-time clock; its wall
# clock starts where fake-hwclock left it and jumps when NTP arrives.
#
# First the tool is checked (a small Swift probe, built with swiftc): under the preload Foundation's
# Date() and time() read the fake clock, CLOCK_MONOTONIC is left alone, and NSCondition.wait(until:)
# follows the fake wall clock. libfaketime rewrites the absolute deadline of pthread_cond_timedwait on a
# CLOCK_REALTIME condition against its fake clock, so under a clock that is *stopped* or set back a
# Date-based wait still lasts its length (the kernel's CLOCK_REALTIME is not moved; on a real booth it
# is, and such a wait stretches by the jump). A clock that crawls (x0.1: a tenth of a second per second)
# stretches such a wait tenfold, as a wall clock that stands still or is stepped back would: that run
# is the one the old waits (NSCondition.wait(until: Date)) failed. libfaketime also scales sleeps and
# poll timeouts by the speed, so there the simulated camera runs at 3 fps: slower, but within its limits.
#
#   hardware/system-tests/clock-test.sh      (PHOTOBOOTHD=path overrides the binary, SWIFTC the compiler)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${PHOTOBOOTHD:-$PWD/.build/debug/photoboothd}
[ -x "$BIN" ] || { echo "clock-test: no $BIN (swift build first)"; exit 1; }
# The thread-safe variant: photoboothd has a thread per device.
LIB=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1 || true)
[ -n "$LIB" ] || { echo "clock-test: needs libfaketime (apt-get install faketime)"; exit 1; }
SWIFTC=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
[ -x "$SWIFTC" ] || { echo "clock-test: needs swiftc for the probe (SWIFTC=path)"; exit 1; }
work=$(mktemp -d /tmp/photobooth-clock-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
fail=0
bad() { echo "clock-test: FAILED: $*"; fail=1; }
# 2020-01-01 00:00:00 UTC, the frozen and crawling clocks' start.
FAKE_EPOCH=1577836800
preload=(LD_PRELOAD="$LIB" DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_FAKE_MONOTONIC=1 TZ=UTC)
fake() { env "${preload[@]}" "$@"; }
# The environment for a scenario's VAR=VALUE arguments: none is the true clock, else the preload with them.
# The daemon is exec'd by an `sh` that has the preload already: in the first process it loads into,
# libfaketime sets FAKETIME_SHARED in the environment before Swift reads its arguments, and Swift's
# CommandLine.arguments then comes back empty (a process that inherits FAKETIME_SHARED is not affected).
scenario_env() { if [ "$#" -gt 0 ]; then envs=("${preload[@]}" "$@"); else envs=(X_TRUE_CLOCK=1); fi; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- The tool: does the preload reach Foundation, and leave CLOCK_MONOTONIC alone? ---
cat >"$work/probe.swift" <<'SWIFT'
import Foundation
import Glibc
func mono() -> Double { var ts = timespec(); clock_gettime(CLOCK_MONOTONIC, &ts); return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 }
let wall0 = Date().timeIntervalSince1970, time0 = time(nil), mono0 = mono()
while mono() - mono0 < 0.5 {}  // spins: libfaketime scales sleeps by its speed
let wall1 = Date().timeIntervalSince1970, mono1 = mono()
let condition = NSCondition()
condition.lock()
_ = condition.wait(until: Date(timeIntervalSinceNow: 0.02))  // 20 ms on the wall clock
condition.unlock()
let mono2 = mono()
// Date() at start, time() at start, Date()'s advance over 0.5 s of CLOCK_MONOTONIC, that advance, the 20 ms wait's length.
print(Int(wall0), time0, String(format: "%.3f %.3f %.3f", wall1 - wall0, mono1 - mono0, mono2 - mono1))
SWIFT
"$SWIFTC" -o "$work/probe" "$work/probe.swift" 2>"$work/probe.err" || { echo "clock-test: the probe did not build:"; cat "$work/probe.err"; exit 1; }
read -r d t dw dm wait20 < <(fake FAKETIME="2020-01-01 00:00:00" "$work/probe")
awk -v d="$d" -v t="$t" -v dw="$dw" -v dm="$dm" -v e="$FAKE_EPOCH" \
  'BEGIN { exit !(d == e && t == e && dw < 0.01 && dm >= 0.45) }' \
  && echo "ok   frozen: Date() and time() read $d (2020-01-01) and stand still (+${dw}s); CLOCK_MONOTONIC moved ${dm}s" \
  || { echo "clock-test: libfaketime does not fake Foundation's clock as this test needs (Date() $d, time() $t, +$dw s wall, +$dm s monotonic)"; exit 1; }
read -r d t dw dm wait20 < <(fake FAKETIME="@2020-01-01 00:00:00 x0.1" "$work/probe")
awk -v w="$wait20" -v dw="$dw" 'BEGIN { exit !(w >= 0.15 && dw < 0.1) }' \
  && echo "ok   crawling (x0.1): Date() moved ${dw}s in 0.5 s; NSCondition.wait(until: Date() + 20 ms) took ${wait20}s" \
  || { echo "clock-test: under x0.1 Date() moved ${dw}s in 0.5 s and a 20 ms NSCondition wait took ${wait20}s (expected 0.05 s and 0.2 s): this libfaketime does not slow wall-clock waits"; exit 1; }

# --- The booth. ---
opts=(--simulate --auto-press --set session.preview=0s --set session.countdown=1s --set session.review=1s
      --set camera.preview_size=320x240 --set camera.capture_size=320x240 --set storage.min_free=0B)
# sessions NAME [VAR=VALUE…]: the booth with --sessions 3 under that fake clock: 3 sessions (1 s countdown,
# 1 s review each) take about 8 s on a true clock; 45 s allows a busy machine.
sessions() {
  local name=$1; shift
  local dir="$work/$name"; mkdir -p "$dir"
  local t0; t0=$(now)
  scenario_env "$@"
  (cd "$dir" && exec env "${envs[@]}" sh -c 'exec "$0" "$@"' "$BIN" "${opts[@]}" --socket "$dir/control" --sessions 3 </dev/null 2>"$dir/log") &
  pid=$!
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 450 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; pid=
    bad "$name: 3 sessions did not finish in 45 s; the log's end:"; tail -5 "$dir/log" | sed 's/^/    /'
    return
  fi
  local rc=0; wait "$pid" || rc=$?; pid=
  local done_count; done_count=$(grep -c 'session [0-9]* completed' "$dir/log" || true)
  if [ "$rc" -eq 0 ] && [ "$done_count" -eq 3 ]; then
    echo "ok   $name: 3 sessions in $(since "$t0") s, exit 0; photos in $(cd "$dir/photos" && ls -d 20* | tr '\n' ' ')"
  else
    bad "$name: exit $rc, $done_count sessions completed; the log's end:"; tail -5 "$dir/log" | sed 's/^/    /'
  fi
}
# sigterm NAME LIMIT [VAR=VALUE…]: SIGTERM 4 s into an endless --auto-press run (a session done by then); the
# daemon must be gone within LIMIT tenths of a second.
sigterm() {
  local name=$1 limit=$2; shift 2
  local dir="$work/$name"; mkdir -p "$dir"
  scenario_env "$@"
  (cd "$dir" && exec env "${envs[@]}" sh -c 'exec "$0" "$@"' "$BIN" "${opts[@]}" --socket "$dir/control" </dev/null 2>"$dir/log") &
  pid=$!
  sleep 4
  kill -0 "$pid" 2>/dev/null || { bad "$name: the daemon ended before SIGTERM:"; tail -5 "$dir/log" | sed 's/^/    /'; wait "$pid" || true; pid=; return; }
  local t0; t0=$(now)
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; pid=
    bad "$name: still running $((limit / 10)) s after SIGTERM; the log's end:"; tail -5 "$dir/log" | sed 's/^/    /'
    return
  fi
  local rc=0; wait "$pid" || rc=$?; pid=
  local n; n=$(grep -c 'session [0-9]* completed' "$dir/log" || true)
  if [ "$rc" -ne 0 ]; then bad "$name: exit $rc after SIGTERM"; tail -5 "$dir/log" | sed 's/^/    /'
  elif [ "$n" -lt 1 ]; then bad "$name: no session completed in the 4 s before SIGTERM (one takes about 2.5 s)"
  else echo "ok   $name: SIGTERM after $n sessions, gone in $(since "$t0") s, exit 0"; fi
}

sessions true-clock
sessions frozen FAKETIME="2020-01-01 00:00:00"
[ -d "$work/frozen/photos/2020-01-01" ] || bad "frozen: no photos/2020-01-01: the fake clock did not reach the daemon"
sessions crawling FAKETIME="@2020-01-01 00:00:00 x0.1"
# Set back while running: the clock starts true; 3 s in (mid-session) it is set back a day, 2 s later 30 days more.
echo "+0" >"$work/faketimerc"
( sleep 3; echo "-1d" >"$work/faketimerc"; sleep 2; echo "-31d" >"$work/faketimerc" ) &
mover=$!
sessions set-back FAKETIME_TIMESTAMP_FILE="$work/faketimerc" FAKETIME_NO_CACHE=1
wait "$mover" || true
back=$(ls -d "$work"/set-back/photos/20* 2>/dev/null | wc -l)
[ "$back" -ge 2 ] || bad "set-back: photos in $back date folder(s); the moves did not reach the daemon"
sigterm sigterm-frozen 30 FAKETIME="2020-01-01 00:00:00"
# libfaketime stretches poll timeouts by the speed too: the control socket's 250 ms accept poll, which
# its stop waits out, lasts 2.5 s at x0.1. Hence 6 s there.
sigterm sigterm-crawling 60 FAKETIME="@2020-01-01 00:00:00 x0.1"
echo "-1d" >"$work/faketimerc"
( sleep 2; echo "-365d" >"$work/faketimerc" ) &
mover=$!
sigterm sigterm-set-back 30 FAKETIME_TIMESTAMP_FILE="$work/faketimerc" FAKETIME_NO_CACHE=1
wait "$mover" || true

[ "$fail" -eq 0 ] && echo "clock-test: passed" || { echo "clock-test: FAILED"; exit 1; }
