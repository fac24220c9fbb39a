# Sourced by the scripts that fetch from a Debian suite other than the system's (the libgpiod v2
# check, the libgphoto2 virtual camera build): the mirror comes from the system's apt sources, and
# apt runs on a private state, never the system's sources, lists or cache.
#
# PHOTOBOOTH_APT_ETC: where the apt sources are read (default /etc/apt; the tests point it elsewhere).
apt_etc=${PHOTOBOOTH_APT_ETC:-/etc/apt}

# The first Debian mirror of the apt sources (deb822 "URIs:" lines and one-line "deb URL suite" lines),
# security mirrors left out; nothing when there is none.
mirror_from_system() {
    local files=() f
    for f in "$apt_etc"/sources.list "$apt_etc"/sources.list.d/*.sources "$apt_etc"/sources.list.d/*.list; do
        [ -f "$f" ] && files+=("$f")
    done
    [ ${#files[@]} -gt 0 ] || return 0
    {
        awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) print $i }' "${files[@]}"
        awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "${files[@]}"
    } | grep -E '/debian/?$' | grep -v -- '-security' | head -n1
}

# private_apt DIR SUITE TYPES...: fills the array apt_opts with the options that make apt-get use a
# private state in DIR whose one source is SUITE's main component of the mirror (DEBIAN_MIRROR, else
# the system's), with the given types ("deb", "deb-src"), then runs `apt-get update` on it.
# Fails (through `fail`, which the caller defines) with what is missing.
private_apt() {
    local dir=$1 suite=$2 t mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    shift 2
    [ -f "$keyring" ] || fail "$keyring missing: apt-get install debian-archive-keyring"
    mirror=${DEBIAN_MIRROR:-$(mirror_from_system)}
    [ -n "$mirror" ] || fail "no Debian mirror found in the system's apt sources ($apt_etc/sources.list, $apt_etc/sources.list.d/*.sources or *.list: a 'URIs:' or 'deb' line ending in /debian); set DEBIAN_MIRROR=URL to name one"
    mirror=${mirror%/}
    step "fetching from $mirror $suite (private apt state in $dir)"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    : >"$dir/sources.list"
    for t in "$@"; do echo "$t [signed-by=$keyring] $mirror $suite main" >>"$dir/sources.list"; done
    apt_opts=(
        -o "Dir::Etc::sourcelist=$dir/sources.list"
        -o "Dir::Etc::sourceparts=-"
        -o "Dir::State::Lists=$dir/lists"
        -o "Dir::Cache=$dir/cache"
        -o "APT::Get::List-Cleanup=0"
    )
    # As root, apt downloads as the _apt user: let it write where the files go.
    if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
        chown -R _apt "$dir/lists/partial" "$dir/cache/archives/partial" 2>/dev/null || true
    fi
    apt-get -q "${apt_opts[@]}" update >"$dir/apt-update.log" 2>&1 ||
        { cat "$dir/apt-update.log" >&2; fail "apt-get update for suite '$suite' at $mirror"; }
}
