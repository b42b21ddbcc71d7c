//! `couler secrets …`: write, list and delete the tenant's secrets, and
//! read their audit trail. Values come from standard input or files, never
//! from arguments (which other users of the machine can see in `ps`).

use crate::Output;
use crate::client::Client;
use crate::format::{self, show, text};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Map, Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {
    /// Create or replace a secret. It holds exactly the keys given here: a
    /// replace drops keys that are not given again.
    ///
    /// `couler secrets set db password` reads the value of `password` from
    /// standard input (one trailing newline dropped);
    /// `couler secrets set db password --from-file pw.txt` reads it from a
    /// file (as is); `--from-file KEY=PATH` (repeatable) adds more keys.
    Set {
        /// The secret's name (a DNS-1123 subdomain).
        name: String,
        /// A key whose value is read from standard input, or from the one
        /// `--from-file PATH` without `KEY=`.
        key: Option<String>,
        /// `KEY=PATH` (repeatable), or `PATH` for the value of KEY.
        #[arg(long = "from-file", value_name = "[KEY=]PATH")]
        from_file: Vec<String>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// The tenant's secrets: names, keys, versions (never values).
    List {
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Delete a secret; runs that read it are refused from then on.
    Delete {
        name: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Who wrote and deleted the tenant's secrets, and when (admins).
    Audit {
        /// Only this secret's entries.
        name: Option<String>,
        /// Most entries to show (1 to 200).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

impl Command {
    pub fn output(&self) -> Output {
        match self {
            Command::Set { output, .. }
            | Command::List { output }
            | Command::Delete { output, .. }
            | Command::Audit { output, .. } => *output,
        }
    }
}

pub async fn run(client: &Client, command: Command) -> Result<ExitCode> {
    match command {
        Command::Set {
            name,
            key,
            from_file,
            output,
        } => {
            let data = read_values(key, &from_file, &mut std::io::stdin().lock())?;
            let req = client
                .request(Method::PUT, &["v1", "secrets", &name])
                .json(&json!({ "data": data }));
            let (_, written): (_, Value) = client.json(req).await?;
            show(output, &written, |s| {
                format!(
                    "secret {} version {} ({})\n",
                    text(&s["name"]),
                    s["version"],
                    keys(&s["keys"])
                )
            })?;
        }
        Command::List { output } => {
            let list: Value = client.get(&["v1", "secrets"], &[]).await?;
            show(output, &list, |l| {
                let rows: Vec<Vec<String>> = items(l)
                    .map(|s| {
                        vec![
                            text(&s["name"]),
                            s["version"].to_string(),
                            keys(&s["keys"]),
                            text(&s["updated_at"]),
                            text(&s["updated_by"]),
                        ]
                    })
                    .collect();
                format::table(&["NAME", "VERSION", "KEYS", "UPDATED", "BY"], &rows)
            })?;
        }
        Command::Delete { name, output } => {
            let (_, gone): (_, Value) = client
                .json(client.request(Method::DELETE, &["v1", "secrets", &name]))
                .await?;
            show(output, &gone, |s| {
                format!("secret {} deleted\n", text(&s["name"]))
            })?;
        }
        Command::Audit {
            name,
            limit,
            output,
        } => {
            let mut query = vec![("limit", limit.to_string())];
            if let Some(name) = name {
                query.push(("name", name));
            }
            let list: Value = client.get(&["v1", "secrets:audit"], &query).await?;
            show(output, &list, |l| {
                let rows: Vec<Vec<String>> = items(l)
                    .map(|e| {
                        vec![
                            text(&e["at"]),
                            text(&e["action"]),
                            text(&e["name"]),
                            e["version"].to_string(),
                            keys(&e["keys"]),
                            text(&e["actor"]),
                        ]
                    })
                    .collect();
                format::table(&["AT", "ACTION", "NAME", "VERSION", "KEYS", "BY"], &rows)
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The secret's keys and values: `key` from `stdin` (or from a bare
/// `--from-file PATH`), and every `KEY=PATH`.
fn read_values(
    key: Option<String>,
    from_file: &[String],
    stdin: &mut impl Read,
) -> Result<Map<String, Value>> {
    let mut data = Map::new();
    let mut key_from_file = false;
    for spec in from_file {
        let (k, path) = match spec.split_once('=') {
            Some((k, path)) if !k.is_empty() => (k.to_owned(), path),
            _ => match &key {
                Some(k) if !key_from_file => {
                    key_from_file = true;
                    (k.clone(), spec.as_str())
                }
                Some(_) => bail!(
                    "--from-file {spec:?}: KEY's file is already given; use KEY=PATH for more keys"
                ),
                None => bail!("--from-file {spec:?} needs KEY=PATH (or give KEY as an argument)"),
            },
        };
        let bytes = std::fs::read(PathBuf::from(path))
            .with_context(|| format!("reading the value of {k:?} from {path}"))?;
        let value = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{path} is not UTF-8 text; secret values are text"))?;
        if data.insert(k.clone(), Value::String(value)).is_some() {
            bail!("key {k:?} is given twice");
        }
    }
    if let Some(k) = key.filter(|_| !key_from_file) {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() {
            eprintln!("reading the value of {k:?} from standard input (end with Ctrl-D)");
        }
        let mut value = String::new();
        stdin
            .read_to_string(&mut value)
            .with_context(|| format!("reading the value of {k:?} from standard input"))?;
        // `echo value | couler secrets set …` should not store the newline.
        if value.ends_with('\n') {
            value.pop();
            if value.ends_with('\r') {
                value.pop();
            }
        }
        if data.insert(k.clone(), Value::String(value)).is_some() {
            bail!("key {k:?} is given twice");
        }
    }
    if data.is_empty() {
        bail!("give a KEY (its value is read from standard input) or --from-file KEY=PATH");
    }
    Ok(data)
}

fn items(list: &Value) -> impl Iterator<Item = &Value> {
    list["items"].as_array().into_iter().flatten()
}

fn keys(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("couler-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    #[test]
    fn values_come_from_stdin_and_files() {
        let pw = file("pw", "from-file\n");
        let user = file("user", "alice");
        let data = read_values(
            Some("token".into()),
            &[format!("user={user}")],
            &mut "from-stdin\n".as_bytes(),
        )
        .unwrap();
        assert_eq!(data["token"], "from-stdin");
        assert_eq!(data["user"], "alice");
        // A bare path is KEY's file, kept as is; stdin is then not read.
        let data = read_values(
            Some("pw".into()),
            std::slice::from_ref(&pw),
            &mut "unused".as_bytes(),
        )
        .unwrap();
        assert_eq!(data.len(), 1);
        assert_eq!(data["pw"], "from-file\n");
    }

    #[test]
    fn unclear_requests_are_refused() {
        let pw = file("pw2", "x");
        assert!(read_values(None, &[], &mut "".as_bytes()).is_err());
        assert!(read_values(None, std::slice::from_ref(&pw), &mut "".as_bytes()).is_err());
        assert!(
            read_values(
                Some("a".into()),
                &[format!("a={pw}")],
                &mut "dup".as_bytes()
            )
            .is_err()
        );
        assert!(read_values(Some("a".into()), &[pw.clone(), pw], &mut "".as_bytes()).is_err());
    }
}
