#!/bin/bash
# corrupt-frames: the booth against a v4l2loopback camera that sends corrupt MJPEG frames, as
# cheap webcams do: truncated, without EOI, zero-length, random bytes. loopback-writer feeds real
# photos at 8 fps and, on SIGUSR1, a pattern of frame kinds from a file (frame i = the capture
# side's sequence i). Countdown 0 and preview 0: the press (gpio-sim, kernel edge timestamp) is
# the trigger.
#  A. blocks of [good, 15 bad] (a good frame every 2 s): presses (until one lands on a bad run, at
#     most 3) each save the first GOOD frame fed after the trigger, byte-identical. The status counters
#     (photoboothctl status --json, framesDroppedByKind) grow by exactly what was fed: no-eoi =
#     truncated + no-eoi, empty = empty, no-soi = random; nothing else; no capture-time rejects.
#  B. only bad frames, longer than the 3 s stall limit: the camera fault "only bad frames", shown by
#     photoboothctl status; good frames again (on cue) -> recovered by itself; a press captures.
# Throughout: the daemon never exits, every saved file is a whole photo that was fed, the drop
# log is rate-limited, photoboothctl status shows the counts, SIGTERM stops it cleanly.
# vm-timeout: 240
. "$REPO/hardware/scenarios/lib.sh"
need jq v4l2-ctl

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
    camera.capture_timeout=6s \
    button.chip="$CHIP" button.line=button button.debounce=30ms button.long_press=1500ms \
    session.preview=0s session.countdown=0s session.review=1s \
    storage.dir="$PHOTODIR" storage.min_free=0B preview.file=/tmp/preview.jpg
cp "$CONF" "$RESULTS/photobooth.conf"
booth_start "$CONF"
T_START=$(uptime_s)
wait_for_line "$BOOTH_LOG" 'camera: streaming' 60 >/dev/null
wait_for 10 "photoboothd holds $CHIP line 0" gpio_line_used "$CHIP" 0
sleep 1

ctl() { "$BUILD_BIN/photoboothctl" "$@"; }
# fed KIND FROM TO: frames of KIND the writer fed with FROM <= frame < TO
fed() { awk -v k="kind=$1" -v a="$2" -v b="$3" '/^frame=/ { split($1, f, "="); if ($2 == k && f[2] >= a && f[2] < b) n++ } END { print n + 0 }' "$WLOG"; }
# lines_ge REGEX N: the writer's log has at least N lines matching REGEX
lines_ge() { [ "$(grep -c -- "$1" "$WLOG")" -ge "$2" ]; }
# wline FRAME: the writer's line for a frame
wline() { grep "^frame=$1 " "$WLOG"; }
# saved_path N: the file of the Nth "capture N saved:" line
saved_path() { grep -E 'capture [0-9]+ saved:' "$BOOTH_LOG" | sed -n "$1s/.* saved: \([^ ]*\) .*/\1/p"; }
# press_and_check N: press now; the Nth capture must be the first good frame fed after the
# trigger, byte-identical. Sets LANDED_ON_BAD=1 when the first frame fed after the trigger was bad.
press_and_check() {
    local n=$1 edge cap seq goods g1 g1b g2 first_after first_kind fedfile path
    pulse booth 0 low:100 high:0
    wait_for_count 'capture [0-9]+ saved:' "$n" 20
    edge=$(grep -E 'edge accepted: rising' "$BOOTH_LOG" | sed -n "${n}s/.*rising at \([0-9.]*\)s.*/\1/p")
    [ -n "$edge" ] || fail "press $n: no accepted press in the log"
    cap=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | grep 'trigger-to-frame' | sed -n "${n}p")
    log "press $n (edge ${edge}s): $cap"
    seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
    [ -n "$seq" ] || fail "press $n: no frame number in: $cap"
    # the first frame whose write window ends at or after the trigger: "frame kind t_before"
    first_after=$(awk -v t="$edge" '/^frame=/ { split($1, f, "="); split($2, k, "="); split($6, b, "=");
        split($7, a, "="); if (a[2] + 0 >= t + 0) { print f[2], k[2], b[2]; exit } }' "$WLOG")
    read -r _ first_kind _ <<<"$first_after"
    LANDED_ON_BAD=0
    if [ "$first_kind" != good ]; then
        LANDED_ON_BAD=1
        log "press $n: the first frame fed after the trigger is bad ($first_after)"
    else
        log "press $n: the first frame fed after the trigger is good ($first_after): pressing again later"
    fi
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

# ---------------------------------------------------------------- A: presses land on bad frames
# [good, 15 bad] at 8 fps: a good frame every 2 s (bad runs of 1.9 s, under the 3 s stall limit);
# a press at any moment lands on a bad run 15 times in 16. Pressed until one did (at most 3).
s0=$(ctl status --json) || fail "photoboothctl status --json: $s0"
printf '%s\n' "$s0" > "$RESULTS/status-0.json"
block="good truncated no-eoi empty random truncated no-eoi empty random truncated no-eoi empty random truncated no-eoi empty"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do printf '%s\n' "$block"; done > "$PATTERN"
kill -USR1 "$LOOPBACK_PID"
wait_for 5 "the writer's pattern A start" grep -q '^pattern start ' "$WLOG"
pa=$(sed -n 's/^pattern start frame=\([0-9]*\) .*/\1/p' "$WLOG" | sed -n 1p)
log "pattern A from frame $pa: 12 x [$block]"
wait_for 5 "pattern A's first good frame" grep -q "^frame=$pa kind=good " "$WLOG"
presses=0
for try in 1 2 3; do
    presses=$try
    press_and_check "$try"
    booth_wait_state idle "$try" 15
    [ "$LANDED_ON_BAD" = 1 ] && break
done
[ "$LANDED_ON_BAD" = 1 ] || fail "none of $presses presses landed on a bad frame (15 in 16 should)"
pass "a capture whose trigger landed on bad frames saved the first good frame after them"
if ! lines_ge '^pattern end ' 1; then
    : > "$PATTERN"
    kill -USR1 "$LOOPBACK_PID"   # an empty pattern ends it at once
    wait_for 5 "the end of pattern A" lines_ge '^pattern end ' 1
fi
pe=$(sed -n 's/^pattern end frame=\([0-9]*\)$/\1/p' "$WLOG" | sed -n 1p)
sleep 1   # 8 whole frames after it: the booth has dequeued every pattern frame
s1=$(ctl status --json) || fail "photoboothctl status --json: $s1"
printf '%s\n' "$s1" > "$RESULTS/status-A.json"
ctl status > "$RESULTS/status-A.txt" 2>&1
log "after pattern A (frames $pa to $((pe - 1))): $(grep '^camera:' "$RESULTS/status-A.txt")"
want_noeoi=$(( $(fed truncated "$pa" "$pe") + $(fed no-eoi "$pa" "$pe") ))
want_empty=$(fed empty "$pa" "$pe")
want_nosoi=$(fed random "$pa" "$pe")
want_all=$((want_noeoi + want_empty + want_nosoi))
assert_ge "$want_all" 15 "bad frames fed in pattern A (writer log)"
# one jq for all deltas: "kind=delta" lines, then "all=…" and "bad=…"
deltas=$(jq -rn --argjson a "$s0" --argjson b "$s1" '
    (["no-eoi", "empty", "no-soi", "short", "driver-error", "oversize", "stale"][] as $k
     | "\($k)=\(($b.camera.framesDroppedByKind[$k] // 0) - ($a.camera.framesDroppedByKind[$k] // 0))"),
    "all=\($b.camera.framesDropped - $a.camera.framesDropped)", "bad=\($b.camera.badFrames)",
    "lost=\(($b.camera.framesLost // 0) - ($a.camera.framesLost // 0))"')
printf '%s\n' "$deltas" > "$RESULTS/status-A-deltas.txt"
delta() { sed -n "s/^$1=//p" <<<"$deltas"; }
lost=$(delta lost)
# v4l2loopback hands a reader that fell more than 2 frames behind the newest one: the frames
# between are lost (status framesLost, from sequence gaps). Then each kind can only fall short of
# what was fed, by no more than the frames lost in all.
log "frames lost during pattern A (sequence gaps): $lost"
for kind in no-eoi empty no-soi short driver-error oversize stale; do
    case $kind in no-eoi) want=$want_noeoi ;; empty) want=$want_empty ;; no-soi) want=$want_nosoi ;; *) want=0 ;; esac
    if [ "$lost" = 0 ]; then
        assert_eq "$(delta "$kind")" "$want" "frames dropped as $kind during pattern A (status delta; fed: writer log)"
    else
        assert_le "$(delta "$kind")" "$want" "frames dropped as $kind during pattern A (status delta; fed: writer log; $lost lost)"
        assert_ge "$(delta "$kind")" "$((want - lost))" "frames dropped as $kind during pattern A (fed $want, $lost lost)"
    fi
done
if [ "$lost" = 0 ]; then
    assert_eq "$(delta all)" "$want_all" "frames dropped in all during pattern A"
else
    assert_ge "$(delta all)" "$((want_all - lost))" "frames dropped in all during pattern A (fed $want_all, $lost lost)"
    assert_le "$(delta all)" "$want_all" "frames dropped in all during pattern A (fed $want_all, $lost lost)"
fi
assert_eq "$(delta bad)" 0 "frames rejected at capture (every bad frame was caught on arrival)"
assert_contains "$(cat "$RESULTS/status-A.txt")" "no-eoi" "photoboothctl status (human) lists the kinds"

# ---------------------------------------------------------------- B: only bad frames for 5 s
# up to 60 s of bad frames, ended on cue once the fault has been seen
bad="truncated no-eoi empty random"
for i in $(seq 120); do printf '%s\n' "$bad"; done > "$PATTERN"
kill -USR1 "$LOOPBACK_PID"
wait_for 5 "the writer's pattern B start" lines_ge '^pattern start ' 2
pb=$(sed -n 's/^pattern start frame=\([0-9]*\) .*/\1/p' "$WLOG" | sed -n 2p)
log "pattern B from frame $pb: bad frames only ($bad, in turn)"
idle_before=$(booth_state_count idle)
wait_for_line "$BOOTH_LOG" 'fault \(camera\)' 10 >/dev/null
fault=$(grep -m1 'fault (camera)' "$BOOTH_LOG")
log "$fault"
assert_contains "$fault" "only bad frames" "the fault line (a camera sending only bad frames)"
st=$(ctl status 2>&1)
printf '%s\n' "$st" > "$RESULTS/status-B-fault.txt"
# the reason: "camera lost: only bad frames for 3 s (…)", or after a retry's probe "camera not
# available: no good frame within 5 s, only bad ones (…)"
assert_contains "$st" "fault:    camera: camera " "photoboothctl status in the fault"
assert_contains "$(grep '^fault: *camera:' <<<"$st")" "only bad" "photoboothctl status: the camera fault's reason"
booth_alive "in the camera fault"
lines_ge '^pattern end ' 2 && fail "pattern B (60 s) ended before the fault was checked (too slow a guest?)"
: > "$PATTERN"
kill -USR1 "$LOOPBACK_PID"   # good frames again
wait_for 5 "the end of pattern B" lines_ge '^pattern end ' 2
wait_for_line "$BOOTH_LOG" 'camera recovered' 20 >/dev/null
booth_wait_state idle $((idle_before + 1)) 10
wait_for_count 'camera: streaming' 2 20
sleep 1
# whole frames only now: the capture after recovery is simply the first frame after the trigger
n=$((presses + 1))
pulse booth 0 low:100 high:0
wait_for_count 'capture [0-9]+ saved:' "$n" 20
cap=$(grep -E 'capture [0-9]+: frame #' "$BOOTH_LOG" | grep 'trigger-to-frame' | sed -n "${n}p")
log "press $n (after recovery): $cap"
seq=$(sed -n 's/.*frame #\([0-9]*\) .*/\1/p' <<<"$cap")
wline "$seq" | grep -q ' kind=good ' || fail "capture after recovery: frame $seq was not fed whole: $(wline "$seq")"
assert_same_bytes "$(saved_path "$n")" "$(wline "$seq" | sed 's/.* file=\([^ ]*\) .*/\1/')" "capture after recovery vs the photo fed as frame $seq"
booth_wait_state idle $((idle_before + 2)) 10

# ---------------------------------------------------------------- throughout
mapfile -t SAVED < <(find "$PHOTODIR" -name 'booth-*.jpg' | sort)
assert_eq "${#SAVED[@]}" "$n" "JPEG files under $PHOTODIR (one per press)"
for f in "${SAVED[@]}"; do
    info=$(jpeg-decode "$f") || fail "saved $f does not decode: $info"
    same=0
    for p in "${PHOTOS[@]}"; do cmp -s "$f" "$p" && same=1; done
    assert_eq "$same" 1 "$f is byte-identical to a photo fed whole"
done
lines=$(log_count 'camera: dropped [0-9]+ bad')
log "drop log lines: $lines; $(grep -E 'camera: dropped [0-9]+ bad' "$BOOTH_LOG" | tail -n1)"
assert_ge "$lines" 1 "drop log lines"
total=$(ctl status --json | jq .camera.framesDropped)
max=$(awk -v a="$T_START" -v b="$(uptime_s)" 'BEGIN {printf "%d", 2 + (b - a) / 10}')
assert_le "$lines" "$max" "drop log lines for $total dropped frames (rate-limited: one per 10 s; the daemon ran $(awk -v a="$T_START" -v b="$(uptime_s)" 'BEGIN {printf "%d", b - a}') s)"
booth_alive "after both patterns"
booth_stop
loopback_stop
