//! The shell a step runs under when Tekton alone cannot do what the IR asks:
//! capture standard output as a result, turn output-parameter files into
//! results, and move artifacts through the shared workspace. Steps that
//! need none of this run their image as written.
//!
//! The wrapper is POSIX `sh` (dash, busybox ash and bash all run it), so a
//! wrapped step's image needs `/bin/sh`, `cat`, `cp`, `mkdir`, `mktemp` and
//! `tee` (and `awk` when a `map.from` fans out over the step's output).

use super::names::sh_quote;
use super::text::{ARTIFACTS, STATUS_PARAM, STATUS_TOKEN};
use std::fmt::Write;

/// What the wrapped step runs.
pub enum Program<'a> {
    /// The step's argv, passed to the wrapper as its arguments (`"$@"`).
    Argv,
    /// Inline source run by an interpreter.
    Source {
        command: &'a [String],
        source: &'a str,
    },
}

/// What the wrapper does around the program.
#[derive(Default)]
pub struct Wrap<'a> {
    /// Input artifacts: workspace directory (relative) → path in the step.
    pub inputs: Vec<(String, &'a str)>,
    /// The result that receives standard output (trimmed).
    pub stdout: Option<String>,
    /// Output parameters: (file, result name, default).
    pub parameters: Vec<(&'a str, String, Option<&'a str>)>,
    /// Output artifacts: (name, path in the step, workspace directory).
    pub artifacts: Vec<(&'a str, &'a str, String)>,
    /// Matrix instances each keep their own copy of an output artifact.
    pub per_instance: bool,
    /// Results that a `map.from` fans out over: (string result, array
    /// result that receives its JSON list as a list of strings).
    pub items: Vec<(String, String)>,
    /// An exit handler reads `{{workflow.status}}`: the wrapper replaces
    /// [`STATUS_TOKEN`] in the arguments, the source and these environment
    /// variables with Couler's word for `$(tasks.status)`.
    pub status: Option<Vec<String>>,
    /// A result that says `true` once the program succeeded.
    pub ran: Option<&'a str>,
}

impl Wrap<'_> {
    pub fn is_needed(&self) -> bool {
        !self.inputs.is_empty()
            || self.stdout.is_some()
            || !self.parameters.is_empty()
            || !self.artifacts.is_empty()
            || self.status.is_some()
            || self.ran.is_some()
    }
}

/// The wrapper script.
pub fn wrapper(wrap: &Wrap<'_>, program: &Program<'_>) -> String {
    // Most wrappers stay under 2 kB beside the program's source.
    let source_len = match program {
        Program::Argv => 0,
        Program::Source { source, .. } => source.len(),
    };
    let mut s = String::with_capacity(2048 + source_len);
    s.push_str("#!/bin/sh\n# Couler step wrapper (see the tekton compiler's script module).\n");
    let uses_workspace = !wrap.inputs.is_empty() || !wrap.artifacts.is_empty();
    if uses_workspace {
        let _ = writeln!(s, "ws='$(workspaces.{ARTIFACTS}.path)'");
    }
    if !wrap.items.is_empty() {
        s.push_str(TO_ITEMS);
    }
    if wrap.stdout.is_some() || !wrap.parameters.is_empty() {
        s.push_str(concat!(
            "trim_end() {\n",
            "  v=$1\n",
            "  v=${v%\"${v##*[![:space:]]}\"}\n",
            "  printf '%s' \"$v\"\n",
            "}\n",
        ));
    }
    if let Some(env) = &wrap.status {
        let _ = write!(
            s,
            concat!(
                "case '$(params.{param})' in\n",
                "  Succeeded|Completed) couler_status=succeeded ;;\n",
                "  *) couler_status=failed ;;\n",
                "esac\n",
                "couler_status_in() {{\n",
                "  r= v=$1\n",
                "  while :; do\n",
                "    case $v in\n",
                "      *{token}*) r=$r${{v%%{token}*}}$couler_status v=${{v#*{token}}} ;;\n",
                "      *) r=$r$v; break ;;\n",
                "    esac\n",
                "  done\n",
                "}}\n",
                "n=$#\n",
                "while [ \"$n\" -gt 0 ]; do couler_status_in \"$1\"; shift; set -- \"$@\" \"$r\"; n=$((n - 1)); done\n",
            ),
            param = STATUS_PARAM,
            token = STATUS_TOKEN,
        );
        for name in env {
            let _ = writeln!(s, "couler_status_in \"${name}\"; export {name}=\"$r\"");
        }
    }
    for (dir, path) in &wrap.inputs {
        let parent = parent(path);
        let _ = writeln!(
            s,
            "mkdir -p {} && rm -rf {path} && cp -a \"$ws/{dir}\" {path} || exit 1",
            sh_quote(parent),
            path = sh_quote(path),
        );
    }
    let run = match program {
        Program::Argv => "\"$@\"".to_owned(),
        Program::Source { command, source } => {
            let delimiter = heredoc_delimiter(source);
            let _ = write!(
                s,
                "src=$(mktemp) || exit 1\ncat > \"$src\" <<'{delimiter}'\n{source}"
            );
            if !source.ends_with('\n') {
                s.push('\n');
            }
            let _ = writeln!(s, "{delimiter}");
            if wrap.status.is_some() {
                s.push_str("couler_status_in \"$(cat \"$src\")\"; printf '%s\\n' \"$r\" > \"$src\" || exit 1\n");
            }
            let mut run: Vec<String> = command.iter().map(|c| sh_quote(c)).collect();
            run.push("\"$src\"".to_owned());
            run.join(" ")
        }
    };
    match &wrap.stdout {
        Some(result) => {
            // Standard output goes to the log and to the result file; the
            // program's exit status comes back through fd 3.
            let _ = write!(
                s,
                concat!(
                    "out='$(results.{result}.path)'\n",
                    "exec 4>&1\n",
                    "rc=$({{ {{ {run} 3>&- 4>&-; echo \"$?\" >&3; }} | tee \"$out\" >&4; }} 3>&1)\n",
                    "exec 4>&-\n",
                    "[ \"$rc\" -eq 0 ] || exit \"$rc\"\n",
                    "v=$(cat \"$out\")\n",
                    "v=${{v#\"${{v%%[![:space:]]*}}\"}}\n",
                    "trim_end \"$v\" > \"$out\" || exit 1\n",
                ),
                result = result,
                run = run,
            );
        }
        None => {
            let _ = writeln!(s, "{run}\nrc=$?\n[ \"$rc\" -eq 0 ] || exit \"$rc\"");
        }
    }
    for (file, result, default) in &wrap.parameters {
        let missing = match default {
            Some(d) => format!("v={}", sh_quote(d)),
            None => format!(
                "echo {} >&2; exit 1",
                sh_quote(&format!(
                    "couler: output parameter {result} was not written to {file} and has no default"
                ))
            ),
        };
        let _ = writeln!(
            s,
            "if [ -f {file} ]; then v=$(cat {file}); else {missing}; fi\ntrim_end \"$v\" > '$(results.{result}.path)' || exit 1",
            file = sh_quote(file),
        );
    }
    for (result, items) in &wrap.items {
        let _ = writeln!(
            s,
            "to_items < '$(results.{result}.path)' > '$(results.{items}.path)' || {{ echo {} >&2; exit 1; }}",
            sh_quote(&format!(
                "couler: result {result} is not a JSON list, which map.from needs"
            )),
        );
    }
    for (name, path, dir) in &wrap.artifacts {
        let (parent, dest) = if wrap.per_instance {
            (dir.clone(), format!("{dir}/$(context.taskRun.name)"))
        } else {
            (parent(dir).to_owned(), dir.clone())
        };
        let _ = writeln!(
            s,
            "[ -e {path} ] || {{ echo {message} >&2; exit 1; }}\nmkdir -p \"$ws/{parent}\" && rm -rf \"$ws/{dest}\" && cp -a {path} \"$ws/{dest}\" || exit 1",
            path = sh_quote(path),
            message = sh_quote(&format!(
                "couler: output artifact {name} was not written to {path}"
            )),
        );
    }
    if let Some(result) = wrap.ran {
        let _ = writeln!(s, "printf true > '$(results.{result}.path)' || exit 1");
    }
    s
}

/// `to_items`: a JSON list on stdin as a JSON list of strings on stdout,
/// the only list a Tekton array result holds. Strings stay as they are;
/// numbers, booleans, objects and lists become their (compact) JSON text,
/// as `{{item}}` renders them. POSIX awk (busybox, mawk, gawk).
const TO_ITEMS: &str = r#"to_items() {
  awk '
  function quote(e,   r, j, ch) {
    r = "\""
    for (j = 1; j <= length(e); j++) {
      ch = substr(e, j, 1)
      if (ch == "\\" || ch == "\"") r = r "\\" ch; else r = r ch
    }
    return r "\""
  }
  function add(e) {
    if (e == "") return
    out = out (count++ ? "," : "") (substr(e, 1, 1) == "\"" ? e : quote(e))
  }
  { s = s $0 "\n" }
  END {
    n = length(s); depth = 0; instr = 0; esc = 0; el = ""; out = ""; count = 0; closed = 0
    for (i = 1; i <= n; i++) {
      c = substr(s, i, 1)
      if (instr) {
        el = el c
        if (esc) esc = 0; else if (c == "\\") esc = 1; else if (c == "\"") instr = 0
        continue
      }
      if (c == " " || c == "\t" || c == "\r" || c == "\n") continue
      if (depth == 0 && c != "[") exit 1
      if (c == "\"") { instr = 1; el = el c; continue }
      if (c == "[" || c == "{") { if (++depth == 1) continue }
      if (c == "]" || c == "}") { if (--depth == 0) { add(el); closed = 1; break } }
      if (c == "," && depth == 1) { add(el); el = ""; continue }
      el = el c
    }
    if (!closed) exit 1
    printf "[%s]", out
  }'
}
"#;

/// A `script` that runs `source` directly through its interpreter's
/// shebang, when the interpreter is a single word.
pub fn shebang_script(command: &[String], source: &str) -> Option<String> {
    let [interpreter] = command else { return None };
    if interpreter.is_empty() || interpreter.contains(char::is_whitespace) {
        return None;
    }
    let line = if interpreter.starts_with('/') {
        format!("#!{interpreter}")
    } else {
        format!("#!/usr/bin/env {interpreter}")
    };
    Some(format!("{line}\n{source}"))
}

/// A step that waits before each retry: `duration × factor^(n-1)` before
/// retry `n`, capped at `max` (whole seconds).
pub fn backoff_script(step: &str, duration: u64, factor: u32, max: u64) -> String {
    format!(
        concat!(
            "#!/bin/sh\n",
            "# Couler retry backoff for step {step}: before retry n, wait {duration}s x {factor}^(n-1), at most {max}s.\n",
            "n=$(context.task.retry-count)\n",
            "[ \"$n\" -gt 0 ] || exit 0\n",
            "d={duration}\n",
            "i=1\n",
            "while [ \"$i\" -lt \"$n\" ] && [ \"$d\" -lt {max} ]; do d=$((d * {factor})); i=$((i + 1)); done\n",
            "[ \"$d\" -le {max} ] || d={max}\n",
            "echo \"couler: retry $n: waiting ${{d}}s\"\n",
            "sleep \"$d\"\n",
        ),
        step = step,
        duration = duration,
        factor = factor,
        max = max,
    )
}

fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) => "/",
        Some((dir, _)) => dir,
        None => ".",
    }
}

/// A here-document delimiter that no line of `source` equals.
fn heredoc_delimiter(source: &str) -> String {
    let mut delimiter = "COULER_EOF".to_owned();
    let mut n = 0;
    while source.lines().any(|l| l == delimiter) {
        n += 1;
        delimiter = format!("COULER_EOF_{n}");
    }
    delimiter
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a wrapper as Tekton would after substituting `$(tasks.status)`.
    fn run_with_status(script: &str, tekton_status: &str, args: &[&str]) -> String {
        let script = script.replace("$(params.workflow_status)", tekton_status);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .arg("wrapper")
            .args(args)
            .env("GREETING", format!("run {STATUS_TOKEN}!"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn exit_handlers_see_couler_status_words() {
        let wrap = Wrap {
            status: Some(vec!["GREETING".into()]),
            ..Wrap::default()
        };
        let argv = wrapper(&wrap, &Program::Argv);
        let text = format!("a {STATUS_TOKEN} b\n{STATUS_TOKEN}");
        let echo = [
            "sh",
            "-c",
            "printf '%s|%s|%s' \"$0\" \"$1\" \"$GREETING\"",
            &text,
            "x y",
        ];
        assert_eq!(
            run_with_status(&argv, "Completed", &echo),
            "a succeeded b\nsucceeded|x y|run succeeded!"
        );
        assert_eq!(
            run_with_status(&argv, "Failed", &echo),
            "a failed b\nfailed|x y|run failed!"
        );
        let source = format!("echo \"status={STATUS_TOKEN}\"\n");
        let program = Program::Source {
            command: &["sh".to_owned()],
            source: &source,
        };
        let script = wrapper(&wrap, &program);
        assert_eq!(
            run_with_status(&script, "Succeeded", &[]),
            "status=succeeded\n"
        );
    }

    #[test]
    fn parents() {
        assert_eq!(parent("/tmp/a.csv"), "/tmp");
        assert_eq!(parent("/a"), "/");
        assert_eq!(parent("produce/data"), "produce");
    }

    #[test]
    fn delimiters_avoid_the_source() {
        assert_eq!(heredoc_delimiter("print(1)"), "COULER_EOF");
        assert_eq!(heredoc_delimiter("COULER_EOF\n"), "COULER_EOF_1");
    }

    /// Runs `to_items` with the machine's `sh` and `awk`.
    fn to_items(input: &str) -> Option<String> {
        use std::io::Write;
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{TO_ITEMS}to_items"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }

    #[test]
    fn json_lists_become_lists_of_strings() {
        assert_eq!(to_items("[1, 2, 3]\n").unwrap(), r#"["1","2","3"]"#);
        assert_eq!(to_items("[]").unwrap(), "[]");
        assert_eq!(
            to_items(r#"["a, b", "c\"]", true, null]"#).unwrap(),
            r#"["a, b","c\"]","true","null"]"#
        );
        assert_eq!(
            to_items("[\n  {\"lr\": 0.1, \"tags\": [\"x y\"]},\n  [1, 2]\n]").unwrap(),
            r#"["{\"lr\":0.1,\"tags\":[\"x y\"]}","[1,2]"]"#
        );
        assert_eq!(to_items("{\"a\": 1}"), None);
        assert_eq!(to_items("[1, 2"), None);
        assert_eq!(to_items("heads"), None);
    }

    #[test]
    fn shebangs() {
        let cmd = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shebang_script(&cmd(&["python3"]), "print(1)").unwrap(),
            "#!/usr/bin/env python3\nprint(1)"
        );
        assert_eq!(
            shebang_script(&cmd(&["/bin/bash"]), "echo").unwrap(),
            "#!/bin/bash\necho"
        );
        assert!(shebang_script(&cmd(&["python3", "-u"]), "x").is_none());
    }
}
