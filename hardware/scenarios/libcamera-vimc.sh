#!/bin/bash
# libcamera-vimc: the booth's libcamera backend (LibcameraCamera through the C++ shim) on libcamera's
# own vimc pipeline handler (Debian 12's libcamera 0.0.3 and its ipa_vimc.so) over the kernel's vimc
# driver (built from linux-source by hardware/vm/setup; Debian leaves CONFIG_VIDEO_VIMC unset), with
# systemd-udevd running (libcamera enumerates only devices udev has initialized). Asserts:
#  - `cam -l` (libcamera's own tool) lists vimc's camera; `photoboothctl devices --json` lists it with
#    its id, model, sensor size, controls and stream formats;
#  - photoboothd --check opens the camera through libcamera once (exit 0);
#  - camera.backend = auto chooses libcamera (no gphoto2 camera, no UVC webcam) and says so; live view
#    streams at camera.preview_size (640x480 asked; libcamera's vimc validation may adjust it);
#  - the booth asks libcamera for a still stream beside the viewfinder (capture_size differs) and vimc's
#    pipeline keeps one stream: the log says so;
#  - a 4-shot session at camera.capture_size 1920x1080 (not the preview size: the stream switches and
#    back, vimc offers one stream): four captures saved, each decodes at the size libcamera streamed for
#    the still and shows vimc's test pattern (the tpg's 75% colour bars: 8 vertical bars, white to black,
#    read through TurboJPEG and compared by hue);
#  - vimc unbound mid-session (after the second shot): a camera fault naming libcamera, the daemon up;
#    bound again: "camera recovered", idle by itself; the next session's four shots all saved;
#  - another process streaming from the camera (libcamera's cam): the booth's fault names it ("in use
#    by cam (pid N)"), the daemon up; cam stopped: the booth recovers and streams by itself;
#  - camera.rotation = 180: the booth asks libcamera to turn the frames (orientation/transform, the
#    sensor's flips); vimc's pipeline leaves them unturned, the log says the booth turns them, and the
#    still shows the colour bars turned (black to white, left to right); with it, settings vimc cannot
#    take are said in the log: camera.format (V4L2's), camera.frame_rate (no FrameDurationLimits), and a
#    camera.capture_size libcamera adjusts (warned of at start with the size the still then has);
#  - camera.capture_size 4056x3040 (a Raspberry Pi HQ camera's full size), which vimc gives as 4056x2160:
#    the controls line names 4056x2160; a 4-shot session switches the one stream to it and back for each
#    still, and no camera fault follows (the encode and the switches are the booth's own time, not the
#    camera's silence: before #35, 3 of 4 stills ended in "stream stalled: no frames for 3 s"); every
#    line of the log carries a syslog priority and no colour (libcamera's own lines routed);
#  - the live view's gap around each still (last preview frame before the switch to the first after
#    the switch back, from the log's stream restarts) and trigger -> saved, reported as RESULT lines.
# vm-module: vimc
# vm-module: -vivid
# vm-module: -v4l2loopback
# vm-timeout: 300
. "$REPO/hardware/scenarios/lib.sh"
need cam python3 udevadm

udev_start
lst=$(cam -l 2>&1) || fail "cam -l: $lst"
log "cam -l: $(tr '\n' ' ' <<<"$lst")"
# The camera's own line ("1: 'Sensor B' (platform/vimc.0 Sensor B)"), not a log line naming the sensor:
# without the vimc IPA (libcamera-ipa) the pipeline logs 'Sensor B' and lists nothing.
cam_line=$(grep -E "^[0-9]+: .*\(platform/vimc\.0 Sensor B\)" <<<"$lst" || true)
[ -n "$cam_line" ] || fail "libcamera's cam lists no vimc camera (is libcamera-ipa installed?): $lst"
pass "libcamera's cam lists vimc's camera: $cam_line"

gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
tap() { pulse booth 0 low:100 high:0; }

PHOTOS=/tmp/photos
CONF=/tmp/photobooth.conf
booth_config "$CONF" \
    camera.backend=auto camera.preview_size=640x480 camera.capture_size=1920x1080 camera.settle_frames=2 \
    camera.capture_timeout=10s \
    button.chip="$CHIP" button.line=button button.debounce=30ms \
    session.preview=0s session.countdown=1s session.shots=4 session.between_shots=1s session.review=1s \
    picture.compose_single_shot=false storage.dir="$PHOTOS" storage.min_free=0B preview.file=/tmp/preview.jpg
cp "$CONF" "$RESULTS/photobooth.conf"
# photoboothd --check opens the camera once through libcamera (and the button line): exit 0, the camera named.
rc=0
"$BUILD_BIN/photoboothd" --check --config "$CONF" > "$RESULTS/check.log" 2>&1 || rc=$?
log "photoboothd --check: exit $rc: $(grep -m1 'check: ok: camera' "$RESULTS/check.log" || tail -n3 "$RESULTS/check.log")"
assert_eq "$rc" 0 "photoboothd --check exit status"
assert_contains "$(cat "$RESULTS/check.log")" "check: ok: camera" "photoboothd --check opened the camera"
assert_contains "$(grep 'check: ok: camera' "$RESULTS/check.log")" "vimc" "the camera --check opened"
booth_start "$CONF"
chose=$(wait_for_line "$BOOTH_LOG" 'camera: backend' 30)
assert_contains "$chose" "backend libcamera" "camera.backend = auto"
assert_contains "$chose" "Sensor B" "the camera auto chose"
streaming=$(wait_for_line "$BOOTH_LOG" 'camera: streaming' 30)
log "$streaming"
assert_contains "$streaming" "platform/vimc.0 Sensor B" "live view stream"
# The booth asked libcamera for a still stream beside the viewfinder (capture_size differs); vimc's
# pipeline keeps one stream, so stills switch the stream and back.
one=$(wait_for_line "$BOOTH_LOG" 'camera: controls: .*one stream' 10)
assert_contains "$one" "a still switches it to 1920x1080 and back" "the two-stream request answered with one stream"
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0

"$BUILD_BIN/photoboothctl" devices --json > "$RESULTS/devices.json" 2>"$RESULTS/devices.err" || fail "photoboothctl devices: $(cat "$RESULTS/devices.err")"
checks=$(python3 - "$RESULTS/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# libcamera's section of devices (its backend's own data: libcameraVersion, libcameraCameras).
lc = next((s.get("fields") or {} for s in d.get("cameraBackends", []) if s.get("backend") == "libcamera"), {})
cams = lc.get("libcameraCameras") or []
out = []
def check(ok, what): out.append(("PASS: " if ok else "FAIL: ") + what)
check(lc.get("libcameraVersion", "").startswith("v0."), f"devices: libcamera version {lc.get('libcameraVersion')}")
b = [c for c in cams if c["id"] == "platform/vimc.0 Sensor B"]
check(len(b) == 1, f"devices: libcamera cameras {[c['id'] for c in cams]}")
if b:
    c = b[0]
    w, _, h = (c.get("pixelArraySize") or "0x0").partition("x")
    check(int(w) >= 1920 and int(h) >= 1080, f"devices: sensor size {c.get('pixelArraySize')}")
    check(len(c.get("controls", [])) > 0, f"devices: controls {c.get('controls')}")
    check(any("BGR888" in f or "RGB888" in f for f in c.get("viewfinderFormats", [])), f"devices: viewfinder formats {c.get('viewfinderFormats')}")
    # vimc's pipeline answers the raw role with its processed BGR888/RGB888: no sensor modes to list.
    check(c.get("sensorModes") == [], f"devices: sensor modes (raw formats of the raw role) {c.get('sensorModes')}")
print("\n".join(out))
PY
) || fail "checking photoboothctl devices: $checks"
log "$checks"
assert_not_contains "$checks" "FAIL:" "photoboothctl devices lists the libcamera camera"
sleep 2   # past the settle frames

# ---------------------------------------------------------------- a 4-shot session
# colour_bars FILE: fails unless FILE decodes and shows the tpg's 8 colour bars (white yellow cyan green
# magenta red blue black), judged by which channels are high in each band.
# With "turned": the bars turned 180 degrees (black to white).
colour_bars() {
    local info
    info=$(jpeg-decode --bands 8 "$1") || fail "$1 does not decode: $info"
    python3 - "$info" "${2:-upright}" <<'PY' || fail "$1: not vimc's colour bars${2:+ ($2)}: $info"
import sys
info = sys.argv[1]
bands = [tuple(int(v) for v in b.split(",")) for b in info.split("bands=")[1].split()]
want = ["RGB", "RG", "GB", "G", "RB", "R", "B", ""]   # 75% colour bars: which channels are lit
if sys.argv[2] == "turned":
    want.reverse()
got = []
for r, g, b in bands:
    top = max(r, g, b, 1)
    got.append("".join(n for n, v in zip("RGB", (r, g, b)) if v > 96 and v > 0.6 * top))
if got != want:
    print(f"bands {bands} read as {got}, want {want}", file=sys.stderr)
    sys.exit(1)
PY
}
tap
wait_for_count 'capture [0-9]+ saved:' 4 120
booth_wait_state idle 1 60
mapfile -t FILES < <(find "$PHOTOS" -name 'booth-*-[0-9].jpg' | sort)
assert_eq "${#FILES[@]}" 4 "captures of the first session"
still_size=$(grep -m1 -E 'capture [0-9]+ saved:' "$BOOTH_LOG" | grep -oE '[0-9]+x[0-9]+' | head -n1)
log "still size: $still_size (camera.capture_size 1920x1080)"
for f in "${FILES[@]}"; do
    info=$(jpeg-decode "$f") || fail "$f does not decode: $info"
    assert_contains "$info" "width=${still_size%x*} height=${still_size#*x}" "$(basename "$f") decoded size"
    colour_bars "$f"
    pass "$(basename "$f") shows vimc's colour bars"
done
cp "${FILES[0]}" "$RESULTS/still.jpg"
booth_alive "after the first session"

# ---------------------------------------------------------------- unplug mid-session
tap
wait_for_count 'capture [0-9]+ saved:' 6 120
log "unbinding $(vimc_platform_dev) after the second shot of session 2"
vimc_unbind || fail "vimc unbind"
fault=$(wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 30)
log "$fault"
assert_contains "$fault" "libcamera" "the fault names libcamera"
booth_wait_state 'fault\(camera\)' 1 15
booth_alive "vimc unbound"
sleep 2
log "binding vimc again"
vimc_bind || fail "vimc bind"
udevadm settle -t 30 || true
wait_for_line "$BOOTH_LOG" 'camera recovered' 60 >/dev/null
booth_wait_state idle 2 30
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
before=$(log_count 'capture [0-9]+ saved:')
sleep 2
tap
wait_for_count 'capture [0-9]+ saved:' $((before + 4)) 120
booth_wait_state idle 3 60
for f in $(find "$PHOTOS" -name 'booth-*-[0-9].jpg' -newer "$RESULTS/still.jpg" | sort | tail -n4); do
    colour_bars "$f"
done
pass "after the rebind: four more captures, each vimc's colour bars"

"$BUILD_BIN/photoboothctl" status --json > "$RESULTS/status.json" 2>&1 || true
booth_stop

SESSIONS_LOG=$BOOTH_LOG

# ---------------------------------------------------------------- in use by another process
bg "$RESULTS/cam.log" cam -c 1 --capture
CAM_PID=$BG_PID
wait_for 15 "libcamera's cam streaming from vimc" grep -q 'cam0-stream0' "$RESULTS/cam.log"
# auto would not choose libcamera now: vimc's pipeline lists no camera while another process streams
# from it (its match sets up the media links: EBUSY). camera.backend = libcamera names the holder.
sed 's/^backend = auto$/backend = libcamera/' "$CONF" > /tmp/photobooth-libcamera.conf
BOOTH_LOG=$RESULTS/photoboothd-busy.log
booth_start /tmp/photobooth-libcamera.conf
busy=$(wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 30)
log "$busy"
assert_contains "$busy" "in use by cam (pid $CAM_PID)" "the fault names the process holding the camera"
booth_alive "the camera in use by cam"
stop_pid "$CAM_PID"
wait_for_line "$BOOTH_LOG" 'camera recovered' 60 >/dev/null
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
pass "cam stopped: the booth took the camera by itself"
booth_stop

# ---------------------------------------------------------------- camera.rotation 180
ROTATED=/tmp/photobooth-rotated.conf
booth_config "$ROTATED" \
    camera.backend=libcamera camera.preview_size=640x480 camera.capture_size=1910x1080 camera.settle_frames=2 \
    camera.capture_timeout=10s camera.rotation=180 camera.format=yuyv camera.frame_rate=25 \
    button.chip="$CHIP" button.line=button button.debounce=30ms \
    session.preview=0s session.countdown=1s session.shots=1 session.review=1s \
    picture.compose_single_shot=false storage.dir=/tmp/photos-rotated storage.min_free=0B
BOOTH_LOG=$RESULTS/photoboothd-rotated.log
booth_start "$ROTATED"
turn=$(wait_for_line "$BOOTH_LOG" 'camera: controls: ' 30)
log "$turn"
assert_contains "$turn" "camera.rotation 180°: this pipeline does not flip the sensor; the booth turns the frames" \
    "libcamera asked for the turn, vimc's pipeline left the frames unturned"
assert_contains "$turn" "camera.format = yuyv is for V4L2 cameras" "camera.format said to be V4L2's"
assert_contains "$turn" "camera.frame_rate: this camera has no FrameDurationLimits" "camera.frame_rate without the control"
adjusted=$(wait_for_line "$BOOTH_LOG" 'camera.capture_size 1910x1080 is not offered' 10)
log "$adjusted"
offered=$(grep -oE 'captures will be [0-9]+x[0-9]+' <<<"$adjusted" | grep -oE '[0-9]+x[0-9]+')
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 2
tap
wait_for_count 'capture [0-9]+ saved:' 1 120
turned=$(find /tmp/photos-rotated -name 'booth-*-[0-9].jpg' | head -n1)
[ -n "$turned" ] || fail "no capture saved with camera.rotation 180"
colour_bars "$turned" turned
info=$(jpeg-decode "$turned") || fail "$turned does not decode: $info"
assert_contains "$info" "width=${offered%x*} height=${offered#*x}" "the still has the size the start-up warning gave"
pass "camera.rotation 180: the still shows the colour bars turned ($(grep -m1 -oE 'capture [0-9]+: frame .*turned [^,]*' "$BOOTH_LOG"))"
booth_stop

# ---------------------------------------------------------------- a large still on one stream
LARGE=/tmp/photobooth-large.conf
booth_config "$LARGE" \
    camera.backend=libcamera camera.preview_size=640x480 camera.capture_size=4056x3040 camera.settle_frames=2 \
    camera.capture_timeout=30s \
    button.chip="$CHIP" button.line=button button.debounce=30ms \
    session.preview=0s session.countdown=1s session.shots=4 session.between_shots=1s session.review=1s \
    picture.compose_single_shot=false storage.dir=/tmp/photos-large storage.min_free=0B
BOOTH_LOG=$RESULTS/photoboothd-large.log
booth_start "$LARGE"
one=$(wait_for_line "$BOOTH_LOG" 'camera: controls: .*one stream' 30)
assert_contains "$one" "a still switches it to 4056x2160 and back" "the controls line names the size the switch gives"
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 2
tap
wait_for_count 'capture [0-9]+ saved:' 4 240
booth_wait_state idle 1 60
sleep 5   # past the stall window after the last switch back
assert_eq "$(log_count 'fault \(camera\)')" 0 "camera faults after four 4056x2160 stills"
assert_eq "$(log_count 'stream stalled')" 0 "stalls after four 4056x2160 stills"
assert_eq "$(grep -v '^<[0-7]>' "$BOOTH_LOG" | grep -cE 'ERROR|WARN|libcamera|libv4l2' || true)" 0 "library lines without a syslog priority"
assert_eq "$(grep -c $'\e\[' "$BOOTH_LOG" || true)" 0 "log lines with ANSI colours"
booth_stop

# ---------------------------------------------------------------- figures
python3 - "$SESSIONS_LOG" "$RESULTS/status.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
def median(v): return sorted(v)[len(v) // 2]
gaps = [float(m) for m in re.findall(r"live-view gap ([0-9.]+) ms", text)]
saved = [(float(a), float(b)) for a, b in re.findall(r"saved: .*trigger-to-frame ([0-9.-]+) ms, frame-to-saved ([0-9.-]+) ms", text)]
if gaps:
    print(f"RESULT live-view gap around a still (switch to 1920x1080 and back): median {median(gaps):.0f} ms, max {max(gaps):.0f} ms over {len(gaps)} stills (vimc BGR888, TCG)")
if saved:
    print(f"RESULT trigger -> saved: median {median([a + b for a, b in saved]):.0f} ms (trigger-to-frame {median([a for a, _ in saved]):.0f} + frame-to-saved {median([b for _, b in saved]):.0f}) over {len(saved)} stills")
try:
    c = json.load(open(sys.argv[2]))["camera"]
    print(f"RESULT live view {c.get('width')}x{c.get('height')} {c.get('format')}: {c.get('measuredFramesPerSecond') or 0:.1f} frames/s measured by the booth (frame timestamps)")
except Exception as e:
    print(f"no status figures: {e}")
PY
udev_stop
# What is left running would hold the scenario's output pipe open (the guest then waits for its timeout).
log "processes left: $(ps -eo pid,ppid,comm --no-headers | awk '$2 != 2 && $1 != 2 && $3 !~ /^(ps|awk|tr|bash|tee|timeout|init)$/ {print $1 " " $3}' | tr '\n' ';')"
