#!/usr/bin/env bash
# install.sh: set up, build and run the photobooth on Debian 12 (and Raspberry Pi OS).
#
#   ./install.sh --demo      install what building needs, build, run the simulated booth
#   ./install.sh --test      install what the tests need, run every test (this is what CI runs)
#   ./install.sh --install   install the booth as a systemd service (photoboothd.service)
#
# Needs root (or sudo) for apt-get. Needs a Swift 6 toolchain: Debian 12 has no Swift
# package; where this script looks for one is said below.
set -euo pipefail
cd "$(dirname "$0")"

# What the Swift toolchain itself needs on a pristine Debian 12 (measured in a fresh minbase root).
TOOLCHAIN_DEPS=(binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev
  libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libncurses6 libz3-dev pkg-config tzdata zlib1g-dev)
# The C libraries the booth links: libv4l2, libgpiod (v1 on Debian 12), libevdev (input buttons), libdrm (KMS screens), TurboJPEG, libpng (the picture's PNG overlay), libgphoto2 (DSLR and mirrorless cameras),
# libcamera (Raspberry Pi camera modules; its C++ API behind Sources/CLibcameraShim, which the toolchain's clang builds against libstdc++-12-dev).
BUILD_DEPS=(gcc libcamera-dev libgphoto2-dev libv4l-dev libgpiod-dev libevdev-dev libdrm-dev libsqlite3-dev libsodium-dev libmicrohttpd-dev libqrencode-dev libexif-dev libturbojpeg0-dev libfreetype-dev libyuv-dev libpng-dev fonts-dejavu-core)
# Extra tools the tests use: v4l2-ctl and the gpiod tools (also handy for operators), djpeg (kill test),
# udev (the systemd scenario applies etc/udev in the guest), python3 (the print stack's helper, the kill
# and soak checks, the socket peer test's client, the display scenario), jq (the corrupt-frames scenario
# reads status JSON in the guest), systemd (systemd-analyze verify, and PID 1 of the systemd scenario),
# faketime (libfaketime: the clock test's frozen and set-back wall clock), dmsetup, dosfstools, exfatprogs and
# iproute2 (the power-cut scenario: dm-log-writes, mkfs and fsck of vfat and exFAT, loopback for cupsd in the guest),
# zbar-tools (zbarimg reads the review's QR code back from the file preview's pixels), chromium, chromium-driver
# and python3-selenium (the gallery browser test: Debian's /usr/bin/python3 drives headless chromium),
# rclone (the gallery's sync to a local folder and to a WebDAV server on loopback, rclone serve webdav),
# make, patch, libltdl-dev and libusb-1.0-0-dev (hardware/gphoto2/setup builds libgphoto2's virtual camera),
# libcamera-tools (libcamera's `cam`: the libcamera-vimc scenario lists vimc's camera with it and holds the camera with it)
# and libcamera-ipa (the pipelines' IPA modules: without ipa_vimc.so libcamera lists no vimc camera).
# groff-base and man-db (ManPageTests render the man pages with groff -ww and show them with man -l).
# A pristine Debian 12 minbase has none of them; a test that finds one missing fails and names it.
TEST_DEPS=(v4l-utils gpiod ca-certificates libjpeg-turbo-progs udev python3 jq systemd faketime dmsetup dosfstools exfatprogs iproute2 zbar-tools chromium chromium-driver python3-selenium rclone make patch libltdl-dev libusb-1.0-0-dev libcamera-tools libcamera-ipa groff-base man-db)
# Printing: libcups to build against; a private cupsd, ippeveprinter (a simulated IPP Everywhere printer),
# the lp tools and a D-Bus daemon for the print tests (--no-install-recommends keeps cups-browsed out).
PRINT_BUILD_DEPS=(libcups2-dev)
PRINT_TEST_DEPS=(cups cups-ipp-utils cups-client dbus)

step() { printf '\n==> %s\n' "$*"; }
# The logs of this run (apt, build, tests) in a directory of its own: a fixed name in /tmp could be
# another user's file (root would truncate it, or fail on it with fs.protected_regular).
LOGS=$(mktemp -d /tmp/photobooth-logs.XXXXXX) || { echo "install.sh: cannot make a log directory in /tmp" >&2; exit 1; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  cat <<'TXT'

Modes (one of):
  --demo       apt-install build dependencies, build, then run
               photoboothd --simulate --auto-press --sessions 3 (photos land in ./photos)
  --test       apt-install test dependencies, build, run `swift test`, the libgpiod v2
               compile check, the install/kill/storage system tests and the
               virtual-hardware scenarios (hardware/vm/run all)
  --unit       like --test without the qemu scenarios (quicker)
  --install    install the booth (there is no default mode: run without one, this text):
               apt-installs runtime and build dependencies, builds one release binary with
               --static-swift-stdlib (reused while the sources are unchanged), installs
               photoboothd and photoboothctl to /usr/local/bin, the default config to
               /etc/photobooth/photobooth.conf (an existing config is never overwritten:
               the difference is shown; the folder and the file group photobooth and
               group-writable, so its members run photoboothctl config set without sudo), the unit /etc/systemd/system/photoboothd.service,
               the udev rules /etc/udev/rules.d/90-photobooth.rules, the system user
               photobooth (groups video, gpio, lp, input; gpio created if missing) via
               /etc/sysusers.d/photobooth.conf, /var/lib/photobooth, the man pages
               photoboothd(8), photoboothctl(1), photobooth.conf(5) under
               /usr/local/share/man and photoboothctl's bash completion; then enables and
               (re)starts photoboothd. Safe to run again: unchanged files are left alone.
  --uninstall  stop and disable the service, remove what --install installed; keeps the
               config (/etc/photobooth), the photos (/var/lib/photobooth) and the user
  --help       this text

With --install / --uninstall:
  --no-start     install and enable, but do not (re)start the service
  --destdir DIR  install into the staging tree DIR (packaging, tests): no apt, no user
                 creation, no systemctl/udevadm; the files and modes are as on a real install
Environment: PHOTOBOOTH_PREBUILT=DIR installs DIR/photoboothd and DIR/photoboothctl instead
of building (a release build made earlier, e.g. for another machine of the same arch);
PHOTOBOOTH_BUILD_CACHE=DIR keeps the release build there (default ~/.cache/photobooth/release-build).

The Swift toolchain is looked for on PATH, then in /opt/swift/usr/bin,
/usr/share/swift/usr/bin, /usr/local/swift/usr/bin and ~/.local/share/swiftly/bin.
Without one: download a Swift 6 toolchain for Debian 12 from swift.org (or install it
with swiftly), unpack it to /opt/swift so that /opt/swift/usr/bin/swift exists, and run
this script again.
TXT
}

find_swift() {
  if command -v swift >/dev/null 2>&1; then return 0; fi
  local d
  for d in /opt/swift/usr/bin /usr/share/swift/usr/bin /usr/local/swift/usr/bin "$HOME/.local/share/swiftly/bin"; do
    if [ -x "$d/swift" ]; then export PATH="$d:$PATH"; return 0; fi
  done
  die "no Swift toolchain found (looked on PATH, /opt/swift/usr/bin, /usr/share/swift/usr/bin,
/usr/local/swift/usr/bin, ~/.local/share/swiftly/bin). Debian 12 has no Swift package:
download a Swift 6 toolchain for Debian 12 from swift.org, unpack it to /opt/swift, and run again."
}

check_swift_version() {
  local out v
  # Run after the toolchain's own packages are installed: on a pristine system the driver
  # itself cannot start without libncurses6, libsqlite3-0, libcurl4, libxml2.
  out=$(swift --version 2>&1) || die "'$(command -v swift) --version' failed:
$out"
  v=$(printf '%s\n' "$out" | sed -n 's/.*Swift version \([0-9][0-9]*\)\..*/\1/p' | head -n1)
  [ -n "$v" ] || die "could not read the Swift version from 'swift --version':
$out"
  [ "$v" -ge 6 ] || die "Swift $v found; the booth needs Swift 6 or later"
  echo "Swift toolchain: $(command -v swift) ($(swift --version 2>/dev/null | head -n1))"
}

apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then echo "all present: $*"; return 0; fi
  local SUDO=""
  if [ "$(id -u)" -ne 0 ]; then command -v sudo >/dev/null || die "apt-get needs root: run as root or install sudo"; SUDO=sudo; fi
  echo "installing: ${missing[*]}"
  # apt's and dpkg's hundreds of lines go to a log; what it did is one line, a failure shows the log's end.
  local log=$LOGS/apt.log
  : > "$log"
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
    $SUDO apt-get update -qq >>"$log" 2>&1 || { tail -n 20 "$log"; die "step 'apt-get update' failed: check the network and the apt sources (log: $log)"; }
  fi
  local before after
  before=$(dpkg-query -W -f='${Status}\n' 2>/dev/null | grep -c 'install ok installed' || true)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1 \
    || { $SUDO apt-get update -qq >>"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; } \
    || { tail -n 30 "$log"; die "step 'apt-get install' failed for: ${missing[*]} (the whole log: $log)"; }
  after=$(dpkg-query -W -f='${Status}\n' 2>/dev/null | grep -c 'install ok installed' || true)
  echo "installed ${#missing[@]} requested, $((after - before)) packages in all (apt's output: $log)"
}

build() {
  step "building (swift build)"
  local rc=0
  swift build >$LOGS/build.log 2>&1 || rc=$?
  grep -v '^\[' $LOGS/build.log || true
  [ "$rc" -eq 0 ] || die "step 'swift build' failed (exit $rc); the log is in $LOGS/build.log"
  if grep -q 'warning:' $LOGS/build.log; then
    grep 'warning:' $LOGS/build.log
    [ "${CI:-}" = true ] && die "the build has warnings (the project keeps zero)"
  fi
}

# ---- --install / --uninstall ---------------------------------------------------------------
# What the installed booth needs at run time (the binary links these; the Swift runtime is static;
# rclone is what photobooth-gallery copies pictures with, gallery.sync_remote; ca-certificates for https remotes and webhooks).
# libcamera's library package is named by its soname's version (Debian 12: libcamera0.0.3), its pipelines'
# IPA modules (ipa_rpi.so, ipa_vimc.so) are libcamera-ipa.
# Asked of apt only by --install (a pristine system has no package lists before apt_install's update:
# Debian 12's name then).
libcamera_runtime() {
  local name
  name=$(apt-cache depends libcamera-dev 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^libcamera0/ {print $2; exit}' || true)
  echo "${name:-libcamera0.0.3}"
}
RUNTIME_DEPS=(libcamera-ipa libgphoto2-6 libv4l-0 libgpiod2 libevdev2 libdrm2 libsqlite3-0 libsodium23 libmicrohttpd12 libqrencode4 libexif12 libcurl4 libturbojpeg0 libcups2 libyuv0 libpng16-16 libfreetype6 fonts-dejavu-core v4l-utils gpiod rclone ca-certificates)
# The one release build, kept outside the clone so CI and re-runs reuse it.
RELEASE_SCRATCH=${PHOTOBOOTH_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/photobooth/release-build}

run_step() { # run_step NAME CMD...: runs CMD; a failure names the step
  local name=$1; shift
  "$@" || die "step '$name' failed (command: $*)"
}

# install_file SRC DEST MODE: copies when the content or mode differs; says which.
install_file() {
  local src=$1 dest=$2 mode=$3
  if [ -f "$dest" ] && cmp -s "$src" "$dest" && [ "$(stat -c %a "$dest")" = "${mode#0}" ]; then
    echo "  unchanged  $dest"
  else
    run_step "install $dest" install -D -m "$mode" "$src" "$dest"
    echo "  installed  $dest (mode $mode)"
  fi
}

release_build() {
  if [ -n "${PHOTOBOOTH_PREBUILT:-}" ]; then
    step "using the prebuilt binaries in $PHOTOBOOTH_PREBUILT (PHOTOBOOTH_PREBUILT; no build)"
    [ -x "$PHOTOBOOTH_PREBUILT/photoboothd" ] && [ -x "$PHOTOBOOTH_PREBUILT/photoboothctl" ] && [ -x "$PHOTOBOOTH_PREBUILT/photobooth-gallery" ] \
      || die "step 'prebuilt binaries' failed: no photoboothd/photoboothctl/photobooth-gallery in $PHOTOBOOTH_PREBUILT"
    BIN_DIR=$PHOTOBOOTH_PREBUILT
    return 0
  fi
  step "building one release binary (swift build -c release --static-swift-stdlib, in $RELEASE_SCRATCH)"
  mkdir -p "$RELEASE_SCRATCH"
  local product rc
  : > $LOGS/release.log
  for product in photoboothd photoboothctl photobooth-gallery; do
    rc=0
    swift build -c release --static-swift-stdlib --scratch-path "$RELEASE_SCRATCH" --product "$product" \
      >>$LOGS/release.log 2>&1 || rc=$?
    [ "$rc" -eq 0 ] || { tail -n 30 $LOGS/release.log; die "step 'release build of $product' failed (exit $rc); the log is in $LOGS/release.log"; }
  done
  grep -e 'error:' -e 'Compiling\|complete' $LOGS/release.log | grep -v '^\[' || true
  BIN_DIR="$RELEASE_SCRATCH/release"
}

have_systemd() { [ -d /run/systemd/system ]; }

do_install() {
  local D=${destdir%/}
  if [ -z "$D" ] && [ "$(id -u)" -ne 0 ]; then die "--install writes to /usr/local, /etc and /var: run it as root (sudo $0 --install)"; fi
  if [ -z "${PHOTOBOOTH_PREBUILT:-}" ]; then step "looking for a Swift toolchain"; find_swift; fi
  RUNTIME_DEPS=("$(libcamera_runtime)" "${RUNTIME_DEPS[@]}")
  if [ -z "$D" ]; then
    step "installing runtime and build dependencies (apt-get --no-install-recommends)"
    if [ -n "${PHOTOBOOTH_PREBUILT:-}" ]; then apt_install "${RUNTIME_DEPS[@]}"
    else apt_install "${TOOLCHAIN_DEPS[@]}" "${BUILD_DEPS[@]}" "${PRINT_BUILD_DEPS[@]}" "${RUNTIME_DEPS[@]}"; fi
  fi
  if [ -z "${PHOTOBOOTH_PREBUILT:-}" ]; then step "checking the Swift toolchain"; check_swift_version; fi
  if [ -n "$D" ]; then
    echo "(--destdir: no apt; a package must depend on: ${RUNTIME_DEPS[*]})"
  fi
  release_build
  step "installing the programs to $D/usr/local/bin (stripped of symbols: an SD card's room is the booth's photos')"
  local stripped prog total=0 size
  stripped=$(mktemp -d /tmp/photobooth-stripped.XXXXXX)
  for prog in photoboothd photoboothctl photobooth-gallery; do
    run_step "strip $prog" strip --strip-all -o "$stripped/$prog" "$BIN_DIR/$prog"
    install_file "$stripped/$prog" "$D/usr/local/bin/$prog" 0755
    size=$(stat -c %s "$D/usr/local/bin/$prog"); total=$((total + size))
    printf '  %-18s %s MB\n' "$prog" "$(awk -v b="$size" 'BEGIN {printf "%.1f", b / 1e6}')"
  done
  rm -rf "$stripped"
  printf '  together           %s MB\n' "$(awk -v b="$total" 'BEGIN {printf "%.1f", b / 1e6}')"
  step "installing the default config to $D/etc/photobooth/photobooth.conf (never overwritten)"
  local conf="$D/etc/photobooth/photobooth.conf"
  if [ -e "$conf" ]; then
    if cmp -s etc/photobooth/photobooth.conf "$conf"; then
      echo "  unchanged  $conf"
    else
      echo "  kept       $conf (yours); how it differs from this version's default:"
      diff -u --label "$conf (installed)" --label "etc/photobooth/photobooth.conf (default)" \
        "$conf" etc/photobooth/photobooth.conf | sed 's/^/    /' || true
    fi
  else
    install_file etc/photobooth/photobooth.conf "$conf" 0664
  fi
  # photoboothctl config set writes the file as its caller (a temp file beside it, renamed over it): the
  # folder setgid and group-writable, the file group-writable, so a member of group photobooth edits it
  # without sudo (the group is set below, once it exists).
  run_step "mode of $D/etc/photobooth" chmod 2775 "$D/etc/photobooth"
  run_step "mode of $conf" chmod g+w "$conf"
  step "installing the systemd unit, udev rules, system user definition, README, LICENSE, man pages and bash completion"
  install_file etc/systemd/photoboothd.service "$D/etc/systemd/system/photoboothd.service" 0644
  install_file etc/systemd/photobooth-gallery.service "$D/etc/systemd/system/photobooth-gallery.service" 0644
  install_file etc/udev/90-photobooth.rules "$D/etc/udev/rules.d/90-photobooth.rules" 0644
  install_file etc/sysusers.d/photobooth.conf "$D/etc/sysusers.d/photobooth.conf" 0644
  install_file README.md "$D/usr/local/share/doc/photobooth/README.md" 0644
  install_file LICENSE "$D/usr/local/share/doc/photobooth/LICENSE" 0644
  install_file man/photoboothctl.1 "$D/usr/local/share/man/man1/photoboothctl.1" 0644
  install_file man/photobooth.conf.5 "$D/usr/local/share/man/man5/photobooth.conf.5" 0644
  install_file man/photoboothd.8 "$D/usr/local/share/man/man8/photoboothd.8" 0644
  install_file completions/photoboothctl "$D/usr/local/share/bash-completion/completions/photoboothctl" 0644
  step "creating the system user photobooth (groups video, gpio, lp, input) and /var/lib/photobooth"
  if [ -z "$D" ]; then
    run_step "systemd-sysusers" systemd-sysusers /etc/sysusers.d/photobooth.conf
    id photobooth
    run_step "group photobooth on /etc/photobooth" chgrp photobooth /etc/photobooth "$conf"
    echo "  /etc/photobooth and its config: group photobooth, group-writable (members run photoboothctl config set without sudo)"
    run_step "create /var/lib/photobooth" install -d -m 0751 -o photobooth -g photobooth /var/lib/photobooth
    # A photoboothd once run by hand as root leaves root's files there (photos/, the totals): the service,
    # running as photobooth, would find its photos directory not writable. Given back, and said.
    local foreign
    foreign=$(find /var/lib/photobooth \! -user photobooth -print 2>/dev/null | head -n 3)
    if [ -n "$foreign" ]; then
      run_step "chown /var/lib/photobooth" chown -R photobooth:photobooth /var/lib/photobooth
      echo "  gave back to photobooth what another user had left in /var/lib/photobooth (e.g. $(echo "$foreign" | head -n1))"
    fi
    # The pictures and the gallery's index, after that: setgid folders of photobooth-photos (which
    # photobooth-gallery reads them through), what is in them the group's to read, earlier date folders too.
    local d
    for d in /var/lib/photobooth/photos /var/lib/photobooth/gallery; do
      run_step "create $d" install -d -m 2750 -o photobooth -g photobooth-photos "$d"
      run_step "group photobooth-photos on $d" chgrp -R photobooth-photos "$d"
      run_step "setgid folders in $d" find "$d" -type d -exec chmod 2750 {} +
      run_step "group-readable files in $d" chmod -R g+rX,g-w "$d"
    done
  else
    echo "  (--destdir: the user is created by systemd-sysusers from etc/sysusers.d on the target)"
    [ -d "$D/var/lib/photobooth" ] || run_step "create $D/var/lib/photobooth" install -d -m 0751 "$D/var/lib/photobooth"
  fi
  run_step "check the installed config" "$BIN_DIR/photoboothctl" config validate "$conf" >/dev/null
  [ -n "$D" ] && { step "staged in $D"; return 0; }
  step "reloading udev rules"
  if command -v udevadm >/dev/null && [ -d /run/udev ]; then
    run_step "udevadm control --reload" udevadm control --reload
    udevadm trigger --subsystem-match=gpio --subsystem-match=video4linux --subsystem-match=input || true
  else
    echo "  (udev not running here; the rules apply at the next boot)"
  fi
  if ! have_systemd; then
    step "systemd is not running as init here (a container?): the service is installed but not enabled"
    return 0
  fi
  step "enabling photoboothd.service"
  run_step "systemctl daemon-reload" systemctl daemon-reload
  run_step "systemctl enable" systemctl enable photoboothd.service
  if $no_start; then
    echo "  --no-start: start it with 'systemctl start photoboothd'"
  else
    step "(re)starting photoboothd.service"
    systemctl restart photoboothd.service || die "step 'systemctl restart photoboothd' failed; see 'journalctl -u photoboothd -n 50' and 'photoboothctl config validate'"
    systemctl --no-pager --lines=0 status photoboothd.service || true
  fi
  step "installed: 'photoboothctl status' for the booth, 'journalctl -u photoboothd' for its log"
}

do_uninstall() {
  local D=${destdir%/}
  if [ -z "$D" ] && [ "$(id -u)" -ne 0 ]; then die "--uninstall needs root"; fi
  if [ -z "$D" ] && have_systemd; then
    step "stopping and disabling photoboothd.service and photobooth-gallery.service"
    systemctl disable --now photoboothd.service photobooth-gallery.service 2>/dev/null || true
  fi
  step "removing the installed files (keeping $D/etc/photobooth, $D/var/lib/photobooth and the user)"
  local f
  for f in /usr/local/bin/photoboothd /usr/local/bin/photoboothctl /usr/local/bin/photobooth-gallery \
           /etc/systemd/system/photoboothd.service /etc/systemd/system/photobooth-gallery.service /etc/udev/rules.d/90-photobooth.rules /etc/sysusers.d/photobooth.conf /usr/local/share/doc/photobooth/README.md \
           /usr/local/share/doc/photobooth/LICENSE /usr/local/share/man/man1/photoboothctl.1 \
           /usr/local/share/man/man5/photobooth.conf.5 /usr/local/share/man/man8/photoboothd.8 \
           /usr/local/share/bash-completion/completions/photoboothctl; do
    if [ -e "$D$f" ]; then run_step "remove $D$f" rm -f "$D$f"; echo "  removed    $D$f"; fi
  done
  rmdir "$D/usr/local/share/doc/photobooth" 2>/dev/null || true
  rmdir "$D/usr/local/share/bash-completion/completions" "$D/usr/local/share/bash-completion" 2>/dev/null || true
  if [ -z "$D" ] && have_systemd; then systemctl daemon-reload || true; fi
  echo "kept: the config, the photos and the users photobooth and photobooth-gallery (remove them with 'userdel photobooth; userdel photobooth-gallery')"
}

mode="" no_start=false destdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --demo|--test|--unit|--install|--uninstall)
      [ -z "$mode" ] || die "one mode at a time ('$mode' and '$1'); see --help"; mode=$1 ;;
    --no-start) no_start=true ;;
    --destdir) [ $# -ge 2 ] || die "--destdir needs a directory"; destdir=$2; shift ;;
    --destdir=*) destdir=${1#--destdir=} ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
  shift
done
if [ -n "$destdir" ] || $no_start; then
  case "$mode" in --install|--uninstall) ;; *) die "--destdir and --no-start go with --install or --uninstall" ;; esac
fi
case "$mode" in
  "") usage >&2; echo "install.sh: say what to do: --demo, --test, --unit, --install or --uninstall" >&2; exit 64 ;;
  --install) do_install ;;
  --uninstall) do_uninstall ;;
  --demo)
    step "looking for a Swift toolchain"; find_swift
    step "installing build dependencies (and what the toolchain itself needs)"
    apt_install "${TOOLCHAIN_DEPS[@]}" "${BUILD_DEPS[@]}" "${PRINT_BUILD_DEPS[@]}"
    step "checking the Swift toolchain"; check_swift_version
    build
    step "running the simulated booth: 3 sessions, pressed automatically"
    .build/debug/photoboothd --simulate --auto-press --sessions 3 </dev/null
    step "photos taken"
    find photos -name 'booth-*.jpg' | sort
    ;;
  --test|--unit)
    step "looking for a Swift toolchain"; find_swift
    step "installing test dependencies (and what the toolchain itself needs)"
    apt_install "${TOOLCHAIN_DEPS[@]}" "${BUILD_DEPS[@]}" "${PRINT_BUILD_DEPS[@]}" "${TEST_DEPS[@]}" "${PRINT_TEST_DEPS[@]}"
    step "checking the Swift toolchain"; check_swift_version
    build
    step "libgphoto2's virtual camera for the gphoto2 tests (trixie's libgphoto2 source, --enable-vusb, patched)"
    hardware/gphoto2/setup || die "step 'hardware/gphoto2/setup' failed"
    step "unit tests (swift test)"
    rc=0
    swift test >$LOGS/test.log 2>&1 || rc=$?
    # What to read: failures with their issues, the tests' own notes, the totals; not one line per passing
    # test (the whole log stays in $LOGS/test.log).
    awk -v whole="$LOGS/test.log" '/^\[[0-9]+\/[0-9]+\]/ || / started\.$/ { next }
         /^(✔|􁁛) (Test|Suite) / && !/ Test run with / { passed++; next }
         { print }
         END { if (passed) printf "(%d passing tests and suites not listed; the whole log: %s)\n", passed, whole }' \
      "$LOGS/test.log" || true
    [ "$rc" -eq 0 ] || die "step 'swift test' failed (exit $rc); the log is in $LOGS/test.log"
    step "no test met a missing prerequisite (a test that needs a tool it lacks fails and names it)"
    if grep -q 'missing prerequisite' $LOGS/test.log; then
      grep 'missing prerequisite' $LOGS/test.log | sort -u | head -n 5
      die "step 'test prerequisites' failed: install what is named above"
    fi
    echo "none (the print tests ran against a private cupsd and ippeveprinter)"
    step "libgpiod v2 API: the shim compiles against Debian trixie's libgpiod-dev"
    hardware/gpiod-v2-check.sh || die "step 'libgpiod v2 compile check' failed"
    step "libcamera: the shim compiles against Debian trixie's and trixie-backports' libcamera-dev"
    hardware/libcamera-check.sh || die "step 'libcamera compile check' failed"
    step "system tests: install.sh --destdir, sd_notify/watchdog, kill test, disk full, removable media"
    hardware/system-tests/run-all || die "step 'system tests' failed: the failing test is named above"
    if [ "$mode" = --test ]; then
      step "virtual hardware: the booth against vivid, v4l2loopback and gpio-sim in a qemu guest"
      hardware/vm/setup || die "step 'hardware/vm/setup' failed"
      hardware/vm/run all || die "step 'hardware/vm/run all' failed: the guest logs are named above"
    fi
    ;;
esac
