#!/bin/bash
# Runs inside the guest, chrooted into the host's root (read-only over 9p), started by the
# initramfs /init (hardware/vm/init) with the pb_* kernel parameters hardware/vm/run sets.
# Loads the kernel modules, mounts configfs, then runs hardware/scenarios/<scenario>.sh with:
#   REPO           the repository (same path as on the host)
#   RESULTS        writable directory that comes back to the host
#   BUILD_BIN      the host's Swift build products directory (photoboothd, photoboothctl)
#   TOOLS          the harness's C tools (gpio-pulse, loopback-writer), also on PATH
#   SHARED_IMAGES  real photos: $REPO/../shared/images unless the host run set SHARED_IMAGES
#   SCENARIO, KVER, VM_MODROOT (module tree for `modprobe -d`)
# Exits with the scenario's exit code (124: guest-side timeout; 125: harness failure).
set -u
read -r up _ < /proc/uptime
echo "guest: [$up] chrooted into the host root, setting up"
export REPO=$pb_repo SCENARIO=$pb_scenario KVER=$pb_kver
export VM_MODROOT=$pb_cache/image RESULTS=/tmp/pb-results
export BUILD_BIN=$pb_bin TOOLS=$pb_tools SHARED_IMAGES=${pb_shared:-$pb_repo/../shared/images}
export HOME=/root LANG=C.UTF-8 TERM=dumb
export PATH=$TOOLS:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TIMEOUT=${pb_timeout:-300}
# PHOTOBOOTH_VM_ENV of the host run (hardware/vm/run writes it as NAME=VALUE lines).
if [ -f "$RESULTS/scenario.env" ]; then
    while IFS= read -r kv; do export "${kv?}"; done < "$RESULTS/scenario.env"
fi

harness_fail() { echo "guest: HARNESS FAILURE: $*" >&2; exit 125; }
script=${pb_scenario_dir:-$REPO/hardware/scenarios}/$SCENARIO.sh
[ -f "$script" ] || harness_fail "no scenario script $script"

# Modules: defaults, then the scenario's "# vm-module: NAME [PARAM=VALUE...]" lines,
# which add a module or replace a default's parameters ("# vm-module: -NAME" drops one).
declare -A params=(
    [vivid]="n_devs=1 node_types=0x1"
    [v4l2loopback]="devices=1 exclusive_caps=1 card_label=photobooth-loopback"
    [gpio-sim]=""
)
order=(vivid v4l2loopback gpio-sim)
while read -r name rest; do
    case "$name" in
        -*) unset "params[${name#-}]" ;;
        *) [ -n "${params[$name]+x}" ] || order+=("$name"); params[$name]=$rest ;;
    esac
done < <(sed -n 's/^# vm-module:[[:space:]]*//p' "$script")
for m in "${order[@]}"; do
    [ -n "${params[$m]+x}" ] || continue
    # shellcheck disable=SC2086 # parameters are words on purpose
    modprobe -d "$VM_MODROOT" "$m" ${params[$m]} || harness_fail "modprobe $m ${params[$m]}"
    read -r up _ < /proc/uptime
    echo "guest: [$up] loaded $m ${params[$m]}"
done
modprobe -d "$VM_MODROOT" configfs 2>/dev/null
if ! mountpoint -q /sys/kernel/config; then
    mount -t configfs configfs /sys/kernel/config || harness_fail "mount configfs"
fi

read -r up _ < /proc/uptime
echo "PHOTOBOOTH-VM-READY scenario=$SCENARIO uptime=$up"
timeout -k 5 "$TIMEOUT" bash "$script" 2>&1 | tee "$RESULTS/scenario.log"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && echo "guest: scenario $SCENARIO timed out after ${TIMEOUT}s (guest side)"
read -r up _ < /proc/uptime
echo "PHOTOBOOTH-VM-DONE scenario=$SCENARIO uptime=$up code=$rc"
dmesg > "$RESULTS/dmesg.txt" 2>&1
exit "$rc"
