#!/bin/bash
# input: the button as a kernel input device through libevdev (button.source = input): qemu's
# emulated USB keyboard on an xHCI controller, pressed from the host through QMP input-send-event
# (so every key goes through the kernel's real USB HID and evdev stack), unplugged and plugged back
# with QMP device_del/device_add; a touch screen and a one-key device made through uinput in the
# guest. Camera: vivid. Settings: debounce 30 ms, long press 1500 ms, stuck limit 30 s (2 s in parts 6-7),
# preview 1 s, countdown 3 s, review 5 s.
# Asserts, in order:
#  1. the keyboard is found by its kernel name and grabbed (EVIOCGRAB: a second grab is refused);
#  2. a 150 ms tap of KEY_SPACE in idle -> press #1, a session begins; another key (KEY_A) does nothing;
#  3. a 2.5 s hold in idle: the kernel's auto-repeat sends tens of repeats, the booth counts one press
#     (one session) and logs the repeats as ignored; in its review the print key (KEY_P) requests the
#     print and the skip key (KEY_S) skips it; the print key in idle does nothing;
#  4. the keyboard unplugged (device_del) mid-session -> fault(button) naming the device and ENODEV, daemon up;
#     plugged back (device_add) -> "button recovered" without a restart, idle; a tap -> a session;
#  5. a touch screen (uinput, direct multitouch): button.input_device = any touch screen,
#     button.input_key = tap -> found; a burst of 6 touches of 3 ms -> rejected, no session; a
#     120 ms tap -> a session;
#  6. two sources (gpio, input) with the input device missing -> a warning, the booth runs on gpio
#     (no fault), a GPIO press makes a session; the touch screen made -> "works again";
#  7. a key held past button.stuck_limit (uinput) -> fault(button) "button stuck"; released -> recovered.
#  6b. (between 6 and 7) the uinput key flooded: 3000 downs and ups with no wait (each pair in one
#     write: down for microseconds), far shorter than the debounce, until the kernel's evdev buffer
#     overflows (SYN_DROPPED): 6 floods in idle -> no press, no session; a flood in a countdown -> no
#     press; a flood then a real 1 s hold -> one press, one session;
#     the SYN_DROPPED warnings rate-limited (the first, then at most one every 10 s); lost edges in words.
# vm-usb: kbd
# vm-module: xhci_pci
# vm-module: usbhid
# vm-module: hid_generic
# vm-module: uinput
# vm-module: evdev
# vm-timeout: 540
. "$REPO/hardware/scenarios/lib.sh"

vivid_node >/dev/null || fail "no vivid capture node"
PHOTODIR=/tmp/photos
CONF=/tmp/photobooth.conf
KBD_NAME="QEMU QEMU USB Keyboard"
base=(camera.device=vivid camera.format=yuyv camera.preview_size=640x480 camera.capture_size=640x480 camera.frame_rate=25
      button.debounce=30ms button.long_press=1500ms
      session.preview=1s session.countdown=3s session.review=5s
      storage.dir="$PHOTODIR" storage.min_free=0B preview.file=/tmp/preview.jpg)
sessions() { log_count 'session [0-9]+ begins'; }
is_idle() { [ "$(booth_current_state)" = idle ]; }
wait_idle() { wait_for "$1" "the booth back in idle" is_idle; }

kbd_node() {
    local d
    for d in /sys/class/input/event*; do
        [ "$(cat "$d/device/name" 2>/dev/null)" = "$KBD_NAME" ] && { echo "/dev/input/${d##*/}"; return 0; }
    done
    return 1
}

wait_for 30 "the USB keyboard's event node" kbd_node
KBD=$(kbd_node)
log "USB keyboard: $KBD ($(cat /sys/class/input/${KBD##*/}/device/name))"

# 1-3: the USB keyboard.
# A long review: the skip key ends it, and the host's taps under TCG on a busy machine can come seconds apart.
booth_config "$CONF" "${base[@]/#session.review=5s/session.review=20s}" button.source=input button.input_device="$KBD_NAME" \
    button.input_key=KEY_SPACE button.stuck_limit=30s button.print_key=KEY_P button.skip_key=KEY_S print.mode=press
cp "$CONF" "$RESULTS/photobooth-keyboard.conf"
BOOTH_LOG=$RESULTS/photoboothd-keyboard.log
booth_start "$CONF" --verbose
wait_for_line "$BOOTH_LOG" 'camera: streaming' 60 >/dev/null
grabbed=$(wait_for_line "$BOOTH_LOG" 'button: .* grabbed, key KEY_SPACE' 20)
assert_contains "$grabbed" "$KBD" "the grabbed device is the USB keyboard"
python3 - "$KBD" <<'PY' || fail "a second EVIOCGRAB of $KBD succeeded: the booth did not grab it"
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x40044590, 1)  # EVIOCGRAB
except OSError as e:
    sys.exit(0 if e.errno == 16 else 1)  # EBUSY: held by the booth
sys.exit(1)
PY
pass "a second grab of $KBD is refused (EBUSY)"
devices=$("$BUILD_BIN/photoboothctl" devices) || fail "photoboothctl devices: $devices"
printf '%s\n' "$devices" > "$RESULTS/devices-keyboard.txt"
assert_contains "$devices" "$KBD \"$KBD_NAME\" [keyboard] 0627:0001" "devices lists the USB keyboard with its kind and USB id"
assert_contains "$(grep -A1 -F "$KBD " <<<"$devices")" "KEY_SPACE" "devices lists its keys"

tap a 0.15
sleep 2
assert_eq "$(sessions)" 0 "sessions after KEY_A (not the button's key)"
tap spc 0.15
wait_for_count 'session [0-9]+ begins' 1 20
assert_eq "$(log_count 'KEY_SPACE down at .*: press #1')" 1 "press #1 from KEY_SPACE"
wait_idle 60

tap spc 2.5
wait_for_count 'session [0-9]+ begins' 2 20
# The review keys (print.mode = press, no printer here: the request is what is checked).
wait_for_count 'state: .* -> review$' 2 60
tap p 0.1
wait_for_line "$BOOTH_LOG" 'requested by the print key' 10 >/dev/null
tap s 0.1
wait_for_line "$BOOTH_LOG" 'skipped by the skip key' 10 >/dev/null
pass "the print and skip keys act in review"
wait_idle 60
tap p 0.1
wait_for_line "$BOOTH_LOG" 'print key ignored in idle' 10 >/dev/null
repeats=$(grep -o 'auto-repeat at .* ignored ([0-9]* so far)' "$BOOTH_LOG" | tail -n1 | sed 's/.*(\([0-9]*\) so far)/\1/')
log "auto-repeats during the 2.5 s hold: ${repeats:-0}"
assert_ge "${repeats:-0}" 10 "auto-repeat events seen while held (kernel repeat: 250 ms delay, 33 ms period)"
assert_eq "$(log_count ': press #[0-9]+')" 2 "presses after a tap and a 2.5 s hold (repeats are no presses)"
assert_eq "$(sessions)" 2 "sessions after the hold (and the print key in idle)"
assert_eq "$(log_count 'long press #2')" 1 "the hold's long press, once"

# 4: unplugged mid-session (in its countdown) and plugged back.
tap spc 0.15
wait_for_count 'session [0-9]+ begins' 3 20
qmp unplug '{"execute":"device_del","arguments":{"id":"kbd"}}'
line=$(wait_for_line "$BOOTH_LOG" 'fault \(button\)' 30)
log "$line"
assert_contains "$line" "$KBD_NAME" "the fault names the device"
assert_contains "$line" "ENODEV" "the fault says unplugged (ENODEV)"
booth_alive "the keyboard unplugged"
# Meant for the countdown; on a loaded host the unplug can land in the review, whose faults wait for its end (20 s).
in_button_fault() { case "$(booth_current_state)" in *"fault(button"*) return 0 ;; *) return 1 ;; esac; }
wait_for 30 "the booth in fault(button) while unplugged" in_button_fault
qmp plug '{"execute":"device_add","arguments":{"driver":"usb-kbd","id":"kbd","bus":"xhci.0"}}'
wait_for 30 "the USB keyboard back" kbd_node
log "USB keyboard back as $(kbd_node)"
wait_for_line "$BOOTH_LOG" 'button recovered' 45 >/dev/null
wait_idle 20
pass "recovered without a restart (pid $BOOTH_PID)"
tap spc 0.15
wait_for_count 'session [0-9]+ begins' 4 20
wait_idle 60
booth_stop

# 5: a touch screen.
mkfifo /tmp/touch.in
"$TOOLS/uinput-events" --touch < /tmp/touch.in > /tmp/touch.out 2>&1 &
TOUCH_PID=$!
exec 7> /tmp/touch.in
wait_for 10 "the uinput touch screen" grep -q '^ready /dev/input/event' /tmp/touch.out
TOUCH=$(sed -n 's/^ready //p' /tmp/touch.out)
log "touch screen: $TOUCH"
booth_config "$CONF" "${base[@]}" button.source=input button.input_device="any touch screen" button.input_key=tap button.stuck_limit=30s
cp "$CONF" "$RESULTS/photobooth-touch.conf"
BOOTH_LOG=$RESULTS/photoboothd-touch.log
booth_start "$CONF" --verbose
wait_for_line "$BOOTH_LOG" 'camera: streaming' 60 >/dev/null
assert_contains "$(wait_for_line "$BOOTH_LOG" 'button: .* grabbed, key tap' 20)" "$TOUCH" "any touch screen finds the uinput one"
assert_contains "$("$BUILD_BIN/photoboothctl" devices)" "$TOUCH \"photobooth test touch screen\" [touch screen]" "devices lists the touch screen"
echo "burst 6 3" >&7
sleep 2
assert_eq "$(sessions)" 0 "sessions after a burst of 3 ms touches"
assert_ge "$(log_count 'tap (down|up) at .* rejected')" 1 "the touches shorter than the debounce are rejected"
echo "down" >&7; echo "sleep 120" >&7; echo "up" >&7
wait_for_count 'session [0-9]+ begins' 1 20
wait_idle 60
booth_stop

# 6: gpio and input; the input device missing at start.
gpiosim_create booth 1 button
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
booth_config "$CONF" "${base[@]}" button.source="gpio, input" button.input_device="photobooth test key" button.input_key=KEY_SPACE \
    button.chip="$CHIP" button.line=button button.stuck_limit=2s
BOOTH_LOG=$RESULTS/photoboothd-both.log
booth_start "$CONF" --verbose
wait_for_line "$BOOTH_LOG" 'camera: streaming' 60 >/dev/null
warn=$(wait_for_line "$BOOTH_LOG" 'button: source input failed' 20)
assert_contains "$warn" "the booth runs on gpio" "the warning says what still works"
sleep 2
assert_not_contains "$(grep 'state: ' "$BOOTH_LOG")" "fault(button" "states with one source of two missing"
st=$("$BUILD_BIN/photoboothctl" status) || fail "photoboothctl status: $st"
assert_contains "$st" "input: input 'photobooth test key', key KEY_SPACE (failed: " "status shows the failed source"
assert_contains "$st" "; retrying)" "status says it is retried"
pulse booth 0 low:150 high:0
wait_for_count 'session [0-9]+ begins' 1 20
wait_idle 60
mkfifo /tmp/key.in
"$TOOLS/uinput-events" --key 57 < /tmp/key.in > /tmp/key.out 2>&1 &
KEY_PID=$!
exec 8> /tmp/key.in
wait_for 10 "the uinput key" grep -q '^ready /dev/input/event' /tmp/key.out
wait_for_line "$BOOTH_LOG" 'button: source input works again' 45 >/dev/null
echo "down" >&8; echo "sleep 120" >&8; echo "up" >&8
wait_for_count 'session [0-9]+ begins' 2 20
wait_idle 60

# 6b: the key flooded with bounce noise (no wait between downs and ups) until the kernel's buffer overflows.
floods_done() { [ "$(grep -c '^done flood' /tmp/key.out || true)" -ge "$1" ]; }
flood() {  # flood N: N downs and ups, waited for
    local before
    before=$(grep -c '^done flood' /tmp/key.out || true)
    echo "flood $1" >&8
    wait_for 120 "the flood of $1 downs and ups written" floods_done $((before + 1))
}
presses() { log_count ': press #[0-9]+'; }
s0=$(sessions); p0=$(presses); t0=$SECONDS
for _ in 1 2 3 4 5 6; do flood 3000; sleep 1; done
sleep 2
drops=$(log_count 'events dropped by the kernel \(SYN_DROPPED\)')
warned=$(log_count '^<4>.*events dropped by the kernel \(SYN_DROPPED\)')
log "6 floods of 3000 downs and ups in $((SECONDS - t0)) s: $drops SYN_DROPPED, $warned of them warned"
assert_ge "$drops" 1 "SYN_DROPPED during the floods (the kernel's buffer overflowed)"
assert_eq "$(sessions)" "$s0" "sessions after 6 floods in idle"
assert_eq "$(presses)" "$p0" "presses after 6 floods in idle"
assert_le "$warned" $((2 + (SECONDS - t0) / 10)) "SYN_DROPPED warnings (the first, then at most one every 10 s)"
assert_not_contains "$(grep -E 'edgesLost|releaseLost' "$BOOTH_LOG")" "button:" "lost edges are logged in words, not as Swift enums"
c0=$(log_count 'state: .* -> countdown')
echo "down" >&8; echo "sleep 120" >&8; echo "up" >&8
wait_for_count 'state: .* -> countdown' $((c0 + 1)) 20
p1=$(presses)
flood 3000
sleep 1
assert_eq "$(presses)" "$p1" "presses after a flood in the countdown"
wait_idle 60
s1=$(sessions); p2=$(presses)
echo "flood 3000" >&8; echo "down" >&8; echo "sleep 1000" >&8; echo "up" >&8
wait_for_count 'session [0-9]+ begins' $((s1 + 1)) 60
sleep 2
assert_eq "$(presses)" $((p2 + 1)) "presses after a flood and a 1 s hold"
assert_eq "$(sessions)" $((s1 + 1)) "sessions after a flood and a 1 s hold"
wait_idle 60
pass "a flooded key presses nothing; a real hold after a flood is one press"

# 7: the key held past the stuck limit (2 s).
echo "down" >&8
line=$(wait_for_line "$BOOTH_LOG" 'fault \(button\)' 20)
assert_contains "$line" "button stuck" "the fault of a held key"
sleep 1
echo "up" >&8
wait_for_line "$BOOTH_LOG" 'button recovered' 20 >/dev/null
wait_idle 60
# Press -> session begun (the preview on screen, the countdown after it), from the key's kernel event
# timestamp to the main loop's beginSession, for the USB key's sessions (keyboard run only).
mapfile -t after < <(grep -oE 'session [0-9]+ begins, [0-9.]+ ms after the press' "$RESULTS/photoboothd-keyboard.log" | sed 's/.*begins, \([0-9.]*\) ms.*/\1/')
[ ${#after[@]} -ge 3 ] || fail "press latency lines in the keyboard run: ${#after[@]}"
for ms in "${after[@]}"; do assert_le "$ms" 1000 "USB key press -> session begun, ms (TCG)"; done
log "RESULT USB key press -> session begun: ${after[*]} ms (kernel event timestamp -> main loop; qemu usb-kbd via xHCI, TCG, not a hardware figure)"
booth_stop
echo quit >&7; echo quit >&8
exec 7>&- 8>&-
wait "$TOUCH_PID" "$KEY_PID" 2>/dev/null
pass "input scenario complete"
