//! `/v1/workflows/{workflow}/schedules` end to end: validation with every
//! problem at its pointer, edits in place, the IR's `schedule:` as the
//! `default` schedule, preview across DST, pause/resume, manual trigger,
//! backfill dry runs, and tenant isolation.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const BASE: &str = "/v1/workflows/diamond/schedules";

async fn setup(api: &TestApi, name: &str) -> (String, String) {
    let tenant = api.tenant(name).await;
    let editor = user(&tenant, "editor");
    create_workflow(api, &editor, DIAMOND).await;
    (tenant, editor)
}

async fn create(api: &TestApi, token: &str, body: Value) -> Value {
    let (status, s) = api.call(Method::POST, BASE, token, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    s
}

fn paths(body: &Value) -> Vec<String> {
    body["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn invalid_schedules_are_422_with_every_problem_at_its_pointer() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({
                "slug": "Nightly!",
                "crons": ["0 2 * * *", "0 0 2 * * *", "0 0 2 * * * 2030"],
                "timezone": "Mars/Olympus",
                "parameters": {"message": "{{schedule.date}}", "nope": "x"},
                "catchup_window_secs": 0,
            })),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let found = paths(&body);
    for expected in [
        "/slug",
        "/crons/1",
        "/crons/2",
        "/timezone",
        "/catchup_window_secs",
        "/parameters/message",
    ] {
        assert!(
            found.contains(&expected.to_owned()),
            "{expected} missing: {body}"
        );
    }
    // More often than the tenant allows (60 s by default).
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({"slug": "fast", "crons": ["* * * * *", "30 * * * *"]})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "every minute is allowed: {body}"
    );
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({"slug": "default", "crons": ["@daily"]})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(paths(&body), ["/slug"]);
    // A parameter the workflow does not declare.
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({"slug": "x", "crons": ["@daily"], "parameters": {"nope": "1"}})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(paths(&body), ["/parameters/nope"]);
    api.stop().await;
}

#[tokio::test]
async fn a_schedule_is_edited_in_place_and_previews_dst() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let created = create(
        &api,
        &editor,
        json!({"slug": "nightly", "crons": ["30 2 * * *"], "timezone": "America/New_York",
               "parameters": {"message": "for {{schedule.localDate}}"}}),
    )
    .await;
    assert!(
        created["id"].as_str().unwrap().starts_with("sch_"),
        "{created}"
    );
    assert_eq!(created["source"], "api");
    assert_eq!(created["catchup"], "latest");
    assert_eq!(created["overlap"], "skip");
    assert!(created["next_tick"].is_string(), "{created}");
    let (status, again) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({"slug": "nightly", "crons": ["@daily"]})),
        )
        .await;
    assert_problem(status, &again, StatusCode::CONFLICT, "schedule_exists");

    // Spring forward: 02:30 does not exist on 2026-03-08; it fires at 03:00 EDT.
    let (status, preview) = api
        .call(
            Method::GET,
            &format!("{BASE}/nightly/preview?count=3&from=2026-03-07T00:00:00Z"),
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    let ticks = preview["ticks"].as_array().unwrap();
    let at: Vec<&str> = ticks.iter().map(|t| t["at"].as_str().unwrap()).collect();
    assert_eq!(
        at,
        [
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z"
        ]
    );
    let offsets: Vec<&str> = ticks
        .iter()
        .map(|t| t["utc_offset"].as_str().unwrap())
        .collect();
    assert_eq!(offsets, ["-05:00", "-04:00", "-04:00"]);
    assert_eq!(ticks[1]["local"], "2026-03-08T03:00:00-04:00");

    let path = format!("{BASE}/nightly");
    let (status, patched) = api
        .call(
            Method::PATCH,
            &path,
            &editor,
            Some(json!({"crons": ["0 3 * * *"], "overlap": "allow"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["id"], created["id"], "same identity");
    assert_eq!(patched["generation"], 2);
    assert_eq!(patched["overlap"], "allow");
    assert_eq!(
        patched["timezone"], "America/New_York",
        "untouched fields stay"
    );
    let (status, bad) = api
        .call(
            Method::PATCH,
            &path,
            &editor,
            Some(json!({"slug": "renamed", "timezone": "Mars/Olympus"})),
        )
        .await;
    assert_problem(
        status,
        &bad,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(paths(&bad), ["/slug", "/timezone"]);

    let (status, paused) = api
        .call(
            Method::POST,
            &format!("{path}/pause"),
            &editor,
            Some(json!({"reason": "data source down"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(
        (paused["paused"].clone(), paused["paused_reason"].clone()),
        (json!(true), json!("data source down"))
    );
    assert!(paused["next_tick"].is_null());
    let (status, resumed) = api
        .call(Method::POST, &format!("{path}/resume"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!(resumed["paused"], false);
    assert!(resumed["next_tick"].is_string());

    // A manual run: an ordinary run whose provenance is the schedule.
    let (status, run) = api
        .call(Method::POST, &format!("{path}/trigger"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    assert_eq!(run["trigger"]["kind"], "schedule");
    assert_eq!(run["trigger"]["id"], created["id"]);
    assert!(
        run["parameters"]["message"]
            .as_str()
            .unwrap()
            .starts_with("for 20"),
        "{run}"
    );
    let (_, listed) = api
        .call(
            Method::GET,
            &format!("/v1/runs/{}", run["id"].as_str().unwrap()),
            &editor,
            None,
        )
        .await;
    assert_eq!(listed["trigger"]["kind"], "schedule");
    let (_, plain) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"workflow": "diamond"})),
        )
        .await;
    assert_eq!(plain["trigger"], json!({"kind": "api"}));

    // A backfill dry run lists the instants of the range.
    let (status, dry) = api
        .call(
            Method::POST,
            &format!("{path}/backfills"),
            &editor,
            Some(json!({"from": "2026-01-01T00:00:00Z", "to": "2026-01-04T00:00:00Z", "dry_run": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(
        dry["instants"],
        json!([
            "2026-01-01T08:00:00Z",
            "2026-01-02T08:00:00Z",
            "2026-01-03T08:00:00Z"
        ])
    );
    let (status, made) = api
        .call(
            Method::POST,
            &format!("{path}/backfills"),
            &editor,
            Some(json!({"from": "2026-01-01T00:00:00Z", "to": "2026-01-04T00:00:00Z", "max_active_runs": 2})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["counts"]["items"], 3);
    let (status, twice) = api
        .call(
            Method::POST,
            &format!("{path}/backfills"),
            &editor,
            Some(json!({"from": "2026-01-02T00:00:00Z", "to": "2026-01-03T00:00:00Z"})),
        )
        .await;
    assert_problem(status, &twice, StatusCode::CONFLICT, "backfill_running");
    let id = made["id"].as_str().unwrap();
    let (status, cancelled) = api
        .call(
            Method::POST,
            &format!("{path}/backfills/{id}/cancel"),
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["state"], "cancelled");

    let (status, _) = api.call(Method::DELETE, &path, &editor, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = api.call(Method::GET, &path, &editor, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    api.stop().await;
}

#[tokio::test]
async fn the_workflows_schedule_is_its_default_schedule_kept_in_step() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let scheduled = DIAMOND.replacen(
        "steps:\n",
        "schedule: {cron: '0 2 * * *', timezone: Europe/Berlin}\nsteps:\n",
        1,
    );
    create_workflow(&api, &editor, &scheduled).await;
    let (_, listed) = api.call(Method::GET, BASE, &editor, None).await;
    let list = listed.as_array().unwrap();
    assert_eq!(list.len(), 1, "{listed}");
    let first = &list[0];
    assert_eq!(
        (first["slug"].clone(), first["source"].clone()),
        (json!("default"), json!("workflow"))
    );
    assert_eq!(first["crons"], json!(["0 2 * * *"]));
    assert_eq!(first["timezone"], "Europe/Berlin");

    // Its calendar belongs to the workflow; the rest can be set here.
    let path = format!("{BASE}/default");
    let (status, body) = api
        .call(
            Method::PATCH,
            &path,
            &editor,
            Some(json!({"crons": ["@hourly"]})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::CONFLICT,
        "schedule_from_workflow",
    );
    let (status, body) = api
        .call(
            Method::PATCH,
            &path,
            &editor,
            Some(json!({"overlap": "allow"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = api.call(Method::DELETE, &path, &editor, None).await;
    assert_problem(
        status,
        &body,
        StatusCode::CONFLICT,
        "schedule_from_workflow",
    );

    // A new version changes it in place.
    let changed = scheduled.replace("0 2 * * *", "0 4 * * *");
    let (status, v2) = send_text(
        &api,
        Method::POST,
        "/v1/workflows/diamond/versions",
        &editor,
        "application/yaml",
        changed,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v2}");
    let (_, now) = api.call(Method::GET, &path, &editor, None).await;
    assert_eq!(now["id"], first["id"], "updated in place");
    assert_eq!(now["crons"], json!(["0 4 * * *"]));
    assert_eq!(now["overlap"], "allow", "settings made here stay");
    assert_eq!(now["generation"], 2);
    // A version without `schedule:` removes it.
    let (status, v3) = send_text(
        &api,
        Method::POST,
        "/v1/workflows/diamond/versions",
        &editor,
        "application/yaml",
        DIAMOND,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v3}");
    let (status, _) = api.call(Method::GET, &path, &editor, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // An invalid zone in the IR is refused with its path.
    let (status, body) = post_workflow(
        &api,
        &editor,
        DIAMOND.replacen("name: diamond", "name: mars", 1).replacen(
            "steps:\n",
            "schedule: {cron: '0 0 2 * * *', timezone: Mars/Olympus}\nsteps:\n",
            1,
        ),
    )
    .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(paths(&body), ["/schedule/cron", "/schedule/timezone"]);
    api.stop().await;
}

#[tokio::test]
async fn another_tenant_can_never_see_or_touch_a_schedule() {
    let api = TestApi::start().await;
    let (_, editor_a) = setup(&api, "alpha").await;
    let (tenant_b, editor_b) = setup(&api, "beta").await;
    let a = create(
        &api,
        &editor_a,
        json!({"slug": "nightly", "crons": ["@daily"]}),
    )
    .await;
    let wf_a = a["workflow"].as_str().unwrap();
    // By name B sees its own diamond, which has no such schedule; by id it sees nothing.
    for base in [BASE.to_owned(), format!("/v1/workflows/{wf_a}/schedules")] {
        let path = format!("{base}/nightly");
        for (method, suffix, body) in [
            (Method::GET, "", None),
            (Method::PATCH, "", Some(json!({"overlap": "allow"}))),
            (Method::POST, "/pause", Some(json!({}))),
            (Method::POST, "/resume", None),
            (Method::POST, "/trigger", None),
            (Method::GET, "/preview", None),
            (
                Method::POST,
                "/backfills",
                Some(json!({"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"})),
            ),
            (Method::DELETE, "", None),
        ] {
            let (status, body) = api
                .call(method.clone(), &format!("{path}{suffix}"), &editor_b, body)
                .await;
            assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
        }
    }
    let (status, body) = api
        .call(
            Method::GET,
            &format!("/v1/workflows/{wf_a}/schedules"),
            &editor_b,
            None,
        )
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (_, mine) = api.call(Method::GET, BASE, &editor_b, None).await;
    assert_eq!(mine, json!([]));
    // Row-level security too: a tenant transaction of B reads none of A's rows.
    let store = api.store().await;
    let b: couler_store::TenantId = tenant_b.parse().unwrap();
    let mut tx = store.tenant(b).await.unwrap();
    let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM schedules")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(seen, 0);
    tx.rollback().await.unwrap();
    // A's schedule is untouched.
    let (_, still) = api
        .call(Method::GET, &format!("{BASE}/nightly"), &editor_a, None)
        .await;
    assert_eq!(
        (still["paused"].clone(), still["overlap"].clone()),
        (json!(false), json!("skip"))
    );
    api.stop().await;
}

#[tokio::test]
async fn platform_admins_set_a_tenants_minimum_schedule_interval() {
    let api = TestApi::start().await;
    let (tenant, editor) = setup(&api, "acme").await;
    let path = format!("/v1/tenants/{tenant}");
    let (status, view) = api
        .call(Method::GET, &path, &api.platform_token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["min_schedule_interval_secs"], 60, "the default");

    // A tenant admin cannot lower (or raise) its own limit.
    let admin = user(&tenant, "admin");
    let body = json!({"min_schedule_interval_secs": 1});
    let (status, problem) = api
        .call(Method::PATCH, &path, &admin, Some(body.clone()))
        .await;
    assert_problem(status, &problem, StatusCode::FORBIDDEN, "forbidden");
    for bad in [json!(0), json!(86_401)] {
        let body = json!({"min_schedule_interval_secs": bad});
        let (status, problem) = api
            .call(Method::PATCH, &path, &api.platform_token, Some(body))
            .await;
        assert_problem(
            status,
            &problem,
            StatusCode::BAD_REQUEST,
            "invalid_interval",
        );
        assert_eq!(problem["path"], "/min_schedule_interval_secs");
    }
    let body = json!({"min_schedule_interval_secs": 3600});
    let (status, view) = api
        .call(Method::PATCH, &path, &api.platform_token, Some(body))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["min_schedule_interval_secs"], 3600);

    // The tenant's schedules are now held to an hour.
    let body = json!({"slug": "quarterly", "crons": ["*/15 * * * *"]});
    let (status, problem) = api.call(Method::POST, BASE, &editor, Some(body)).await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(paths(&problem), ["/crons"], "{problem}");
    assert!(problem.to_string().contains("3600 s"), "{problem}");
    create(
        &api,
        &editor,
        json!({"slug": "hourly", "crons": ["@hourly"]}),
    )
    .await;
    api.stop().await;
}
