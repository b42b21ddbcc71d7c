//! What the built binaries say about themselves: their subcommands and
//! flags (`--help`), the environment variables they read (`env-vars`, and
//! clap's `[env: …]`), and which binaries the workspace builds.

use couler_tests::{binary, repo_root};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// A `--help` page, read.
#[derive(Debug, Default)]
pub struct Help {
    pub commands: BTreeSet<String>,
    /// Long flags, and whether each takes a value.
    pub flags: BTreeMap<String, bool>,
    pub positionals: usize,
    /// Variables clap reads for its arguments (`[env: NAME=]`).
    pub env: BTreeSet<String>,
}

/// `bin sub… --help`, read.
pub fn help(bin: &str, path: &[String]) -> Help {
    let out = Command::new(binary(bin))
        .args(path)
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{bin} {path:?} --help failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut help = Help::default();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') {
            section = line.trim_end_matches(':');
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match section {
            "Commands" => {
                if let Some(name) = words.first() {
                    help.commands.insert(name.to_string());
                }
            }
            "Arguments" => help.positionals += 1,
            "Options" => {
                let Some(at) = words.iter().position(|w| w.starts_with("--")) else {
                    continue;
                };
                let flag = words[at].trim_end_matches(',').to_owned();
                let takes_value = words.get(at + 1).is_some_and(|w| w.starts_with('<'));
                help.flags.insert(flag, takes_value);
            }
            _ => {}
        }
        if let Some(at) = line.find("[env: ") {
            let name = line[at + 6..].split(['=', ']']).next().unwrap();
            help.env.insert(name.to_owned());
        }
    }
    help
}

/// Checks a command line against the binary's help, subcommand by
/// subcommand: each subcommand and flag must exist, and positional
/// arguments go only where the help has some.
pub fn check_argv(origin: &str, bin: &str, args: &[String]) {
    let mut path: Vec<String> = Vec::new();
    let mut page = help(bin, &path);
    let mut positionals = 0;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg.starts_with("--") {
            let flag = arg.split('=').next().unwrap();
            let takes_value = *page.flags.get(flag).unwrap_or_else(|| {
                panic!("{origin}: `{bin} {}` has no flag {flag}", path.join(" "))
            });
            if takes_value && !arg.contains('=') {
                args.next();
            }
        } else if positionals == 0 && page.commands.contains(arg) {
            path.push(arg.clone());
            page = help(bin, &path);
        } else {
            positionals += 1;
            assert!(
                positionals <= page.positionals,
                "{origin}: `{bin} {}` takes no argument {arg:?} (no such subcommand)",
                path.join(" ")
            );
        }
    }
}

/// The variables a binary reads: its configuration's (`env-vars`, for the
/// services) and its command line's.
pub fn env_vars(bin: &str) -> Vec<String> {
    let mut names: BTreeSet<String> = help(bin, &[]).env;
    if help(bin, &[]).commands.contains("env-vars") {
        let out = Command::new(binary(bin)).arg("env-vars").output().unwrap();
        assert!(out.status.success(), "{bin} env-vars failed");
        names.extend(
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(str::to_owned),
        );
    }
    names.into_iter().collect()
}

/// The binaries each workspace package builds (`cargo metadata`).
pub fn workspace_binaries() -> BTreeMap<String, Vec<String>> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed");
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut bins = BTreeMap::new();
    for package in metadata["packages"].as_array().unwrap() {
        let names = package["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        bins.insert(package["name"].as_str().unwrap().to_owned(), names);
    }
    bins
}
