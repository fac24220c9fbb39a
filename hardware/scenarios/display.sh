#!/bin/bash
# display: the booth draws on a real fbdev. qemu's std VGA with the bochs DRM driver gives
# /dev/fb0 (bochs-drmdrmfb, 1280x800 XRGB8888); the host reads the screen back with QMP
# screendump (hardware/vm/qmp-server), so what is checked is what a monitor would show.
#  1. before the booth: the text console (fbcon) is on the screen.
#  2. photoboothd (vivid camera, gpio-sim button, display.device=/dev/fb0, display.console=/dev/tty1):
#     the VT is switched to KD_GRAPHICS; idle shows the live view and the "Press the button" band.
#  3. a press: the countdown digits appear in the digit region and change from second to second.
#  4. review shows the capture: the screen matches the saved photo drawn fit (and not another photo).
#  5. vivid unbound: the fault screen shows its reason; text written to tty1 and a second later
#     the screen is unchanged (no console text, no blinking cursor).
#  6. SIGTERM: the VT is back in text mode.
#  6b. with the gallery: the idle screen's WIFI: code, the review's QR code and the last picture's on
#     the idle screen after it, read by zbarimg from the screen; the code's URL fetched from
#     photobooth-gallery gives the saved photo.
#  7. vfb at 800x480 RGB565 (not visible to screendump: read back from its memory in the guest):
#     idle band and countdown digit drawn in RGB565.
# Screens are left in $RESULTS/screens/*.png.
# vm-timeout: 720
# vm-display: std
# vm-module: bochs
# vm-module: vfb vfb_enable=1 videomemorysize=4194304
. "$REPO/hardware/scenarios/lib.sh"
need python3

CHECK=(/usr/bin/python3 "$REPO/hardware/scenarios/display_check.py")
SOCK=/tmp/pb-control
PHOTOS=/tmp/pb-photos
mkdir -p "$RESULTS/screens" "$PHOTOS"

# screendump_request NAME: asks the host for a QMP screendump of the guest screen (not waiting);
# screendump_wait NAME: waits for it → $RESULTS/screens/NAME.{ppm,png}, sets SHOT; screendump NAME: both.
screendump_request() {
    mkdir -p "$RESULTS/.screendump"
    rm -f "$RESULTS/.screendump/$1.done"
    : > "$RESULTS/.screendump/$1.req" 2>/dev/null || touch "$RESULTS/.screendump/$1.req" 2>/dev/null || true
}
screendump_wait() {
    wait_for 60 "screendump $1 from the host" test -e "$RESULTS/.screendump/$1.done"
    [ "$(cat "$RESULTS/.screendump/$1.done")" = ok ] || fail "screendump $1: $(cat "$RESULTS/.screendump/$1.done")"
    SHOT=$RESULTS/screens/$1.ppm
}
screendump() { screendump_request "$1"; screendump_wait "$1"; }
# State changes from the daemon's log ("state: idle -> preview"): polling photoboothctl is too slow
# under TCG to catch a 5 s countdown reliably.
BOOTH_LOG=
entered() { grep -Eq -- "-> $1(\$|\()" "$BOOTH_LOG"; }
check() { "${CHECK[@]}" "$@"; }

[ -x "$BUILD_BIN/photoboothd" ] || fail "no photoboothd in $BUILD_BIN (swift build first)"
# The screen the booth draws on: fbdev here; display-kms.sh runs this scenario with SCREEN=kms
# (display.device=/dev/dri/card0: dumb buffers and page flips through libdrm).
SCREEN=${SCREEN:-fbdev}
FB0=/dev/fb0
wait_for 20 "/dev/fb0 from bochs" test -c $FB0
assert_contains "$(cat /sys/class/graphics/fb0/name)" "bochs" "fb0 driver"
log "fb0: $(cat /sys/class/graphics/fb0/name) $(cat /sys/class/graphics/fb0/virtual_size) $(cat /sys/class/graphics/fb0/bits_per_pixel) bpp"
if [ "$SCREEN" = kms ]; then
    DEV=/dev/dri/card0
    wait_for 20 "$DEV from bochs" test -c $DEV
else
    DEV=$FB0
fi

# ---------------------------------------------------------------- 1. the text console
for i in $(seq 12); do printf 'photobooth display scenario: console line %d on tty1\n' "$i"; done > /dev/tty1
sleep 0.5
screendump console
lit=$(check fraction "$SHOT" 0 0 1280 800 000000 30)
log "console screen: $(awk -v f="$lit" 'BEGIN {printf "%.2f%%", (1 - f) * 100}') of pixels not black"
assert_ge "$(awk -v f="$lit" 'BEGIN {print 1 - f}')" 0.003 "console text visible before the booth runs (fraction not black)"
assert_eq "$(check kdmode /dev/tty1)" 0 "tty1 mode before the booth (KD_TEXT)"

# ---------------------------------------------------------------- 2. the booth on fb0
VIVID=$(vivid_node) || fail "no vivid node"
gpiosim_create booth 2 button led
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
booth_args() {
    : > /tmp/pb-booth.conf   # empty: every setting at its default, then the --set overrides
    echo --config /tmp/pb-booth.conf --socket "$SOCK"
    for kv in "camera.device=$VIVID" camera.format=yuyv camera.preview_size=640x480 camera.capture_size=640x480 \
              camera.frame_rate=10 "button.chip=$CHIP" button.line=0 session.preview=1s session.countdown=9s \
              session.review=15s "storage.dir=$PHOTOS" storage.min_free=0B preview.file= display.frame_rate=10 "$@"; do
        echo --set "$kv"
    done
}
BOOTH_LOG=$RESULTS/photoboothd.log
bg "$BOOTH_LOG" "$BUILD_BIN/photoboothd" $(booth_args display.device=$DEV display.console=/dev/tty1)
BOOTH=$BG_PID
log "$(wait_for_line "$BOOTH_LOG" "display: $DEV" 60)"
wait_for_line "$BOOTH_LOG" "camera: streaming" 60
assert_eq "$(check kdmode /dev/tty1)" 1 "tty1 mode while the booth runs (KD_GRAPHICS)"
sleep 2
screendump idle
band=$(check white "$SHOT" 0 672 1280 128)
log "idle: white text in the band: $band"
assert_ge "$band" 0.01 "the idle invitation drawn in the band (white fraction)"
assert_ge "$(check fraction "$SHOT" 0 300 100 200 000000 4)" 0.9 "letterbox bar left of the 4:3 live view is black"

# ---------------------------------------------------------------- 3. countdown
# A burst of 9 screendumps 1 s apart, timed by the host (the guest is slow under TCG), from the
# press through the 1 s preview and the 9 s countdown.
mkdir -p "$RESULTS/.screendump"
rm -f "$RESULTS/.screendump/countdown.done"
echo "9 1.0" > "$RESULTS/.screendump/countdown.req.tmp"
"$BUILD_BIN/photoboothctl" press --socket "$SOCK" > /dev/null || fail "photoboothctl press"
mv "$RESULTS/.screendump/countdown.req.tmp" "$RESULTS/.screendump/countdown.req"
screendump_wait countdown
shots=()
for i in $(seq 9); do shots+=("$RESULTS/screens/countdown-$i.ppm"); done
# The review is taken before the (slow) checks, while it is on the screen.
wait_for 60 "review" entered review
sleep 1
screendump review
REVIEW=$SHOT
digits=()
for s in "${shots[@]}"; do
    w=$(check white "$s" 400 160 480 480)
    log "$(basename "$s"): white in the digit region $w"
    awk -v w="$w" 'BEGIN {exit !(w >= 0.03)}' && digits+=("$s")
done
# Some of the burst falls in the preview or after the countdown: two with a digit are enough.
assert_ge "${#digits[@]}" 2 "screendumps with a countdown digit in the digit region"
changed=0
for ((i = 1; i < ${#digits[@]}; i++)); do
    d=$(check whitediff "${digits[i-1]}" "${digits[i]}" 400 160 480 480)
    log "digit change ${i}: $d"
    awk -v d="$d" 'BEGIN {exit !(d > 0.02)}' && changed=1
done
assert_eq "$changed" 1 "the digit changed during the countdown"

# ---------------------------------------------------------------- 4. review
photo=$(find "$PHOTOS" -name '*.jpg' -printf '%T@ %p\n' | sort -n | tail -n1 | cut -d' ' -f2)
[ -f "$photo" ] || fail "no saved photo under $PHOTOS"
other=$(ls "$SHARED_IMAGES"/captures/*.jpg 2>/dev/null | head -n1)
[ -n "$other" ] || other=$photo
r=$(check review "$REVIEW" "$photo" "$other")
log "review vs $(basename "$photo"): $r (other: $(basename "$other"))"
cap=${r#capture=}; cap=${cap%% *}; oth=${r##*other=}
assert_le "$cap" 20 "mean difference between the review screen and the saved capture drawn fit"
[ "$other" = "$photo" ] || assert_ge "$oth" $(awk -v c="$cap" 'BEGIN {print c * 2 + 10}') "a different photo differs more"

# ---------------------------------------------------------------- 5. fault
wait_for 60 "idle after review" grep -q "review -> idle" "$BOOTH_LOG"
vivid_unbind
wait_for 60 "fault after vivid unbind" entered fault
sleep 1.5
screendump fault
bgf=$(check fraction "$SHOT" 0 0 1280 800 3a1010 6)
txt=$(check white "$SHOT" 0 300 1280 200)
log "fault: background $bgf, white text in the middle $txt"
assert_ge "$bgf" 0.8 "fault background"
assert_ge "$txt" 0.005 "fault reason drawn in the middle"
for i in $(seq 30); do printf 'console text %d that must not appear\n' "$i"; done > /dev/tty1
sleep 1.5
screendump fault-later
same=$(check same "$RESULTS/screens/fault.ppm" "$SHOT")
assert_le "$same" 0.0001 "fault screen unchanged after writing to tty1 and 1.5 s (no console text, no cursor): differing fraction"

# ---------------------------------------------------------------- 6. exit gives the console back
if [ "$SCREEN" = kms ]; then
    # Page flips while the live view runs: the booth reports every 10 s how many flips completed (their
    # vblank events) and how many frames it presented. Every frame is shown by a flip whose event
    # came back; the rate is what the guest draws under TCG (display.frame_rate 10 is the ceiling).
    grep -o '[0-9]* page flips in [0-9.]* s ([0-9.]*/s), [0-9]* frames presented' "$BOOTH_LOG" > "$RESULTS/page-flips.txt" || true
    log "KMS page flips: $(tr '\n' ';' < "$RESULTS/page-flips.txt")"
    best=$(sed -n 's/.*(\([0-9.]*\)\/s).*/\1/p' "$RESULTS/page-flips.txt" | sort -g | tail -n1)
    assert_ge "${best:-0}" 2 "page flips per second in the best 10 s (display.frame_rate 10; bochs's vblank is emulated)"
    ok=$(awk '{ f = $1; p = $(NF - 2); if (f + 1 < p) bad++ } END { print bad + 0 }' "$RESULTS/page-flips.txt")
    assert_ge "$(wc -l < "$RESULTS/page-flips.txt")" 2 "page-flip reports during the scenario"
    assert_eq "$ok" 0 "reports where fewer flips completed than frames were presented (a frame shown without its flip)"
fi
stop_pid "$BOOTH" 10
assert_eq "$(check kdmode /dev/tty1)" 0 "tty1 mode after the booth stopped (KD_TEXT)"
if [ "$SCREEN" = kms ]; then
    for i in $(seq 12); do printf 'photobooth display scenario: console line %d after the booth\n' "$i"; done > /dev/tty1
    sleep 1
    screendump console-after
    lit=$(check fraction "$SHOT" 0 0 1280 800 000000 30)
    assert_ge "$(awk -v f="$lit" 'BEGIN {print 1 - f}')" 0.003 "KMS: the console's own buffer is back on the CRTC after the booth (text visible)"
fi
vivid_bind
wait_for 20 "vivid back" vivid_node
VIVID=$(vivid_node)

if [ "$SCREEN" = kms ]; then
    # ------------------------------------------------------------ 7. DRM master
    devices=$("$BUILD_BIN/photoboothctl" devices --socket /tmp/no-daemon) || fail "photoboothctl devices: $devices"
    assert_contains "$devices" "$DEV [bochs-drm] 1 of 1 connectors connected: Virtual-1 1280x800@" "devices lists the KMS card"
    # While the booth holds master, another client cannot take it (the kernel refuses).
    BOOTH_LOG=$RESULTS/photoboothd-master.log
    bg "$BOOTH_LOG" "$BUILD_BIN/photoboothd" $(booth_args display.device=$DEV display.console=/dev/tty1)
    BOOTH=$BG_PID
    wait_for_line "$BOOTH_LOG" "camera: streaming" 60 > /dev/null
    sleep 2
    other=$("$TOOLS/drm-master" $DEV try)
    log "another client while the booth runs: $other"
    assert_contains "$other" "master=0" "another client is not master while the booth holds it"
    assert_not_contains "$other" "setmaster=OK" "another client cannot take master from the booth"
    stop_pid "$BOOTH" 10
    # Another client holds the screen first (red); the booth waits without a fight, and draws once
    # the other gives master back (it exits). The booth runs without CAP_SYS_ADMIN, as the service
    # does (setpriv drops it from the bounding set): its descriptor, never master, cannot become master,
    # so it opens the card anew.
    "$TOOLS/drm-master" $DEV hold ff0000 < /dev/null > /tmp/drm-hold.out 2>&1 &
    HOLD=$!
    wait_for 10 "the other client holding the screen" grep -q '^holding master=1 setcrtc=OK' /tmp/drm-hold.out
    BOOTH_LOG=$RESULTS/photoboothd-waits.log
    bg "$BOOTH_LOG" setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin -- "$BUILD_BIN/photoboothd" \
        $(booth_args display.device=$DEV display.console=/dev/tty1)
    BOOTH=$BG_PID
    BOOTH_PID=$BOOTH
    line=$(wait_for_line "$BOOTH_LOG" "not the DRM master" 60)
    log "$line"
    sleep 3
    screendump other-client
    assert_ge "$(check fraction "$SHOT" 0 0 1280 800 ff0000 10)" 0.99 "the other client's red screen stays while it holds master"
    kill -TERM "$HOLD"
    wait "$HOLD" 2>/dev/null
    again=$(wait_for_line "$BOOTH_LOG" "DRM master again" 30)
    log "$again"
    assert_contains "$again" "by opening the card again" "without CAP_SYS_ADMIN the booth takes master on a new descriptor"
    sleep 3
    screendump after-other-client
    band=$(check white "$SHOT" 0 672 1280 128)
    assert_ge "$band" 0.01 "the booth draws its idle screen once master is given back"
    assert_le "$(check fraction "$SHOT" 0 0 1280 800 ff0000 10)" 0.01 "no red left"
    booth_alive "master given back"
    stop_pid "$BOOTH" 10
    pass "display scenario (KMS) done"
    exit 0
fi

# ---------------------------------------------------------------- 6b. the QR codes read from the screen
# With the gallery: the idle screen's WIFI: code, the review's code of the picture's URL and the
# same code kept on the idle screen after it, each read by zbarimg from the screen's pixels (QMP
# screendump); the URL fetched from photobooth-gallery in the guest gives the saved photo's bytes.
need zbarimg
ip link set lo up || fail "ip link set lo up"
GDIR=/tmp/pb-gallery
mkdir -p "$GDIR"
WIFI='WIFI:T:WPA;S:Photobooth;P:smile-please;;'
BOOTH_LOG=$RESULTS/photoboothd-gallery.log
bg "$BOOTH_LOG" "$BUILD_BIN/photoboothd" $(booth_args display.device=$DEV display.console=/dev/tty1 session.review=20s \
    gallery.enabled=true gallery.url_base=http://127.0.0.1:18080 "gallery.index=$GDIR/index.sqlite" "gallery.secret=$GDIR/secret" \
    gallery.wifi_ssid=Photobooth gallery.wifi_password=smile-please)
BOOTH=$BG_PID
wait_for_line "$BOOTH_LOG" "camera: streaming" 60 > /dev/null
[ -x "$BUILD_BIN/photobooth-gallery" ] || fail "no photobooth-gallery in $BUILD_BIN"
bg "$RESULTS/photobooth-gallery.log" "$BUILD_BIN/photobooth-gallery" --config /tmp/pb-booth.conf --set gallery.enabled=true \
    --set "gallery.index=$GDIR/index.sqlite" --set "storage.dir=$PHOTOS" --set gallery.listen=127.0.0.1 --set gallery.port=18080
GALLERY=$BG_PID
wait_for_line "$RESULTS/photobooth-gallery.log" "listening on" 60 > /dev/null
codes() { zbarimg --quiet --raw "$1" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }
sleep 2
screendump idle-wifi
assert_eq "$(codes "$RESULTS/screens/idle-wifi.png")" "$WIFI" "the idle screen's code (zbarimg on the screen) joins the booth's Wi-Fi"
"$BUILD_BIN/photoboothctl" press --socket "$SOCK" > /dev/null || fail "photoboothctl press"
wait_for 90 "review (gallery)" entered review
# The code appears once the photo is saved, a moment after the review begins.
URL=
for i in $(seq 10); do
    screendump "review-qr-$i"
    URL=$(codes "$RESULTS/screens/review-qr-$i.png")
    [ -n "$URL" ] && { cp "$RESULTS/screens/review-qr-$i.png" "$RESULTS/screens/review-qr.png"; break; }
    sleep 1
done
log "the review's code: $URL"
assert_contains "$URL" "http://127.0.0.1:18080/p/" "the review's QR code read from the screen is a picture URL"
photo=$(find "$PHOTOS" -name '*.jpg' -printf '%T@ %p\n' | sort -n | tail -n1 | cut -d' ' -f2)
python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=20).read())' "$URL.jpg" \
    > "$RESULTS/served-from-qr.jpg" || fail "GET $URL.jpg"
cmp -s "$RESULTS/served-from-qr.jpg" "$photo" || fail "$URL.jpg is not $photo byte for byte"
pass "the URL of the code on the screen serves the saved photo ($(stat -c %s "$photo") bytes)"
wait_for 90 "idle after the review (gallery)" grep -q "review -> idle" "$BOOTH_LOG"
sleep 2
screendump idle-codes
assert_eq "$(codes "$RESULTS/screens/idle-codes.png")" "$(printf '%s\n%s\n' "$URL" "$WIFI" | sort | tr '\n' ' ' | sed 's/ $//')" \
    "back in idle: the last picture's code kept beside the Wi-Fi code"
stop_pid "$GALLERY" 10
stop_pid "$BOOTH" 10

# ---------------------------------------------------------------- 7. vfb, RGB565
FB1=
for d in /sys/class/graphics/fb*; do grep -qi "virtual" "$d/name" 2>/dev/null && FB1=/dev/$(basename "$d"); done
[ -n "$FB1" ] || fail "no vfb framebuffer ($(cat /sys/class/graphics/fb*/name | tr '\n' ' '))"
mode=$(check setmode "$FB1" 800 480 16)
assert_eq "$mode" "800x480 16bpp" "vfb mode"
BOOTH_LOG=$RESULTS/photoboothd-vfb.log
bg "$BOOTH_LOG" "$BUILD_BIN/photoboothd" $(booth_args display.device=$FB1 display.console=)
BOOTH=$BG_PID
wait_for_line "$BOOTH_LOG" "display: $FB1" 60
wait_for_line "$BOOTH_LOG" "camera: streaming" 60
sleep 2
check fbdump "$FB1" "$RESULTS/screens/vfb-idle.ppm" > /dev/null
band=$(check white "$RESULTS/screens/vfb-idle.ppm" 0 404 800 76)
assert_ge "$band" 0.01 "RGB565: the idle invitation in the band"
"$BUILD_BIN/photoboothctl" press --socket "$SOCK" > /dev/null || fail "photoboothctl press"
wait_for 30 "countdown (vfb)" entered countdown
sleep 0.5
check fbdump "$FB1" "$RESULTS/screens/vfb-countdown.ppm" > /dev/null
w=$(check white "$RESULTS/screens/vfb-countdown.ppm" 256 96 288 288)
assert_ge "$w" 0.03 "RGB565: countdown digit in the digit region"
check fbdump "$FB1" "$RESULTS/screens/vfb-after-countdown.png" > /dev/null   # for people
stop_pid "$BOOTH" 10
pass "display scenario done"
