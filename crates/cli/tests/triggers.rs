//! `couler triggers …` against a real API.

mod common;
use common::*;
use serde_json::Value;

#[tokio::test]
async fn create_deliver_list_rotate_and_delete() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    api.queued_run(&editor).await;

    let args = [
        "triggers",
        "create",
        "diamond",
        "ci",
        "--auth",
        "bearer",
        "--map",
        "message=/text",
        "--filter-payload",
        "/ok=true",
        "--rate",
        "50",
    ];
    let out = api.couler(&editor, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("ci trg_") && text.contains("url: /v1/hooks/whk_"),
        "{text}"
    );
    let token = text
        .lines()
        .find_map(|l| l.strip_prefix("secret (shown only now; store it safely): "))
        .expect("the token is printed once")
        .to_owned();
    let url = text
        .lines()
        .find_map(|l| l.strip_prefix("url: "))
        .unwrap()
        .to_owned();

    // A delivery with the printed token starts a run; `--filter-payload`
    // read `true` as JSON.
    let deliver = |body: &'static str| {
        api.http
            .post(format!("{}{url}", api.base))
            .bearer_auth(&token)
            .header("idempotency-key", "d-1")
            .body(body)
            .send()
    };
    let r = deliver(r#"{"text": "hi", "ok": true}"#).await.unwrap();
    assert_eq!(r.status(), 202);
    let accepted: Value = r.json().await.unwrap();
    let run = accepted["run_id"].as_str().unwrap().to_owned();

    let out = api.couler(&editor, &["triggers", "list", "diamond"]).await;
    let text = stdout(&out);
    assert!(
        text.starts_with("NAME") && text.contains("bearer") && text.contains("yes"),
        "{text}"
    );
    let out = api
        .couler(&editor, &["triggers", "get", "diamond", "ci"])
        .await;
    assert!(
        stdout(&out).contains("maps: message=/text"),
        "{}",
        stdout(&out)
    );
    let out = api
        .couler(&editor, &["triggers", "deliveries", "diamond", "ci"])
        .await;
    let text = stdout(&out);
    assert!(
        text.starts_with("RECEIVED") && text.contains("d-1") && text.contains(&run),
        "{text}"
    );

    let args = [
        "triggers", "rotate", "diamond", "ci", "--grace", "0", "--output", "json",
    ];
    let out = api.couler(&editor, &args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let rotated: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rotated["credential_version"], 2);
    assert_ne!(rotated["secret"].as_str().unwrap(), token);
    let r = deliver(r#"{"text": "again", "ok": true}"#).await.unwrap();
    assert_eq!(r.status(), 401, "the old token stopped without a grace");

    let out = api
        .couler(&editor, &["triggers", "delete", "diamond", "ci"])
        .await;
    assert!(
        stdout(&out).contains("trigger ci deleted"),
        "{}",
        stdout(&out)
    );
    let out = api
        .couler(&editor, &["triggers", "get", "diamond", "ci"])
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not found"), "{}", stderr(&out));
    api.stop().await;
}
