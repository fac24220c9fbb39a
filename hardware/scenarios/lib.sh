# hardware/scenarios/lib.sh: helpers for scenario scripts (bash), sourced as
#   . "$REPO/hardware/scenarios/lib.sh"
# Scenarios run in the qemu guest (hardware/vm/run), as root, chrooted into the host's
# root (read-only) with tmpfs on /tmp, /run, /root. Environment (from hardware/vm/guest.sh):
#   REPO, RESULTS (writable, copied back to the host), BUILD_BIN (host Swift build products,
#   e.g. "$BUILD_BIN/photoboothd"), TOOLS (gpio-pulse, loopback-writer, mono-now; on PATH),
#   SHARED_IMAGES (real photos: $REPO/../shared/images unless the host run set it), SCENARIO, KVER.
# Header lines a scenario may carry (read by the harness):
#   # vm-timeout: SECONDS                 guest-side limit (default 300)
#   # vm-module: NAME [PARAM=VALUE...]    load a module, or reload a default with these params
#   # vm-module: -NAME                    do not load a default (vivid, v4l2loopback, gpio-sim)
# Every assert prints what it expected and what it got, then exits 1.

set -u
exec 9>&2   # the scenario's stderr, for failures raised inside commands whose output is hidden
_T0=$(awk '{print $1}' /proc/uptime)
_BG_PIDS=()

# --------------------------------------------------------------- output and asserts
log() { printf '[%s +%ss] %s\n' "${SCENARIO:-scenario}" "$(awk -v a="$_T0" '{printf "%.2f", $1 - a}' /proc/uptime)" "$*"; }
fail() { printf '[%s] FAIL: %s\n' "${SCENARIO:-scenario}" "$*" >&2; exit 1; }
pass() { log "PASS: $*"; }

# need CMD... : every command must be on PATH, or the scenario fails naming the missing ones
# (install.sh --test installs them; a missing tool must never turn a check into an empty value).
need() {
    local c missing=()
    for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
    [ ${#missing[@]} -eq 0 ] || fail "missing prerequisite: ${missing[*]} not found on PATH (install.sh --test installs them)"
}
# assert_eq ACTUAL EXPECTED WHAT (an empty EXPECTED is allowed; say so by passing '')
assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; pass "$3 = '$1'"; }
# is_number VALUE: a decimal number (sign, digits, fraction, exponent as awk and printf write them); nothing else.
is_number() { [[ $1 =~ ^[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?$ ]]; }
# assert_ge ACTUAL MIN WHAT  (numbers; decimals allowed). An empty or unparsable ACTUAL fails:
# awk would read it as 0 and pass a "<=" check on a value that was never measured.
assert_ge() {
    is_number "$1" || fail "$3: expected a number >= $2, got '$1' (empty or not a number)"
    awk -v a="$1" -v b="$2" 'BEGIN {exit !(a + 0 >= b + 0)}' || fail "$3: expected >= $2, got $1"
    pass "$3 = $1 (>= $2)"
}
# assert_le ACTUAL MAX WHAT (likewise: an empty or unparsable ACTUAL fails)
assert_le() {
    is_number "$1" || fail "$3: expected a number <= $2, got '$1' (empty or not a number)"
    awk -v a="$1" -v b="$2" 'BEGIN {exit !(a + 0 <= b + 0)}' || fail "$3: expected <= $2, got $1"
    pass "$3 = $1 (<= $2)"
}
# assert_contains HAYSTACK NEEDLE WHAT
assert_contains() {
    case "$1" in *"$2"*) pass "$3 contains '$2'" ;; *) fail "$3: expected to contain '$2', got: $1" ;; esac
}
# assert_not_contains HAYSTACK NEEDLE WHAT
assert_not_contains() {
    case "$1" in *"$2"*) fail "$3: expected not to contain '$2', got: $1" ;; *) pass "$3 does not contain '$2'" ;; esac
}
# assert_file FILE WHAT: exists and is not empty
assert_file() { [ -s "$1" ] || fail "$2: file $1 missing or empty"; pass "$2: $1 ($(stat -c %s "$1") bytes)"; }
# assert_same_bytes A B WHAT
assert_same_bytes() {
    cmp -s "$1" "$2" || fail "$3: $1 ($(stat -c %s "$1" 2>/dev/null) bytes) and $2 ($(stat -c %s "$2" 2>/dev/null) bytes) differ: $(cmp "$1" "$2" 2>&1 | head -n1)"
    pass "$3: $1 is byte-identical to $2"
}
# assert_cmd WHAT CMD...: the command must exit 0 (its output is shown when it does not)
assert_cmd() {
    local what=$1 out; shift
    out=$("$@" 2>&1) || fail "$what: '$*' exited $?: $out"
    pass "$what"
}
# wait_for SECONDS WHAT CMD...: polls CMD every 50 ms until it exits 0; fails after SECONDS.
wait_for() {
    local secs=$1 what=$2 end; shift 2
    end=$(awk -v s="$secs" '{print $1 + s}' /proc/uptime)
    until "$@" >/dev/null 2>&1; do
        awk -v e="$end" '{exit !($1 > e)}' /proc/uptime && fail "timed out after ${secs}s waiting for: $what"
        sleep 0.05
    done
    log "ok: $what"
}
# uptime_s: seconds since the guest booted (float; the kernel's CLOCK_BOOTTIME)
uptime_s() { awk '{print $1}' /proc/uptime; }
# mono_s: CLOCK_MONOTONIC now, in seconds (the clock of gpiomon/gpio-pulse/loopback-writer lines)
mono_s() { "$TOOLS/mono-now"; }
# wait_for_line FILE REGEX SECONDS: waits until a line of FILE matches the extended REGEX
# (e.g. a daemon's log line); prints that first matching line.
wait_for_line() {
    wait_for "$3" "a line matching /$2/ in $1" grep -Eq -- "$2" "$1"
    grep -Em1 -- "$2" "$1"
}

# --------------------------------------------------------------- background processes
# bg LOGFILE CMD...: starts CMD in the background, output to LOGFILE; sets BG_PID.
# Everything started with bg is killed when the scenario exits.
bg() {
    local logf=$1; shift
    "$@" > "$logf" 2>&1 &
    BG_PID=$!
    _BG_PIDS+=("$BG_PID")
}
# stop_pid PID [SECONDS]: SIGTERM, wait up to SECONDS (default 5), then SIGKILL.
stop_pid() {
    local pid=$1 secs=${2:-5} i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < secs * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$pid" 2>/dev/null && { log "pid $pid ignored SIGTERM for ${secs}s: SIGKILL"; kill -KILL "$pid" 2>/dev/null; }
    wait "$pid" 2>/dev/null
    return 0
}
# wait_pid PID SECONDS WHAT: waits for PID to exit by itself; sets WAIT_RC; fails after SECONDS.
wait_pid() {
    local pid=$1 secs=$2 what=$3 i
    for ((i = 0; i < secs * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$pid" 2>/dev/null && fail "timed out after ${secs}s waiting for $what (pid $pid) to exit"
    wait "$pid"; WAIT_RC=$?
}
_cleanup() {
    local p
    for p in "${_BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    [ -n "${_UDEVD:-}" ] && udev_stop
    return 0
}
trap _cleanup EXIT

# --------------------------------------------------------------- real photos
# require_captures: sets CAPTURES to $SHARED_IMAGES/captures or fails naming what is missing.
require_captures() {
    CAPTURES=$SHARED_IMAGES/captures
    [ -d "$CAPTURES" ] || fail "real photos missing: $CAPTURES does not exist (expected <repo>/../shared/images/captures)"
    ls "$CAPTURES"/*.jpg >/dev/null 2>&1 || fail "real photos missing: no *.jpg in $CAPTURES"
}
# captures_of_size WxH: prints the capture photos of that size, one per line, sorted
# (call require_captures first, in the scenario's own shell: a fail in $(...) does not end it).
captures_of_size() { ls "${SHARED_IMAGES}/captures"/*_"$1".jpg 2>/dev/null | sort; }

# --------------------------------------------------------------- V4L2 nodes
# v4l2_node_by_name PATTERN: prints /dev/videoN of the first node whose sysfs name matches
# the shell PATTERN (numbering differs between boots and after rebind: never hard-code it).
v4l2_node_by_name() {
    local d name
    for d in /sys/class/video4linux/video*; do
        [ -r "$d/name" ] || continue
        name=$(cat "$d/name")
        # shellcheck disable=SC2053 # pattern match on purpose
        [[ $name == $1 ]] && { echo "/dev/$(basename "$d")"; return 0; }
    done
    return 1
}
vivid_node() { v4l2_node_by_name 'vivid-*-vid-cap'; }
# The harness loads v4l2loopback with card_label=photobooth-loopback.
loopback_node() { v4l2_node_by_name "${LOOPBACK_LABEL:-photobooth-loopback}"; }
# platform_dev DRIVER: prints the driver's platform device name (vivid.0, vimc.0)
platform_dev() {
    local d
    for d in /sys/bus/platform/devices/"$1".*; do [ -e "$d" ] && { basename "$d"; return 0; }; done
    return 1
}
# vivid_platform_dev: prints vivid's platform device name (vivid.0)
vivid_platform_dev() { platform_dev vivid; }
# vivid_unbind / vivid_bind: detach / reattach the vivid driver (a real unplug: the node
# disappears, open file descriptors get ENODEV/POLLERR; it may come back as another videoN).
vivid_unbind() { echo "$(vivid_platform_dev)" > /sys/bus/platform/drivers/vivid/unbind; }
vivid_bind() { echo "$(vivid_platform_dev)" > /sys/bus/platform/drivers/vivid/bind; }
# vimc_platform_dev: prints vimc's platform device name (vimc.0)
vimc_platform_dev() { platform_dev vimc; }
# vimc_unbind / vimc_bind: detach / reattach the vimc driver (its media device and nodes go and come back;
# a module in use cannot be unloaded, this is the unplug).
vimc_unbind() { echo "$(vimc_platform_dev)" > /sys/bus/platform/drivers/vimc/unbind; }
vimc_bind() { echo "$(vimc_platform_dev)" > /sys/bus/platform/drivers/vimc/bind; }

# --------------------------------------------------------------- udev
# udev_start: systemd-udevd in the guest (the plain init runs none). libcamera enumerates only the media
# devices udev has initialized (its udev enumerator), and learns of an unplug from udev's events. The
# guest is a chroot of the host, so systemd's tools need SYSTEMD_IGNORE_CHROOT. Stopped at exit.
udev_start() {
    export SYSTEMD_IGNORE_CHROOT=1
    mkdir -p /run/udev
    /lib/systemd/systemd-udevd --daemon </dev/null >"$RESULTS/udevd.log" 2>&1 || fail "systemd-udevd --daemon: $(cat "$RESULTS/udevd.log")"
    _UDEVD=1
    udevadm trigger --action=add --subsystem-match=media --subsystem-match=video4linux >/dev/null 2>&1 || fail "udevadm trigger"
    udevadm settle -t 30 || fail "udevadm settle: udev did not finish in 30 s"
    log "systemd-udevd running; $(ls /run/udev/data | wc -l) devices initialized"
}
# udev_stop: ends the udevd udev_start started.
udev_stop() {
    timeout 10 udevadm control --exit >/dev/null 2>&1 || pkill -KILL -x systemd-udevd
    pkill -KILL -f '^\(udev-worker\)' 2>/dev/null
    _UDEVD=
}
# v4l2_caps NODE: prints the node's device capabilities as v4l2-ctl --info shows them
v4l2_caps() { v4l2-ctl -d "$1" --info 2>&1 | sed -n '/Device Caps/,$p'; }

# --------------------------------------------------------------- v4l2loopback writer
# loopback_start NODE FPS [--loop] [--count N] FILE...: starts tools/loopback-writer in the
# background (log: $RESULTS/loopback-writer.log, or LOOPBACK_LOG) and waits for its first
# frame, after which an exclusive_caps=1 loopback shows its capture side. Sets LOOPBACK_PID.
loopback_start() {
    local node=$1 fps=$2; shift 2
    LOOPBACK_LOG=${LOOPBACK_LOG:-$RESULTS/loopback-writer.log}
    bg "$LOOPBACK_LOG" "$TOOLS/loopback-writer" --device "$node" --fps "$fps" "$@"
    LOOPBACK_PID=$BG_PID
    wait_for 10 "loopback-writer's first frame on $node" grep -q '^frame=0 ' "$LOOPBACK_LOG"
}
# loopback_stop: SIGTERM to the writer started by loopback_start, waits for it.
loopback_stop() { [ -n "${LOOPBACK_PID:-}" ] && stop_pid "$LOOPBACK_PID"; LOOPBACK_PID=; }

# --------------------------------------------------------------- gpio-sim
GPIOSIM_CONFIGFS=/sys/kernel/config/gpio-sim
# gpiosim_create NAME NUM_LINES [LINE_NAME...]: a live gpio-sim chip with one bank of
# NUM_LINES lines, line i named LINE_NAME[i] when given.
gpiosim_create() {
    local name=$1 n=$2 i=0 dir; shift 2
    [ -d "$GPIOSIM_CONFIGFS" ] || fail "gpio-sim configfs missing at $GPIOSIM_CONFIGFS (gpio-sim module not loaded?)"
    dir=$GPIOSIM_CONFIGFS/$name
    mkdir "$dir" || fail "mkdir $dir"
    mkdir "$dir/bank0" || fail "mkdir $dir/bank0"
    echo "$n" > "$dir/bank0/num_lines" || fail "setting num_lines=$n on $dir/bank0"
    for line_name in "$@"; do
        mkdir "$dir/bank0/line$i" || fail "mkdir $dir/bank0/line$i"
        echo "$line_name" > "$dir/bank0/line$i/name" || fail "naming line $i '$line_name'"
        i=$((i + 1))
    done
    echo 1 > "$dir/live" || fail "gpio-sim chip $name did not go live"
    log "gpio-sim chip $name live: $(gpiosim_chip "$name") ($(cat "$dir/dev_name")), $n lines"
}
# gpiosim_chip NAME: prints the chip's gpiochipN name (its /dev node is /dev/gpiochipN)
gpiosim_chip() { cat "$GPIOSIM_CONFIGFS/$1/bank0/chip_name"; }
# gpiosim_pull_path NAME OFFSET: prints the sim pull attribute of that line
# (/sys/devices/platform/<dev_name>/<chip>/sim_gpio<OFFSET>/pull), the input to gpio-pulse.
gpiosim_pull_path() {
    echo "/sys/devices/platform/$(cat "$GPIOSIM_CONFIGFS/$1/dev_name")/$(gpiosim_chip "$1")/sim_gpio$2/pull"
}
# gpiosim_set NAME OFFSET pull-up|pull-down: sets a line's input level at once (no timing)
gpiosim_set() { echo "$3" > "$(gpiosim_pull_path "$1" "$2")" || fail "setting $3 on $1 line $2"; }
# gpiosim_remove NAME: takes the chip down and removes its configfs tree.
gpiosim_remove() {
    local dir=$GPIOSIM_CONFIGFS/$1 l
    [ -d "$dir" ] || return 0
    echo 0 > "$dir/live"
    for l in "$dir"/bank0/line*; do [ -d "$l" ] && rmdir "$l"; done
    rmdir "$dir/bank0" "$dir"
}
# gpio_line_used CHIP OFFSET: exit 0 when a process holds the line (gpioinfo says "used")
gpio_line_used() { gpioinfo "$1" | awk -v o="line +$2:" '$0 ~ o {found = 1; exit !/\[used/} END {if (!found) exit 1}'; }

# --------------------------------------------------------------- the booth (photoboothd)
# booth_config FILE KEY=VALUE...: writes an INI config for photoboothd (keys as section.key,
# e.g. storage.dir=/tmp/photos); later keys of the same section stay in one [section].
booth_config() {
    local file=$1 kv sec key prev=; shift
    : > "$file"
    printf '%s\n' "$@" | sort -s -t. -k1,1 | while IFS= read -r kv; do
        key=${kv%%=*}; sec=${key%%.*}
        [ "$sec" != "$prev" ] && { printf '[%s]\n' "$sec" >> "$file"; prev=$sec; }
        printf '%s = %s\n' "${key#*.}" "${kv#*=}" >> "$file"
    done
}
# booth_start CONFIG [ARGS...]: starts "$BUILD_BIN/photoboothd --config CONFIG ARGS" in the
# background with its stderr log in $BOOTH_LOG (default $RESULTS/photoboothd.log); sets BOOTH_PID.
booth_start() {
    local config=$1; shift
    [ -x "$BUILD_BIN/photoboothd" ] || fail "no photoboothd in BUILD_BIN=$BUILD_BIN (run swift build on the host first)"
    BOOTH_LOG=${BOOTH_LOG:-$RESULTS/photoboothd.log}
    bg "$BOOTH_LOG" "$BUILD_BIN/photoboothd" --config "$config" "$@"
    BOOTH_PID=$BG_PID
    log "photoboothd started (pid $BOOTH_PID, config $config, log $BOOTH_LOG)"
}
# booth_stop: SIGTERM to the daemon, waits; asserts it stopped cleanly (exit 0).
booth_stop() {
    kill -0 "$BOOTH_PID" 2>/dev/null || fail "photoboothd (pid $BOOTH_PID) is not running any more: $(tail -n5 "$BOOTH_LOG")"
    kill -TERM "$BOOTH_PID"
    wait_pid "$BOOTH_PID" 10 "photoboothd to stop on SIGTERM"
    assert_eq "$WAIT_RC" 0 "photoboothd exit status after SIGTERM"
}
# booth_alive WHAT: fails when the daemon has exited (a crash or an exit instead of a fault state)
booth_alive() {
    kill -0 "$BOOTH_PID" 2>/dev/null || { wait "$BOOTH_PID"; fail "$1: photoboothd exited (status $?); log tail: $(tail -n5 "$BOOTH_LOG")"; }
    pass "$1: photoboothd still running"
}
# log_count REGEX [FILE]: how many lines of the booth's log match the extended REGEX
log_count() { grep -Ec -- "$1" "${2:-$BOOTH_LOG}"; }
# wait_for_count REGEX N SECONDS: waits until at least N lines of the booth's log match REGEX
wait_for_count() {
    wait_for "$3" "$2 line(s) matching /$1/ in $BOOTH_LOG" _count_ge "$1" "$2"
}
_count_ge() {
    [ "$(grep -Ec -- "$1" "$BOOTH_LOG")" -ge "$2" ] && return 0
    # a daemon that exited will not write the line: fail now, with its log, not after the timeout
    if [ -n "${BOOTH_PID:-}" ] && ! kill -0 "$BOOTH_PID" 2>/dev/null; then
        fail "photoboothd exited while waiting for /$1/; log tail: $(tail -n5 "$BOOTH_LOG")" 2>&9
    fi
    return 1
}
# booth_state_count STATE: how many times the booth entered STATE ("state: x -> STATE")
booth_state_count() { log_count "state: .* -> $1\$"; }
# booth_wait_state STATE N SECONDS: waits until the booth has entered STATE at least N times
booth_wait_state() { wait_for_count "state: .* -> $1\$" "$2" "$3"; }
# booth_current_state: the state the last "state:" line went to
booth_current_state() { sed -n 's/^<[0-9]>state: .* -> //p' "$BOOTH_LOG" | tail -n1; }
# pulse NAME OFFSET STEP...: gpio-pulse on a gpio-sim line, log appended to $RESULTS/gpio-pulse.log;
# fails when gpio-pulse does; sets PULSE_LOG_FROM to the first line it wrote there.
pulse() {
    local name=$1 offset=$2 path out; shift 2
    path=$(gpiosim_pull_path "$name" "$offset")
    out=$("$TOOLS/gpio-pulse" "$path" "$@" 2>&1) || fail "gpio-pulse $path $*: $out"
    printf '# gpio-pulse %s\n%s\n' "$*" "$out" >> "$RESULTS/gpio-pulse.log"
    PULSE_OUT=$out
}
# pulse_t STEP FIELD: t_before/t_after of step STEP of the last pulse
pulse_t() { sed -n "s/^step=$1 .*$2=\\([0-9.]*\\).*/\\1/p" <<<"$PULSE_OUT"; }

# --------------------------------------------------------------- QMP (scenarios with "# vm-usb: kbd")
# qmp NAME LINE...: sends the JSON lines (QMP commands, {"sleep": S}) to the host's qemu through
# hardware/vm/qmp-server and waits until they ran.
qmp() {
    local name=$1; shift
    mkdir -p "$RESULTS/.qmp"
    rm -f "$RESULTS/.qmp/$name.done"
    printf '%s\n' "$@" > "$RESULTS/.qmp/$name.req.tmp"
    mv "$RESULTS/.qmp/$name.req.tmp" "$RESULTS/.qmp/$name.req"
    wait_for 60 "QMP $name from the host" test -e "$RESULTS/.qmp/$name.done"
    [ "$(cat "$RESULTS/.qmp/$name.done")" = ok ] || fail "QMP $name: $(cat "$RESULTS/.qmp/$name.done")"
}
# key_event QCODE true|false: the QMP input-send-event line for a key down or up (qemu routes it to the
# USB keyboard once the guest's driver has it).
key_event() { printf '{"execute":"input-send-event","arguments":{"events":[{"type":"key","data":{"down":%s,"key":{"type":"qcode","data":"%s"}}}]}}' "$2" "$1"; }
# tap QCODE HOLD_SECONDS: the key down, held on the host's clock, up.
tap() { qmp "tap-$1-$RANDOM" "$(key_event "$1" true)" "{\"sleep\": $2}" "$(key_event "$1" false)"; }
