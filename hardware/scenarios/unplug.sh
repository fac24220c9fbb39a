#!/bin/bash
# unplug: the camera lost and back, twice, with the daemon kept running throughout.
#  A. vivid (640x480 YUYV 25 fps, found by card name): a tap starts a session (preview off: the
#     booth waits in preview for the next press); vivid is unbound from its driver mid-preview
#     -> "fault (camera): camera lost: ..." naming the failed call and device, state
#     fault(camera), daemon up; vivid bound again (it may come back as another /dev/videoN)
#     -> "camera recovered", idle by itself; then tap (preview) + tap (capture) -> a capture saved.
#  B. v4l2loopback fed by loopback-writer (MJPEG): the writer stops mid-idle. The node stays and
#     no call fails: the stream just goes quiet -> the booth faults ("stream stalled"), retries
#     (opening a capture node without a writer fails: no capture capability with
#     exclusive_caps=1); the writer restarts -> the booth recovers to idle and the next presses
#     capture a frame byte-identical to a fed photo. Driver behaviour found here (v4l2loopback
#     0.12.7, exclusive_caps=1): once its writer has closed, the node advertises neither capture
#     nor output (device caps 0x05200000) and a new writer's VIDIOC_S_FMT(OUTPUT) fails EINVAL,
#     so "restart" is a module reload (modprobe -r, modprobe: a replug; the node may change).
# vm-timeout: 280
. "$REPO/hardware/scenarios/lib.sh"

gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
tap() { pulse booth 0 low:100 high:0; }

# ---------------------------------------------------------------- A. vivid unbind / bind
VIVID=$(vivid_node) || fail "no vivid capture node"
CONF=/tmp/vivid.conf
booth_config "$CONF" \
    camera.device=vivid camera.format=yuyv camera.preview_size=640x480 camera.capture_size=640x480 \
    camera.frame_rate=25 button.chip="$CHIP" button.line=button button.debounce=30ms \
    session.preview=off session.preview_timeout=120s session.countdown=0s session.review=1s \
    storage.dir=/tmp/photos-vivid storage.min_free=0B preview.file=/tmp/preview.jpg
BOOTH_LOG=$RESULTS/photoboothd-vivid.log
booth_start "$CONF"
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
tap
booth_wait_state preview 1 10
log "unbinding $(vivid_platform_dev) mid-preview ($VIVID)"
vivid_unbind || fail "vivid unbind"
wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 15 >/dev/null
fault=$(grep -m1 'fault (camera)' "$BOOTH_LOG")
log "$fault"
assert_contains "$fault" "camera lost" "the fault line"
assert_contains "$fault" "$VIVID" "the fault line names the device"
assert_contains "$fault" "VIDIOC_" "the fault line names the failed call"
assert_contains "$(booth_current_state)" "fault(camera" "state after the unplug"
assert_eq "$(log_count 'session [0-9]+ failed')" 1 "the session in preview ended as failed"
sleep 3   # a few retries (1 s, 2 s backoff) against a missing camera: no crash, still in fault
booth_alive "camera unbound"
assert_contains "$(booth_current_state)" "fault(camera" "state while unbound"
vivid_bind || fail "vivid bind"
wait_for 10 "a vivid node after bind" vivid_node
log "vivid is back as $(vivid_node) (was $VIVID)"
wait_for_line "$BOOTH_LOG" 'camera recovered' 40 >/dev/null
booth_wait_state idle 1 10
assert_eq "$(booth_current_state)" idle "state after the camera came back"
wait_for_count 'camera: streaming' 2 20
tap
booth_wait_state preview 2 10
tap
wait_for_line "$BOOTH_LOG" 'capture [0-9]+ saved:' 20 >/dev/null
saved=$(grep -m1 -E 'capture [0-9]+ saved:' "$BOOTH_LOG")
log "$saved"
path=$(sed -n 's/.* saved: \([^ ]*\) .*/\1/p' <<<"$saved")
info=$(jpeg-decode "$path") || fail "capture after rebind does not decode: $info"
assert_contains "$info" "width=640 height=480" "capture after rebind"
booth_stop

# ---------------------------------------------------------------- B. loopback writer stops / restarts
require_captures
mapfile -t PHOTOS < <(captures_of_size 1280x720)
LOOP=$(loopback_node) || fail "no v4l2loopback node"
loopback_start "$LOOP" 10 --loop "${PHOTOS[@]}"
CONF=/tmp/loop.conf
booth_config "$CONF" \
    camera.device=photobooth-loopback camera.format=mjpeg camera.preview_size=1280x720 \
    camera.capture_size=1280x720 camera.frame_rate=10 \
    button.chip="$CHIP" button.line=button button.debounce=30ms \
    session.preview=off session.preview_timeout=120s session.countdown=0s session.review=1s \
    storage.dir=/tmp/photos-loop storage.min_free=0B preview.file=/tmp/preview.jpg
BOOTH_LOG=$RESULTS/photoboothd-loopback.log
booth_start "$CONF"
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 1
log "stopping the loopback writer"
loopback_stop
wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 20 >/dev/null
fault=$(grep -m1 'fault (camera)' "$BOOTH_LOG")
log "$fault"
assert_contains "$fault" "stalled" "the fault line (writer stopped: the stream went quiet)"
log "capture side without a writer: $(v4l2_caps "$LOOP" | grep -c 'Video Capture') 'Video Capture' lines in its caps"
sleep 3
booth_alive "loopback writer stopped"
assert_contains "$(booth_current_state)" "fault(camera" "state while the writer is stopped"
log "device caps after the writer closed: $(v4l2-ctl -d "$LOOP" --info 2>&1 | sed -n 's/.*Device Caps *: //p')"
for i in 1 2 3 4 5 6 7 8 9 10; do rmmod v4l2loopback 2>"$RESULTS/rmmod.err" && break; sleep 0.3; done
lsmod | grep -q '^v4l2loopback' && fail "v4l2loopback could not be unloaded: $(cat "$RESULTS/rmmod.err")"
modprobe -d "$VM_MODROOT" v4l2loopback devices=1 exclusive_caps=1 card_label=photobooth-loopback || fail "reloading v4l2loopback"
wait_for 10 "the loopback node after reload" loopback_node
LOOP=$(loopback_node)
log "v4l2loopback reloaded: $LOOP"
LOOPBACK_LOG=$RESULTS/loopback-writer-2.log
loopback_start "$LOOP" 10 --loop "${PHOTOS[@]}"
wait_for_line "$BOOTH_LOG" 'camera recovered' 40 >/dev/null
booth_wait_state idle 1 10
wait_for_count 'camera: streaming' 2 20
tap
booth_wait_state preview 1 10
tap
wait_for_line "$BOOTH_LOG" 'capture [0-9]+ saved:' 20 >/dev/null
cap=$(grep -m1 -E 'capture [0-9]+: frame #' "$BOOTH_LOG")
saved=$(grep -m1 -E 'capture [0-9]+ saved:' "$BOOTH_LOG")
log "$cap"; log "$saved"
seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
wline=$(grep "^frame=$seq " "$LOOPBACK_LOG") || fail "the restarted writer logged no frame $seq"
fed=$(sed 's/.* file=\([^ ]*\) .*/\1/' <<<"$wline")
path=$(sed -n 's/.* saved: \([^ ]*\) .*/\1/p' <<<"$saved")
assert_same_bytes "$path" "$fed" "capture after the writer restarted vs the photo fed as frame $seq"
booth_stop
loopback_stop
