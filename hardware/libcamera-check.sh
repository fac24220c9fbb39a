#!/usr/bin/env bash
# Proves the libcamera shim (Sources/CLibcameraShim/pb_libcamera.cpp) compiles from one source against
# the libcamera versions Debian ships:
#   - the system's headers (Debian 12: libcamera-dev 0.0.3), as SwiftPM builds it;
#   - Debian trixie's libcamera-dev, and trixie-backports' where that suite has one, fetched with
#     `apt-get download` through a private sources list (hardware/debian-mirror.sh); the system's apt
#     sources, lists and cache are not touched.
# Each build passes -DPB_LC_EXPECT_VERSION=MAJOR*1000+MINOR (the headers' version.h must agree: a
# static_assert in the shim), with -Wall -Wextra -Werror, and the object must reference the C++ API
# the shim uses (Camera::acquire) and define every pb_lc_* function of pb_libcamera.h. Raspberry Pi
# OS's own libcamera builds cannot be fetched here; the shim keeps to the API the Debian versions share.
# Compile only: trixie's libcamera.so needs trixie's libstdc++, which Debian 12 cannot link against.
#
# Usage: hardware/libcamera-check.sh
# Environment:
#   PHOTOBOOTH_CI_CACHE  cache directory (default /var/cache/photobooth-ci); downloads live in
#                        $PHOTOBOOTH_CI_CACHE/libcamera
#   LIBCAMERA_SUITES     Debian suites to fetch from (default "trixie trixie-backports"; a suite the
#                        mirror does not have, or without libcamera-dev, is reported and passed over,
#                        except the first, which must be there)
#   DEBIAN_MIRROR        mirror URL (default: the first Debian mirror in the system's apt sources)
#   CXX                  the C++ compiler (default: clang++ beside the Swift toolchain's swift, else clang++, else g++)
# Exit status: 0 when every build passes; non-zero with a message naming the step.
set -euo pipefail

fail() { echo "libcamera-check: FAILED: $*" >&2; exit 1; }
step() { echo "libcamera-check: $*"; }

root=$(cd "$(dirname "$0")/.." && pwd)
shim_dir="$root/Sources/CLibcameraShim"
shim="$shim_dir/pb_libcamera.cpp"
header="$shim_dir/include/pb_libcamera.h"
[ -f "$shim" ] && [ -f "$header" ] || fail "shim source not found in $shim_dir"
if [ -z "${CXX:-}" ]; then
    swift_bin=$(command -v swift 2>/dev/null || true)
    if [ -n "$swift_bin" ] && [ -x "$(dirname "$(readlink -f "$swift_bin")")/clang++" ]; then
        CXX=$(dirname "$(readlink -f "$swift_bin")")/clang++
    elif command -v clang++ >/dev/null; then CXX=clang++
    elif command -v g++ >/dev/null; then CXX=g++
    else fail "no C++ compiler (the Swift toolchain's clang++, clang++ or g++)"; fi
fi
for tool in apt-get dpkg-deb nm; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The functions pb_libcamera.h declares, each of which the object must define (the still ledger's are in
# pb_still_ledger.cpp, which uses no libcamera).
mapfile -t declared < <(grep -oE '\bpb_lc_[a-z_]+\(' "$header" | tr -d '(' | grep -v '^pb_lc_still_ledger_' | sort -u)
[ ${#declared[@]} -ge 10 ] || fail "found only ${#declared[@]} pb_lc_* functions in $header"

# compile NAME INCLUDE_DIR: compiles the shim against the libcamera headers in INCLUDE_DIR (the folder
# holding libcamera/libcamera.h) and checks the object.
compile() {
    local name=$1 inc=$2 version major minor
    version=$(sed -n 's/^#define LIBCAMERA_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\)/\2/p' "$inc/libcamera/version.h" | paste -sd.)
    [ -n "$version" ] || fail "$name: no LIBCAMERA_VERSION_* in $inc/libcamera/version.h"
    major=${version%%.*} minor=${version#*.}; minor=${minor%%.*}
    step "compiling the shim against libcamera $version ($name, $inc) with $CXX"
    "$CXX" -std=c++17 -Wall -Wextra -Werror -fPIC -DPB_LC_EXPECT_VERSION=$((major * 1000 + minor)) \
        -isystem "$inc" -I"$shim_dir/include" -c "$shim" -o "$work/$name.o" 2>"$work/$name.log" ||
        { cat "$work/$name.log" >&2; fail "the shim does not compile against libcamera $version ($name)"; }
    # (The symbol tables read into variables: grep -q on a pipe would end nm early, and pipefail fail it.)
    local undefined defined f missing=()
    undefined=$(nm -C -u "$work/$name.o") defined=$(nm "$work/$name.o")
    grep -q 'libcamera::Camera::acquire' <<<"$undefined" ||
        fail "$name: the object does not reference libcamera::Camera::acquire"
    for f in "${declared[@]}"; do grep -qE " T $f\$" <<<"$defined" || missing+=("$f"); done
    [ ${#missing[@]} -eq 0 ] || fail "$name: the object does not define ${missing[*]}"
    checked+=("$version ($name)")
}
checked=()

# --- 0. the still ledger (pb_still_ledger.cpp: no libcamera, so once) ----------------------------
step "compiling the still ledger (pb_still_ledger.cpp) with $CXX"
"$CXX" -std=c++17 -Wall -Wextra -Werror -fPIC -I"$shim_dir/include" -c "$shim_dir/pb_still_ledger.cpp" -o "$work/ledger.o" \
    2>"$work/ledger.log" || { cat "$work/ledger.log" >&2; fail "pb_still_ledger.cpp does not compile"; }
ledger_defined=$(nm "$work/ledger.o")
missing=()
for f in $(grep -oE '\bpb_lc_still_ledger_[a-z_]+\(' "$header" | tr -d '(' | sort -u); do
    grep -qE " T $f\$" <<<"$ledger_defined" || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] || fail "pb_still_ledger.cpp does not define ${missing[*]}"

# --- 1. the system's headers ---------------------------------------------------------------
[ -f /usr/include/libcamera/libcamera/libcamera.h ] || fail "/usr/include/libcamera/libcamera/libcamera.h missing: apt-get install libcamera-dev"
compile "system" /usr/include/libcamera

# --- 2. other Debian suites (cached) -------------------------------------------------------
. "$root/hardware/debian-mirror.sh"
cache=${PHOTOBOOTH_CI_CACHE:-/var/cache/photobooth-ci}/libcamera
mkdir -p "$cache" || fail "cannot create cache directory $cache (set PHOTOBOOTH_CI_CACHE)"
first=true
for suite in ${LIBCAMERA_SUITES:-trixie trixie-backports}; do
    debs="$cache/$suite/debs"
    if ! compgen -G "$debs/libcamera-dev_*.deb" >/dev/null; then
        # A suite the mirror lacks fails its update: found out in a subshell (private_apt exits through fail).
        if ! $first && ! (private_apt "$cache/$suite/apt" "$suite" deb) >"$work/$suite-probe.log" 2>&1; then
            step "$suite: not on the mirror (apt-get update failed), passed over"
            continue
        fi
        private_apt "$cache/$suite/apt" "$suite" deb
        mkdir -p "$debs"
        if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$debs" 2>/dev/null || true; fi
        if ! (cd "$debs" && apt-get -q "${apt_opts[@]}" download libcamera-dev) >"$work/$suite-download.log" 2>&1; then
            $first && { cat "$work/$suite-download.log" >&2; fail "apt-get download libcamera-dev from $suite"; }
            step "$suite: no libcamera-dev of its own, passed over"
            continue
        fi
    fi
    first=false
    deb=$(ls "$debs"/libcamera-dev_*.deb | head -n1)
    unpacked="$work/$suite"
    mkdir -p "$unpacked"
    dpkg-deb -x "$deb" "$unpacked" || fail "dpkg-deb -x $deb"
    [ -f "$unpacked/usr/include/libcamera/libcamera/libcamera.h" ] || fail "no libcamera/libcamera.h in $(basename "$deb")"
    compile "$suite $(dpkg-deb -f "$deb" Version)" "$unpacked/usr/include/libcamera"
done
step "OK: the shim compiles against libcamera ${checked[*]}"
