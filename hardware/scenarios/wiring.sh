#!/bin/bash
# wiring: wrong button wiring is a fault, not a crash loop. For each of
#  a. a chip that does not exist (button.chip = gpiochip9),
#  b. a line that does not exist on a real chip (button.line = no-such-line),
#  c. a line already held by another process (gpiomon holding the "button" line),
# asserts: `photoboothd --check` exits 69 (device unavailable) and says which chip and line;
# the daemon started with the same config stays up, in fault(button), with a log line naming
# the chip and line. For c, once the other process lets go, the booth recovers by itself
# (fault retry) and returns to idle.
# vm-timeout: 200
. "$REPO/hardware/scenarios/lib.sh"

vivid_node >/dev/null || fail "no vivid capture node"
gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up

# case NAME CHIP LINE EXPECT...: --check and the daemon with button.chip/line, each EXPECT in both
run_case() {
    local name=$1 chip=$2 line=$3 conf out rc e; shift 3
    conf=/tmp/wiring-$name.conf
    booth_config "$conf" \
        camera.device=vivid camera.format=yuyv camera.preview_size=640x480 camera.capture_size=640x480 \
        camera.frame_rate=25 button.chip="$chip" button.line="$line" \
        storage.dir=/tmp/photos-$name storage.min_free=0B preview.file=/tmp/preview-$name.jpg
    out=$("$BUILD_BIN/photoboothd" --config "$conf" --check 2>&1); rc=$?
    printf '%s\n' "$out" > "$RESULTS/check-$name.txt"
    log "$name: photoboothd --check exited $rc: $(grep -i 'button' <<<"$out" | head -n2 | tr '\n' ' ')"
    assert_eq "$rc" 69 "$name: photoboothd --check exit status (69: device unavailable)"
    for e in "$@"; do assert_contains "$(grep -i 'button' <<<"$out")" "$e" "$name: --check's button line"; done
    CHECK_LINE=$(grep -m1 'check: button' <<<"$out")
    BOOTH_LOG=$RESULTS/photoboothd-$name.log
    booth_start "$conf"
    wait_for_line "$BOOTH_LOG" 'fault \(button\)' 20 >/dev/null
    FAULT_LINE=$(grep -m1 'fault (button)' "$BOOTH_LOG")
    log "$name: $FAULT_LINE"
    for e in "$@"; do assert_contains "$FAULT_LINE" "$e" "$name: the daemon's fault line"; done
    # the same words in both: the daemon's reason is --check's message
    assert_contains "$CHECK_LINE" "${FAULT_LINE#*fault (button): }" "$name: --check says what the daemon says"
    sleep 2   # a retry (1 s backoff) happens meanwhile: it must fail the same way, not crash
    booth_alive "$name: in fault"
    assert_contains "$(booth_current_state)" "fault(button" "$name: state"
}

run_case no-chip gpiochip9 button "gpiochip9" "button"
booth_stop
run_case no-line "$CHIP" no-such-line "$CHIP" "no-such-line"
booth_stop

bg "$RESULTS/gpiomon.log" gpiomon "$CHIP" 0
MON=$BG_PID
wait_for 10 "gpiomon holds $CHIP line 0" gpio_line_used "$CHIP" 0
run_case busy "$CHIP" button "$CHIP" "button" "busy"
stop_pid "$MON"
log "gpiomon stopped: the line is free again"
wait_for_line "$BOOTH_LOG" 'button recovered' 40 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0 after recovering" gpio_line_used "$CHIP" 0
assert_eq "$(booth_current_state)" idle "state after the line was freed"
booth_alive "after recovering"
booth_stop
