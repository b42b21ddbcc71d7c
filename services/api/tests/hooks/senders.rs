//! How senders deliver to a trigger (signed as GitHub and Standard
//! Webhooks senders sign, or with a bearer token), and what the tests read
//! back (metrics, the delivery log, runs).

use super::common::*;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Sha256;

pub const BASE: &str = "/v1/workflows/build/triggers";

pub fn hmac(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

/// Posts `body` to the trigger, signed as GitHub signs it with `secret`.
pub async fn github(
    api: &TestApi,
    public_id: &str,
    secret: &str,
    delivery: &str,
    event: &str,
    body: &str,
) -> (StatusCode, Value) {
    let signature = format!(
        "sha256={}",
        hex::encode(hmac(secret.as_bytes(), &[body.as_bytes()]))
    );
    let r = api
        .client
        .post(api.url(&format!("/v1/hooks/{public_id}")))
        .header("content-type", "application/json")
        .header("x-hub-signature-256", signature)
        .header("x-github-delivery", delivery)
        .header("x-github-event", event)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    read(r).await
}

pub fn push(sha: &str) -> String {
    json!({"ref": "refs/heads/main", "head_commit": {"id": sha}}).to_string()
}

/// A counter of the API's metrics with these labels (0 when absent).
pub async fn counter(api: &TestApi, name: &str, labels: &str) -> f64 {
    let text = api
        .client
        .get(api.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!("{name}{{{labels}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

pub async fn deliveries(api: &TestApi, token: &str, trigger: &str) -> Value {
    let path = format!("{BASE}/{trigger}/deliveries");
    let (status, list) = api.call(Method::GET, &path, token, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list
}

pub async fn count_runs(api: &TestApi, token: &str) -> usize {
    let (_, runs) = api.call(Method::GET, "/v1/runs", token, None).await;
    runs["items"].as_array().unwrap().len()
}

/// Signs as Standard Webhooks senders do, with a `whsec_` secret.
pub async fn standard(
    api: &TestApi,
    public_id: &str,
    secret: &str,
    id: &str,
    timestamp: i64,
    body: &str,
) -> (StatusCode, Value) {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let ts = timestamp.to_string();
    let mac = hmac(
        &key,
        &[id.as_bytes(), b".", ts.as_bytes(), b".", body.as_bytes()],
    );
    let r = api
        .client
        .post(api.url(&format!("/v1/hooks/{public_id}")))
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", ts)
        .header("webhook-signature", format!("v1,{}", STANDARD.encode(mac)))
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    read(r).await
}

pub async fn bearer(
    api: &TestApi,
    public_id: &str,
    token: &str,
    body: impl Into<reqwest::Body>,
) -> (StatusCode, Value) {
    let r = api
        .client
        .post(api.url(&format!("/v1/hooks/{public_id}")))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    read(r).await
}
