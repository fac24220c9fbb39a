#!/usr/bin/env bash
# Gallery browser test: a guest's phone opens the picture's page. The simulated booth
# (--simulate --auto-press --sessions 1, gallery.enabled, gallery.url_base on a free loopback port)
# takes one session and indexes its picture; the review's QR code is read back from the file
# preview (zbarimg) and must be that picture's URL. photobooth-gallery serves the index on
# 127.0.0.1; headless chromium (Debian's chromium and chromium-driver, driven by python3-selenium:
# gallery_browser.py) opens the QR code's URL and /p/TOKEN at a phone's size (390x844 CSS px, 3
# device pixels each, a mobile user agent) and checks: the title and heading are gallery.title, the
# <img> loaded at the JPEG's own pixel size (its SOF marker and djpeg agree), it fits the width with
# no horizontal scroll, the button carries gallery.download_text and is on the first screen, a
# click on it saves the file under the server's attachment name (photobooth-DATE-N[-K].jpg) with
# the bytes /p/TOKEN.jpg serves (and says whether those equal the stored original); an unknown
# token is a 404 showing gallery.missing_text. The texts expected are the settings' defaults from
# photoboothctl config describe. Then (gallery_list_browser.py) the list, the PIN and the slideshow
# with 1,000 pictures more, added by the daemon's reconcile at its next start, and a session taken
# while the slideshow is open. About 40 s.
#
#   hardware/system-tests/gallery-browser.sh
#     BUILD_BIN                 photoboothd, photoboothctl, photobooth-gallery (default .build/debug)
#     PYTHON                    a python3 with Debian's python3-selenium (default /usr/bin/python3:
#                               a python3 earlier on PATH, e.g. pyenv's, does not see Debian's modules)
#     PHOTOBOOTH_SCREENSHOTS=DIR  also save the phone page as DIR/gallery-page.png and the review with
#                               its QR code (the file preview, 1280x800) as DIR/gallery-review-preview.png
#     GALLERY_BROWSER_SET="K=V ..."  more settings for the booth, e.g. picture.compose_single_shot=true
#                               (then the page shows the composed picture, booth-N-picture.jpg)
#     GALLERY_BROWSER_TOKEN=T   ask for token T instead of the index's (the test must then fail)
#     GALLERY_BROWSER_KEEP=1    keep the work directory (logs, photos, index, downloads)
#     GALLERY_BROWSER_PICTURES=N  pictures added for the list (default 1000)
set -euo pipefail
invoked=$PWD
cd "$(dirname "$0")/../.."
root=$PWD
BUILD_BIN=${BUILD_BIN:-$root/.build/debug}
PYTHON=${PYTHON:-/usr/bin/python3}
fail() { echo "gallery-browser: FAILED: $*"; exit 1; }
for b in photoboothd photoboothctl photobooth-gallery; do
  [ -x "$BUILD_BIN/$b" ] || fail "no $BUILD_BIN/$b (swift build first, or BUILD_BIN=dir)"
done
BUILD_BIN=$(realpath "$BUILD_BIN")
missing=()
for t in chromium chromedriver djpeg cjpeg zbarimg timeout setsid; do command -v "$t" >/dev/null || missing+=("$t"); done
[ -x "$PYTHON" ] || missing+=("$PYTHON")
[ ${#missing[@]} -eq 0 ] || fail "missing prerequisite: ${missing[*]} (apt-get install chromium chromium-driver python3-selenium libjpeg-turbo-progs zbar-tools)"
"$PYTHON" -c 'import selenium, sqlite3' 2>/dev/null \
  || fail "missing prerequisite: python3-selenium for $PYTHON (apt-get install python3-selenium)"

shots=()   # a relative PHOTOBOOTH_SCREENSHOTS is taken from where the script was started
if [ -n "${PHOTOBOOTH_SCREENSHOTS:-}" ]; then
  dir=$(cd "$invoked" && mkdir -p "$PHOTOBOOTH_SCREENSHOTS" && realpath "$PHOTOBOOTH_SCREENSHOTS") || fail "cannot make $PHOTOBOOTH_SCREENSHOTS"
  shots=(--screenshots "$dir")
fi
work=$(mktemp -d /tmp/photobooth-gallery-browser-XXXXXX)
gallery="" driver="" daemon=""
# Every process this test started, with its children (chromedriver, chromium's own processes), by id.
tree() { local c; for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$c"; done; echo "$1"; }
cleanup() {
  local pids=()
  # The driver has its own process group (setsid): the browser's processes are in it.
  [ -n "$driver" ] && { mapfile -t pids < <(tree "$driver"); kill -TERM -- "-$driver" 2>/dev/null; sleep 0.5; kill -KILL -- "-$driver" "${pids[@]}" 2>/dev/null; }
  [ -n "$daemon" ] && { kill -KILL -- "-$daemon" "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; }   # timeout leads its group
  [ -n "$gallery" ] && { kill -TERM "$gallery" 2>/dev/null; wait "$gallery" 2>/dev/null; }
  if [ "${GALLERY_BROWSER_KEEP:-0}" = 1 ]; then echo "gallery-browser: work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP
t0=$(date +%s.%N)
since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# The texts the page must show: the settings' defaults, as the daemon's own table declares them.
describe=$("$BUILD_BIN/photoboothctl" config describe)
default() { sed -n "s/^$1 (default: \(.*\))\$/\1/p" <<<"$describe"; }
title=$(default gallery.title) download_text=$(default gallery.download_text) missing_text=$(default gallery.missing_text)
[ -n "$title" ] && [ -n "$download_text" ] && [ -n "$missing_text" ] \
  || fail "no defaults for gallery.title/download_text/missing_text in photoboothctl config describe"

port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
# One settings file for both programs, as on a booth; the daemon's --simulate keeps its photos,
# index and secret in the working directory, which the gallery is pointed at with --set.
cat >"$work/photobooth.conf" <<EOF
[gallery]
enabled = true
listen = 127.0.0.1
port = $port
url_base = $base
EOF

extra=()
for kv in ${GALLERY_BROWSER_SET:-}; do extra+=(--set "$kv"); done
cd "$work"
echo "gallery-browser: the simulated booth, one session (gallery on $base)"
# The review (2 s) shows the picture's QR code in the file preview, as large as on a 1280x800 screen:
# it is read back with zbarimg while the review lasts, the URL a guest's phone opens.
timeout 60 "$BUILD_BIN/photoboothd" --simulate --auto-press --sessions 1 --config "$work/photobooth.conf" \
  --socket "$work/control" --set session.preview=0s --set session.countdown=0s --set session.review=2s \
  --set preview.size=1280x800 --set storage.min_free=0B --set gallery.idle_code=off "${extra[@]}" </dev/null 2>"$work/photoboothd.log" &
daemon=$!
for _ in $(seq 300); do
  grep -q "indexed at /p/" "$work/photoboothd.log" && break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.1
done
qr=""
if grep -q "indexed at /p/" "$work/photoboothd.log"; then
  for _ in $(seq 15); do   # the code appears once the photo is saved; the preview is rewritten 5 times a second
    cp preview.jpg review.jpg 2>/dev/null || true
    qr=$(zbarimg -q --raw review.jpg 2>/dev/null || true)
    [ -n "$qr" ] && break
    sleep 0.1
  done
fi
rc=0
wait "$daemon" || rc=$?
daemon=""
[ "$rc" -eq 0 ] || { tail -20 "$work/photoboothd.log"; fail "photoboothd --sessions 1 did not complete: exit $rc (log above)"; }
grep -q "indexed at /p/" "$work/photoboothd.log" || { cat "$work/photoboothd.log"; fail "the daemon indexed no picture (log above)"; }
[ -f "$work/gallery/index.sqlite" ] || fail "no gallery/index.sqlite in the booth's working directory"
[ -f "$work/gallery.secret" ] || fail "no gallery.secret in the booth's working directory"
[ -n "$qr" ] || fail "no QR code read (zbarimg) in the file preview during the review"
echo "PASS: the booth took its session and indexed it; the review's QR code reads $qr ($(since) s)"

: >"$work/gallery.log"   # there before the loop below reads it
"$BUILD_BIN/photobooth-gallery" --config "$work/photobooth.conf" --set "gallery.index=$work/gallery/index.sqlite" \
  --set "storage.dir=$work/photos" </dev/null 2>"$work/gallery.log" &
gallery=$!
for _ in $(seq 100); do
  grep -q "listening on 127.0.0.1:$port" "$work/gallery.log" && break
  kill -0 "$gallery" 2>/dev/null || { cat "$work/gallery.log"; fail "photobooth-gallery exited (log above)"; }
  sleep 0.1
done
grep -q "listening on 127.0.0.1:$port" "$work/gallery.log" || { cat "$work/gallery.log"; fail "photobooth-gallery is not listening on $port after 10 s"; }
echo "PASS: $(sed -n 's/^<5>photobooth-gallery: \(listening on .*\)/\1/p' "$work/gallery.log")"

token=()
[ -n "${GALLERY_BROWSER_TOKEN:-}" ] && token=(--token "$GALLERY_BROWSER_TOKEN")
rc=0
# Chromium keeps its crash database and dconf cache under HOME and XDG_*: the work directory's.
mkdir -p "$work/home/tmp"
TMPDIR=$work/home/tmp HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache XDG_DATA_HOME=$work/home/.local/share \
setsid timeout -k 5 45 "$PYTHON" "$root/hardware/system-tests/gallery_browser.py" --base "$base" \
  --index "$work/gallery/index.sqlite" --photos "$work/photos" --work "$work" \
  --title "$title" --download-text "$download_text" --missing-text "$missing_text" --qr "$qr" --review "$work/review.jpg" "${shots[@]}" "${token[@]}" &
driver=$!
wait "$driver" || rc=$?
driver=""
[ "$rc" -ne 124 ] || fail "the browser checks did not finish within 45 s"
kill -0 "$gallery" 2>/dev/null || { cat "$work/gallery.log"; fail "photobooth-gallery died during the checks (log above)"; }
[ "$rc" -eq 0 ] || { echo "--- photobooth-gallery's log:"; cat "$work/gallery.log"; fail "browser checks failed (above) after $(since) s"; }
echo "PASS: the picture's page in the phone's browser ($(since) s)"

# --- The list, the PIN and the slideshow with 1,000 pictures more: a day's photos made from the
# session's picture (scaled down by djpeg, a second folder so that their names are their own),
# added to the index by the daemon's next start (its reconcile), which then takes the session the
# open slideshow must show.
kill -TERM "$gallery" 2>/dev/null; wait "$gallery" 2>/dev/null || true; gallery=""
many=${GALLERY_BROWSER_PICTURES:-1000}
picture=$(find "$work/photos" -name 'booth-*.jpg' | head -1)
djpeg -scale 1/2 "$picture" | cjpeg -quality 80 >"$work/small.jpg"
mkdir -p "$work/photos/2026-11-30"
for n in $(seq "$many"); do cp "$work/small.jpg" "$work/photos/2026-11-30/$(printf 'booth-%06d-picture.jpg' "$n")"; done
touch -d '2026-11-30 18:00' "$work/photos/2026-11-30"/*.jpg
pin=2468 page_size=60
: >"$work/gallery.log"
"$BUILD_BIN/photobooth-gallery" --config "$work/photobooth.conf" --set "gallery.index=$work/gallery/index.sqlite" \
  --set "storage.dir=$work/photos" --set gallery.list=true --set gallery.slideshow=true --set "gallery.pin=$pin" \
  --set "gallery.page_size=$page_size" --set gallery.slide_time=3s --set "gallery.cache=$work/cache" </dev/null 2>"$work/gallery.log" &
gallery=$!
for _ in $(seq 100); do grep -q "listening on" "$work/gallery.log" && break; sleep 0.1; done
grep -q "listening on" "$work/gallery.log" || { cat "$work/gallery.log"; fail "photobooth-gallery (list, slideshow, PIN) is not listening"; }
# One more session of the simulated booth, its log in $work/$1.
session() {
  timeout 60 "$BUILD_BIN/photoboothd" --simulate --auto-press --sessions 1 --config "$work/photobooth.conf" \
    --socket "$work/control" --set session.preview=0s --set session.countdown=0s --set session.review=1s \
    --set preview.size=640x400 --set storage.min_free=0B --set gallery.idle_code=off "${extra[@]}" </dev/null 2>"$work/$1" \
    || { tail -20 "$work/$1"; fail "photoboothd --sessions 1 ($1) did not complete (log above)"; }
}
session photoboothd-2.log
grep -q "$many photos on disk added" "$work/photoboothd-2.log" || { grep gallery "$work/photoboothd-2.log"; fail "the daemon's start did not add the $many pictures to the index"; }
echo "PASS: $many pictures added to the index at the daemon's start, and one more session ($(since) s)"
rm -f "$work/live-open" "$work/new-token"
TMPDIR=$work/home/tmp HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache XDG_DATA_HOME=$work/home/.local/share \
setsid timeout -k 5 150 "$PYTHON" "$root/hardware/system-tests/gallery_list_browser.py" --base "$base" --work "$work" --pin "$pin" \
  --page-size "$page_size" --pictures "$((many + 2))" "${shots[@]}" &
driver=$!
for _ in $(seq 1200); do [ -e "$work/live-open" ] && break; kill -0 "$driver" 2>/dev/null || break; sleep 0.1; done
if [ -e "$work/live-open" ]; then
  session photoboothd-3.log
  new=$(grep -o 'indexed at /p/[a-z2-7]*' "$work/photoboothd-3.log" | tail -1 | sed 's|.*/p/||')
  [ -n "$new" ] || fail "the session taken with the slideshow open indexed no picture"
  echo "$new" >"$work/new-token.tmp" && mv "$work/new-token.tmp" "$work/new-token"
  echo "PASS: a session taken with the slideshow open: $new ($(since) s)"
fi
rc=0
wait "$driver" || rc=$?
driver=""
[ "$rc" -ne 124 ] || fail "the list's browser checks did not finish within 150 s"
[ "$rc" -eq 0 ] || { echo "--- photobooth-gallery's log:"; tail -30 "$work/gallery.log"; fail "the list's browser checks failed (above) after $(since) s"; }
echo "gallery-browser: passed in $(since) s"
