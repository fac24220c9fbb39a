#!/usr/bin/env bash
# Two booths, one event gallery: two simulated booths on this machine (photoboothd --simulate, each
# in its own folder with its own secret, index and control socket) take two sessions each, at the
# same time; each booth's photobooth-gallery syncs its pictures with rclone (gallery.sync_remote)
# into one shared folder, which `rclone serve http` serves as the event's public gallery
# (gallery.public_url = http://127.0.0.1:PORT/{token}.jpg). Checks: every picture either booth
# serves is in the shared folder once, as TOKEN.jpg, with its booth's bytes, and no other file;
# the names never meet (two secrets); the review's QR code in a booth's file preview (zbarimg)
# is the public URL, and that URL answers with the picture. About 20 s.
#
#   hardware/system-tests/two-booths.sh
#     BUILD_BIN   photoboothd, photobooth-gallery (default .build/debug)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
BUILD_BIN=$(realpath "${BUILD_BIN:-$root/.build/debug}")
fail() { echo "two-booths: FAILED: $*"; exit 1; }
for b in photoboothd photobooth-gallery; do [ -x "$BUILD_BIN/$b" ] || fail "no $BUILD_BIN/$b (swift build first, or BUILD_BIN=dir)"; done
for t in rclone python3 zbarimg timeout; do command -v "$t" >/dev/null || fail "missing prerequisite: $t (apt-get install rclone python3 zbar-tools)"; done

work=$(mktemp -d /tmp/photobooth-two-booths-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP
t0=$(date +%s.%N)
since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

event=$work/event
mkdir -p "$event"
public=$(free_port)
for booth in a b; do
  mkdir -p "$work/$booth"
  cat >"$work/$booth/photobooth.conf" <<EOF
[gallery]
enabled = true
listen = 127.0.0.1
port = $(free_port)
url_base = http://127.0.0.1:8080
public_url = http://127.0.0.1:$public/{token}.jpg
sync_remote = $event
sync_config = /dev/null
cache = $work/$booth/cache
state = $work/$booth/state
EOF
done

# Both booths at once, two sessions each; booth a's review is long enough to read its QR code.
for booth in a b; do
  (cd "$work/$booth" && exec timeout 90 "$BUILD_BIN/photoboothd" --simulate --auto-press --sessions 2 --config photobooth.conf \
     --socket "$work/$booth/control" --set session.preview=0s --set session.countdown=0s --set session.review=2s \
     --set preview.size=1280x800 --set storage.min_free=0B --set gallery.idle_code=off </dev/null 2>"$work/$booth/photoboothd.log") &
  pids+=($!)
done
qr=""
for _ in $(seq 300); do
  if grep -q "indexed at /p/" "$work/a/photoboothd.log" 2>/dev/null; then
    cp "$work/a/preview.jpg" "$work/review.jpg" 2>/dev/null || true
    qr=$(zbarimg -q --raw "$work/review.jpg" 2>/dev/null || true)
    [ -n "$qr" ] && break
  fi
  sleep 0.1
done
for p in "${pids[@]}"; do wait "$p" || { tail -20 "$work"/*/photoboothd.log; fail "a simulated booth did not complete its sessions"; }; done
pids=()
grep -q "shows each photo's URL as a QR code: http://127.0.0.1:$public/TOKEN.jpg" "$work/a/photoboothd.log" \
  || { grep gallery "$work/a/photoboothd.log"; fail "the booth's codes do not carry gallery.public_url"; }
case "$qr" in http://127.0.0.1:$public/*.jpg) ;; *) fail "the review's QR code reads '$qr', not a public URL" ;; esac
echo "PASS: two booths took two sessions each at once; booth a's review code reads $qr ($(since) s)"

# Each booth's gallery: its sync copies into the shared folder.
for booth in a b; do
  "$BUILD_BIN/photobooth-gallery" --config "$work/$booth/photobooth.conf" --port 0 --set "gallery.index=$work/$booth/gallery/index.sqlite" \
    --set "storage.dir=$work/$booth/photos" </dev/null 2>"$work/$booth/gallery.log" &
  pids+=($!)
done
# What each booth serves: token and file, from its index.
served() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}/gallery/index.sqlite?mode=ro", uri=True)
for token, path in db.execute("SELECT token, path FROM pictures WHERE removed_at IS NULL"):
    print(token, f"{sys.argv[1]}/photos/{path}")
PY
}
served "$work/a" > "$work/a.served"
served "$work/b" > "$work/b.served"
want=$(cat "$work/a.served" "$work/b.served" | wc -l)
[ "$want" -eq 4 ] || fail "the booths serve $want pictures, expected 4 (two one-shot sessions each)"
# Each copy logged by its booth's gallery once rclone finished it (a file can be there before rclone checked it).
copied() { cat "$work"/*/gallery.log | grep -c "sync: .* copied to $event/" || true; }
for _ in $(seq 300); do
  [ "$(copied)" -ge "$want" ] && break
  sleep 0.1
done
have=$(find "$event" -type f | wc -l)
[ "$have" -eq "$want" ] && [ "$(copied)" -eq "$want" ] \
  || { ls -la "$event"; cat "$work"/*/gallery.log; fail "$have files in the shared folder, $(copied) copies logged, $want pictures served by the two booths"; }
while read -r token file; do
  cmp -s "$event/$token.jpg" "$file" || fail "$event/$token.jpg is not $file"
done < <(cat "$work/a.served" "$work/b.served")
[ "$(cut -d' ' -f1 "$work/a.served" "$work/b.served" | sort -u | wc -l)" -eq "$want" ] || fail "the two booths' tokens meet"
echo "PASS: the shared folder holds the $want pictures of both booths, once each, byte for byte ($(since) s)"

# The event's public gallery: the QR code's URL answers with booth a's picture.
rclone serve http "$event" --addr "127.0.0.1:$public" --config /dev/null -q &
pids+=($!)
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $public), 1)" 2>/dev/null && break; sleep 0.1; done
token=${qr##*/}; token=${token%.jpg}
file=$(awk -v t="$token" '$1 == t { print $2 }' "$work/a.served")
[ -n "$file" ] || fail "the code's token $token is none of booth a's pictures"
python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=10).read())' "$qr" | cmp -s - "$file" \
  || fail "$qr does not answer with $file"
echo "PASS: the review's code $qr answers from the event's gallery with the picture ($(since) s)"
echo "two-booths: passed in $(since) s"
