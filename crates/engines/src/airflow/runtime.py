# --- Couler runtime: the same in every DAG Couler generates ---------------
#
# Step outputs travel as XCom: a step whose outputs are read pushes
# {"result": B64, "parameters": {NAME: B64}} (base64 of its standard output
# and of each output-parameter file), written by the shell wrappers below.


def couler_decode(text):
    return base64.b64decode(text).decode("utf-8", "replace")


def couler_json_list(values):
    """A map step's aggregated output: JSON objects and arrays embedded, anything else as a string."""
    parts = []
    for value in values:
        trimmed = value.strip()
        if trimmed[:1] in ("{", "["):
            try:
                json.loads(trimmed)
                parts.append(trimmed)
                continue
            except ValueError:
                pass
        parts.append(json.dumps(value, ensure_ascii=False))
    return "[" + ",".join(parts) + "]"


def couler_output(ti, step, name=None, mapped=False):
    """`result` (name None) or output parameter `name` of an upstream step, from its XCom."""
    pushed = ti.xcom_pull(task_ids=step)

    def one(value):
        if not isinstance(value, dict):
            raise ValueError("step %r pushed no outputs" % step)
        if name is None:
            return couler_decode(value["result"]).strip()
        return couler_decode(value["parameters"][name])

    if not mapped:
        return one(pushed)
    if pushed is None:
        pushed = []
    elif isinstance(pushed, dict):
        pushed = [pushed]
    return couler_json_list([one(value) for value in pushed])


def couler_dir(ti):
    """Where a run keeps its steps' files on the worker (BashOperator DAGs)."""
    return "%s/%s/%s" % (COULER_DATA, ti.dag_id, ti.run_id)


def couler_holds(text, operator, values):
    text = text.strip()

    def number(s):
        try:
            return float(s)
        except ValueError:
            raise ValueError("condition %r %s %r: %r is not a number" % (text, operator, values, s))

    def equal(other):
        other = other.strip()
        if text == other:
            return True
        try:
            return float(text) == float(other)
        except ValueError:
            return False

    if operator == "eq":
        return equal(values[0])
    if operator == "ne":
        return not equal(values[0])
    if operator == "in":
        return any(equal(v) for v in values)
    if operator == "notin":
        return not any(equal(v) for v in values)
    a, b = number(text), number(values[0].strip())
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[operator]


def couler_when(conditions):
    """Short-circuit callable: whether every [input, operator, values] condition holds."""
    return all(couler_holds(*condition) for condition in conditions)


_COULER_MARK = re.compile("\x00couler:(index|item(?:\\.([^\x00]*))?)\x00")


def _couler_item_text(value):
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _couler_fill(value, item, index):
    if isinstance(value, str):

        def mark(m):
            if m.group(1) == "index":
                return str(index)
            if m.group(2) is None:
                return _couler_item_text(item)
            if not isinstance(item, dict) or m.group(2) not in item:
                raise ValueError("item %r has no field %r" % (item, m.group(2)))
            return _couler_item_text(item[m.group(2)])

        return _COULER_MARK.sub(mark, value)
    if isinstance(value, list):
        return [_couler_fill(v, item, index) for v in value]
    if isinstance(value, dict):
        return {k: _couler_fill(v, item, index) for k, v in value.items()}
    return value


def couler_expand(items, fields):
    """Operator arguments of each instance of a `map` step: `{{item}}` filled in."""
    if isinstance(items, str):
        try:
            items = json.loads(items)
        except ValueError:
            raise ValueError("map items are not a JSON list: %.200s" % items)
    if not isinstance(items, list):
        raise ValueError("map items are not a JSON list: %.200r" % (items,))
    return [_couler_fill(fields, item, index) for index, item in enumerate(items)]


_COULER_BAD = ["failed", "upstream_failed"]


def couler_status(ti, tasks):
    """`{{workflow.status}}` for exit handlers: failed if a main task failed."""
    bad = ti.get_ti_count(dag_id=ti.dag_id, run_ids=[ti.run_id], task_ids=tasks, states=_COULER_BAD)
    return "failed" if bad else "succeeded"


def couler_outcome(ti, tasks):
    """Fails the run when a main task or an exit handler failed (exit handlers are its leaves)."""
    bad = ti.get_ti_count(dag_id=ti.dag_id, run_ids=[ti.run_id], task_ids=tasks, states=_COULER_BAD)
    if bad:
        raise RuntimeError("%d task(s) of the workflow failed" % bad)


# Pod wrapper (POSIX sh; needs base64, mktemp, tee and tr in the image).
# Runs "$@" (its output reaches the log as it is written, and a file for
# the result) and, for steps whose outputs are read, pushes them to the
# XCom sidecar. The step's own lines follow these definitions.
COULER_POD_SH = r"""set -u
couler_script() { COULER_SCRIPT_FILE=$(mktemp) && printf '%s' "$1" > "$COULER_SCRIPT_FILE"; }
couler_b64() { base64 < "$1" | tr -d '\n\r'; }
couler_run() { COULER_STDOUT=$(mktemp); COULER_RC_FILE=$(mktemp); { "$@"; echo "$?" > "$COULER_RC_FILE"; } | tee "$COULER_STDOUT"; COULER_RC=$(cat "$COULER_RC_FILE"); [ "$COULER_RC" -eq 0 ] || exit "$COULER_RC"; COULER_XCOM=$(mktemp); COULER_SEP=; printf '{"result":"' > "$COULER_XCOM"; couler_b64 "$COULER_STDOUT" >> "$COULER_XCOM"; printf '","parameters":{' >> "$COULER_XCOM"; }
couler_param() {
  printf '%s"%s":"' "$COULER_SEP" "$1" >> "$COULER_XCOM"; COULER_SEP=,
  if [ -f "$2" ]; then couler_b64 "$2" >> "$COULER_XCOM"
  elif [ "$#" -ge 3 ]; then printf '%s' "$3" >> "$COULER_XCOM"
  else echo "couler: output parameter $1: $2 was not written" >&2; exit 1; fi
  printf '"' >> "$COULER_XCOM"
}
couler_push() { printf '}}' >> "$COULER_XCOM"; mkdir -p "${COULER_XCOM_DIR:-/airflow/xcom}" && mv "$COULER_XCOM" "${COULER_XCOM_DIR:-/airflow/xcom}/return.json"; }
"""

# BashOperator wrapper (bash, on the worker). The command line and script
# come from the environment (COULER_ARGC, COULER_ARG_<i>, COULER_SCRIPT) so
# that rendered values never meet the shell parser; files live under
# COULER_STEP_DIR. The step's own lines follow these definitions.
COULER_BASH = r"""set -uo pipefail
COULER_ARGV=()
for ((COULER_I = 0; COULER_I < COULER_ARGC; COULER_I++)); do COULER_V="COULER_ARG_$COULER_I"; COULER_ARGV+=("${!COULER_V}"); done
mkdir -p "$COULER_STEP_DIR/inputs" "$COULER_STEP_DIR/outputs/parameters" "$COULER_STEP_DIR/outputs/artifacts" || exit 1
if [ -n "${COULER_SCRIPT+set}" ]; then printf '%s' "$COULER_SCRIPT" > "$COULER_STEP_DIR/script" || exit 1; COULER_ARGV+=("$COULER_STEP_DIR/script"); fi
couler_in() { rm -rf "$COULER_STEP_DIR/inputs/$1" && cp -R "$2" "$COULER_STEP_DIR/inputs/$1" || { echo "couler: input artifact $1: cannot copy $2" >&2; exit 1; }; }
couler_secret() { local v; v=$(cat "$COULER_RUN_DIR/.secrets/$2") || { echo "couler: secret $2 was not delivered" >&2; exit 1; }; export "$1=$v"; }
couler_b64() { base64 < "$1" | tr -d '\n\r'; }
couler_run() {
  (cd "${COULER_CWD:-$COULER_STEP_DIR}" && exec "${COULER_ARGV[@]}") | tee "$COULER_STEP_DIR/stdout"; local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || exit "$rc"
  COULER_XCOM='{"result":"'"$(couler_b64 "$COULER_STEP_DIR/stdout")"'","parameters":{'; COULER_SEP=
}
couler_param() {
  local f="$COULER_STEP_DIR/outputs/parameters/$1" v
  if [ -f "$f" ]; then v=$(couler_b64 "$f"); elif [ "$#" -ge 2 ]; then v=$2
  else echo "couler: output parameter $1 was not written" >&2; exit 1; fi
  COULER_XCOM+="$COULER_SEP\"$1\":\"$v\""; COULER_SEP=,
}
couler_artifact() { [ -e "$COULER_STEP_DIR/outputs/artifacts/$1" ] || { echo "couler: output artifact $1 was not written" >&2; exit 1; }; }
couler_push() { echo; echo "$COULER_XCOM}}"; }
"""
