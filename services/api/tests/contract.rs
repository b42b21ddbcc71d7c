//! The API keeps the contract its OpenAPI document states, as schemathesis
//! checks it (`scripts/check-api-contract`): requests generated from the
//! document, valid and invalid, never get a 5xx or an answer the document
//! does not declare; invalid ones and ones without credentials are refused.

mod common;
use common::*;
use serde_json::json;
use std::path::Path;

#[tokio::test(flavor = "multi_thread")]
async fn the_api_answers_as_its_openapi_document_says() {
    let api = TestApi::start().await;
    let quotas =
        json!({"max_concurrent_runs": 10, "max_queued_runs": 100000, "requests_per_second": 10000});
    let tenant = api
        .tenant_with("contract", json!({ "quotas": quotas }))
        .await;
    let admin = user(&tenant, "admin");
    // A stored workflow, so that generated names sometimes find one.
    create_workflow(&api, &admin, DIAMOND).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check-api-contract");
    let out = tokio::process::Command::new(script)
        .arg(&api.base)
        .arg(&admin)
        .output()
        .await
        .expect("scripts/check-api-contract runs");
    assert!(
        out.status.success(),
        "schemathesis found answers the OpenAPI document does not allow:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    api.stop().await;
}
