#!/usr/bin/env bash
# A private CUPS stack for the print tests: dbus-daemon, ippeveprinter (a simulated IPP Everywhere
# printer) and cupsd with one queue pointing at it. Everything lives under DIR; processes are
# stopped by the PIDs recorded there, never by name.
#
#   cups-stack.sh start DIR QUEUE [ATTRS [MAX_COPIES]]
#                                   start dbus, printer and cupsd; print CUPS_SERVER=… on stdout.
#                                   ATTRS: the printer's attribute file (default printer.conf here);
#                                   MAX_COPIES: cupsd's MaxCopies (the queue's copies-supported upper bound)
#   cups-stack.sh printer DIR       (re)start only the printer (after `kill-printer`)
#   cups-stack.sh kill-printer DIR  SIGKILL the printer
#   cups-stack.sh stop DIR          stop everything
#
# The printer runs `job.sh` (in DIR) for each job: it copies the document and the IPP_* job options
# into DIR/jobs; while DIR/empty exists it reports media-empty,media-needed and waits (refill: remove it);
# then it ends as DIR/job-mode says (ok: exit 0; fail: exit 1; hold: wait for DIR/release).
set -euo pipefail
# Daemons started below must not inherit the caller's descriptors.
for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-" 2>/dev/null || true; done
cmd=$1; dir=$2
pidof_file() { [ -f "$dir/$1.pid" ] && cat "$dir/$1.pid" || true; }
port_of() { cat "$dir/$1.port"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits up to 30 s: cupsd and ippeveprinter start slowly on a loaded 2-core CI machine.
wait_port() {
  for _ in $(seq 1 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "cups-stack: nothing listens on port $1" >&2; return 1
}
start_printer() {
  local port; port=$(port_of printer)
  mkdir -p "$dir/spool" "$dir/jobs"
  DBUS_SYSTEM_BUS_ADDRESS=$(cat "$dir/dbus.address") \
    ippeveprinter -n localhost -p "$port" -r off -d "$dir/spool" -k -c "$dir/job.sh" \
      -a "$dir/attrs.conf" BoothTest >"$dir/printer.log" 2>&1 &
  echo $! >"$dir/printer.pid"
  wait_port "$port"
}
case "$cmd" in
  start)
    queue=$3
    attrs=${4:-$(dirname "$0")/printer.conf}
    max_copies=${5:-9999}
    mkdir -p "$dir"/{root,spool-cupsd,state,cache,log,ppd}
    cp "$attrs" "$dir/attrs.conf"
    echo ok >"$dir/job-mode"
    cat >"$dir/job.sh" <<JOB
#!/bin/sh
d="$dir"
n=\$(date +%s%N)
cp "\$1" "\$d/jobs/\$n.doc" 2>/dev/null || cat >"\$d/jobs/\$n.doc"
env | grep '^IPP_' | sort >"\$d/jobs/\$n.env"
if [ -e "\$d/empty" ]; then
  echo "STATE: +media-empty,media-needed" >&2
  while [ -e "\$d/empty" ]; do sleep 0.05; done
  echo "STATE: -media-empty,media-needed" >&2
fi
mode=\$(cat "\$d/job-mode")
case "\$mode" in
  fail) echo "STATE: +other" >&2; exit 1 ;;
  hold) while [ ! -e "\$d/release" ]; do sleep 0.05; done ;;
esac
exit 0
JOB
    chmod +x "$dir/job.sh"
    dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=2 >"$dir/dbus.address" 2>"$dir/dbus.pid.raw" </dev/null
    sed -n 1p "$dir/dbus.pid.raw" >"$dir/dbus.pid"
    free_port >"$dir/printer.port"; free_port >"$dir/cupsd.port"
    start_printer
    cat >"$dir/cupsd.conf" <<CONF
Listen 127.0.0.1:$(port_of cupsd)
Listen $dir/cups.sock
LogLevel warn
ErrorLog $dir/log/error_log
AccessLog $dir/log/access_log
PageLog $dir/log/page_log
Browsing Off
DefaultAuthType None
JobRetryInterval 1
MaxCopies $max_copies
<Location />
  Order allow,deny
  Allow all
</Location>
<Policy default>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
CONF
    cat >"$dir/cups-files.conf" <<CONF
ServerRoot $dir/root
RequestRoot $dir/spool-cupsd
StateDir $dir/state
CacheDir $dir/cache
TempDir $dir/spool-cupsd
ErrorLog $dir/log/error_log
AccessLog $dir/log/access_log
PageLog $dir/log/page_log
FileDevice Yes
CONF
    cupsd -f -c "$dir/cupsd.conf" -s "$dir/cups-files.conf" >"$dir/cupsd.out" 2>&1 &
    echo $! >"$dir/cupsd.pid"
    wait_port "$(port_of cupsd)"
    export CUPS_SERVER="$dir/cups.sock"
    lpadmin -p "$queue" -E -v "ipp://localhost:$(port_of printer)/ipp/print" -m everywhere
    # cupsd makes the everywhere PPD on a thread of its own after lpadmin returns; until it is there the
    # queue lists no media or colour. Wait for it, or for cupsd to say it could not make one (printer.conf
    # lacks the pwg-raster attributes, so the default queue stays raw).
    # Up to 60 s: cupsd asks the printer over IPP, which is slow under load; proceeding without the
    # PPD would make the queue raw and the media/colour checks of the options test go wrong.
    for _ in $(seq 1 1200); do
      [ -f "$dir/root/ppd/$queue.ppd" ] && break
      grep -q "$queue: PPD creation failed" "$dir/log/error_log" 2>/dev/null && break
      sleep 0.05
    done
    echo "CUPS_SERVER=$dir/cups.sock"
    ;;
  printer) start_printer ;;
  kill-printer) p=$(pidof_file printer); [ -n "$p" ] && kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null || true ;;
  stop)
    pids=""
    for n in cupsd printer dbus; do
      p=$(pidof_file $n)
      [ -n "$p" ] && kill "$p" 2>/dev/null && pids="$pids $p"
    done
    for _ in $(seq 1 40); do
      alive=""; for p in $pids; do [ -d "/proc/$p" ] && alive="$alive $p"; done
      [ -z "$alive" ] && break; sleep 0.05
    done
    for p in $pids; do [ -d "/proc/$p" ] && kill -9 "$p" 2>/dev/null; done
    true
    ;;
  *) echo "usage: cups-stack.sh start|printer|kill-printer|stop DIR [QUEUE]" >&2; exit 64 ;;
esac
