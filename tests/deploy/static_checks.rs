//! What the deployment files name exists: the binaries in what the
//! Dockerfile builds, their subcommands and flags in the binaries' own
//! `--help`, the variables in their `env-vars` listing (derived from the
//! configuration types), the ports in the addresses they are configured to
//! listen on, the paths on the volumes mounted.

use crate::binaries::{check_argv, env_vars, workspace_binaries};
use crate::files::{
    Launch, Stage, compose_launches, dockerfile, find, manifest_launches, pod_spec, rendered,
    url_probe,
};
use couler_tests::repo_root;
use serde_json::Value;
use std::collections::BTreeSet;

fn stage<'a>(stages: &'a [Stage], name: &str) -> &'a Stage {
    stages
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("the Dockerfile has no stage {name}"))
}

/// Every Couler process the compose file and each overlay start.
fn launches() -> Vec<Launch> {
    let stages = dockerfile();
    let runtime = stage(&stages, "runtime");
    let rendered = rendered();
    let mut all = compose_launches(&rendered.compose, runtime);
    for (name, docs) in &rendered.overlays {
        all.extend(manifest_launches(name, docs, runtime));
    }
    all
}

/// The binaries the runtime image puts on `PATH`.
fn shipped(stages: &[Stage]) -> BTreeSet<String> {
    stage(stages, "runtime")
        .files_in("/usr/local/bin")
        .into_iter()
        .map(|f| f.rsplit('/').next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_image_ships_what_the_build_builds() {
    let stages = dockerfile();
    assert_eq!(
        stages.last().unwrap().name,
        "runtime",
        "the default target (the last stage) is the runtime"
    );
    let build = stage(&stages, "build");
    let workspace = workspace_binaries();
    let mut buildable = BTreeSet::new();
    for package in &build.packages {
        let bins = workspace
            .get(package)
            .unwrap_or_else(|| panic!("the Dockerfile builds {package}, not a workspace package"));
        buildable.extend(bins.iter().cloned());
    }
    let built: BTreeSet<String> = build.built.iter().cloned().collect();
    assert_eq!(
        built, buildable,
        "every binary of the packages built is kept"
    );
    let shipped = shipped(&stages);
    assert_eq!(shipped, built, "the runtime ships every built binary");
    for needed in ["couler", "couler-api", "couler-scheduler"] {
        assert!(shipped.contains(needed), "the image lacks {needed}");
    }

    let runtime = stage(&stages, "runtime");
    let user = runtime.user.as_deref().expect("the runtime sets USER");
    assert!(!matches!(user, "root" | "0"), "the runtime runs as root");
    // The local engine's sandbox runs `bwrap` (its default program).
    assert!(
        runtime.apt.iter().any(|p| p == "bubblewrap"),
        "bubblewrap is installed"
    );
    // PID 1 is an init that reaps: a killed bubblewrap leaves its
    // sandbox's init to the container's PID 1.
    assert_eq!(
        runtime.entrypoint.as_deref(),
        Some(&["/usr/bin/tini".to_owned(), "--".to_owned()][..]),
        "the runtime's ENTRYPOINT is tini"
    );
    assert!(runtime.apt.iter().any(|p| p == "tini"), "tini is installed");
    let health = runtime.healthcheck.as_ref().expect("a HEALTHCHECK");
    assert!(
        runtime.apt.contains(&health[0]),
        "the health check's {} is installed",
        health[0]
    );
    let cmd = runtime.cmd.as_ref().expect("a CMD");
    assert!(
        shipped.contains(&cmd[0]),
        "CMD runs {}, not shipped",
        cmd[0]
    );
    check_argv("the Dockerfile's CMD", &cmd[0], &cmd[1..]);

    // The portal's assets land where couler-api embeds them from.
    let portal_rs =
        std::fs::read_to_string(repo_root().join("services/api/src/portal.rs")).unwrap();
    assert!(portal_rs.contains("#[folder = \"../../portal/dist\"]"));
    assert!(
        build
            .copies
            .iter()
            .any(|(from, sources, dest)| from.as_deref() == Some("portal")
                && sources.iter().all(|s| s.ends_with("portal/dist"))
                && dest == "portal/dist"),
        "the build stage takes portal/dist from the portal stage"
    );

    // The Airflow image runs the script the tests run, copied in.
    let airflow = stage(&stages, "airflow");
    let cmd = airflow.cmd.as_ref().expect("the airflow stage's CMD");
    assert!(
        airflow
            .files_in(&format!("{}/scripts", airflow.workdir))
            .contains(&cmd[0])
    );
    assert!(
        repo_root()
            .join("scripts")
            .join(cmd[0].rsplit('/').next().unwrap())
            .exists()
    );
    assert_eq!(cmd.len(), 4, "airflow-standalone HOME PORT DAGS_DIR");
}

#[test]
fn every_command_is_a_shipped_binary_with_those_subcommands_and_flags() {
    let stages = dockerfile();
    let shipped = shipped(&stages);
    let launches = launches();
    assert!(
        launches.len() >= 8,
        "compose and both overlays start Couler: {launches:#?}"
    );
    for launch in &launches {
        let bin = &launch.argv[0];
        assert!(
            shipped.contains(bin),
            "{}: runs {bin}, which the image does not ship",
            launch.origin
        );
        check_argv(&launch.origin, bin, &launch.argv[1..]);
    }
    // Health checks run what the image has; compose builds stages that exist.
    let runtime = stage(&stages, "runtime");
    for (name, service) in rendered().compose["services"].as_object().unwrap() {
        let test = &service["healthcheck"]["test"];
        if test[0] == "CMD" && service["image"] == "couler:dev" {
            let program = test[1].as_str().unwrap();
            assert!(
                runtime.apt.iter().any(|p| p == program),
                "compose {name}: {program} is not installed"
            );
        }
        if let Some(target) = service["build"]["target"].as_str() {
            stage(&stages, target);
        }
    }
}

#[test]
fn every_variable_set_is_one_the_service_reads() {
    for launch in launches() {
        let listed = env_vars(&launch.argv[0]);
        for name in launch.env.keys() {
            assert!(
                couler_telemetry::config_env::env_var_listed(&listed, name),
                "{}: sets {name}, which {} does not read (`{} env-vars`: {listed:?})",
                launch.origin,
                launch.argv[0],
                launch.argv[0]
            );
        }
    }
    // Airflow's container: the variables its script and Couler's DAG files read.
    let airflow = &rendered().compose["services"]["airflow"];
    let script = std::fs::read_to_string(repo_root().join("scripts/airflow-standalone")).unwrap();
    let dags =
        std::fs::read_to_string(repo_root().join("crates/engines/src/airflow/mod.rs")).unwrap();
    for name in airflow["environment"].as_object().unwrap().keys() {
        assert!(
            script.contains(&format!("${name}"))
                || script.contains(&format!("${{{name}"))
                || dags.contains(name.as_str()),
            "compose airflow: sets {name}, which neither scripts/airflow-standalone nor the DAG files read"
        );
    }
}

#[test]
fn ports_probes_and_paths_agree_with_the_configuration() {
    let stages = dockerfile();
    let runtime = stage(&stages, "runtime");
    for launch in launches() {
        let setting = match launch.argv[0].as_str() {
            "couler-api" if launch.argv.get(1).is_none_or(|c| c == "serve") => "COULER__HTTP__ADDR",
            "couler-scheduler" => "COULER__SCHEDULER__METRICS_ADDR",
            _ => "",
        };
        if !setting.is_empty() {
            let port = launch
                .listen_port(setting)
                .unwrap_or_else(|| panic!("{}: sets no {setting}", launch.origin));
            assert!(
                runtime.expose.contains(&port),
                "{}: port {port} is not EXPOSEd",
                launch.origin
            );
            assert!(
                launch.ports.iter().any(|(_, p)| *p == port),
                "{}: does not declare its port {port} ({:?})",
                launch.origin,
                launch.ports
            );
            assert!(
                !launch.probes.is_empty(),
                "{}: has no health probe",
                launch.origin
            );
            for probe in &launch.probes {
                assert_eq!(
                    launch.probe_port(probe),
                    port,
                    "{}: a probe asks another port",
                    launch.origin
                );
            }
        }
        // Absolute paths it is told to use are on volumes (writable, and
        // shared or kept where that matters).
        for (name, value) in &launch.env {
            if value.starts_with('/') {
                assert!(
                    launch.mounts.iter().any(|m| value.starts_with(m.as_str())),
                    "{}: {name} = {value} is on no volume ({:?})",
                    launch.origin,
                    launch.mounts
                );
            }
        }
    }
    // The image's own health check asks the API's port.
    let health = url_probe(runtime.healthcheck.as_ref().unwrap()).unwrap();
    assert_eq!(health.path, "/healthz");
}

/// A pod's labels match a selector's `matchLabels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    selector
        .as_object()
        .is_some_and(|s| s.iter().all(|(k, v)| &labels[k] == v))
}

fn ports_of(policy: &Value, direction: &str) -> BTreeSet<u64> {
    policy["spec"][direction]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|rule| rule["ports"].as_array().into_iter().flatten())
        .filter_map(|p| p["port"].as_u64())
        .collect()
}

fn url_port(url: &str, default: u16) -> u64 {
    let authority = url
        .split("://")
        .nth(1)
        .unwrap_or_default()
        .split('/')
        .next()
        .unwrap();
    let host = authority.rsplit('@').next().unwrap();
    host.rsplit_once(':')
        .map_or(default, |(_, p)| p.parse().unwrap()) as u64
}

#[test]
fn kubernetes_objects_fit_together() {
    let stages = dockerfile();
    let runtime = stage(&stages, "runtime");
    for (overlay, docs) in &rendered().overlays {
        let of_kind = |kind: &'static str| docs.iter().filter(move |d| d["kind"] == kind);
        assert!(
            of_kind("Namespace").count() == 1,
            "{overlay}: the namespace"
        );
        let deny = of_kind("NetworkPolicy")
            .find(|p| {
                p["spec"]["podSelector"] == serde_json::json!({})
                    && p["spec"]["ingress"].is_null()
                    && p["spec"]["egress"].is_null()
            })
            .unwrap_or_else(|| panic!("{overlay}: a default-deny NetworkPolicy"));
        assert_eq!(
            deny["spec"]["policyTypes"],
            serde_json::json!(["Ingress", "Egress"])
        );

        for launch in manifest_launches(overlay, docs, runtime) {
            // `<overlay> <kind>/<name> container <container>`
            let object = launch.origin.split(' ').nth(1).unwrap();
            let (kind, name) = object.split_once('/').unwrap();
            let workload = find(docs, kind, name).unwrap();
            let labels = &workload["spec"]["template"]["metadata"]["labels"];
            let policies: Vec<&Value> = of_kind("NetworkPolicy")
                .filter(|p| {
                    p["spec"]["podSelector"]["matchLabels"].is_object()
                        && selects(&p["spec"]["podSelector"]["matchLabels"], labels)
                })
                .collect();
            let egress: BTreeSet<u64> = policies
                .iter()
                .flat_map(|p| ports_of(p, "egress"))
                .collect();
            let ingress: BTreeSet<u64> = policies
                .iter()
                .flat_map(|p| ports_of(p, "ingress"))
                .collect();
            let db = launch
                .env
                .get("DATABASE_URL")
                .map_or(5432, |u| url_port(u, 5432));
            assert!(
                egress.contains(&db),
                "{}: no egress to Postgres ({db})",
                launch.origin
            );
            if launch.argv.get(1).is_none_or(|c| c == "serve") {
                let redis = launch
                    .env
                    .get("REDIS_URL")
                    .map_or(6379, |u| url_port(u, 6379));
                assert!(
                    egress.contains(&redis),
                    "{}: no egress to Redis ({redis})",
                    launch.origin
                );
                let declared: BTreeSet<u64> = launch.ports.iter().map(|(_, p)| *p as u64).collect();
                assert_eq!(
                    ingress, declared,
                    "{}: only its own port is open",
                    launch.origin
                );
                let spec = &workload["spec"]["template"]["spec"]["containers"][0];
                assert!(
                    spec["resources"]["requests"]["cpu"].is_string(),
                    "{}: CPU request",
                    launch.origin
                );
                assert!(
                    spec["resources"]["requests"]["memory"].is_string(),
                    "{}: memory request",
                    launch.origin
                );
                assert!(
                    of_kind("PodDisruptionBudget")
                        .any(|p| selects(&p["spec"]["selector"]["matchLabels"], labels)),
                    "{}: a PodDisruptionBudget",
                    launch.origin
                );
                let scrape =
                    &workload["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"];
                assert_eq!(
                    scrape.as_str().map(str::parse::<u16>),
                    Some(Ok(launch.ports[0].1))
                );
            }
            if launch.argv[0] == "couler-scheduler" {
                assert!(
                    egress.contains(&443) || egress.contains(&6443),
                    "{}: the Kubernetes API",
                    launch.origin
                );
            }
            // The service account the pod runs as exists.
            if let Some(account) = pod_spec(workload)["serviceAccountName"].as_str() {
                assert!(
                    find(docs, "ServiceAccount", account).is_some(),
                    "{overlay}: no ServiceAccount {account}"
                );
            }
        }
        // Services reach a declared port; the HPA scales a Deployment.
        for service in of_kind("Service").filter(|s| s["metadata"]["name"] == "couler-api") {
            let deployment = find(docs, "Deployment", "couler-api").unwrap();
            let container = &pod_spec(deployment)["containers"][0];
            let target = &service["spec"]["ports"][0]["targetPort"];
            assert!(
                container["ports"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| &p["name"] == target || &p["containerPort"] == target),
                "{overlay}: Service couler-api targets {target}, not a port of the API"
            );
        }
        for hpa in of_kind("HorizontalPodAutoscaler") {
            let target = hpa["spec"]["scaleTargetRef"]["name"].as_str().unwrap();
            assert!(
                find(docs, "Deployment", target).is_some(),
                "{overlay}: HPA of missing {target}"
            );
        }
        assert!(
            of_kind("HorizontalPodAutoscaler").count() == 1,
            "{overlay}: the API's HPA"
        );
        // The adapters' role exists, and whatever binds it names it.
        assert!(find(docs, "ClusterRole", "couler-scheduler-tenant").is_some());
        for binding in of_kind("ClusterRoleBinding").chain(of_kind("RoleBinding")) {
            let role = binding["roleRef"]["name"].as_str().unwrap();
            assert!(
                find(docs, "ClusterRole", role).is_some(),
                "{overlay}: binds missing {role}"
            );
        }
    }
}

#[test]
fn compose_wires_airflow_to_the_scheduler() {
    let compose = &rendered().compose;
    let services = &compose["services"];
    let scheduler = &services["scheduler"]["environment"];
    let airflow = &services["airflow"];
    let stages = dockerfile();
    let cmd = stage(&stages, "airflow").cmd.clone().unwrap();
    let (port, dags) = (&cmd[2], &cmd[3]);
    assert_eq!(
        scheduler["COULER__AIRFLOW__BASE_URL"],
        format!("http://airflow:{port}").as_str()
    );
    // The same volume at the scheduler's DAGs folder and data directory as
    // at Airflow's.
    let volume_at = |service: &Value, path: &str| -> String {
        service["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str()?.split_once(':'))
            .find(|(_, target)| path.starts_with(target.split(':').next().unwrap()))
            .map(|(source, _)| source.to_owned())
            .unwrap_or_else(|| panic!("no volume at {path}"))
    };
    let sched = &services["scheduler"];
    assert_eq!(
        volume_at(
            sched,
            scheduler["COULER__AIRFLOW__DAGS_FOLDER"].as_str().unwrap()
        ),
        volume_at(airflow, dags)
    );
    assert_eq!(
        volume_at(
            sched,
            scheduler["COULER__AIRFLOW__DATA_DIR"].as_str().unwrap()
        ),
        volume_at(
            airflow,
            airflow["environment"]["COULER_AIRFLOW_DATA"]
                .as_str()
                .unwrap()
        )
    );
    assert_eq!(
        scheduler["COULER__AIRFLOW__OPERATOR"], "bash",
        "LocalExecutor: BashOperator steps"
    );
    assert_eq!(
        scheduler["COULER__AIRFLOW__PASSWORD"],
        airflow["environment"]["COULER_AIRFLOW_PASSWORD"]
    );
}

#[test]
fn redis_runs_the_cache_index() {
    // `ZADD … GT` and the bundled cjson/cmsgpack Lua libraries: Redis 6.2+.
    let rendered = rendered();
    let mut images = vec![rendered.compose["services"]["redis"]["image"].clone()];
    for docs in rendered.overlays.values() {
        for doc in docs {
            let containers = pod_spec(doc)["containers"].as_array().cloned();
            images.extend(
                containers
                    .into_iter()
                    .flatten()
                    .filter(|c| c["name"] == "redis")
                    .map(|c| c["image"].clone()),
            );
        }
    }
    assert!(images.len() >= 2, "compose and the dev overlay run Redis");
    for image in images {
        let tag = image
            .as_str()
            .unwrap()
            .split(':')
            .nth(1)
            .expect("a tagged image");
        let version: Vec<u32> = tag.split('.').map_while(|p| p.parse().ok()).collect();
        assert!(
            version.as_slice() >= [6, 2].as_slice(),
            "{image}: the cache index needs Redis 6.2 or later"
        );
    }
}
