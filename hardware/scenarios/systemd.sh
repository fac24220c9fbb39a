#!/bin/bash
# systemd: the booth as the real service, with systemd as PID 1 in the guest (see hardware/vm/init-systemd).
#  1. install.sh --install --no-start into the guest's overlay root (the release binary, prebuilt on
#     the host when there is one, else the debug build): user, unit, udev rules, config.
#  2. systemctl start: Type=notify returns once READY=1; StatusText says idle; the hardened service
#     reaches the camera (vivid streams), the GPIO line (gpio-sim, a press makes a photo) and the
#     framebuffer (bochs; checked with a transient unit under the same sandbox settings), and
#     qemu's USB keyboard as a second button source (button.source = gpio, input; named by its
#     /dev/input/by-id link, which the guest's udev made): a key pressed from the host through QMP
#     makes a photo too.
#  2b. the gallery: gallery.enabled, photoboothd restarted (the earlier photos indexed), photobooth-gallery
#     started as its own user; a new picture is served at its token's URL byte for byte; under the
#     gallery unit's sandbox its user reads the photos but cannot write them nor read the secret;
#     with the gallery stopped a session goes on; restarted, the earlier URL still answers; sync
#     (gallery.sync_remote) under the unit copies every picture to a WebDAV server on loopback; a test
#     alert reaches a webhook listener on loopback (gallery.alert_url).
#  2c. gphoto2 under the sandbox: qemu's USB MTP device (a still-image class device, as a camera's PTP
#     interface is) gets group plugdev from Debian's libgphoto2 udev rules; with camera.backend = gphoto2
#     the service, as its user under its unit (AF_NETLINK, DeviceAllow=char-usb_device, plugdev), finds it
#     through libusb (libusb_init, enumeration) and libgphoto2 and opens it (claims its interface).
#  2d. libcamera under the sandbox: vimc's camera, camera.backend = libcamera: the service streams from it as
#     its user (DeviceAllow=char-media and char-video4linux, group video; udev's database, no events).
#  3. kill -STOP: no WATCHDOG=1 any more; systemd kills it (SIGABRT) and restarts it after WatchdogSec.
#  4. a bad config: the daemon exits 78 and stays stopped (RestartPreventExitStatus=78), no restart loop.
#  5. systemd-analyze security: the exposure score, for the record.
# vm-boot: systemd
# vm-module: bochs
# vm-usb: kbd
# vm-usb: mtp
# vm-module: xhci_pci
# vm-module: usbhid
# vm-module: hid_generic
# vm-module: evdev
# vm-module: vimc
# vm-timeout: 420
. "$REPO/hardware/scenarios/lib.sh"
need systemctl systemd-analyze udevadm jq

[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"
log "systemd $(systemctl --version | head -n1 | awk '{print $2}') is PID 1; system state: $(systemctl is-system-running 2>&1)"

# ---------------------------------------------------------------- 1. install
RELEASE=$HOME/.cache/photobooth/release-build/release
if [ -x "$RELEASE/photoboothd" ] && [ -x "$RELEASE/photoboothctl" ] && [ -x "$RELEASE/photobooth-gallery" ]; then PREBUILT=$RELEASE; else PREBUILT=$BUILD_BIN; fi
log "installing with install.sh --install --no-start (PHOTOBOOTH_PREBUILT=$PREBUILT)"
(cd "$REPO" && PHOTOBOOTH_PREBUILT=$PREBUILT ./install.sh --install --no-start) > "$RESULTS/install.log" 2>&1 \
    || fail "install.sh --install failed: $(tail -n 15 "$RESULTS/install.log")"
pass "install.sh --install"
assert_contains "$(id photobooth)" "(video)" "photobooth's groups"
assert_contains "$(id photobooth)" "(gpio)" "photobooth's groups"
assert_contains "$(id photobooth)" "(input)" "photobooth's groups"
assert_eq "$(systemctl is-enabled photoboothd)" enabled "photoboothd enabled"
# docs/running-an-event.md: a member of group photobooth runs config set without sudo; someone else cannot.
C=/etc/photobooth/photobooth.conf
useradd -M -s /bin/sh -G photobooth booth-operator 2>/dev/null || usermod -a -G photobooth booth-operator
useradd -M -s /bin/sh booth-guest 2>/dev/null || true
assert_cmd "config set as booth-operator, a member of group photobooth" \
    runuser -u booth-operator -- /usr/local/bin/photoboothctl config set session.review 4s --file $C
assert_contains "$(grep '^review' $C)" "review = 4s" "the member's change is in the file"
assert_eq "$(stat -c %G:%a $C)" photobooth:664 "the config's group and mode after the member's edit"
runuser -u booth-guest -- /usr/local/bin/photoboothctl config set session.review 6s --file $C > "$RESULTS/guest-set.txt" 2>&1
assert_eq "$?" 73 "config set as booth-guest (not a member) exits 73"
assert_contains "$(grep '^review' $C)" "review = 4s" "a non-member's change is not written"

VIVID=$(vivid_node) || fail "no vivid capture node"
gpiosim_create booth 2 button led
CHIP=$(gpiosim_chip booth)
gpiosim_set booth 0 pull-up
udevadm settle -t 10 || true
wait_for 15 "udev gives /dev/$CHIP to group gpio" sh -c "[ \"\$(stat -c %G:%a /dev/$CHIP)\" = gpio:660 ]"
wait_for 30 "udev's by-id link of the USB keyboard" sh -c "ls /dev/input/by-id/ 2>/dev/null | grep -q 'QEMU.*-event-kbd'"
KBD_ID=$(ls /dev/input/by-id/ | grep 'QEMU.*-event-kbd' | head -n1)
KBD=$(readlink -f "/dev/input/by-id/$KBD_ID")
assert_eq "$(stat -c %G:%a "$KBD")" input:660 "the keyboard's event node"
FB=/dev/fb0
[ -c $FB ] || fail "no framebuffer $FB (bochs loaded: $(lsmod | grep -c bochs))"
C=/etc/photobooth/photobooth.conf
for kv in "camera.device $VIVID" "camera.format yuyv" "camera.preview_size 640x480" "camera.capture_size 640x480" \
          "button.chip $CHIP" "button.line 0" "session.preview 0s" "session.countdown 0s" "session.review 1s" \
          "storage.min_free 1MB" "camera.settle_frames 0"; do
    set -- $kv
    /usr/local/bin/photoboothctl config set "$1" "$2" --file $C > /dev/null || fail "config set $1 $2"
done
/usr/local/bin/photoboothctl config set button.source "gpio, input" --file $C > /dev/null || fail "config set button.source"
/usr/local/bin/photoboothctl config set button.input_device "$KBD_ID" --file $C > /dev/null || fail "config set button.input_device"
mkdir -p /etc/systemd/system/photoboothd.service.d
printf '[Service]\nWatchdogSec=4s\n' > /etc/systemd/system/photoboothd.service.d/test.conf
systemctl daemon-reload

# ---------------------------------------------------------------- 2. start: READY, STATUS, devices
t0=$(uptime_s)
assert_cmd "systemctl start photoboothd (returns after READY=1)" timeout 60 systemctl start photoboothd
log "started in $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime) s"
status=$(systemctl show -p StatusText --value photoboothd)
assert_contains "$status" "idle" "StatusText after READY"
PID1=$(systemctl show -p MainPID --value photoboothd)
log "MainPID $PID1; StatusText '$status'"
wait_for 15 "display.device = auto drawing through KMS inside the sandbox" \
    sh -c "journalctl -u photoboothd --no-pager -o cat | grep -q 'display: /dev/dri/card0 (bochs-drm, KMS)'"
log "$(journalctl -u photoboothd --no-pager -o cat | grep -m1 'display: ')"
wait_for 20 "camera streaming inside the sandbox" sh -c "photoboothctl status --json | grep -q '\"streaming\" *: *true'"
photoboothctl status > "$RESULTS/status.txt" 2>&1
assert_contains "$(cat "$RESULTS/status.txt")" "$VIVID" "photoboothctl status names the camera"
assert_contains "$(cat "$RESULTS/status.txt")" "clock" "status says whether the clock is synchronised"
gpiosim_set booth 0 pull-down; sleep 0.3; gpiosim_set booth 0 pull-up
wait_for 30 "a photo from a GPIO press, written under ProtectSystem=strict" sh -c "find /var/lib/photobooth/photos -name 'booth-*.jpg' | grep -q ."
assert_eq "$(stat -c %U "$(find /var/lib/photobooth/photos -name 'booth-*.jpg' | head -n1)")" photobooth "photo owner"
wait_for 20 "StatusText counts the photo" sh -c "systemctl show -p StatusText --value photoboothd | grep -q '1 photo'"
assert_contains "$(photoboothctl status)" "input: input $KBD 'QEMU QEMU USB Keyboard' ($KBD_ID), key KEY_SPACE" \
    "the sandboxed service opened and grabbed the USB keyboard"
# The review (1 s) must be over before the key is pressed: a press during it is the review's (under
# TCG a session's save and review can take seconds longer than their settings). Idle, then the tap.
wait_for 30 "the booth idle again after the first photo's review" sh -c "photoboothctl status --json | jq -e '.state == \"idle\"' > /dev/null"
tap spc 0.15
wait_for 30 "a photo from the USB keyboard's key, inside the sandbox" sh -c "systemctl show -p StatusText --value photoboothd | grep -q '2 photos'"
# The framebuffer through the unit's own sandbox settings (the display module opens it the same way).
mapfile -t props < <(sed -n '/^\[Service\]/,/^\[/p' /etc/systemd/system/photoboothd.service \
    | grep -E '^(NoNewPrivileges|ProtectSystem|ProtectHome|PrivateTmp|DevicePolicy|DeviceAllow|SupplementaryGroups|User|Group|RestrictAddressFamilies|SystemCallFilter|ProtectKernel|ProtectControlGroups|PrivateNetwork|MemoryDenyWriteExecute|CapabilityBoundingSet)')
args=(); for p in "${props[@]}"; do args+=(-p "$p"); done
assert_cmd "the sandboxed photobooth user reads $FB" systemd-run --wait --pipe --quiet "${args[@]}" head -c 4096 $FB
systemd-run --wait --pipe --quiet "${args[@]}" head -c 1 /dev/mem > /dev/null 2>&1 && fail "the sandbox let the service read /dev/mem"
pass "the same sandbox refuses /dev/mem"

# ---------------------------------------------------------------- 2b. the gallery
fetch() { python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=10).read())' "$1"; }
photoboothctl config set gallery.enabled true --file $C > /dev/null || fail "config set gallery.enabled"
photoboothctl config set gallery.alert_url http://127.0.0.1:8091/hook --file $C > /dev/null || fail "config set gallery.alert_url"
assert_cmd "systemctl restart photoboothd (gallery.enabled)" timeout 60 systemctl restart photoboothd
wait_for 20 "the daemon's gallery index" sh -c "journalctl -u photoboothd --no-pager -o cat | grep -q 'gallery: index /var/lib/photobooth/gallery/index.sqlite: '"
log "$(journalctl -u photoboothd --no-pager -o cat | grep -m1 'gallery: index ')"
assert_eq "$(stat -c %a:%U:%G /var/lib/photobooth/gallery.secret)" 600:photobooth:photobooth "the gallery's secret"
assert_eq "$(stat -c %G /var/lib/photobooth/gallery/index.sqlite)" photobooth-photos "the index's group (setgid folder)"
assert_cmd "systemctl start photobooth-gallery" timeout 30 systemctl start photobooth-gallery
wait_for 20 "photobooth-gallery listening" sh -c "journalctl -u photobooth-gallery --no-pager -o cat | grep -q 'listening on 0.0.0.0:8080'"
log "$(journalctl -u photobooth-gallery --no-pager -o cat | grep -m1 'listening on')"
assert_eq "$(ps -o user= -p "$(systemctl show -p MainPID --value photobooth-gallery)")" photobooth-gallery "the gallery's user"
wait_for 20 "camera streaming after the restart" sh -c "photoboothctl status --json | grep -q '\"streaming\" *: *true'"
gpiosim_set booth 0 pull-down; sleep 0.3; gpiosim_set booth 0 pull-up
wait_for 30 "the new picture indexed" sh -c "journalctl -u photoboothd --no-pager -o cat | grep -q 'indexed at /p/'"
line=$(journalctl -u photoboothd --no-pager -o cat | grep -m1 'indexed at /p/')
log "$line"
TOKEN=${line##*/p/}; REL=$(sed -n 's/^gallery: \([^ ]*\) indexed at.*/\1/p' <<<"$line")
fetch "http://127.0.0.1:8080/p/$TOKEN.jpg" > "$RESULTS/served.jpg" || fail "GET /p/$TOKEN.jpg"
assert_cmd "the served picture is the saved file" cmp "$RESULTS/served.jpg" "/var/lib/photobooth/photos/$REL"
assert_contains "$(fetch "http://127.0.0.1:8080/p/$TOKEN")" "/p/$TOKEN/download" "the picture's page"
assert_contains "$(fetch http://127.0.0.1:8080/health)" "ok " "health"
# The gallery unit's sandbox, as its user: the photos readable, not writable; the secret and the state not readable.
mapfile -t gprops < <(sed -n '/^\[Service\]/,/^\[/p' /etc/systemd/system/photobooth-gallery.service \
    | grep -E '^(User|Group|SupplementaryGroups|NoNewPrivileges|ProtectSystem|ReadOnlyPaths|ProtectHome|PrivateTmp|PrivateDevices|CapabilityBoundingSet|UMask)=')
gargs=(); for p in "${gprops[@]}"; do gargs+=(-p "$p"); done
assert_cmd "the gallery's user reads a picture" systemd-run --wait --pipe --quiet "${gargs[@]}" head -c 16 "/var/lib/photobooth/photos/$REL"
systemd-run --wait --pipe --quiet "${gargs[@]}" touch "/var/lib/photobooth/photos/$(dirname "$REL")/written-by-gallery" 2>/dev/null \
    && fail "the gallery's sandbox let it write into the photos"
systemd-run --wait --pipe --quiet "${gargs[@]}" sh -c "echo x >> /var/lib/photobooth/photos/$REL" 2>/dev/null && fail "the gallery could change a picture"
systemd-run --wait --pipe --quiet "${gargs[@]}" head -c 1 /var/lib/photobooth/gallery.secret > /dev/null 2>&1 && fail "the gallery could read the secret"
systemd-run --wait --pipe --quiet "${gargs[@]}" ls /var/lib/photobooth > /dev/null 2>&1 && fail "the gallery could list the state folder"
pass "the gallery's sandbox: photos read-only, the secret and the state folder closed"
# The gallery stopped: a session goes on; started again: the earlier URL still answers.
systemctl stop photobooth-gallery
sleep 2
gpiosim_set booth 0 pull-down; sleep 0.3; gpiosim_set booth 0 pull-up
wait_for 30 "a session while the gallery is stopped" sh -c "[ \$(journalctl -u photoboothd --no-pager -o cat | grep -c 'indexed at /p/') -ge 2 ]"
systemctl start photobooth-gallery
wait_for 20 "photobooth-gallery listening again" sh -c "fetch() { python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \"\$1\"; }; fetch http://127.0.0.1:8080/health"
fetch "http://127.0.0.1:8080/p/$TOKEN.jpg" | cmp - "/var/lib/photobooth/photos/$REL" || fail "the earlier URL after the gallery's restart"
pass "the gallery restarted serves the earlier URL; sessions went on without it"
# Killed (SIGKILL): systemd starts it again by itself (Restart=on-failure); a session meanwhile is not held up.
GPID=$(systemctl show -p MainPID --value photobooth-gallery)
systemctl kill -s KILL photobooth-gallery
gpiosim_set booth 0 pull-down; sleep 0.3; gpiosim_set booth 0 pull-up
wait_for 30 "a session while the gallery was killed" sh -c "[ \$(journalctl -u photoboothd --no-pager -o cat | grep -c 'indexed at /p/') -ge 3 ]"
wait_for 30 "systemd starting the killed gallery again" sh -c "p=\$(systemctl show -p MainPID --value photobooth-gallery); [ \"\$p\" != 0 ] && [ \"\$p\" != $GPID ] && systemctl is-active -q photobooth-gallery"
wait_for 20 "photobooth-gallery listening after the kill" sh -c "python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:8080/health\", timeout=5)'"
fetch "http://127.0.0.1:8080/p/$TOKEN.jpg" | cmp - "/var/lib/photobooth/photos/$REL" || fail "the earlier URL after the gallery was killed"
pass "the gallery killed: started again by systemd, the earlier URL answers, the session went on"
# Sync under the unit's sandbox (gallery.sync_remote): rclone run by photobooth-gallery as its user, HOME
# and its cache in /var/cache/photobooth-gallery, its config read from /etc/photobooth, to a WebDAV server
# on the guest's loopback (rclone serve webdav); every picture served arrives there once, as TOKEN.jpg.
mkdir -p /run/dav/event
rclone serve webdav /run/dav --addr 127.0.0.1:8090 --config /dev/null -q &
DAV=$!
printf '[dav]\ntype = webdav\nurl = http://127.0.0.1:8090/\nvendor = other\n' > /etc/photobooth/rclone.conf
chgrp photobooth-gallery /etc/photobooth/rclone.conf && chmod 640 /etc/photobooth/rclone.conf
photoboothctl config set gallery.sync_remote dav:event --file $C > /dev/null || fail "config set gallery.sync_remote"
assert_cmd "systemctl restart photobooth-gallery (gallery.sync_remote)" timeout 30 systemctl restart photobooth-gallery
SERVED=$(python3 -c 'import sqlite3; print(sqlite3.connect("file:/var/lib/photobooth/gallery/index.sqlite?mode=ro", uri=True).execute("SELECT count(*) FROM pictures WHERE removed_at IS NULL").fetchone()[0])')
synced() { find /run/dav/event -name '*.jpg' | wc -l; }
wait_for 60 "the $SERVED pictures served copied to dav:event" sh -c "[ \$(find /run/dav/event -name '*.jpg' | wc -l) -ge $SERVED ]"
cmp "/run/dav/event/$TOKEN.jpg" "/var/lib/photobooth/photos/$REL" || fail "the synced copy of $REL differs"
assert_eq "$(synced)" "$SERVED" "pictures at the WebDAV remote"
ls -a /var/lib/photobooth-gallery | grep -q '^sync.sqlite$' || fail "no sync ledger in the gallery's state folder (gallery.state)"
if ls -a /var/cache/photobooth-gallery | grep -q '^sync.sqlite$'; then fail "a sync ledger in the gallery's cache (safe to empty: it belongs in gallery.state)"; fi
log "$(journalctl -u photobooth-gallery --no-pager -o cat | grep -m1 'sync: each picture is copied')"
kill "$DAV" 2>/dev/null; wait "$DAV" 2>/dev/null || true
# Alerts under the unit: photoboothctl gallery test-alert, recorded by the daemon, POSTed by the gallery's
# libcurl as its user to a webhook listener on loopback.
python3 "$REPO/Tests/BoothGalleryTests/webhook-listener.py" 8091 /run/hook.jsonl /run/hook-fail &
HOOK=$!
assert_cmd "photoboothctl gallery test-alert" photoboothctl gallery test-alert
wait_for 30 "the test alert at the webhook" sh -c "grep -q '\"condition\":\"test\"' /run/hook.jsonl 2>/dev/null"
log "webhook got: $(head -c 300 /run/hook.jsonl)"
kill "$HOOK" 2>/dev/null; wait "$HOOK" 2>/dev/null || true
pass "an alert from the daemon through the gallery's sandbox to the webhook"
photoboothctl config set gallery.sync_remote "" --file $C > /dev/null || fail "config set gallery.sync_remote ''"
pass "sync under the gallery's sandbox: $SERVED pictures at the WebDAV remote on loopback, byte for byte"
PID1=$(systemctl show -p MainPID --value photoboothd)

# ---------------------------------------------------------------- 2c. gphoto2 under the sandbox
mtp_node() {
    local d
    for d in /sys/bus/usb/devices/*; do
        # qemu's usb-mtp: vendor 46f4, product 0004 ("QEMU filesharing").
        [ "$(cat "$d/idVendor" 2>/dev/null):$(cat "$d/idProduct" 2>/dev/null)" = 46f4:0004 ] || continue
        printf '/dev/bus/usb/%03d/%03d\n' "$(cat "$d/busnum")" "$(cat "$d/devnum")"
        return 0
    done
    return 1
}
wait_for 30 "the USB MTP device on the bus" mtp_node
MTP=$(mtp_node)
wait_for 15 "udev gives $MTP to plugdev (libgphoto2's rules: a still-image class interface)" \
    sh -c "[ \"\$(stat -c %G $MTP)\" = plugdev ]"
assert_contains "$(id photobooth)" "(plugdev)" "photobooth's groups"
photoboothctl config set camera.backend gphoto2 --file $C > /dev/null || fail "config set camera.backend gphoto2"
photoboothctl config set camera.device "" --file $C > /dev/null || fail "config set camera.device ''"
photoboothctl config set camera.capture_timeout 15s --file $C > /dev/null || fail "config set camera.capture_timeout"
assert_cmd "systemctl restart photoboothd (camera.backend = gphoto2)" timeout 60 systemctl restart photoboothd
# libgphoto2 takes qemu's device for a generic PTP camera (then the service opens it: libusb_init, the
# enumeration, the claim) or for an MTP device (then it is listed, taking no stills: libusb_init and the
# enumeration under the sandbox); either way it was found on the bus by the sandboxed service.
FOUND_RE='camera: gphoto2 .* at usb:[0-9]*,[0-9]* open|libgphoto2 also lists .* at usb:[0-9]*,[0-9]*, which takes no stills'
wait_for 30 "the sandboxed service finds the USB device through libusb and libgphoto2" \
    sh -c "journalctl -u photoboothd --no-pager -o cat | grep -Eq '$FOUND_RE'"
log "$(journalctl -u photoboothd --no-pager -o cat | grep -Em1 "$FOUND_RE")"
photoboothctl devices --local > "$RESULTS/devices-gphoto2.txt" 2>&1 || true
log "devices --local (root, outside the sandbox): $(grep -A2 '^gphoto2 cameras' "$RESULTS/devices-gphoto2.txt" | tr '\n' ' ')"
journalctl -u photoboothd --no-pager -o cat | grep -q 'LIBUSB_ERROR\|libusb_init' && fail "libusb failed under the sandbox: $(journalctl -u photoboothd --no-pager -o cat | grep -m1 LIBUSB)"
pass "libusb and libgphoto2 under the unit's sandbox: $MTP found as user photobooth"
# The claim needs the node opened read-write (usbfs): the unit's own sandbox settings allow it.
assert_cmd "the sandboxed photobooth user opens $MTP read-write (DeviceAllow=char-usb_device, plugdev)" \
    systemd-run --wait --pipe --quiet "${args[@]}" sh -c "exec 3<>$MTP"
systemd-run --wait --pipe --quiet "${args[@]}" -p DeviceAllow= -p 'DeviceAllow=char-video4linux rw' sh -c "exec 3<>$MTP" 2>/dev/null \
    && fail "a sandbox without DeviceAllow=char-usb_device opened $MTP"
pass "without DeviceAllow=char-usb_device the same open is refused"

# ---------------------------------------------------------------- 2d. libcamera under the sandbox
# vimc (loaded for this scenario): with camera.backend = libcamera the service, as its user under its unit
# (DeviceAllow=char-media, char-video4linux, group video from etc/udev), enumerates the camera through
# udev's database (no udev events reach it under PrivateNetwork), acquires it and streams.
MEDIA=$(ls /dev/media* 2>/dev/null | head -n1)
[ -n "$MEDIA" ] || fail "no /dev/media* node (vimc)"
wait_for 15 "udev gives $MEDIA to group video" sh -c "[ \"\$(stat -c %G:%a $MEDIA)\" = video:660 ]"
photoboothctl config set camera.backend libcamera --file $C > /dev/null || fail "config set camera.backend libcamera"
photoboothctl config set camera.device "Sensor B" --file $C > /dev/null || fail "config set camera.device 'Sensor B'"
assert_cmd "systemctl restart photoboothd (camera.backend = libcamera)" timeout 60 systemctl restart photoboothd
wait_for 60 "the sandboxed service streams from vimc through libcamera" \
    sh -c "journalctl -u photoboothd --no-pager -o cat | grep -q 'camera: streaming platform/vimc.0 Sensor B'"
pass "libcamera under the unit's sandbox: $(journalctl -u photoboothd --no-pager -o cat | grep -m1 'camera: streaming platform/vimc')"
photoboothctl config set camera.backend v4l2 --file $C > /dev/null || fail "config set camera.backend v4l2"
photoboothctl config set camera.device "$VIVID" --file $C > /dev/null || fail "config set camera.device $VIVID"
assert_cmd "systemctl restart photoboothd (camera.backend = v4l2)" timeout 60 systemctl restart photoboothd
PID1=$(systemctl show -p MainPID --value photoboothd)

# ---------------------------------------------------------------- 3. watchdog
t0=$(uptime_s)
kill -STOP "$PID1"
log "kill -STOP $PID1 (WatchdogSec=4s)"
wait_for 30 "systemd restarts the stopped daemon" sh -c "p=\$(systemctl show -p MainPID --value photoboothd); [ \"\$p\" != 0 ] && [ \"\$p\" != $PID1 ] && systemctl is-active -q photoboothd"
log "restarted $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime) s after SIGSTOP; new MainPID $(systemctl show -p MainPID --value photoboothd)"
journalctl -u photoboothd --no-pager > "$RESULTS/photoboothd-journal.txt"
assert_contains "$(cat "$RESULTS/photoboothd-journal.txt")" "Watchdog timeout" "the journal"
assert_ge "$(systemctl show -p NRestarts --value photoboothd)" 1 "NRestarts"

# ---------------------------------------------------------------- 4. bad config: no restart loop
printf '[session]\ncountdown = banana\n' >> $C
systemctl restart photoboothd 2>/dev/null && fail "photoboothd started with a bad config"
sleep 6
assert_eq "$(systemctl show -p ExecMainStatus --value photoboothd)" 78 "exit status with a bad config"
n1=$(systemctl show -p NRestarts --value photoboothd)
sleep 4
assert_eq "$(systemctl show -p NRestarts --value photoboothd)" "$n1" "NRestarts stays (no restart loop)"
state=$(systemctl show -p ActiveState --value photoboothd)
case "$state" in failed|inactive) pass "photoboothd stays stopped ($state)" ;; *) fail "photoboothd is $state with a bad config" ;; esac
journalctl -u photoboothd --no-pager > "$RESULTS/photoboothd-journal.txt"
assert_contains "$(cat "$RESULTS/photoboothd-journal.txt")" "invalid settings, not starting" "the journal says why"
assert_contains "$(cat "$RESULTS/photoboothd-journal.txt")" "duplicate key 'session.countdown'" "the journal names the problem"

# ---------------------------------------------------------------- 5. exposure
systemd-analyze security photoboothd > "$RESULTS/security.txt" 2>&1 || true
log "$(grep 'Overall exposure' "$RESULTS/security.txt")"
log "systemd scenario passed"
