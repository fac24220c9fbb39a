#!/bin/bash
# capture-yuyv: the booth with its real V4L2 camera (vivid, 640x480 YUYV at 25 fps) and its real
# libgpiod button (a gpio-sim line named "button"), countdown 0 and preview 0 so the press is
# the trigger. Asserts:
#  - the daemon streams from vivid (found by card name) at 640x480 YUYV, 25 fps (S_PARM set);
#  - the button thread stamps the press with the kernel edge timestamp, which lies inside
#    gpio-pulse's write window, and the capture's trigger is that timestamp;
#  - one 100 ms press -> exactly one session, one capture saved, which decodes (TurboJPEG) at
#    640x480; trigger-to-frame (= press-to-frame, kernel edge to frame timestamp) is read back,
#    reported and bounded (>= 0, <= 250 ms: a few frame intervals under TCG);
#  - photoboothctl status and devices (JSON) give vivid's and gpio-sim's real figures: the
#    stream's format, size and rate, the button's chip and line, the line used by "photobooth".
# vm-timeout: 180
. "$REPO/hardware/scenarios/lib.sh"
need python3 v4l2-ctl

VIVID=$(vivid_node) || fail "no vivid capture node"
log "vivid capture node: $VIVID (the booth finds it by card name 'vivid')"
gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up     # released (active-low button to ground)

PHOTOS=/tmp/photos
CONF=/tmp/photobooth.conf
booth_config "$CONF" \
    camera.device=vivid camera.format=yuyv camera.preview_size=640x480 camera.capture_size=640x480 \
    camera.frame_rate=25 camera.settle_frames=2 \
    button.chip="$CHIP" button.line=button button.active_low=true button.bias=pull-up \
    button.debounce=30ms button.long_press=1500ms \
    session.preview=0s session.countdown=0s session.review=1s \
    storage.dir="$PHOTOS" storage.min_free=0B preview.file=/tmp/preview.jpg
cp "$CONF" "$RESULTS/photobooth.conf"
booth_start "$CONF"
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null   # the booth starts in idle, streaming
streaming=$(grep -m1 'camera: streaming' "$BOOTH_LOG")
assert_contains "$streaming" "640x480" "camera stream"
assert_contains "$streaming" "YUYV" "camera stream"
assert_contains "$streaming" "25" "camera stream frame rate"
assert_not_contains "$(grep '^<4>camera' "$BOOTH_LOG" || true)" "frame interval" "camera warnings"
wait_for_line "$BOOTH_LOG" "button: requested $CHIP" 10 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 1   # let the stream run past its settle frames before the press

pulse booth 0 low:100 high:0
t_before=$(pulse_t 0 t_before); t_after=$(pulse_t 0 t_after)
wait_for_line "$BOOTH_LOG" 'capture [0-9]+ saved:' 20 >/dev/null
booth_wait_state idle 1 15   # review (1 s) -> idle

press=$(grep -m1 'edge accepted: rising' "$BOOTH_LOG") || fail "no accepted press in the log"
edge=$(sed -n 's/.*rising at \([0-9.]*\)s.*/\1/p' <<<"$press")
log "press: $press"
assert_ge "$edge" "$t_before" "press edge timestamp (kernel, CLOCK_MONOTONIC) vs gpio-pulse write start"
assert_le "$edge" "$t_after" "press edge timestamp vs gpio-pulse write end"
assert_eq "$(log_count 'edge accepted: rising')" 1 "presses accepted"
assert_eq "$(log_count 'session [0-9]+ begins')" 1 "sessions begun"
trig=$(grep -m1 -E 'capture [0-9]+: trigger at' "$BOOTH_LOG")
assert_contains "$trig" "trigger at ${edge}s" "capture trigger (countdown 0: the press is the trigger)"
cap=$(grep -m1 -E 'capture [0-9]+: frame #' "$BOOTH_LOG")
saved=$(grep -m1 -E 'capture [0-9]+ saved:' "$BOOTH_LOG")
log "$cap"; log "$saved"
assert_eq "$(log_count 'capture [0-9]+ saved:')" 1 "captures saved"
latency=$(sed -n 's/.*trigger-to-frame \([0-9.-]*\) ms.*/\1/p' <<<"$cap")
f2s=$(sed -n 's/.*frame-to-saved \([0-9.-]*\) ms.*/\1/p' <<<"$saved")
[ -n "$latency" ] || fail "no trigger-to-frame in: $cap"
assert_ge "$latency" 0 "press-to-frame ms (frame timestamp at or after the kernel edge)"
assert_le "$latency" 250 "press-to-frame ms (TCG)"
assert_contains "$saved" "640x480 YUYV" "saved capture"

mapfile -t FILES < <(find "$PHOTOS" -name 'booth-*.jpg' | sort)
assert_eq "${#FILES[@]}" 1 "JPEG files under $PHOTOS"
assert_contains "$saved" "${FILES[0]}" "the saved path in the log"
info=$(jpeg-decode "${FILES[0]}") || fail "the saved capture ${FILES[0]} does not decode: $info"
log "$info"
assert_contains "$info" "width=640 height=480" "decoded capture size"
cp "${FILES[0]}" "$RESULTS/capture.jpg"
booth_alive "after the session"

# photoboothctl against the real drivers: status and devices give vivid's and gpio-sim's figures.
"$BUILD_BIN/photoboothctl" status --json > "$RESULTS/status.json" 2>&1 || fail "photoboothctl status: $(cat "$RESULTS/status.json")"
"$BUILD_BIN/photoboothctl" devices --json > "$RESULTS/devices.json" 2>&1 || fail "photoboothctl devices: $(cat "$RESULTS/devices.json")"
"$BUILD_BIN/photoboothctl" status > "$RESULTS/status.txt" 2>&1 || true
checks=$(/usr/bin/python3 - "$RESULTS/status.json" "$RESULTS/devices.json" "$VIVID" "$CHIP" <<'PY'
import json, sys
status, devices = (json.load(open(p)) for p in sys.argv[1:3])
vivid, chip = sys.argv[3], sys.argv[4]
out = []
def check(ok, what):
    out.append(("PASS: " if ok else "FAIL: ") + what)
c = status["camera"]
check(c["streaming"] and c["device"] == vivid, f"status: camera {c.get('device')} streaming (want {vivid})")
check((c["format"], c["width"], c["height"]) == ("YUYV", 640, 480), f"status: camera {c['format']} {c['width']}x{c['height']}")
check(abs((c["framesPerSecond"] or 0) - 25) < 0.5, f"status: frame rate {c['framesPerSecond']} (25 set)")
check(c["framesDelivered"] > 0, f"status: {c['framesDelivered']} frames delivered")
b = status["button"]
check(b["chip"] == chip and b["line"] == "button" and b["running"], f"status: button {b['chip']} line {b['line']} running={b['running']}")
check(b["lastPress"] is not None, f"status: last press {b['lastPress']}")
check(status["counters"]["completed"] == 1 and status["state"] == "idle", f"status: {status['state']}, {status['counters']['completed']} completed")
cams = [x for x in devices["cameras"] if x["path"] == vivid]
check(len(cams) == 1 and "vivid" in cams[0]["card"], f"devices: {vivid} listed with card {cams[0]['card'] if cams else None}")
if cams:
    yuyv = [f for f in cams[0]["formats"] if f["fourcc"] == "YUYV"]
    sizes = [(s["width"], s["height"]) for f in yuyv for s in f["sizes"]]
    check((640, 480) in sizes, f"devices: YUYV 640x480 among {len(sizes)} sizes")
    check(len(cams[0]["controls"]) > 0, f"devices: {len(cams[0]['controls'])} controls")
chips = [g for g in devices["gpioChips"] if g["name"] == chip]
check(len(chips) == 1, f"devices: gpio chip {chip} listed")
if chips:
    lines = {l["name"]: l for l in chips[0]["lines"]}
    check("button" in lines and "spare" in lines, f"devices: line names {sorted(lines)}")
    bl = lines.get("button", {})
    check(bl.get("used") and bl.get("consumer") == "photobooth", f"devices: line 'button' used by {bl.get('consumer')!r}")
    check(not lines.get("spare", {}).get("used", True), "devices: line 'spare' free")
print("\n".join(out))
PY
) || fail "checking photoboothctl's JSON: $checks"
log "$checks"
assert_not_contains "$checks" "FAIL:" "photoboothctl status/devices against vivid and gpio-sim"
booth_stop
log "RESULT press-to-frame ${latency} ms (kernel edge -> frame timestamp, vivid 640x480 YUYV 25 fps = 40 ms interval; TCG, not a hardware figure); frame-to-saved ${f2s} ms"
