#!/usr/bin/env bash
# The test scripts' own guards, which a missing tool must never get past:
#   - the scenarios' numeric asserts (hardware/scenarios/lib.sh) fail on an empty or unparsable value
#     (awk reads "" as 0: "dropped frames = '' <= 20" passed when jq was missing in the guest);
#   - `need` fails naming a missing prerequisite;
#   - hardware/gpiod-v2-check.sh takes its mirror only from the apt sources (or DEBIAN_MIRROR) and
#     fails clearly without one, never falling back to a host written in the script.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "scripts-test: FAILED: $*"; exit 1; }
lib=hardware/scenarios/lib.sh

# expect_fail WHAT CMD: CMD (run in a subshell that sourced lib.sh) must exit non-zero, printing PATTERN.
expect_fail() {
  local what=$1 pattern=$2 code=$3 out rc=0
  out=$(bash -c ". $lib; $code" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || fail "$what passed: $out"
  grep -q -- "$pattern" <<<"$out" || fail "$what: expected '$pattern' in: $out"
  echo "scripts-test: ok: $what fails ($(tail -n1 <<<"$out" | cut -c1-100))"
}
expect_pass() {
  local what=$1 code=$2 out
  out=$(bash -c ". $lib; $code" 2>&1) || fail "$what failed: $out"
  echo "scripts-test: ok: $what passes"
}
expect_fail "assert_le on an empty value" "got ''" 'assert_le "" 20 "frames dropped"'
expect_fail "assert_ge on an empty value" "got ''" 'assert_ge "" 1 "frames"'
expect_fail "assert_le on 'null' (jq's answer for a missing key)" "got 'null'" 'assert_le null 20 "frames"'
expect_fail "assert_ge on two numbers in one value" "not a number" 'assert_ge "1 2" 1 "frames"'
expect_fail "assert_le over the limit" "expected <= 20, got 21" 'assert_le 21 20 "frames"'
expect_pass "assert_le and assert_ge on numbers (integer, decimal, exponent, nanoseconds)" \
  'assert_le 3 20 a; assert_ge 0.5 0.1 b; assert_le 1e-05 0.0001 c; assert_ge 1700000000123456789 1 d'
expect_fail "need with a missing tool" "missing prerequisite: no-such-tool-xyz" 'need bash no-such-tool-xyz'
expect_pass "need with present tools" 'need bash awk'

# gpiod-v2-check without any apt source and no cache: a clear failure, no download attempted.
empty=$(mktemp -d); trap 'rm -rf "$empty"' EXIT
mkdir -p "$empty/etc/sources.list.d"
rc=0
out=$(env -u DEBIAN_MIRROR PHOTOBOOTH_APT_ETC="$empty/etc" PHOTOBOOTH_CI_CACHE="$empty/cache" hardware/gpiod-v2-check.sh 2>&1) || rc=$?
[ "$rc" -ne 0 ] || fail "gpiod-v2-check passed without any apt source: $out"
grep -q "no Debian mirror found in the system's apt sources" <<<"$out" || fail "gpiod-v2-check without apt sources: $out"
grep -q "fetching" <<<"$out" && fail "gpiod-v2-check tried to fetch without a mirror: $out"
echo "scripts-test: ok: gpiod-v2-check without apt sources fails: $(tail -n1 <<<"$out" | cut -c1-120)"
if grep -nE 'https?://[a-z0-9.-]+' hardware/gpiod-v2-check.sh hardware/debian-mirror.sh hardware/gphoto2/setup install.sh hardware/vm/setup | grep -v '^\S*:[0-9]*:\s*#'; then
  fail "a script names a mirror host (take it from the apt sources)"
fi
echo "scripts-test: passed"
