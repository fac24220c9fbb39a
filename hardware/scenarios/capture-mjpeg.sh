#!/bin/bash
# capture-mjpeg: the booth against v4l2loopback fed real photos as MJPEG by loopback-writer
# (1280x720, 10 fps, numbered frames: writer frame i is the capture side's sequence i), its
# real libgpiod button on gpio-sim, countdown 0 and preview 0 (the press is the trigger),
# settle_frames 0 (no frames dropped by count: the booth's own checks must reject stale ones).
# Two presses:
#  A. with the stream stopped in idle (camera.idle_stop 6s): the press restarts the stream, so
#     v4l2loopback's first buffer after STREAMON (sequence 0, bytesused = the whole buffer, an
#     old photo zero-padded, stamped at STREAMON: after the trigger) comes right after the
#     trigger (when no new frame was written before the first dequeue). Asserted: the saved
#     capture is a frame the writer fed after the trigger (sequence > 0), byte-identical to it.
#  B. with the stream running: the capture is exactly the first frame the writer fed after the
#     trigger (the first whose write window ends at or after the kernel edge timestamp).
# For each: one capture saved per press, byte-identical to the photo fed as its frame (no stale
# frame, no re-encode), logged as passed through.
# camera.preview_size asks 640x480, which the loopback does not offer: the live view streams its one size,
# 1280x720, camera.capture_size's, so no capture switches the stream's size (a switch on v4l2loopback
# failed with VIDIOC_REQBUFS EBUSY: every session lost, #35).
# vm-timeout: 200
. "$REPO/hardware/scenarios/lib.sh"

require_captures
mapfile -t PHOTOS < <(captures_of_size 1280x720)
[ ${#PHOTOS[@]} -ge 2 ] || fail "need at least two 1280x720 photos in $CAPTURES, found ${#PHOTOS[@]}"
LOOP=$(loopback_node) || fail "no v4l2loopback node (card_label photobooth-loopback)"
log "loopback node $LOOP; photos fed in turn: ${PHOTOS[*]##*/}"
loopback_start "$LOOP" 10 --loop "${PHOTOS[@]}"
WLOG=$LOOPBACK_LOG

gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
PHOTODIR=/tmp/photos
CONF=/tmp/photobooth.conf
booth_config "$CONF" \
    camera.device=photobooth-loopback camera.format=mjpeg camera.preview_size=640x480 \
    camera.capture_size=1280x720 camera.frame_rate=10 camera.settle_frames=0 camera.idle_stop=6s \
    button.chip="$CHIP" button.line=button button.debounce=30ms button.long_press=1500ms \
    session.preview=0s session.countdown=0s session.review=1s \
    storage.dir="$PHOTODIR" storage.min_free=0B preview.file=/tmp/preview.jpg
cp "$CONF" "$RESULTS/photobooth.conf"
booth_start "$CONF"
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
streaming=$(grep -m1 'camera: streaming' "$BOOTH_LOG")
assert_contains "$streaming" "MJPG 1280x720" "camera stream"
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0

# check_capture N first|after: the Nth saved capture against the writer's log; "first": it must
# be the first frame fed after the trigger; "after": any frame fed after it
check_capture() {
    local n=$1 want=$2 edge trig cap seq saved path wline fed first
    edge=$(grep -E 'edge accepted: rising' "$BOOTH_LOG" | sed -n "${n}s/.*rising at \([0-9.]*\)s.*/\1/p")
    [ -n "$edge" ] || fail "press $n: no accepted press in the log"
    trig=$(grep -E 'capture [0-9]+: trigger at' "$BOOTH_LOG" | sed -n "${n}p")
    assert_contains "$trig" "trigger at ${edge}s" "press $n: capture trigger (the press's kernel edge timestamp)"
    cap=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | sed -n "${n}p")
    saved=$(grep -E 'capture [0-9]+ saved:' "$BOOTH_LOG" | sed -n "${n}p")
    log "press $n: $cap"; log "press $n: $saved"
    seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
    [ -n "$seq" ] || fail "press $n: no frame number in: $cap"
    # the first frame whose write window ends at or after the trigger (its timestamp lies in the window)
    first=$(awk -v t="$edge" '/^frame=/ {
        split($0, f, " "); for (i in f) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
        if (v["t_after"] + 0 >= t + 0) { print v["frame"] ":" v["t_before"] ":" v["t_after"]; exit } }' "$WLOG")
    [ -n "$first" ] || fail "press $n: the writer logged no frame after the trigger $edge"
    IFS=: read -r fseq fb fa <<<"$first"
    if [ "$want" = after ]; then
        assert_ge "$seq" "$fseq" "press $n: captured frame number vs the first writer frame after the trigger $edge"
    elif awk -v t="$edge" -v b="$fb" 'BEGIN {exit !(t + 0 > b + 0)}'; then
        # the trigger fell inside frame fseq's write: its timestamp may be just before or after it
        [ "$seq" = "$fseq" ] || [ "$seq" = $((fseq + 1)) ] || fail "press $n: captured frame #$seq; the first frame after the trigger $edge is #$fseq (written $fb..$fa, around the trigger) or #$((fseq + 1))"
        pass "press $n: captured frame #$seq is the first fed after the trigger $edge (frame $fseq written $fb..$fa)"
    else
        assert_eq "$seq" "$fseq" "press $n: captured frame = first writer frame after the trigger $edge (written $fb..$fa)"
    fi
    wline=$(grep "^frame=$seq " "$WLOG") || fail "press $n: the writer logged no frame $seq"
    fed=$(sed 's/.* file=\([^ ]*\) .*/\1/' <<<"$wline")
    path=$(sed -n 's/.* saved: \([^ ]*\) .*/\1/p' <<<"$saved")
    assert_file "$path" "press $n: saved capture"
    assert_same_bytes "$path" "$fed" "press $n: saved capture vs the photo fed as frame $seq"
    assert_contains "$saved" "MJPG" "press $n: saved capture"
    assert_not_contains "$saved" "encoded" "press $n: saved capture (passed through, not re-encoded)"
    cp "$path" "$RESULTS/capture-$n.jpg"
    log "press $n: trigger-to-frame $(sed -n 's/.*trigger-to-frame \([0-9.-]*\) ms.*/\1/p' <<<"$cap") ms (10 fps: 100 ms interval; TCG)"
}

# A. stream stopped in idle; the press starts it
wait_for_line "$BOOTH_LOG" 'stream stopped after idle time' 15 >/dev/null
wait_for_line "$BOOTH_LOG" 'camera: stream stopped' 5 >/dev/null
pulse booth 0 low:100 high:0
wait_for_count 'capture [0-9]+ saved:' 1 20
booth_wait_state idle 1 15

# B. stream running: review (1 s) -> idle keeps the stream for camera.idle_stop (6 s); press now
pulse booth 0 low:100 high:0
wait_for_count 'capture [0-9]+ saved:' 2 20
booth_wait_state idle 2 15
assert_eq "$(log_count 'camera: streaming')" 2 "stream starts (at start, at press 1; press 2 found it running)"
# the counters of the stream press 1 started (still running)
status=$("$BUILD_BIN/photoboothctl" status 2>&1) || fail "photoboothctl status: $status"
printf '%s\n' "$status" > "$RESULTS/status-after-press-2.txt"
cam=$(grep '^camera:' <<<"$status")
log "$cam"
dropped=$(sed -n 's/.* \([0-9]*\) dropped.*/\1/p' <<<"$cam")
# v4l2loopback's stale first buffer exists only when no new frame was written between STREAMON and
# the first dequeue; on a slow guest one usually is, so the drop count is logged, not asserted.
# What is asserted is that the stale buffer is never the capture (sequence >= 1 below).
log "buffers dropped in the stream press 1 started: ${dropped:-0}"
check_capture 1 after
seq1=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | sed -n '1s/.*frame #\([0-9]*\) .*/\1/p')
assert_ge "$seq1" 1 "press 1: captured frame's sequence (0 is the stale buffer)"
check_capture 2 first

assert_eq "$(log_count 'capture [0-9]+ saved:')" 2 "captures saved"
assert_eq "$(log_count 'switched to [0-9]+x[0-9]+ for the capture')" 0 "size switches (the live view streams the capture size already)"
assert_eq "$(log_count 'fault \(camera\)')" 0 "camera faults"
assert_eq "$(find "$PHOTODIR" -name 'booth-*.jpg' | wc -l)" 2 "JPEG files under $PHOTODIR"
booth_alive "after two sessions"
booth_stop
loopback_stop
