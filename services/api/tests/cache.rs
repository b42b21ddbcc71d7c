//! `/v1/cache` against the real Redis: entries are admitted straight into
//! the index (as a scheduler would) under the test API's own key prefix,
//! then explained, counted, invalidated and flushed over HTTP.

mod common;
use common::*;
use couler_cache::{Admission, CacheConfig, CacheIndex, CacheKey, Cached, Entry, SharedRedis};
use couler_optimizer::{Plan, StepOutputs};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// An API and a cache index on the same Redis key prefix.
async fn start() -> (TestApi, CacheIndex) {
    let mut prefix = String::new();
    let api = TestApi::start_with(|c| prefix = c.redis.key_prefix.clone()).await;
    let redis = SharedRedis::connect_now(
        "redis://127.0.0.1:6379",
        Duration::from_secs(1),
        Duration::from_secs(5),
    )
    .await
    .expect("no Redis on 127.0.0.1:6379");
    let config = CacheConfig {
        prefix,
        ..Default::default()
    };
    (api, CacheIndex::new(redis, config))
}

/// Diamond planned as the explain endpoint plans it (default parameters).
fn diamond_plan(message: Option<&str>) -> Plan {
    let workflow = couler_ir::load(DIAMOND, couler_ir::Format::Yaml).unwrap();
    let facts = couler_optimizer::Facts {
        parameters: message
            .map(|m| [("message".to_owned(), m.to_owned())].into())
            .unwrap_or_default(),
        ..Default::default()
    };
    couler_optimizer::Pipeline::default()
        .plan(workflow, &facts, |_, f| f())
        .unwrap()
}

/// The key of a planned step, as explain computes it.
fn key_of(
    plan: &Plan,
    step: &str,
    tenant: &str,
    shares: bool,
    known: &HashMap<String, StepOutputs>,
) -> Result<CacheKey, couler_cache::NoKey> {
    let i = plan.steps.iter().position(|s| s.name == step).unwrap();
    let step = plan.ir_step(i);
    let scope = couler_cache::key::scope_of(step, tenant, shares);
    couler_cache::key::key(step, &scope, |name| known.get(name))
}

fn entry(result: &str, workflow: &str, step: &str, image: &str, version: Option<&str>) -> Entry {
    Entry {
        cached: Cached {
            outputs: StepOutputs {
                result: Some(result.into()),
                ..Default::default()
            },
            wall_ms: 1_500,
            cpu_ms: 1_000,
            max_rss_kb: 1_024,
            size: 2_048,
            reconstruction: 1.5,
            downstream: 0.0,
            created_at: 0,
        },
        producer: String::new(),
        ttl_secs: 3_600,
        image: image.into(),
        version: version.map(str::to_owned),
        workflow: workflow.into(),
        step: step.into(),
    }
}

async fn admit(index: &CacheIndex, key: &CacheKey, mut e: Entry, tenant: &str) {
    e.producer = tenant.to_owned();
    assert_eq!(index.admit(key, &e, tenant).await, Admission::Admitted);
}

async fn explain(api: &TestApi, token: &str, body: Value) -> Value {
    let (status, body) = api
        .call(Method::POST, "/v1/cache/explain", token, Some(body))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// `(status, reason)` of each step, by name.
fn outcomes(explained: &Value) -> HashMap<String, (String, Option<String>)> {
    explained["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["step"].as_str().unwrap().to_owned(),
                (
                    s["status"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().map(str::to_owned),
                ),
            )
        })
        .collect()
}

fn outcome(status: &str, reason: Option<&str>) -> (String, Option<String>) {
    (status.to_owned(), reason.map(str::to_owned))
}

/// What `keys` hit, for the local engine.
async fn hits(index: &CacheIndex, keys: &[CacheKey]) -> Vec<Option<couler_cache::Cached>> {
    index
        .lookup(keys, &["file://"])
        .await
        .iter()
        .map(|found| found.entry().cloned())
        .collect()
}

#[tokio::test]
async fn explain_walks_the_dag_and_hits_only_what_it_can_key() {
    let (api, index) = start().await;
    let acme = api.tenant("acme").await;
    let viewer = user(&acme, "viewer");
    create_workflow(&api, &user(&acme, "editor"), DIAMOND).await;

    // `a` reads nothing upstream, so it has a key at plan time; `b` reads
    // a's result, which is known once `a` hits. `c` is not cached, so `d`
    // (reading b and c) has no key.
    let plan = diamond_plan(None);
    let mut known = HashMap::new();
    let a = key_of(&plan, "a", &acme, true, &known).unwrap();
    let mut a_entry = entry(
        "A says hello",
        "acme-pipeline",
        "acme-step-a",
        "alpine:3.20",
        None,
    );
    a_entry.cached.created_at = 1_700_000_000;
    known.insert("a".to_owned(), a_entry.cached.outputs.clone());
    admit(&index, &a, a_entry, &acme).await;
    // A run reused `a` once.
    let cached = hits(&index, std::slice::from_ref(&a))
        .await
        .remove(0)
        .unwrap();
    index.reused(&[(a, cached)]).await;
    let b = key_of(&plan, "b", &acme, true, &known).unwrap();
    admit(
        &index,
        &b,
        entry(
            "B got: A says hello",
            "acme-pipeline",
            "acme-step-b",
            "alpine:3.20",
            None,
        ),
        &acme,
    )
    .await;
    assert!(
        key_of(&plan, "d", &acme, true, &known).is_err(),
        "d reads b and c"
    );

    let explained = explain(&api, &viewer, json!({"workflow": "diamond"})).await;
    assert_eq!(explained["workflow"], "diamond");
    assert_eq!(explained["degraded"], false);
    let got = outcomes(&explained);
    assert_eq!(got["a"], outcome("hit", None));
    assert_eq!(got["b"], outcome("hit", None));
    assert_eq!(got["c"], outcome("miss", Some("not cached")));
    assert_eq!(
        got["d"],
        outcome("pending", Some("reads outputs of c, known once it has run"))
    );
    let a_view = &explained["steps"][0];
    assert_eq!(
        (&a_view["scope"], &a_view["saved_ms"], &a_view["size"]),
        (&json!("shared"), &json!(1_500), &json!(2_048))
    );
    // The producer sees its entries' history.
    assert_eq!(
        (&a_view["entry"]["created_at"], &a_view["entry"]["hits"]),
        (&json!("2023-11-14T22:13:20Z"), &json!(1))
    );
    let last_hit: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(a_view["entry"]["last_hit_at"].clone()).unwrap();
    assert!((chrono::Utc::now() - last_hit).num_seconds().abs() < 60);
    // And when they expire: admitted with a TTL of an hour.
    let mut b_entry = explained["steps"][1]["entry"].clone();
    let expires: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(b_entry["expires_at"].take()).unwrap();
    let left = (expires - chrono::Utc::now()).num_seconds();
    assert!((3_540..=3_600).contains(&left), "{left} s left");
    assert_eq!(
        b_entry,
        json!({"created_at": "1970-01-01T00:00:00Z", "hits": 0, "expires_at": null})
    );
    assert_eq!(
        explained["totals"],
        json!({"steps": 4, "hits": 2, "misses": 1, "pending": 1, "not_cacheable": 0, "not_needed": 0, "saved_ms": 3_000, "bytes": 4_096})
    );

    // The same workflow by id gives the same answer; other parameters
    // change a's inputs, so nothing hits.
    let (_, wf) = api
        .call(Method::GET, "/v1/workflows/diamond", &viewer, None)
        .await;
    let by_id = explain(&api, &viewer, json!({"workflow": wf["id"]})).await;
    assert_eq!(outcomes(&by_id), got);
    let other = explain(
        &api,
        &viewer,
        json!({"workflow": "diamond", "parameters": {"message": "bye"}}),
    )
    .await;
    assert_eq!(outcomes(&other)["a"], outcome("miss", Some("not cached")));
    assert_eq!(
        outcomes(&other)["b"],
        outcome("pending", Some("reads outputs of a, known once it has run"))
    );

    // Another tenant that shares reuses the shared entries without learning
    // whose they are; one that does not share sees none of them.
    let globex = api.tenant("globex").await;
    let ir = wf["version"]["ir"].clone();
    let theirs = explain(&api, &user(&globex, "viewer"), json!({"ir": ir})).await;
    assert_eq!(outcomes(&theirs), got);
    assert!(
        theirs["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("entry").is_none()),
        "{theirs}"
    );
    let text = theirs.to_string();
    let a = a.to_string();
    for secret in [acme.as_str(), "acme-pipeline", "acme-step-a", &a, &a[..12]] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let solo = api.tenant_with("solo", json!({"share_cache": false})).await;
    let private = explain(&api, &user(&solo, "viewer"), json!({"ir": ir})).await;
    assert_eq!(outcomes(&private)["a"], outcome("miss", Some("not cached")));
    assert_eq!(private["steps"][0]["scope"], "tenant");

    // With other parameters, `a` was computed but is too big to cache: the
    // index keeps only its record, which keys b and c. Both hit, and d
    // reads only them, so `a` would not run.
    let plan = diamond_plan(Some("big"));
    let mut known = HashMap::new();
    let a = key_of(&plan, "a", &acme, true, &known).unwrap();
    let mut big = entry(
        "A says big",
        "acme-pipeline",
        "acme-step-a",
        "alpine:3.20",
        None,
    );
    big.cached.size = u64::MAX / 2;
    assert_eq!(index.admit(&a, &big, &acme).await, Admission::TooBig);
    known.insert("a".to_owned(), big.cached.outputs.clone());
    for step in ["b", "c"] {
        let k = key_of(&plan, step, &acme, true, &known).unwrap();
        admit(
            &index,
            &k,
            entry("fine", "acme-pipeline", step, "alpine:3.20", None),
            &acme,
        )
        .await;
    }
    let body = json!({"workflow": "diamond", "parameters": {"message": "big"}});
    let explained = explain(&api, &viewer, body).await;
    let got = outcomes(&explained);
    assert_eq!(
        got["a"],
        outcome(
            "not_needed",
            Some("computed before; every step that reads it is a hit")
        )
    );
    assert_eq!(
        (&got["b"], &got["c"]),
        (&outcome("hit", None), &outcome("hit", None))
    );
    assert_eq!(got["d"], outcome("miss", Some("not cached")));
    assert_eq!(explained["totals"]["not_needed"], 1);
    api.stop().await;
}

/// acme, on the local engine, has cached `a` (its artifact a file on the
/// host, which Argo pods cannot fetch) and `b` of the diamond; globex runs
/// on Argo.
struct Elsewhere {
    api: TestApi,
    index: CacheIndex,
    acme: String,
    globex: String,
    plan: Plan,
    known: HashMap<String, StepOutputs>,
    a: CacheKey,
    a_entry: Entry,
    dir: std::path::PathBuf,
}

impl Elsewhere {
    async fn start(name: &str) -> Elsewhere {
        let (api, index) = start().await;
        let acme = api.tenant("acme").await;
        let dir = std::env::temp_dir().join(format!("couler-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("model");
        std::fs::write(&file, b"weights").unwrap();
        let plan = diamond_plan(None);
        let mut known = HashMap::new();
        let mut a_entry = entry("A says hello", "p", "a", "alpine:3.20", None);
        a_entry.cached.outputs.artifacts = couler_optimizer::Named::from_iter([(
            "model".to_owned(),
            couler_optimizer::ArtifactRef {
                digest: "d".into(),
                size: 7,
                location: format!("file://{}", file.display()),
            },
        )]);
        let a = key_of(&plan, "a", &acme, true, &known).unwrap();
        known.insert("a".to_owned(), a_entry.cached.outputs.clone());
        admit(&index, &a, a_entry.clone(), &acme).await;
        let b = key_of(&plan, "b", &acme, true, &known).unwrap();
        admit(&index, &b, entry("B", "p", "b", "alpine:3.20", None), &acme).await;
        let globex = api.tenant_with("globex", json!({"engine": "argo"})).await;
        Elsewhere {
            api,
            index,
            acme,
            globex,
            plan,
            known,
            a,
            a_entry,
            dir,
        }
    }

    fn body() -> Value {
        let ir = couler_ir::load(DIAMOND, couler_ir::Format::Yaml).unwrap();
        json!({"ir": serde_json::to_value(&ir).unwrap()})
    }

    /// The action the plan takes for `step`, as globex's viewer plans it.
    async fn action(&self, step: &str) -> Value {
        let (status, planned) = self
            .api
            .call(
                Method::POST,
                "/v1/plans",
                &user(&self.globex, "viewer"),
                Some(Elsewhere::body()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{planned}");
        planned["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == step)
            .map(|s| s["action"].clone())
            .unwrap()
    }

    async fn stop(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        self.api.stop().await;
    }
}

#[tokio::test]
async fn a_hit_stored_where_the_engine_cannot_read_it_serves_only_steps_that_do_not_run() {
    let t = Elsewhere::start("elsewhere").await;
    let (api, index, acme, globex) = (&t.api, &t.index, &t.acme, &t.globex);
    let (plan, known) = (&t.plan, &t.known);
    let viewer = user(globex, "viewer");
    let body = Elsewhere::body();
    // c runs and reads a: on Argo, a runs too, and b waits for it.
    let got = outcomes(&explain(api, &viewer, body.clone()).await);
    assert_eq!(
        got["a"],
        outcome(
            "miss",
            Some(
                "cached where the tenant's engine cannot read its artifacts, and a step that runs reads them"
            )
        )
    );
    assert_eq!(
        got["b"],
        outcome("pending", Some("reads outputs of a, known once it has run"))
    );
    // The plan runs a on Argo rather than hand its pods a file they cannot
    // fetch.
    assert_eq!(t.action("a").await, "run");
    // The local engine reads the file: a and b hit.
    let local = outcomes(&explain(api, &user(acme, "viewer"), body.clone()).await);
    assert_eq!(
        (&local["a"], &local["b"]),
        (&outcome("hit", None), &outcome("hit", None))
    );

    // Once c is cached too, nothing that runs reads a: Argo uses the hit.
    let c = key_of(plan, "c", acme, true, known).unwrap();
    admit(index, &c, entry("C", "p", "c", "alpine:3.20", None), acme).await;
    let got = outcomes(&explain(api, &viewer, body).await);
    assert_eq!(t.action("a").await, "cached");
    assert_eq!(
        (&got["a"], &got["b"], &got["c"]),
        (
            &outcome("hit", None),
            &outcome("hit", None),
            &outcome("hit", None)
        )
    );
    t.stop().await;
}

#[tokio::test]
async fn a_step_run_again_for_an_engine_that_cannot_read_its_hit_is_kept_as_a_copy() {
    let t = Elsewhere::start("copy").await;
    assert_eq!(t.action("a").await, "run");
    // globex's run of a on Argo stored its model in the artifact bucket:
    // the scheduler offers it, and the index keeps it beside acme's entry.
    let mut copy = t.a_entry.clone();
    copy.producer = t.globex.clone();
    copy.cached
        .outputs
        .artifacts
        .get_mut("model")
        .unwrap()
        .location = "s3://couler-artifacts/r/a/model".into();
    assert_eq!(
        t.index.admit(&t.a, &copy, &t.globex).await,
        Admission::Copied
    );
    // From then on Argo reads the copy: a hits, and so does b, keyed from
    // the same outputs.
    let got = outcomes(&explain(&t.api, &user(&t.globex, "viewer"), Elsewhere::body()).await);
    assert_eq!(
        (&got["a"], &got["b"], &got["c"]),
        (
            &outcome("hit", None),
            &outcome("hit", None),
            &outcome("miss", Some("not cached"))
        )
    );
    assert_eq!(t.action("a").await, "cached");
    assert_eq!(t.action("c").await, "run");
    // The local engine still reads the file.
    let local = outcomes(&explain(&t.api, &user(&t.acme, "viewer"), Elsewhere::body()).await);
    assert_eq!(local["a"], outcome("hit", None));
    t.stop().await;
}

#[tokio::test]
async fn explain_names_what_is_never_cached_and_checks_its_input() {
    let (api, _index) = start().await;
    let acme = api.tenant("acme").await;
    let viewer = user(&acme, "viewer");
    let ir = json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "mixed",
        "steps": [
            {"name": "off", "container": {"image": "alpine"}, "cache": {"policy": "off"}},
            {"name": "fan", "map": {"items": [1, 2]}, "container": {"image": "alpine", "args": ["{{item}}"]}},
            {"name": "private", "container": {"image": "alpine"}, "cache": {"scope": "tenant"}},
            {"name": "search", "tune": {"space": {"lr": {"type": "double", "min": 0.1, "max": 0.2, "step": 0.1}},
                                        "objective": {"metric": "loss", "goal": "minimize"}, "strategy": "grid", "maxTrials": 2},
             "container": {"image": "alpine", "args": ["{{trial.parameters.lr}}"]},
             "outputs": {"parameters": [{"name": "loss", "path": "/tmp/loss"}]}},
        ],
        "onExit": [{"name": "notify", "container": {"image": "alpine"}}],
    });
    let explained = explain(&api, &viewer, json!({"ir": ir})).await;
    let got = outcomes(&explained);
    assert_eq!(got["off"], outcome("not_cacheable", Some("policy off")));
    assert_eq!(
        got["fan"],
        outcome("not_cacheable", Some("fan-out steps are not cached"))
    );
    assert_eq!(got["private"], outcome("miss", Some("not cached")));
    assert_eq!(explained["steps"][2]["scope"], "tenant");
    // A search's trials are looked up one by one as it runs.
    assert_eq!(
        got["search"],
        outcome(
            "pending",
            Some("a search is looked up trial by trial when it runs")
        )
    );
    assert_eq!(
        got["notify"],
        outcome("not_cacheable", Some("exit handlers are not cached"))
    );

    let (status, body) = api
        .call(
            Method::POST,
            "/v1/cache/explain",
            &viewer,
            Some(json!({"ir": ir, "parameters": {"ghost": 1}})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["path"], "/parameters/ghost");
    let (status, body) = api
        .call(Method::POST, "/v1/cache/explain", &viewer, Some(json!({})))
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "missing_workflow");
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/cache/explain",
            &viewer,
            Some(json!({"workflow": "nope"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

#[tokio::test]
async fn stats_aggregate_per_tenant() {
    let (api, index) = start().await;
    let acme = api.tenant("acme").await;
    let globex = api.tenant("globex").await;
    index.record_hits(&acme, 3, 1_000, 60_000).await;
    index.record_misses(&acme, 1).await;
    index.record_hits(&acme, 2, 500, 30_000).await;
    index.record_misses(&acme, 4).await;
    admit(
        &index,
        &CacheKey([0xaa; 32]),
        entry("x", "w", "s", "alpine", None),
        &acme,
    )
    .await;

    let (status, mine) = api
        .call(Method::GET, "/v1/cache/stats", &user(&acme, "viewer"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(
        mine,
        json!({"hits": 5, "misses": 5, "bytes_saved": 1_500, "compute_ms_saved": 90_000,
               "entries_produced": 1, "degraded": false})
    );
    let (status, theirs) = api
        .call(
            Method::GET,
            "/v1/cache/stats",
            &user(&globex, "viewer"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{theirs}");
    assert_eq!(
        theirs,
        json!({"hits": 0, "misses": 0, "bytes_saved": 0, "compute_ms_saved": 0,
               "entries_produced": 0, "degraded": false})
    );
    api.stop().await;
}

#[tokio::test]
async fn invalidation_removes_only_the_tenants_matching_entries() {
    let (api, index) = start().await;
    let acme = api.tenant("acme").await;
    let globex = api.tenant("globex").await;
    let editor = user(&acme, "editor");
    let created = create_workflow(&api, &editor, DIAMOND).await;
    let key = |n: u32| {
        let mut key = [0; 32];
        key[28..].copy_from_slice(&n.to_be_bytes());
        CacheKey(key)
    };
    let mine = [
        (1, entry("1", "diamond", "a", "alpine:3.20", None)),
        (2, entry("2", "train", "fit", "python:3.12", Some("1"))),
        (3, entry("3", "train", "eval", "alpine:3.20", Some("2"))),
        (4, entry("4", "other", "x", "busybox", None)),
        (5, entry("5", "diamond", "b", "alpine:3.20", None)),
    ];
    for (n, e) in mine {
        admit(&index, &key(n), e, &acme).await;
    }
    // Globex's entries match every selector used below.
    let theirs = [
        (11, entry("11", "diamond", "a", "alpine:3.20", None)),
        (12, entry("12", "train", "fit", "python:3.12", Some("1"))),
        (13, entry("13", "diamond", "b", "busybox", Some("2"))),
    ];
    for (n, e) in theirs {
        admit(&index, &key(n), e, &globex).await;
    }
    let cached = async |n: u32| hits(&index, &[key(n)]).await[0].is_some();

    let steps = [
        (json!({"workflow": "diamond", "step": "a"}), 1),
        (json!({"workflow": created["id"], "step": "b"}), 5),
        (json!({"image": "python:3.12"}), 2),
        (json!({"version": "2"}), 3),
        (json!({"all": true}), 4),
    ];
    for (selector, gone) in steps {
        assert!(cached(gone).await);
        let (status, body) = api
            .call(
                Method::POST,
                "/v1/cache/invalidate",
                &editor,
                Some(selector.clone()),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{selector}: {body}");
        assert_eq!(body, json!({"removed": 1}), "{selector}");
        assert!(!cached(gone).await, "{selector} left its entry");
    }
    for n in [11, 12, 13] {
        assert!(cached(n).await, "globex lost entry {n}");
    }

    let wrong = [
        (json!({}), ""),
        (json!({"image": "a", "all": true}), "/all"),
        (json!({"workflow": "diamond"}), "/step"),
        (json!({"all": false}), "/all"),
    ];
    for (selector, path) in wrong {
        let (status, body) = api
            .call(
                Method::POST,
                "/v1/cache/invalidate",
                &editor,
                Some(selector.clone()),
            )
            .await;
        assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_selector");
        assert_eq!(body["path"], path, "{selector}");
    }
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/cache/invalidate",
            &editor,
            Some(json!({"images": "alpine"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    api.stop().await;
}

#[tokio::test]
async fn only_platform_admins_flush() {
    let (api, index) = start().await;
    let acme = api.tenant("acme").await;
    let key = CacheKey([0xff; 32]);
    admit(&index, &key, entry("x", "w", "s", "alpine", None), &acme).await;
    let (status, body) = api
        .call(Method::DELETE, "/v1/cache", &user(&acme, "admin"), None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    assert!(hits(&index, std::slice::from_ref(&key)).await[0].is_some());

    let (status, body) = api
        .call(Method::DELETE, "/v1/cache", &api.platform_token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["removed"].as_u64().unwrap() >= 1, "{body}");
    assert!(hits(&index, &[key]).await[0].is_none());
    assert_eq!(index.bytes().await, Some(0));
    api.stop().await;
}

#[tokio::test]
async fn without_redis_explain_misses_and_writes_fail() {
    let api = TestApi::start_with(|c| {
        c.redis.url = secrecy::SecretString::from("redis://127.0.0.1:1");
    })
    .await;
    let acme = api.tenant("acme").await;
    let editor = user(&acme, "editor");
    create_workflow(&api, &editor, DIAMOND).await;

    let explained = explain(&api, &editor, json!({"workflow": "diamond"})).await;
    assert_eq!(explained["degraded"], true);
    for step in explained["steps"].as_array().unwrap() {
        assert_eq!(
            (&step["status"], &step["reason"]),
            (&json!("miss"), &json!("cache unavailable")),
            "{step}"
        );
    }
    let (status, stats) = api
        .call(Method::GET, "/v1/cache/stats", &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["degraded"], true);

    let (status, body) = api
        .call(
            Method::POST,
            "/v1/cache/invalidate",
            &editor,
            Some(json!({"all": true})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "cache_unavailable",
    );
    let (status, body) = api
        .call(Method::DELETE, "/v1/cache", &api.platform_token, None)
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "cache_unavailable",
    );
    api.stop().await;
}
