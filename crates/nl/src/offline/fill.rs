//! What the builder fills into a placed template when the description
//! leaves a gap: data no step loads is read from a URL by the step itself,
//! and a generic step says what the user must fill in.

use serde_json::Value;

/// Where a data-reading template finds its input artifact.
const DATA_REFERENCE: &str = "{{inputs.artifacts.data.path}}";

/// Python that fetches `DATA_URL` (HTTP(S), S3, GCS or a path) into a
/// local CSV, for a step no earlier step loads data for.
const FETCH_DATA: &str = r#"def _couler_data():
    import os, shutil, subprocess, sys, urllib.request
    src, out = os.environ["DATA_URL"], "/tmp/inputs/data.csv"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if src.startswith(("http://", "https://")):
        urllib.request.urlretrieve(src, out)
    elif src.startswith(("s3://", "gs://")):
        plugin = "s3fs==2024.9.0" if src.startswith("s3://") else "gcsfs==2024.9.0"
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "fsspec==2024.9.0", plugin])
        import fsspec
        with fsspec.open(src, "rb") as f, open(out, "wb") as o:
            shutil.copyfileobj(f, o)
    else:
        shutil.copyfile(src, out)
    return out
"#;

/// Rewrites a step that reads the `data` input artifact to fetch its data
/// from `$DATA_URL` instead; false when the step reads no data.
pub fn read_data_from_url(step: &mut Value) -> bool {
    let quoted = format!("\"{DATA_REFERENCE}\"");
    let mut changed = false;
    let mut python = |code: &mut Value| {
        if let Some(text) = code.as_str().filter(|t| t.contains(DATA_REFERENCE)) {
            let body = text.replace(&quoted, "_couler_data()");
            *code = Value::String(format!("{FETCH_DATA}{body}"));
            changed = true;
        }
    };
    if let Some(source) = step.get_mut("script").and_then(|s| s.get_mut("source")) {
        python(source);
    }
    if let Some(args) = step
        .get_mut("job")
        .and_then(|j| j.get_mut("args"))
        .and_then(Value::as_array_mut)
    {
        args.iter_mut().for_each(&mut python);
    }
    if let Some(args) = step
        .get_mut("container")
        .and_then(|c| c.get_mut("args"))
        .and_then(Value::as_array_mut)
    {
        for arg in args.iter_mut() {
            if let Some(text) = arg.as_str().filter(|t| t.contains(DATA_REFERENCE)) {
                *arg = Value::String(text.replace(DATA_REFERENCE, "$DATA_URL"));
                changed = true;
            }
        }
    }
    changed
}

/// What a generic step's warning and its failure say.
pub fn todo_message(name: &str, words: &str, passes_data: bool) -> String {
    let io = if passes_data {
        " (it gets its input at /tmp/inputs/data.csv and must write its output to /tmp/outputs/data.csv)"
    } else {
        ""
    };
    let words = words.replace(['{', '}'], "");
    format!(
        "step {name} ({words:?}) has no library template: fill in its image and command{io}; until then it fails with this message"
    )
}
