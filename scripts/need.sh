# Sourced by the install scripts: what to do when something the system or its tests need is
# missing. Each refusal is one line on stderr naming what is missing and how to get it, then
# exit 1: a bare machine learns at once what it lacks, not from a page of apt or npm output.

# missing WHAT HOW: stop here.
missing() {
    echo "error: $1 is missing; $2" >&2
    exit 1
}

# apt_install PACKAGE...: Debian's packages from the Debian archive, as root or through a
# sudo that asks no password. The package lists are updated once per script.
apt_install() {
    local packages="$*"
    command -v apt-get >/dev/null 2>&1 ||
        missing "$packages" "no apt-get on this system: install it with its package manager"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            missing "$packages" "installing it needs root: run \`sudo apt-get install $packages\`, then this again"
        fi
    fi
    local log
    log=$(mktemp "${TMPDIR:-/tmp}/apt-install.XXXXXX")
    if [ -z "${APT_UPDATED:-}" ]; then
        $sudo apt-get update -qq >"$log" 2>&1 ||
            missing "$packages" "apt-get update failed (is the Debian archive reachable? its output: $log)"
        APT_UPDATED=yes
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$log" 2>&1 ||
        missing "$packages" "apt-get install $packages failed (is the Debian archive reachable? its output: $log)"
    rm -f "$log"
}
