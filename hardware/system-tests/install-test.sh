#!/usr/bin/env bash
# install.sh --install --destdir into a temp tree: the expected files with their modes, the unit as in
# etc/, a kept config shown as a diff, a second run that changes nothing, `systemd-analyze verify` on the
# installed unit, its `systemd-analyze security` exposure, and --uninstall keeping config and photos.
# Reuses the release build cache of install.sh (outside the clone).
set -euo pipefail
cd "$(dirname "$0")/../.."
D=$(mktemp -d /tmp/photobooth-destdir-XXXXXX)
trap 'rm -rf "$D"' EXIT
fail() { echo "install-test: $*"; exit 1; }
for t in systemd-analyze ldd cmp readelf; do
  command -v "$t" >/dev/null || fail "missing prerequisite: $t (install.sh --test installs it: apt-get install systemd libc-bin diffutils binutils)"
done
manifest() { (cd "$D" && find . -printf '%p %M %s %T@\n' | sort); }

./install.sh --install --destdir "$D" --no-start > "$D.log1" 2>&1 || { cat "$D.log1"; fail "first install failed"; }
expect_file() { # PATH MODE
  [ -f "$D$1" ] || fail "missing $1"
  [ "$(stat -c %a "$D$1")" = "$2" ] || fail "$1 has mode $(stat -c %a "$D$1"), expected $2"
}
expect_file /usr/local/bin/photoboothd 755
expect_file /usr/local/bin/photoboothctl 755
expect_file /usr/local/bin/photobooth-gallery 755
expect_file /etc/systemd/system/photobooth-gallery.service 644
expect_file /etc/photobooth/photobooth.conf 664
# Group-writable and setgid: a member of group photobooth (the group is set by a real install) edits it with config set.
[ "$(stat -c %a "$D/etc/photobooth")" = 2775 ] || fail "/etc/photobooth has mode $(stat -c %a "$D/etc/photobooth"), expected 2775"
expect_file /etc/systemd/system/photoboothd.service 644
expect_file /etc/udev/rules.d/90-photobooth.rules 644
expect_file /etc/sysusers.d/photobooth.conf 644
expect_file /usr/local/share/doc/photobooth/README.md 644
expect_file /usr/local/share/doc/photobooth/LICENSE 644
expect_file /usr/local/share/man/man1/photoboothctl.1 644
expect_file /usr/local/share/man/man5/photobooth.conf.5 644
expect_file /usr/local/share/man/man8/photoboothd.8 644
expect_file /usr/local/share/bash-completion/completions/photoboothctl 644
[ -d "$D/var/lib/photobooth" ] && [ "$(stat -c %a "$D/var/lib/photobooth")" = 751 ] || fail "/var/lib/photobooth missing or not 0751"
cmp -s etc/systemd/photoboothd.service "$D/etc/systemd/system/photoboothd.service" || fail "the installed unit differs from etc/"
cmp -s etc/systemd/photobooth-gallery.service "$D/etc/systemd/system/photobooth-gallery.service" || fail "the installed gallery unit differs from etc/"
for page in man1/photoboothctl.1 man5/photobooth.conf.5 man8/photoboothd.8; do
  cmp -s "man/${page#*/}" "$D/usr/local/share/man/$page" || fail "the installed $page differs from man/"
done
cmp -s completions/photoboothctl "$D/usr/local/share/bash-completion/completions/photoboothctl" || fail "the installed bash completion differs from completions/"
"$D/usr/local/bin/photobooth-gallery" --help | grep -q "Usage: photobooth-gallery" || fail "the installed photobooth-gallery does not run"
cmp -s etc/photobooth/photobooth.conf "$D/etc/photobooth/photobooth.conf" || fail "the installed config differs from etc/"
"$D/usr/local/bin/photoboothd" --version | grep -q photoboothd || fail "the installed photoboothd does not run"
if ldd "$D/usr/local/bin/photoboothd" | grep -q libswift; then fail "photoboothd links the Swift runtime dynamically"; fi
# Installed stripped, and small enough for an SD card: both programs together at most 60 MB.
for prog in photoboothd photoboothctl photobooth-gallery; do
  sections=$(readelf -S -W "$D/usr/local/bin/$prog") || fail "readelf -S $prog failed"
  grep -qE '\.symtab|\.debug_' <<<"$sections" && fail "$prog is installed with its symbol table or debug sections (not stripped)"
done
total=$(( $(stat -c %s "$D/usr/local/bin/photoboothd") + $(stat -c %s "$D/usr/local/bin/photoboothctl") ))
[ "$total" -le 60000000 ] || fail "photoboothd and photoboothctl take $total bytes together; the goal is at most 60 MB"
echo "install-test: installed stripped, $((total / 1000000)) MB together ($(stat -c %s "$D/usr/local/bin/photoboothd") + $(stat -c %s "$D/usr/local/bin/photoboothctl") bytes; at most 60 MB)"
echo "install-test: files and modes ok; the binary needs no Swift toolchain ($(ldd "$D/usr/local/bin/photoboothd" | wc -l) shared libraries, none from Swift)"

# A member of the config's group edits it with config set, without root; someone else cannot. The real install
# gives the folder and the file to group photobooth; here a test group stands for it (needs root for the users).
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v runuser >/dev/null; then
  g=pbtest$$
  groupadd "$g" && useradd -M -N -g users -G "$g" "$g-op" && useradd -M -N -g users "$g-x" || fail "cannot make test users"
  trap 'userdel "$g-op" 2>/dev/null; userdel "$g-x" 2>/dev/null; groupdel "$g" 2>/dev/null; rm -rf "$D"' EXIT
  chgrp "$g" "$D/etc/photobooth" "$D/etc/photobooth/photobooth.conf"
  chmod o+x "$D"  # mktemp -d made it 0700: the users must reach the config and the program
  conf="$D/etc/photobooth/photobooth.conf"
  runuser -u "$g-op" -- "$D/usr/local/bin/photoboothctl" config set session.review 4s --file "$conf" --socket "$D/none" > "$D.member" 2>&1 \
    || { cat "$D.member"; fail "config set as a member of the config's group failed"; }
  grep -q '^review = 4s' "$conf" || fail "the member's config set did not change the file"
  [ "$(stat -c %G:%a "$conf")" = "$g:664" ] || fail "after the member's edit the config is $(stat -c %G:%a "$conf"), expected $g:664"
  rc=0; runuser -u "$g-x" -- "$D/usr/local/bin/photoboothctl" config set session.review 6s --file "$conf" --socket "$D/none" > "$D.member" 2>&1 || rc=$?
  [ "$rc" = 73 ] || { cat "$D.member"; fail "config set by a non-member exited $rc, expected 73"; }
  grep -q '^review = 4s' "$conf" || fail "a non-member's config set changed the file"
  # Back to the installed default (the next checks compare with it), by root.
  cp etc/photobooth/photobooth.conf "$conf" && chgrp root "$D/etc/photobooth" "$conf" && chmod 664 "$conf"
  rm -f "$D.member"
  echo "install-test: a member of the config's group ran config set without root; a non-member could not (73)"
fi

before=$(manifest)
./install.sh --install --destdir "$D" --no-start > "$D.log2" 2>&1 || { cat "$D.log2"; fail "second install failed"; }
[ "$before" = "$(manifest)" ] || { diff <(echo "$before") <(manifest); fail "the second run changed files"; }
grep -q "installed " "$D.log2" && fail "the second run says it installed something: $(grep 'installed ' "$D.log2")"
echo "install-test: second run changed nothing"

# An operator's config is kept, and the difference shown.
echo "# edited by the operator" >> "$D/etc/photobooth/photobooth.conf"
./install.sh --install --destdir "$D" --no-start > "$D.log3" 2>&1 || { cat "$D.log3"; fail "third install failed"; }
tail -n1 "$D/etc/photobooth/photobooth.conf" | grep -q "edited by the operator" || fail "the config was overwritten"
grep -q -- "-# edited by the operator" "$D.log3" || fail "the difference was not shown"
echo "install-test: an edited config is kept and its difference shown"

# systemd-analyze verify: the units with ExecStart pointing into the staging tree (the one difference).
for name in photoboothd photobooth-gallery; do
  unit=$(mktemp -d)/$name.service
  sed "s#/usr/local/bin/#$D/usr/local/bin/#" "$D/etc/systemd/system/$name.service" > "$unit"
  systemd-analyze verify "$unit" || fail "systemd-analyze verify found problems in $name.service"
  echo "install-test: systemd-analyze verify passed ($name.service)"
  systemd-analyze security --offline=yes "$unit" 2>/dev/null | grep "Overall exposure" || true
  rm -rf "$(dirname "$unit")"
done

mkdir -p "$D/var/lib/photobooth/photos/2026-01-01" && echo x > "$D/var/lib/photobooth/photos/2026-01-01/booth-000001-1.jpg"
./install.sh --uninstall --destdir "$D" > "$D.log4" 2>&1 || { cat "$D.log4"; fail "uninstall failed"; }
for f in /usr/local/bin/photoboothd /usr/local/bin/photoboothctl /usr/local/bin/photobooth-gallery \
         /etc/systemd/system/photoboothd.service /etc/systemd/system/photobooth-gallery.service \
         /etc/udev/rules.d/90-photobooth.rules /etc/sysusers.d/photobooth.conf \
         /usr/local/share/doc/photobooth/README.md /usr/local/share/doc/photobooth/LICENSE \
         /usr/local/share/man/man1/photoboothctl.1 /usr/local/share/man/man5/photobooth.conf.5 \
         /usr/local/share/man/man8/photoboothd.8 /usr/local/share/bash-completion/completions/photoboothctl; do
  [ ! -e "$D$f" ] || fail "--uninstall left $f"
done
[ -f "$D/etc/photobooth/photobooth.conf" ] || fail "--uninstall removed the config"
[ -f "$D/var/lib/photobooth/photos/2026-01-01/booth-000001-1.jpg" ] || fail "--uninstall removed photos"
rm -f "$D".log*
echo "install-test: --uninstall removed the programs, unit and rules, kept the config and the photos"
echo "install-test: passed"
