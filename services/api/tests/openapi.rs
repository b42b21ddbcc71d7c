//! The committed OpenAPI document matches the code; the docs page and the
//! document are served with no internet. Regenerate with
//! `COULER_UPDATE_SNAPSHOTS=1 cargo test -p couler-api --test openapi`.

mod common;
use common::*;
use reqwest::StatusCode;
use std::path::PathBuf;

#[test]
fn committed_openapi_matches_the_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../openapi/openapi.json");
    let generated = couler_api::app::openapi_json();
    if std::env::var_os("COULER_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is stale; run `COULER_UPDATE_SNAPSHOTS=1 cargo test -p couler-api --test openapi` and commit it"
    );
}

/// No two types register a component schema under one name: utoipa keeps
/// one of them silently, and the other's clients would read the wrong type
/// (a webhook's view must not overwrite the run's `TriggerView`).
#[test]
fn no_two_schemas_share_a_name() {
    let clashes = couler_api::app::schema_clashes();
    assert!(
        clashes.is_empty(),
        "schemas registered under one name by different resources (rename one with #[schema(as = …)]): {clashes:?}"
    );
}

/// The committed document is valid OpenAPI 3.1, as a validator others
/// wrote reads it (`scripts/check-openapi`: openapi-spec-validator).
#[test]
fn the_committed_document_is_valid_openapi_3_1() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check-openapi");
    let out = std::process::Command::new(script)
        .output()
        .expect("scripts/check-openapi runs");
    assert!(
        out.status.success(),
        "openapi/openapi.json is not valid OpenAPI 3.1:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_operation_documents_errors_and_security() {
    let doc: serde_json::Value = serde_json::from_str(&couler_api::app::openapi_json()).unwrap();
    assert_eq!(
        doc["openapi"].as_str().map(|v| v.starts_with("3.1")),
        Some(true)
    );
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    assert!(schemes.contains_key("bearer") && schemes.contains_key("api_key"));
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let responses = op["responses"].as_object().unwrap();
            if path.starts_with("/v1/") {
                assert!(
                    responses.contains_key("4XX"),
                    "{method} {path} documents no errors"
                );
            }
            assert!(op["tags"].is_array(), "{method} {path} has no tag");
        }
    }
    assert!(operations >= 20, "only {operations} operations documented");
}

#[tokio::test]
async fn docs_are_served_offline() {
    let api = TestApi::start().await;
    let r = api
        .client
        .get(api.url("/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let served: serde_json::Value = r.json().await.unwrap();
    assert_eq!(served["info"]["title"], "Couler API");
    let page = api.client.get(api.url("/docs/")).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger-ui"), "{html}");
    // Assets come from the binary, not a CDN.
    assert!(
        !html.contains("https://"),
        "the docs page loads remote assets"
    );
    let js = api
        .client
        .get(api.url("/docs/swagger-ui-bundle.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status(), StatusCode::OK);
    api.stop().await;
}
