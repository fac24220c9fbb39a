#!/bin/bash
# corrupt-frames: the booth against a v4l2loopback camera that sends corrupt MJPEG frames, as
# cheap webcams do: truncated, without EOI, zero-length, random bytes. loopback-writer feeds real
# photos at 8 fps and, on SIGUSR1, a pattern of frame kinds from a file (frame i = the capture
# side's sequence i). Countdown 0 and preview 0: the press (gpio-sim, kernel edge timestamp) is
# the trigger.
#  A. 4 blocks of [good, 8 bad]: a press right after a good frame lands on the bad run; the saved
#     capture is the first GOOD frame fed after the trigger, byte-identical. The status counters
#     (photoboothctl status --json, framesDroppedByKind) grow by exactly what was fed: no-eoi =
#     truncated + no-eoi, empty = empty, no-soi = random; nothing else; no capture-time rejects.
#  B. 40 bad frames (5 s, longer than the 3 s stall limit): the camera fault "only bad frames",
#     shown by photoboothctl status; good frames again -> recovered by itself; a press captures.
# Throughout: the daemon never exits, every saved file is a whole photo that was fed, the drop
# log is rate-limited, photoboothctl status shows the counts, SIGTERM stops it cleanly.
# vm-timeout: 150
. "$REPO/hardware/scenarios/lib.sh"

require_captures
mapfile -t PHOTOS < <(captures_of_size 1280x720)
[ ${#PHOTOS[@]} -ge 2 ] || fail "need at least two 1280x720 photos in $CAPTURES, found ${#PHOTOS[@]}"
LOOP=$(loopback_node) || fail "no v4l2loopback node (card_label photobooth-loopback)"
PATTERN=/tmp/pattern.txt
FPS=8
loopback_start "$LOOP" $FPS --loop --pattern-file "$PATTERN" "${PHOTOS[@]}"
WLOG=$LOOPBACK_LOG

gpiosim_create booth 2 button spare
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
PHOTODIR=/tmp/photos
CONF=/tmp/photobooth.conf
booth_config "$CONF" \
    camera.device=photobooth-loopback camera.format=mjpeg camera.preview_size=1280x720 \
    camera.capture_size=1280x720 camera.frame_rate=$FPS camera.settle_frames=0 camera.idle_stop=10min \
    camera.capture_timeout=3s \
    button.chip="$CHIP" button.line=button button.debounce=30ms button.long_press=1500ms \
    session.preview=0s session.countdown=0s session.review=1s \
    storage.dir="$PHOTODIR" storage.min_free=0B preview.file=/tmp/preview.jpg
cp "$CONF" "$RESULTS/photobooth.conf"
booth_start "$CONF"
wait_for_line "$BOOTH_LOG" 'camera: streaming' 30 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 1

ctl() { "$BUILD_BIN/photoboothctl" "$@"; }
# dropped KIND: framesDroppedByKind[KIND] from a status JSON on stdin (0 when absent)
dropped() { jq -r --arg k "$1" '.camera.framesDroppedByKind[$k] // 0'; }
# fed KIND FROM TO: frames of KIND the writer fed with FROM <= frame < TO
fed() { awk -v k="kind=$1" -v a="$2" -v b="$3" '/^frame=/ { split($1, f, "="); if ($2 == k && f[2] >= a && f[2] < b) n++ } END { print n + 0 }' "$WLOG"; }
# wline FRAME: the writer's line for a frame
wline() { grep "^frame=$1 " "$WLOG"; }
# saved_path N: the file of the Nth "capture N saved:" line
saved_path() { grep -E 'capture [0-9]+ saved:' "$BOOTH_LOG" | sed -n "$1s/.* saved: \([^ ]*\) .*/\1/p"; }
# press_and_check N: press now; the Nth capture must be the first good frame fed after the trigger,
# byte-identical, and the first frame after the trigger must have been a bad one.
press_and_check() {
    local n=$1 edge cap seq goods g1 g2 first_after first_kind fedfile path
    pulse booth 0 low:100 high:0
    wait_for_count 'capture [0-9]+ saved:' "$n" 20
    edge=$(grep -E 'edge accepted: rising' "$BOOTH_LOG" | sed -n "${n}s/.*rising at \([0-9.]*\)s.*/\1/p")
    [ -n "$edge" ] || fail "press $n: no accepted press in the log"
    cap=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | sed -n "${n}p")
    log "press $n (edge ${edge}s): $cap"
    seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
    [ -n "$seq" ] || fail "press $n: no frame number in: $cap"
    # frames whose write window ends at or after the trigger: "frame kind t_before"
    first_after=$(awk -v t="$edge" '/^frame=/ { split($1, f, "="); split($2, k, "="); split($6, b, "="); split($7, a, "=");
        if (a[2] + 0 >= t + 0) { print f[2], k[2], b[2]; exit } }' "$WLOG")
    read -r _ first_kind _ <<<"$first_after"
    [ "$first_kind" != good ] || fail "press $n: the first frame after the trigger ($first_after) was good: the press missed the bad run (timing under TCG); nothing proven"
    pass "press $n: the first frame fed after the trigger is bad ($first_after)"
    goods=$(awk -v t="$edge" '/^frame=/ && $2 == "kind=good" { split($1, f, "="); split($6, b, "="); split($7, a, "=");
        if (a[2] + 0 >= t + 0) { print f[2], b[2]; if (++n == 2) exit } }' "$WLOG")
    read -r g1 g1b g2 _ <<<"$(tr '\n' ' ' <<<"$goods")"
    if [ "$seq" = "$g1" ]; then
        pass "press $n: captured frame #$seq = the first good frame fed after the trigger"
    elif [ "$seq" = "$g2" ] && awk -v t="$edge" -v b="$g1b" 'BEGIN {exit !(t + 0 > b + 0)}'; then
        pass "press $n: captured frame #$seq: the trigger fell inside good frame $g1's write, the next good one"
    else
        fail "press $n: captured frame #$seq; the first good frame after the trigger $edge is #$g1 ($(wline "$g1"))"
    fi
    wline "$seq" | grep -q ' kind=good ' || fail "press $n: the writer did not feed frame $seq whole: $(wline "$seq")"
    fedfile=$(wline "$seq" | sed 's/.* file=\([^ ]*\) .*/\1/')
    path=$(saved_path "$n")
    assert_file "$path" "press $n: saved capture"
    assert_same_bytes "$path" "$fedfile" "press $n: saved capture vs the photo fed as frame $seq"
    cp "$path" "$RESULTS/capture-$n.jpg"
}

# ---------------------------------------------------------------- A: a press lands on bad frames
s0=$(ctl status --json) || fail "photoboothctl status --json: $s0"
printf '%s\n' "$s0" > "$RESULTS/status-0.json"
block="good truncated no-eoi empty random truncated no-eoi empty random"
echo "$block $block $block $block" > "$PATTERN"
kill -USR1 "$LOOPBACK_PID"
wait_for 5 "the writer's pattern A start" grep -q '^pattern start ' "$WLOG"
pa=$(sed -n 's/^pattern start frame=\([0-9]*\) .*/\1/p' "$WLOG" | sed -n 1p)
log "pattern A from frame $pa: 4 x [$block]"
# press right after the pattern's first good frame: the next 8 frames (1 s) are bad
wait_for 5 "pattern A's first good frame" grep -q "^frame=$pa kind=good " "$WLOG"
press_and_check 1
wait_for 15 "the end of pattern A" grep -q '^pattern end ' "$WLOG"
pe=$(sed -n 's/^pattern end frame=\([0-9]*\)$/\1/p' "$WLOG" | sed -n 1p)
sleep 1   # 8 whole frames after it: the booth has dequeued every pattern frame
booth_wait_state idle 1 10
s1=$(ctl status --json) || fail "photoboothctl status --json: $s1"
printf '%s\n' "$s1" > "$RESULTS/status-A.json"
ctl status > "$RESULTS/status-A.txt" 2>&1
log "after pattern A: $(grep '^camera:' "$RESULTS/status-A.txt")"
want_noeoi=$(( $(fed truncated "$pa" "$pe") + $(fed no-eoi "$pa" "$pe") ))
want_empty=$(fed empty "$pa" "$pe")
want_nosoi=$(fed random "$pa" "$pe")
assert_eq "$want_noeoi" 16 "truncated + no-eoi frames fed in pattern A (writer log)"
for kind in no-eoi empty no-soi short driver-error oversize stale; do
    case $kind in no-eoi) want=$want_noeoi ;; empty) want=$want_empty ;; no-soi) want=$want_nosoi ;; *) want=0 ;; esac
    got=$(( $(dropped "$kind" <<<"$s1") - $(dropped "$kind" <<<"$s0") ))
    assert_eq "$got" "$want" "frames dropped as $kind during pattern A (status delta)"
done
assert_eq "$(( $(jq .camera.framesDropped <<<"$s1") - $(jq .camera.framesDropped <<<"$s0") ))" 32 "frames dropped in all during pattern A"
assert_eq "$(jq .camera.badFrames <<<"$s1")" 0 "frames rejected at capture (every bad frame was caught on arrival)"
assert_contains "$(cat "$RESULTS/status-A.txt")" "no-eoi" "photoboothctl status (human) lists the kinds"

# ---------------------------------------------------------------- B: only bad frames for 5 s
bad="truncated no-eoi empty random"
echo "$bad $bad $bad $bad $bad $bad $bad $bad $bad $bad" > "$PATTERN"
kill -USR1 "$LOOPBACK_PID"
wait_for 5 "the writer's pattern B start" test "$(grep -c '^pattern start ' "$WLOG")" -ge 2
wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 10 >/dev/null
fault=$(grep -m1 'fault (camera)' "$BOOTH_LOG")
log "$fault"
assert_contains "$fault" "only bad frames" "the fault line (a camera sending only bad frames)"
st=$(ctl status 2>&1)
printf '%s\n' "$st" > "$RESULTS/status-B-fault.txt"
assert_contains "$st" "fault camera: camera lost: only bad frames" "photoboothctl status in the fault"
booth_alive "in the camera fault"
wait_for 15 "the end of pattern B" test "$(grep -c '^pattern end ' "$WLOG")" -ge 2
wait_for_line "$BOOTH_LOG" 'camera recovered' 20 >/dev/null
booth_wait_state idle 2 10
wait_for_count 'camera: streaming' 2 20
sleep 1
# a press right after a good frame: the next frame is good too (no pattern), so only the capture is checked
pulse booth 0 low:100 high:0
wait_for_count 'capture [0-9]+ saved:' 2 20
cap=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | sed -n 2p)
seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
wline "$seq" | grep -q ' kind=good ' || fail "capture after recovery: frame $seq was not fed whole: $(wline "$seq")"
assert_same_bytes "$(saved_path 2)" "$(wline "$seq" | sed 's/.* file=\([^ ]*\) .*/\1/')" "capture after recovery vs the photo fed as frame $seq"
booth_wait_state idle 3 10

# ---------------------------------------------------------------- throughout
mapfile -t SAVED < <(find "$PHOTODIR" -name 'booth-*.jpg' | sort)
assert_eq "${#SAVED[@]}" 2 "JPEG files under $PHOTODIR"
for f in "${SAVED[@]}"; do
    info=$(jpeg-decode "$f") || fail "saved $f does not decode: $info"
    same=0
    for p in "${PHOTOS[@]}"; do cmp -s "$f" "$p" && same=1; done
    assert_eq "$same" 1 "$f is byte-identical to a photo fed whole"
done
lines=$(log_count 'camera: dropped [0-9]+ bad')
log "drop log lines: $lines; $(grep -E 'camera: dropped [0-9]+ bad' "$BOOTH_LOG" | tail -n1)"
assert_ge "$lines" 1 "drop log lines"
assert_le "$lines" 5 "drop log lines for ~100 dropped frames over ~15 s (rate-limited: one per 10 s)"
booth_alive "after both patterns"
booth_stop
loopback_stop
