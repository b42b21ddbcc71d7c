# A Python virtualenv with the offline validators the tests use, created
# once under .tools/ and reused. Source this file; call `tools_venv`.

tools_venv() {
  local venv=.tools/venv
  local stamp="$venv/.installed-1"
  if [ ! -f "$stamp" ]; then
    command -v python3 >/dev/null || apt_install python3
    python3 -m venv "$venv" >&2 2>/dev/null || { apt_install python3-venv && python3 -m venv "$venv" >&2; }
    "$venv/bin/pip" install -q --disable-pip-version-check kubernetes-validate==1.37.0 >&2
    touch "$stamp"
  fi
  echo "$venv"
}
