//! The network a tenant's steps get on the local engine: platform admins
//! choose it per tenant; tenant admins cannot, neither through the API nor
//! with a tenant-scoped transaction behind it (column privileges).

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn only_platform_admins_choose_a_tenants_step_network() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let path = format!("/v1/tenants/{tenant}");

    let (status, view) = api
        .call(Method::GET, &path, &api.platform_token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["step_network"], json!(null), "the platform's default");

    let admin = user(&tenant, "admin");
    let (status, body) = api
        .call(
            Method::PATCH,
            &path,
            &admin,
            Some(json!({"step_network": "host"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");

    let (status, view) = api
        .call(
            Method::PATCH,
            &path,
            &api.platform_token,
            Some(json!({"step_network": "host"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["step_network"], "host");
    let (status, body) = api
        .call(
            Method::PATCH,
            &path,
            &api.platform_token,
            Some(json!({"step_network": "bridge"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(body["path"], "/step_network", "{body}");

    // A tenant admin's other settings still change, the network stays.
    let (status, view) = api
        .call(
            Method::PATCH,
            &path,
            &admin,
            Some(json!({"display_name": "Acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["step_network"], "host");

    // Behind the API, a tenant-scoped transaction may not change it.
    let store = api.store().await;
    let id: couler_store::TenantId = tenant.parse().unwrap();
    let mut tx = store.tenant(id).await.unwrap();
    let refused = couler_store::tenants::set_step_network(&mut tx, id, Some("none")).await;
    let err = refused.expect_err("couler_app may not update step_network");
    assert!(err.to_string().contains("permission denied"), "{err}");
    drop(tx);

    let (status, view) = api
        .call(
            Method::PATCH,
            &path,
            &api.platform_token,
            Some(json!({"step_network": "default"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["step_network"], json!(null));
    api.stop().await;
}
