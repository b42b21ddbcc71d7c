//! `couler secrets set|list|delete|audit` against a real API: values from
//! standard input and files, never printed back.

mod common;
use common::*;
use serde_json::Value;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

/// Runs `couler` with `input` on its standard input.
async fn with_stdin(
    api: &TestApi,
    token: &str,
    args: &[&str],
    input: &str,
) -> std::process::Output {
    let mut child = api
        .command(token, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

#[tokio::test]
async fn set_list_delete_and_audit() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let dir = std::env::temp_dir().join(format!("couler-cli-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let user_file = dir.join("user");
    std::fs::write(&user_file, "alice").unwrap();

    let out = with_stdin(
        &api,
        &admin,
        &[
            "secrets",
            "set",
            "db",
            "password",
            "--from-file",
            &format!("user={}", user_file.display()),
        ],
        "stdin-value-1\n",
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "secret db version 1 (password,user)\n");

    // A bare --from-file PATH is KEY's value; JSON output is the metadata.
    let out = api
        .couler(
            &admin,
            &[
                "secrets",
                "set",
                "db",
                "user",
                "--from-file",
                user_file.to_str().unwrap(),
                "--output",
                "json",
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let written: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(written["version"], 2);
    assert_eq!(written["keys"], serde_json::json!(["user"]));

    // Editors list; the values are nowhere.
    let out = api.couler(&editor, &["secrets", "list"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{text}");
    assert!(
        lines[1].starts_with("db") && lines[1].contains("user"),
        "{text}"
    );
    assert!(
        !text.contains("alice") && !text.contains("stdin-value-1"),
        "{text}"
    );
    let out = api
        .couler(&editor, &["secrets", "list", "--output", "json"])
        .await;
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(list["items"][0]["name"], "db");

    // Editors may not write: the API's problem, as JSON with --output json.
    let out = with_stdin(
        &api,
        &editor,
        &["secrets", "set", "db", "k", "--output", "json"],
        "v",
    )
    .await;
    assert!(!out.status.success());
    let problem: Value = serde_json::from_str(&stderr(&out)).unwrap();
    assert_eq!(problem["code"], "forbidden");

    // Without a key or file there is nothing to send.
    let out = api.couler(&admin, &["secrets", "set", "db"]).await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--from-file KEY=PATH"),
        "{}",
        stderr(&out)
    );

    let out = api.couler(&admin, &["secrets", "delete", "db"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "secret db deleted\n");
    let out = api.couler(&admin, &["secrets", "delete", "db"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));

    let out = api
        .couler(&admin, &["secrets", "audit", "db", "--output", "json"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let audit: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let actions: Vec<&str> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["delete", "put", "put"]);
    api.stop().await;
}
