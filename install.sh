#!/usr/bin/env bash
# install.sh: set up, build and run the photobooth on Debian 12 (and Raspberry Pi OS).
#
#   ./install.sh --demo   install what building needs, build, run the simulated booth
#   ./install.sh --test   install what the tests need, run every test (this is what CI runs)
#
# Needs root (or sudo) for apt-get. Needs a Swift 6 toolchain: Debian 12 has no Swift
# package; where this script looks for one is said below.
set -euo pipefail
cd "$(dirname "$0")"

# What the Swift toolchain itself needs on a pristine Debian 12 (measured in a fresh minbase root).
TOOLCHAIN_DEPS=(binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev
  libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libncurses6 libz3-dev pkg-config tzdata zlib1g-dev)
# The C libraries the booth links: libv4l2, libgpiod (v1 on Debian 12), TurboJPEG.
BUILD_DEPS=(gcc libv4l-dev libgpiod-dev libturbojpeg0-dev libfreetype-dev libyuv-dev fonts-dejavu-core)
# Extra tools the tests use: v4l2-ctl and the gpiod tools (also handy for operators).
TEST_DEPS=(v4l-utils gpiod ca-certificates)
# Printing: libcups to build against; a private cupsd, ippeveprinter (a simulated IPP Everywhere printer),
# the lp tools and a D-Bus daemon for the print tests (--no-install-recommends keeps cups-browsed out).
PRINT_BUILD_DEPS=(libcups2-dev)
PRINT_TEST_DEPS=(cups cups-ipp-utils cups-client dbus)

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  cat <<'TXT'

Options:
  --demo     apt-install build dependencies, build, then run
             photoboothd --simulate --auto-press --sessions 3 (photos land in ./photos)
  --test     apt-install test dependencies, build, run `swift test`, the libgpiod v2
             compile check and the virtual-hardware scenarios (hardware/vm/run all)
  --unit     like --test without the qemu scenarios (quicker)
  --help     this text

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
  if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]; then
    $SUDO apt-get update -qq || die "step 'apt-get update' failed: check the network and /etc/apt/sources.list"
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    || die "step 'apt-get install' failed for: ${missing[*]}"
}

build() {
  step "building (swift build)"
  local rc=0
  swift build >/tmp/photobooth-build.log 2>&1 || rc=$?
  grep -v '^\[' /tmp/photobooth-build.log || true
  [ "$rc" -eq 0 ] || die "step 'swift build' failed (exit $rc); the log is in /tmp/photobooth-build.log"
  if grep -q 'warning:' /tmp/photobooth-build.log; then
    grep 'warning:' /tmp/photobooth-build.log
    [ "${CI:-}" = true ] && die "the build has warnings (the project keeps zero)"
  fi
}

mode=${1:-}
case "$mode" in
  --help|-h) usage; exit 0 ;;
  "") usage >&2; echo "install.sh: say what to do: --demo, --test or --unit" >&2; exit 64 ;;
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
    step "unit tests (swift test)"
    rc=0
    swift test >/tmp/photobooth-test.log 2>&1 || rc=$?
    grep -v -e '^\[[0-9]*/[0-9]*\]' -e ' started\.$' /tmp/photobooth-test.log || true
    [ "$rc" -eq 0 ] || die "step 'swift test' failed (exit $rc); the log is in /tmp/photobooth-test.log"
    step "printing: the scenarios ran against a private cupsd and ippeveprinter (not skipped)"
    if grep -q 'print tests skipped' /tmp/photobooth-test.log; then
      grep 'print tests skipped' /tmp/photobooth-test.log | head -n1
      die "step 'print tests' was skipped: install cups cups-ipp-utils cups-client dbus"
    fi
    step "libgpiod v2 API: the shim compiles against Debian trixie's libgpiod-dev"
    hardware/gpiod-v2-check.sh || die "step 'libgpiod v2 compile check' failed"
    if [ "$mode" = --test ]; then
      step "virtual hardware: the booth against vivid, v4l2loopback and gpio-sim in a qemu guest"
      hardware/vm/setup || die "step 'hardware/vm/setup' failed"
      hardware/vm/run all || die "step 'hardware/vm/run all' failed: the guest logs are named above"
    fi
    ;;
  *) die "unknown option '$mode'; see --help" ;;
esac
