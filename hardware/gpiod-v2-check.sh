#!/usr/bin/env bash
# Proves the libgpiod shim (Sources/CGPIODShims) compiles from one source
# against both libgpiod APIs:
#   v1: the system's headers (Debian 12, libgpiod-dev 1.6.3);
#   v2: Debian trixie's libgpiod-dev (2.2.x), fetched with `apt-get download`
#       through a private sources list; the system's apt sources, lists and
#       cache are not touched.
# Each build passes -DPB_GPIO_EXPECT_API=N, which the shim turns into a
# _Static_assert, so compiling the wrong branch fails. The v2 object is then
# linked with a small program against trixie's libgpiod.so.3 (every symbol
# resolves) and run, and must report API 2.
#
# Usage: hardware/gpiod-v2-check.sh
# Environment:
#   PHOTOBOOTH_CI_CACHE  cache directory (default /var/cache/photobooth-ci);
#                        downloads live in $PHOTOBOOTH_CI_CACHE/gpiod-v2
#   GPIOD_V2_SUITE       Debian suite to fetch from (default trixie)
#   DEBIAN_MIRROR        mirror URL (default: the first Debian mirror in the
#                        system's apt sources; none found and none given: the check fails)
# Exit status: 0 when both builds pass; non-zero with a message naming the step.
set -euo pipefail

fail() { echo "gpiod-v2-check: FAILED: $*" >&2; exit 1; }
step() { echo "gpiod-v2-check: $*"; }

root=$(cd "$(dirname "$0")/.." && pwd)
shim_dir="$root/Sources/CGPIODShims"
shim="$shim_dir/cgpiodshims.c"
[ -f "$shim" ] || fail "shim source not found at $shim"
for tool in gcc apt-get dpkg-deb nm; do
    command -v "$tool" >/dev/null || fail "'$tool' is not installed"
done

suite=${GPIOD_V2_SUITE:-trixie}
cache=${PHOTOBOOTH_CI_CACHE:-/var/cache/photobooth-ci}/gpiod-v2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- 1. v1: the system's headers -------------------------------------------
[ -f /usr/include/gpiod.h ] || fail "/usr/include/gpiod.h missing: apt-get install libgpiod-dev"
step "compiling the shim against the system libgpiod (v1) headers"
gcc -std=gnu11 -Wall -Wextra -Werror -DPB_GPIO_EXPECT_API=1 -I"$shim_dir/include" \
    -c "$shim" -o "$work/shim-v1.o" || fail "shim does not compile against the v1 headers (/usr/include/gpiod.h)"
nm -u "$work/shim-v1.o" | grep -w gpiod_line_request >/dev/null ||
    fail "v1 object does not reference gpiod_line_request: the v1 branch was not compiled"

# --- 2. v2: fetch trixie's libgpiod-dev (cached) ---------------------------
. "$root/hardware/debian-mirror.sh"

mkdir -p "$cache" || fail "cannot create cache directory $cache (set PHOTOBOOTH_CI_CACHE)"
debs="$cache/debs"
have_debs() { compgen -G "$debs/libgpiod-dev_2.*.deb" >/dev/null && compgen -G "$debs/libgpiod3_2.*.deb" >/dev/null; }
if have_debs; then
    step "using cached $(basename "$(ls "$debs"/libgpiod-dev_2.*.deb | head -n1)")"
else
    mkdir -p "$debs"
    private_apt "$cache/apt" "$suite" deb
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$debs" 2>/dev/null || true; fi
    (cd "$debs" && apt-get -q "${apt_opts[@]}" download libgpiod-dev libgpiod3) >"$work/apt-download.log" 2>&1 ||
        { cat "$work/apt-download.log" >&2; fail "apt-get download libgpiod-dev libgpiod3 from $suite"; }
    have_debs || fail "apt-get download did not leave libgpiod-dev_2.* and libgpiod3_2.* in $debs"
fi

v2root="$work/v2root"
mkdir -p "$v2root"
for deb in "$debs"/libgpiod-dev_2.*.deb "$debs"/libgpiod3_2.*.deb; do
    dpkg-deb -x "$deb" "$v2root" || fail "dpkg-deb -x $deb"
done
v2inc="$v2root/usr/include"
v2lib=$(dirname "$(find "$v2root/usr/lib" -name 'libgpiod.so' | head -n1)")
[ -f "$v2inc/gpiod.h" ] || fail "no gpiod.h in the unpacked libgpiod-dev"
[ -e "$v2lib/libgpiod.so" ] || fail "no libgpiod.so in the unpacked packages"
grep -q GPIOD_LINE_BULK_MAX_LINES "$v2inc/gpiod.h" &&
    fail "the downloaded gpiod.h defines GPIOD_LINE_BULK_MAX_LINES: it is not the v2 API"

# --- 3. v2: compile, link against libgpiod.so.3, run --------------------------
step "compiling the shim against libgpiod $(dpkg-deb -f "$(ls "$debs"/libgpiod-dev_2.*.deb | head -n1)" Version) (v2) headers"
# -isystem puts the v2 headers before /usr/include, where the v1 gpiod.h is.
gcc -std=gnu11 -Wall -Wextra -Werror -DPB_GPIO_EXPECT_API=2 -isystem "$v2inc" -I"$shim_dir/include" \
    -c "$shim" -o "$work/shim-v2.o" || fail "shim does not compile against the v2 headers"
nm -u "$work/shim-v2.o" | grep -w gpiod_chip_request_lines >/dev/null ||
    fail "v2 object does not reference gpiod_chip_request_lines: the v2 branch was not compiled"

cat >"$work/probe.c" <<'EOF'
#include "cgpiodshims.h"
#include <stdio.h>
int main(void) {
    pb_gpio_chip_list *list = pb_gpio_chip_list_new();
    if (!list) { perror("pb_gpio_chip_list_new"); return 2; }
    printf("api=%d chips=%zu\n", pb_gpio_api_version(), pb_gpio_chip_list_count(list));
    pb_gpio_chip_list_free(list);
    return pb_gpio_api_version() == 2 ? 0 : 1;
}
EOF
gcc -std=gnu11 -Wall -Werror -I"$shim_dir/include" "$work/probe.c" "$work/shim-v2.o" \
    -L"$v2lib" -lgpiod -o "$work/probe" || fail "linking the v2 shim against $v2lib/libgpiod.so"
out=$(LD_LIBRARY_PATH="$v2lib" "$work/probe") || fail "the v2 probe did not report API 2 (output: ${out:-none})"
step "v2 probe: $out"
step "OK: the shim compiles against libgpiod v1 and v2"
