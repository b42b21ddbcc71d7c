# Pinned Python tools from PyPI, each in its own virtualenv under .tools/
# (gitignored), created once under flock (parallel test processes do not
# collide) and used offline afterwards. Source this file, then
#
#   venv=$(pinned_venv NAME PACKAGE==VERSION…)   # prints .tools/venv-NAME
#
# A change to the package list makes a fresh virtualenv.

pinned_venv() {
  local name=$1
  shift
  local tools
  tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.tools"
  local venv="$tools/venv-$name"
  local stamp
  stamp="$venv/.ready-$(printf '%s\n' "$@" | cksum | cut -d' ' -f1)"
  mkdir -p "$tools"
  (
    flock 9
    [ -f "$stamp" ] && exit 0
    command -v python3 >/dev/null || apt_install python3
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv" >&2; }
    "$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2
    touch "$stamp"
  ) 9>"$tools/venv-$name.lock" || {
    echo "could not set up the $name tools (python3, python3-venv and PyPI are needed)" >&2
    return 1
  }
  echo "$venv"
}
