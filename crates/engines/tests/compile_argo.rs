//! The Argo Workflows compiler: every example and feature plan compiles to a
//! Workflow with the expected structure, what Argo cannot express is refused
//! by name, and Argo's own models and schema (scripts/validate-argo) accept
//! every manifest.

mod compile_support;

use compile_support::{example, examples, feature, features, plan, repo_root};
use couler_engines::compile::{Manifest, compile};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{ArtifactRef, Facts, Pipeline, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run() -> RunSpec {
    RunSpec::new("tnt_acme", "run_01HXYZ", 2)
}

fn argo(plan: &Plan) -> Manifest {
    compile("argo", plan, &run()).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(yaml: &str) -> Value {
    // No size budget: the 10,000-step manifest is large on purpose.
    let options = serde_saphyr::options! { budget: None };
    serde_saphyr::from_str_with_options(yaml, options).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// A compiled Workflow, read back from its YAML.
struct Wf(Value);

impl Wf {
    fn of(plan: &Plan) -> Wf {
        let m = argo(plan);
        assert_eq!(m.files[0].name, "workflow.yaml");
        assert_eq!(m.files[0].media_type, "application/yaml");
        Wf(parse(&m.files[0].content))
    }

    fn spec(&self) -> &Value {
        &self.0["spec"]
    }

    fn templates(&self) -> &[Value] {
        self.spec()["templates"].as_array().unwrap()
    }

    fn template(&self, name: &str) -> &Value {
        self.templates()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no template {name:?} in\n{:#}", self.0))
    }

    fn has_template(&self, name: &str) -> bool {
        self.templates().iter().any(|t| t["name"] == name)
    }

    fn tasks(&self, dag: &str) -> &[Value] {
        self.template(dag)["dag"]["tasks"].as_array().unwrap()
    }

    fn task(&self, dag: &str, name: &str) -> &Value {
        self.tasks(dag)
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no task {name:?} in {dag:?}"))
    }
}

/// `name → value` of a list of parameters or artifacts.
fn by_name(list: &Value) -> BTreeMap<String, Value> {
    list.as_array()
        .map(|l| {
            l.iter()
                .map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn arg(task: &Value, name: &str) -> String {
    by_name(&task["arguments"]["parameters"])[name]["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn planned(yaml: &str, facts: &Facts) -> Plan {
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap_or_else(|p| panic!("{p}"));
    Pipeline::default()
        .plan(workflow, facts, |_, f| f())
        .unwrap()
}

fn unsupported(plan: &Plan) -> String {
    match compile("argo", plan, &run()) {
        Err(EngineError::Unsupported { engine, feature }) => {
            assert_eq!(engine, "argo");
            feature
        }
        Err(other) => panic!("expected Unsupported, got {other}"),
        Ok(m) => panic!("expected Unsupported, got\n{}", m.text()),
    }
}

/// Every plan this file compiles, for the validator.
fn all_plans() -> Vec<(String, Plan)> {
    let mut out = examples();
    out.extend(features().into_iter().map(|(n, p)| (n.to_owned(), p)));
    out.push(("exit-reads".into(), plan(EXIT_READS)));
    out.push(("loop-reads".into(), plan(LOOP_READS)));
    out.push(("names".into(), plan(NAMES)));
    out.push(("cached".into(), cached_diamond()));
    out.push((
        "cached-artifact".into(),
        cached_artifact("s3://couler/cas/ab/abcd"),
    ));
    out.push(("reused-skip".into(), reused_skip()));
    out.push(("all-reused".into(), all_reused()));
    out.push(("job-options".into(), plan(JOB_OPTIONS)));
    out.push(("map-when".into(), plan(MAP_WHEN)));
    out
}

#[test]
fn every_plan_compiles_to_a_workflow_naming_its_run() {
    for (name, plan) in all_plans() {
        let wf = Wf::of(&plan);
        let meta = &wf.0["metadata"];
        assert_eq!(wf.0["apiVersion"], "argoproj.io/v1alpha1", "{name}");
        assert_eq!(wf.0["kind"], "Workflow", "{name}");
        let wf_name = meta["name"].as_str().unwrap();
        assert!(couler_ir::names::is_dns_label(wf_name), "{name}: {wf_name}");
        assert!(wf_name.ends_with("-run-01hxyz-2"), "{name}: {wf_name}");
        assert_eq!(meta["labels"]["couler.dev/tenant"], "tnt_acme", "{name}");
        assert_eq!(meta["labels"]["couler.dev/run"], "run_01HXYZ", "{name}");
        assert_eq!(meta["labels"]["couler.dev/attempt"], "2", "{name}");
        assert_eq!(
            meta["annotations"]["couler.dev/run"], "run_01HXYZ",
            "{name}"
        );
        for (k, v) in &plan.workflow.labels {
            assert_eq!(meta["labels"][k], v.as_str(), "{name}: label {k}");
        }
        assert_eq!(
            wf.spec()["podMetadata"]["labels"]["couler.dev/tenant"],
            "tnt_acme"
        );
        let entry = wf.spec()["entrypoint"].as_str().unwrap();
        assert!(wf.template(entry)["dag"].is_object(), "{name}");
        // One task per running step, named after it, in the right DAG.
        for (i, step) in plan.steps.iter().enumerate() {
            let runs = matches!(step.action, couler_optimizer::Action::Run);
            let dag = if step.exit_handler {
                wf.spec()["onExit"].as_str().unwrap_or("-")
            } else {
                entry
            };
            // Argo refuses task names starting with a digit.
            let task = match step.name.starts_with(|c: char| c.is_ascii_digit()) {
                true => format!("s{}", step.name),
                false => step.name.clone(),
            };
            let has_task =
                wf.has_template(dag) && wf.tasks(dag).iter().any(|t| t["name"] == task.as_str());
            assert_eq!(has_task, runs, "{name}: task for {}", step.name);
            assert_eq!(
                wf.has_template(&step.name),
                runs,
                "{name}: template {}",
                step.name
            );
            if runs {
                let body = wf.template(&step.name);
                let kinds = ["container", "script", "resource"];
                assert_eq!(kinds.iter().filter(|k| body[**k].is_object()).count(), 1);
                let ir = plan.ir_step(i);
                let kind = match (&ir.container, &ir.script) {
                    (Some(_), _) => "container",
                    (_, Some(_)) => "script",
                    _ => "resource",
                };
                assert!(body[kind].is_object(), "{name}: {} is a {kind}", step.name);
            }
        }
    }
}

#[test]
fn container_fields_resources_hints_and_secret_references() {
    let plan = feature("container-args-env");
    let wf = Wf::of(&plan);
    let hello = wf.template("hello");
    let c = &hello["container"];
    assert_eq!(c["image"], "alpine:3.20");
    assert_eq!(c["command"], json!(["sh", "-c"]));
    // The workflow parameter is written in.
    assert_eq!(c["args"], json!(["echo hello world $GREETING"]));
    assert_eq!(c["workingDir"], "/tmp");
    let env = by_name(&c["env"]);
    assert_eq!(env["GREETING"]["value"], "hi");
    assert_eq!(
        env["TOKEN"]["valueFrom"],
        json!({"secretKeyRef": {"name": "creds", "key": "token"}})
    );
    assert!(env["TOKEN"].get("value").is_none());
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "500m", "memory": "256Mi", "nvidia.com/gpu": "1"},
               "limits": {"nvidia.com/gpu": "1"}})
    );
    assert_eq!(hello["nodeSelector"], json!({"pool": "gpu"}));
    assert_eq!(
        hello["tolerations"],
        json!([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
    );
    assert_eq!(
        hello["metadata"]["annotations"]["couler.dev/description"],
        "Says hello."
    );
    assert_eq!(wf.0["metadata"]["labels"]["team"], "ml");
    assert_eq!(
        wf.spec()["arguments"]["parameters"],
        json!([{"name": "who", "value": "world"}])
    );
}

#[test]
fn outputs_reach_consumers_through_parameters_and_artifacts() {
    let wf = Wf::of(&feature("script-outputs"));
    let produce = wf.template("produce");
    assert_eq!(
        produce["outputs"],
        json!({"parameters": [{"name": "n", "valueFrom": {"path": "/tmp/n", "default": "0"}}],
               "artifacts": [{"name": "data", "path": "/tmp/data.csv"}]})
    );
    // Output paths are written into the source.
    let source = produce["script"]["source"].as_str().unwrap();
    assert!(source.contains(r#"open("/tmp/n", "w")"#), "{source}");
    assert!(source.contains(r#"open("/tmp/data.csv", "w")"#), "{source}");
    assert_eq!(produce["script"]["command"], json!(["python3"]));

    let consume = wf.template("consume");
    assert_eq!(
        consume["inputs"],
        json!({"parameters": [{"name": "produce-n"}, {"name": "produce-result"}],
               "artifacts": [{"name": "data", "path": "/in/data.csv"}]})
    );
    assert_eq!(
        consume["container"]["command"][2],
        "cat /in/data.csv; echo {{inputs.parameters.produce-n}} {{inputs.parameters.produce-result}}"
    );
    let task = wf.task("main", "consume");
    assert_eq!(task["depends"], "produce.Succeeded");
    assert_eq!(
        arg(task, "produce-n"),
        "{{tasks.produce.outputs.parameters.n}}"
    );
    assert_eq!(
        arg(task, "produce-result"),
        "{{tasks.produce.outputs.result}}"
    );
    assert_eq!(
        task["arguments"]["artifacts"],
        json!([{"name": "data", "from": "{{tasks.produce.outputs.artifacts.data}}"}])
    );
}

#[test]
fn groups_and_depends_become_succeeded_dependencies() {
    let wf = Wf::of(&feature("depends-groups"));
    assert!(wf.task("main", "prep").get("depends").is_none());
    assert_eq!(wf.task("main", "lstm")["depends"], "prep.Succeeded");
    assert_eq!(wf.task("main", "gru")["depends"], "prep.Succeeded");
    assert_eq!(
        wf.task("main", "pick")["depends"],
        "lstm.Succeeded && gru.Succeeded"
    );
}

#[test]
fn when_becomes_govaluate() {
    let wf = Wf::of(&feature("when"));
    let flip = "'{{tasks.flip.outputs.result}}'";
    assert_eq!(
        wf.task("main", "heads")["when"],
        format!("{flip} == 'heads'")
    );
    assert_eq!(
        wf.task("main", "tails")["when"],
        format!("({flip} == 'tails' || {flip} == 'edge')")
    );
    assert_eq!(wf.task("main", "big")["when"], format!("{flip} != 'heads'"));
    assert_eq!(wf.task("main", "big")["depends"], "flip.Succeeded");
}

#[test]
fn map_items_with_parallelism_fans_out_inside_a_bounded_dag() {
    let wf = Wf::of(&feature("map-items"));
    let task = wf.task("main", "train");
    assert_eq!(task["template"], "train-fanout");
    let fanout = wf.template("train-fanout");
    assert_eq!(fanout["parallelism"], 2);
    let inner = &fanout["dag"]["tasks"][0];
    assert_eq!(inner["template"], "train");
    assert_eq!(inner["withItems"], json!([100, 200, 300]));
    assert_eq!(arg(inner, "item"), "{{item}}");
    assert_eq!(
        wf.template("train")["container"]["command"],
        json!(["echo", "batch {{inputs.parameters.item}}"])
    );
}

#[test]
fn map_conditions_split_between_the_step_and_its_instances() {
    let wf = Wf::of(&plan(MAP_WHEN));
    // Skipping the whole step must skip its dependents, so its own
    // condition sits on a wrapper; the per-item one on the instances.
    let task = wf.task("main", "work");
    assert_eq!(task["template"], "work-fanout");
    assert_eq!(task["when"], "'{{tasks.gate.outputs.result}}' == 'go'");
    assert_eq!(task["depends"], "gate.Succeeded");
    let fanout = wf.template("work-fanout");
    assert!(fanout.get("parallelism").is_none());
    let inner = &fanout["dag"]["tasks"][0];
    assert_eq!(inner["when"], "{{item.size}} > 1");
    assert_eq!(inner["withItems"], json!([{"size": 1}, {"size": 2}]));
    assert_eq!(arg(inner, "item-size"), "{{item.size}}");
    assert_eq!(wf.task("main", "after")["depends"], "work.Succeeded");
}

#[test]
fn map_from_uses_with_param() {
    let wf = Wf::of(&feature("map-from"));
    let work = wf.task("main", "work");
    assert_eq!(work["template"], "work");
    assert_eq!(work["withParam"], "{{tasks.shards.outputs.result}}");
    assert_eq!(work["depends"], "shards.Succeeded");
    assert_eq!(arg(work, "item"), "{{item}}");
}

#[test]
fn while_recurses_with_a_counter() {
    let wf = Wf::of(&feature("while"));
    let task = wf.task("main", "poll");
    assert_eq!(task["template"], "poll-while");
    assert_eq!(arg(task, "iteration"), "1");
    let looped = wf.template("poll-while");
    let steps = looped["steps"].as_array().unwrap();
    assert_eq!(steps[0][0]["template"], "poll");
    let next = &steps[1][0];
    assert_eq!(next["template"], "poll-while");
    assert_eq!(
        next["when"],
        "'{{steps.poll.outputs.result}}' != 'done' && {{inputs.parameters.iteration}} < 5"
    );
    assert_eq!(
        arg(next, "iteration"),
        "{{=asInt(inputs.parameters['iteration']) + 1}}"
    );
}

#[test]
fn loop_outputs_are_the_last_iterations() {
    let wf = Wf::of(&plan(LOOP_READS));
    let looped = wf.template("poll-while");
    // The seed's result passes through every iteration.
    assert_eq!(
        by_name(&looped["inputs"]["parameters"])
            .keys()
            .collect::<Vec<_>>(),
        ["iteration", "seed-result"]
    );
    assert_eq!(
        arg(wf.task("main", "poll"), "seed-result"),
        "{{tasks.seed.outputs.result}}"
    );
    let next = &looped["steps"][1][0];
    assert_eq!(
        arg(next, "seed-result"),
        "{{inputs.parameters.seed-result}}"
    );
    assert_eq!(
        next["when"],
        "'{{steps.poll.outputs.parameters.state}}' != 'done' && {{steps.poll.outputs.result}} < 10 && {{inputs.parameters.iteration}} < 3"
    );
    let outputs = by_name(&looped["outputs"]["parameters"]);
    assert_eq!(
        outputs["result"]["valueFrom"]["expression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.result : steps['poll-next'].outputs.parameters['result']"
    );
    assert_eq!(
        outputs["state"]["valueFrom"]["expression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.parameters['state'] : steps['poll-next'].outputs.parameters['state']"
    );
    assert_eq!(
        looped["outputs"]["artifacts"][0]["fromExpression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.artifacts['data'] : steps['poll-next'].outputs.artifacts['data']"
    );
    let use_task = wf.task("main", "use");
    assert_eq!(
        arg(use_task, "poll-result"),
        "{{tasks.poll.outputs.parameters.result}}"
    );
    assert_eq!(
        arg(use_task, "poll-state"),
        "{{tasks.poll.outputs.parameters.state}}"
    );
    assert_eq!(
        use_task["arguments"]["artifacts"][0]["from"],
        "{{tasks.poll.outputs.artifacts.data}}"
    );
}

#[test]
fn retry_and_timeout() {
    let wf = Wf::of(&feature("retry-timeout"));
    let flaky = wf.template("flaky");
    assert_eq!(
        flaky["retryStrategy"],
        json!({"limit": "3", "retryPolicy": "OnTransientError",
               "backoff": {"duration": "10s", "factor": "2", "cap": "300s"}})
    );
    assert_eq!(flaky["activeDeadlineSeconds"], "1800");
    let always = wf.template("always");
    assert_eq!(
        always["retryStrategy"],
        json!({"limit": "2", "retryPolicy": "Always"})
    );
    assert!(always.get("activeDeadlineSeconds").is_none());
}

#[test]
fn exit_handler_and_workflow_status() {
    let wf = Wf::of(&feature("exit-handler"));
    assert_eq!(wf.spec()["onExit"], "exit-handler");
    assert_eq!(wf.tasks("main").len(), 1);
    let notify = wf.task("exit-handler", "notify");
    assert_eq!(
        arg(notify, "workflow-status"),
        "{{=workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')}}"
    );
    assert_eq!(
        wf.template("notify")["container"]["command"][2],
        "echo run {{inputs.parameters.workflow-status}}"
    );
    assert_eq!(
        wf.task("exit-handler", "cleanup")["depends"],
        "notify.Succeeded"
    );
}

#[test]
fn exit_handlers_read_main_steps_through_global_outputs() {
    let wf = Wf::of(&plan(EXIT_READS));
    // `a`'s result is read by an exit handler: a one-task DAG exports it.
    assert_eq!(wf.task("main", "a")["template"], "a-export");
    let export = wf.template("a-export");
    let params = by_name(&export["outputs"]["parameters"]);
    assert_eq!(params["result"]["globalName"], "a-result");
    assert_eq!(
        params["result"]["valueFrom"]["parameter"],
        "{{tasks.a.outputs.result}}"
    );
    assert_eq!(params["p"]["globalName"], "a-p");
    assert_eq!(export["outputs"]["artifacts"][0]["globalName"], "a-log");
    // Main consumers read the exported result.
    assert_eq!(
        arg(wf.task("main", "c"), "a-result"),
        "{{tasks.a.outputs.parameters.result}}"
    );
    // A fanned-out step's aggregate too.
    assert_eq!(
        by_name(&wf.template("b-fanout")["outputs"]["parameters"])["result"]["globalName"],
        "b-result"
    );
    let notify = wf.task("exit-handler", "notify");
    assert_eq!(arg(notify, "a-p"), "{{workflow.outputs.parameters.a-p}}");
    assert_eq!(
        arg(notify, "a-result"),
        "{{workflow.outputs.parameters.a-result}}"
    );
    assert_eq!(
        arg(notify, "b-result"),
        "{{workflow.outputs.parameters.b-result}}"
    );
    assert_eq!(
        notify["arguments"]["artifacts"][0]["from"],
        "{{workflow.outputs.artifacts.a-log}}"
    );
    assert_eq!(
        notify["when"],
        "'{{=workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')}}' == 'failed'"
    );
}

#[test]
fn parallelism_and_schedule_make_a_cron_workflow() {
    let plan = feature("parallelism-schedule");
    let m = argo(&plan);
    assert_eq!(m.files.len(), 2);
    let wf = parse(&m.files[0].content);
    assert_eq!(wf["spec"]["parallelism"], 2);
    assert_eq!(m.files[1].name, "cronworkflow.yaml");
    let cron = parse(&m.files[1].content);
    assert_eq!(cron["kind"], "CronWorkflow");
    assert_eq!(cron["spec"]["schedules"], json!(["0 2 * * *"]));
    assert_eq!(cron["spec"]["timezone"], "Europe/Berlin");
    assert_eq!(cron["spec"]["workflowSpec"], wf["spec"]);
    assert_eq!(
        cron["spec"]["workflowMetadata"]["labels"]["couler.dev/run"],
        "run_01HXYZ"
    );
    let name = cron["metadata"]["name"].as_str().unwrap();
    assert!(
        name.len() <= 52 && couler_ir::names::is_dns_label(name),
        "{name}"
    );
    // Without a schedule there is only the Workflow.
    assert_eq!(argo(&feature("when")).files.len(), 1);
}

#[test]
fn training_jobs_become_kubeflow_resources() {
    let wf = Wf::of(&feature("jobs"));
    let manifest = |step: &str| {
        let r = &wf.template(step)["resource"];
        assert_eq!(r["action"], "create");
        assert_eq!(r["setOwnerReference"], true);
        (r.clone(), parse(r["manifest"].as_str().unwrap()))
    };
    let (r, torch) = manifest("torch");
    assert_eq!(torch["apiVersion"], "kubeflow.org/v1");
    assert_eq!(torch["kind"], "PyTorchJob");
    assert_eq!(torch["metadata"]["generateName"], "torch-");
    assert_eq!(torch["metadata"]["labels"]["couler.dev/tenant"], "tnt_acme");
    assert_eq!(
        r["successCondition"],
        "status.replicaStatuses.Master.succeeded > 0"
    );
    assert_eq!(
        r["failureCondition"],
        "status.replicaStatuses.Master.failed > 0"
    );
    let specs = &torch["spec"]["pytorchReplicaSpecs"];
    assert_eq!(specs["Master"]["replicas"], 1);
    assert_eq!(specs["Worker"]["replicas"], 2);
    assert_eq!(specs["Worker"]["restartPolicy"], "Never");
    let worker = &specs["Worker"]["template"]["spec"]["containers"][0];
    assert_eq!(worker["name"], "pytorch");
    assert_eq!(worker["image"], "pytorch/pytorch:2.3.0");
    assert_eq!(worker["command"], json!(["python", "train.py"]));
    assert_eq!(worker["resources"]["limits"]["nvidia.com/gpu"], "1");

    let (r, tf) = manifest("tf");
    assert_eq!(tf["kind"], "TFJob");
    let specs = &tf["spec"]["tfReplicaSpecs"];
    assert_eq!(
        specs.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["Chief", "PS", "Worker"]
    );
    assert_eq!(
        specs["Chief"]["template"]["spec"]["containers"][0]["name"],
        "tensorflow"
    );
    assert_eq!(
        r["successCondition"],
        "status.replicaStatuses.Chief.succeeded > 0"
    );

    let (r, mpi) = manifest("mpi");
    assert_eq!(mpi["kind"], "MPIJob");
    let specs = &mpi["spec"]["mpiReplicaSpecs"];
    let launcher = &specs["Launcher"]["template"]["spec"]["containers"][0];
    assert_eq!(launcher["name"], "mpi");
    assert_eq!(launcher["command"], json!(["mpirun", "pi"]));
    // Workers keep the image's entrypoint and wait for mpirun.
    assert!(
        specs["Worker"]["template"]["spec"]["containers"][0]
            .get("command")
            .is_none()
    );
    assert_eq!(
        r["failureCondition"],
        "status.replicaStatuses.Launcher.failed > 0"
    );
}

#[test]
fn examples_keep_their_shape() {
    let wf = Wf::of(&example("coin-flip"));
    assert_eq!(
        wf.task("main", "heads")["when"],
        "'{{tasks.flip.outputs.result}}' == 'heads'"
    );
    assert_eq!(wf.task("main", "tails")["depends"], "flip.Succeeded");

    let wf = Wf::of(&example("diamond"));
    assert_eq!(
        wf.task("main", "d")["depends"],
        "b.Succeeded && c.Succeeded"
    );
    assert_eq!(
        arg(wf.task("main", "b"), "a-result"),
        "{{tasks.a.outputs.result}}"
    );
    assert_eq!(
        wf.template("a")["container"]["args"],
        json!(["echo A says hello"])
    );
    assert_eq!(
        wf.0["metadata"]["annotations"]["workflows.argoproj.io/description"],
        "A → (B, C) → D, passing a message along each edge."
    );

    let wf = Wf::of(&example("automl"));
    assert_eq!(
        wf.task("main", "select-best")["depends"],
        "xgboost.Succeeded && lightgbm.Succeeded"
    );
    assert_eq!(
        wf.template("xgboost")["script"]["resources"]["requests"],
        json!({"cpu": "2", "memory": "2Gi"})
    );

    let wf = Wf::of(&example("map-batch-sizes"));
    assert_eq!(wf.template("train-fanout")["parallelism"], 3);
    assert_eq!(
        wf.task("main", "evaluate")["withParam"],
        "{{tasks.train.outputs.parameters.model}}"
    );

    let m = argo(&example("market-trend"));
    assert_eq!(m.files.len(), 2);
    let wf = Wf(parse(&m.files[0].content));
    assert_eq!(wf.spec()["parallelism"], 4);
    assert_eq!(wf.spec()["onExit"], "exit-handler");
    assert_eq!(
        by_name(&wf.template("collect-prices")["container"]["env"])["DATA_API_KEY"]["valueFrom"]["secretKeyRef"],
        json!({"name": "market-data", "key": "api-key"})
    );
    assert!(!m.text().contains("api-key-value"));
    assert_eq!(
        wf.task("main", "select-best")["depends"],
        "train-lstm.Succeeded && train-gru.Succeeded && train-svm.Succeeded"
    );
}

fn cached_diamond() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/diamond.yaml")).unwrap();
    let outputs = StepOutputs {
        result: Some("A says it's cached".into()),
        ..StepOutputs::default()
    };
    let facts = Facts {
        cache_hits: BTreeMap::from([("a".to_owned(), (outputs, "hit".to_owned()))]),
        ..Facts::default()
    };
    planned(&text, &facts)
}

fn cached_artifact(location: &str) -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/artifact-passing.yaml")).unwrap();
    let outputs = StepOutputs {
        artifacts: BTreeMap::from([(
            "dataset".to_owned(),
            ArtifactRef {
                digest: "abcd".into(),
                size: 4,
                location: location.into(),
            },
        )]),
        ..StepOutputs::default()
    };
    let facts = Facts {
        cache_hits: BTreeMap::from([("produce".to_owned(), (outputs, "hit".to_owned()))]),
        ..Facts::default()
    };
    planned(&text, &facts)
}

fn reused_skip() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/coin-flip.yaml")).unwrap();
    let earlier = BTreeMap::from([
        (
            "flip".to_owned(),
            (
                ReuseStatus::Succeeded,
                StepOutputs {
                    result: Some("tails".into()),
                    ..StepOutputs::default()
                },
            ),
        ),
        (
            "heads".to_owned(),
            (ReuseStatus::Skipped, StepOutputs::default()),
        ),
    ]);
    let text = format!(
        "{text}\n  - name: after-heads\n    depends: [heads]\n    container: {{image: alpine, command: [echo, done]}}\n"
    );
    planned(
        &text,
        &Facts {
            earlier,
            ..Facts::default()
        },
    )
}

#[test]
fn reused_steps_are_left_out_and_their_outputs_written_in() {
    let wf = Wf::of(&cached_diamond());
    assert!(!wf.has_template("a"));
    assert!(wf.tasks("main").iter().all(|t| t["name"] != "a"));
    // The recorded result is written into the consumers' text.
    assert_eq!(
        wf.template("b")["container"]["args"],
        json!(["echo B got: A says it's cached"])
    );
    assert!(wf.task("main", "b").get("depends").is_none());
    assert_eq!(
        wf.task("main", "d")["depends"],
        "b.Succeeded && c.Succeeded"
    );

    let wf = Wf::of(&cached_artifact("s3://couler/cas/ab/abcd"));
    assert_eq!(
        wf.task("main", "consume")["arguments"]["artifacts"],
        json!([{"name": "dataset", "s3": {"bucket": "couler", "key": "cas/ab/abcd"}}])
    );
    let wf = Wf::of(&cached_artifact("https://store.example/abcd"));
    assert_eq!(
        wf.task("main", "consume")["arguments"]["artifacts"][0]["http"]["url"],
        "https://store.example/abcd"
    );

    // A reused `when` input is compared as a literal.
    let wf = Wf::of(&reused_skip());
    assert_eq!(wf.task("main", "tails")["when"], "'tails' == 'tails'");
}

#[test]
fn a_step_behind_a_reused_skip_is_skipped() {
    let wf = Wf::of(&reused_skip());
    assert!(!wf.has_template("heads") && !wf.has_template("flip"));
    assert_eq!(wf.task("main", "after-heads")["when"], "false");
}

fn all_reused() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/diamond.yaml")).unwrap();
    let earlier = ["a", "b", "c", "d"]
        .map(|s| {
            (
                s.to_owned(),
                (ReuseStatus::Succeeded, StepOutputs::default()),
            )
        })
        .into();
    planned(
        &text,
        &Facts {
            earlier,
            ..Facts::default()
        },
    )
}

#[test]
fn when_everything_is_reused_nothing_runs() {
    let wf = Wf::of(&all_reused());
    let tasks = wf.tasks("main");
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        wf.template(tasks[0]["template"].as_str().unwrap())["suspend"],
        json!({"duration": "0"})
    );
}

#[test]
fn training_job_options() {
    let wf = Wf::of(&plan(JOB_OPTIONS));
    let task = wf.task("main", "train");
    assert_eq!(task["template"], "train");
    assert_eq!(task["withItems"], json!([0.1, 0.01]));
    let t = wf.template("train");
    assert_eq!(t["retryStrategy"]["limit"], "2");
    assert_eq!(t["activeDeadlineSeconds"], "3600");
    assert_eq!(t["inputs"]["parameters"], json!([{"name": "item"}]));
    // Workers only: the job succeeds when all of them have.
    assert_eq!(
        t["resource"]["successCondition"],
        "status.replicaStatuses.Worker.succeeded > 2"
    );
    let job = parse(t["resource"]["manifest"].as_str().unwrap());
    assert_eq!(job["spec"]["runPolicy"]["activeDeadlineSeconds"], 3600);
    let pod = &job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"], json!({"pool": "gpu"}));
    assert_eq!(pod["tolerations"][0]["key"], "gpu");
    let c = &pod["containers"][0];
    assert_eq!(c["args"], json!(["--lr", "{{inputs.parameters.item}}"]));
    assert_eq!(c["workingDir"], "/work");
    assert_eq!(
        c["resources"]["requests"],
        json!({"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "2"})
    );
    let env = by_name(&c["env"]);
    assert_eq!(
        env["WANDB_KEY"]["valueFrom"]["secretKeyRef"]["name"],
        "wandb"
    );
    // Hints go to the job's pods, not to the pod that creates the job.
    assert!(t.get("nodeSelector").is_none());
}

#[test]
fn unsupported_features_are_refused_by_name() {
    let tune = std::fs::read_to_string(repo_root().join("examples/tune.yaml")).unwrap();
    let feature = unsupported(&plan(&tune));
    assert!(
        feature.contains("\"train\"") && feature.contains("tune") && feature.contains("stages"),
        "{feature}"
    );

    let feature = unsupported(&cached_artifact("file:///var/lib/couler/cas/ab/abcd"));
    assert!(
        feature.contains("\"consume\"") && feature.contains("file:///"),
        "{feature}"
    );

    let job_outputs = r#"
apiVersion: couler.dev/v1alpha1
name: job-outputs
steps:
  - name: train
    job: {framework: pytorch, image: x, replicas: {master: {count: 1}}}
    outputs: {parameters: [{name: acc, path: /tmp/acc}]}
"#;
    let feature = unsupported(&plan(job_outputs));
    assert!(
        feature.contains("\"train\"") && feature.contains("training job"),
        "{feature}"
    );

    let job_result = r#"
apiVersion: couler.dev/v1alpha1
name: job-result
steps:
  - name: train
    job: {framework: mpi, image: x, replicas: {launcher: {count: 1}, worker: {count: 1}}}
  - name: report
    container: {image: alpine, command: [echo, '{{steps.train.outputs.result}}']}
"#;
    let feature = unsupported(&plan(job_result));
    assert!(feature.contains("result of a training job"), "{feature}");

    let map_artifacts = r#"
apiVersion: couler.dev/v1alpha1
name: map-artifacts
steps:
  - name: shard
    map: {items: [1, 2]}
    container: {image: alpine, command: [sh, -c, 'echo {{item}} > /tmp/o']}
    outputs: {artifacts: [{name: out, path: /tmp/o}]}
  - name: join
    inputs: {artifacts: [{name: out, from: '{{steps.shard.outputs.artifacts.out}}', path: /in}]}
    container: {image: alpine, command: [cat, /in]}
"#;
    let feature = unsupported(&plan(map_artifacts));
    assert!(
        feature.contains("\"shard\"") && feature.contains("fanned-out"),
        "{feature}"
    );
}

#[test]
fn names_argo_accepts() {
    let wf = Wf::of(&plan(NAMES));
    // A step called `main` keeps its template; the entry DAG moves aside.
    assert_eq!(wf.spec()["entrypoint"], "main-2");
    assert!(wf.template("main")["container"].is_object());
    // Task names may not start with a digit once `depends` is used.
    let task = wf.task("main-2", "s1st");
    assert_eq!(task["template"], "1st");
    assert_eq!(wf.task("main-2", "main")["depends"], "s1st.Succeeded");
    assert_eq!(
        arg(wf.task("main-2", "main"), "1st-result"),
        "{{tasks.s1st.outputs.result}}"
    );
    // Long names are cut to Argo's limit, deterministically and distinctly.
    let long = "l".repeat(60);
    let fanout = wf.task("main-2", &long)["template"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fanout.len() <= 63 && fanout != long, "{fanout}");
}

#[test]
fn same_plan_same_bytes() {
    for (name, plan) in all_plans() {
        assert_eq!(argo(&plan), argo(&plan), "{name}");
    }
    // Stages and attempts get names of their own.
    let plan = feature("when");
    let staged = compile("argo", &plan, &run().stage("p3")).unwrap();
    let wf = parse(&staged.files[0].content);
    assert!(wf["metadata"]["name"].as_str().unwrap().ends_with("-2-p3"));
    assert_eq!(wf["metadata"]["labels"]["couler.dev/stage"], "p3");
}

#[test]
fn ten_thousand_step_chain() {
    let n = 10_000;
    let mut steps = Vec::with_capacity(n);
    for i in 0..n {
        let args = if i == 0 {
            vec!["start".to_owned()]
        } else {
            vec![format!("{{{{steps.s{}.outputs.result}}}}", i - 1)]
        };
        steps.push(json!({"name": format!("s{i}"), "container": {"image": "alpine", "command": ["echo"], "args": args}}));
    }
    let doc = json!({"apiVersion": "couler.dev/v1alpha1", "name": "chain", "steps": steps});
    let workflow = couler_ir::load_value(doc, &couler_ir::Limits::default()).unwrap();
    let plan = Plan::new(workflow, BTreeMap::new());
    let started = std::time::Instant::now();
    let m = argo(&plan);
    eprintln!("compiled {n} steps in {:?}", started.elapsed());
    let wf = Wf(parse(&m.files[0].content));
    let tasks = wf.tasks("main");
    assert_eq!(tasks.len(), n);
    assert_eq!(wf.templates().len(), n + 1);
    let last = &tasks[n - 1];
    assert_eq!(last["depends"], format!("s{}.Succeeded", n - 2));
    assert_eq!(
        arg(last, &format!("s{}-result", n - 2)),
        format!("{{{{tasks.s{}.outputs.result}}}}", n - 2)
    );
}

/// Sets the validator up once; `false` (skip) only when
/// COULER_SKIP_VALIDATORS=1, otherwise a missing validator fails the test.
fn validator_ready() -> bool {
    let skip = std::env::var("COULER_SKIP_VALIDATORS").is_ok_and(|v| v == "1");
    let script = repo_root().join("scripts/validate-argo");
    let out = Command::new(&script).arg("--setup").output();
    match out {
        Ok(o) if o.status.success() => true,
        _ if skip => {
            eprintln!("skipping: validate-argo could not be set up and COULER_SKIP_VALIDATORS=1");
            false
        }
        Ok(o) => panic!(
            "scripts/validate-argo --setup failed (needs python3 and PyPI; set COULER_SKIP_VALIDATORS=1 to skip):\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("could not run {}: {e}", script.display()),
    }
}

fn validate(dir: &Path) -> (bool, String) {
    let out = Command::new(repo_root().join("scripts/validate-argo"))
        .arg(dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn argo_validator_accepts_every_manifest() {
    if !validator_ready() {
        return;
    }
    let dir = fresh_dir("argo-validate-all");
    let mut count = 0;
    for (name, plan) in all_plans() {
        for file in argo(&plan).files {
            std::fs::write(dir.join(format!("{name}--{}", file.name)), file.content).unwrap();
            count += 1;
        }
    }
    let (ok, output) = validate(&dir);
    assert!(ok, "validate-argo rejected the manifests:\n{output}");
    assert!(output.contains(&format!("{count} document(s)")), "{output}");
}

#[test]
fn argo_validator_is_strict() {
    if !validator_ready() {
        return;
    }
    let good = argo(&feature("retry-timeout")).files[0].content.clone();
    // A misspelt key hera would otherwise drop.
    let dir = fresh_dir("argo-validate-typo");
    std::fs::write(
        dir.join("typo.yaml"),
        good.replacen("retryStrategy:", "retryStrategyy:", 1),
    )
    .unwrap();
    // And one deep inside a container, in a Kubernetes model.
    std::fs::write(
        dir.join("nested.yaml"),
        good.replacen("command:", "commandd:", 1),
    )
    .unwrap();
    let (ok, output) = validate(&dir);
    assert!(
        !ok && output.contains("retryStrategyy") && output.contains("container.commandd"),
        "{output}"
    );

    // A reference to a task that is not there.
    let dir = fresh_dir("argo-validate-lint");
    let diamond = argo(&example("diamond")).files[0].content.clone();
    std::fs::write(
        dir.join("lint.yaml"),
        diamond.replacen(
            "{{tasks.a.outputs.result}}",
            "{{tasks.z.outputs.result}}",
            1,
        ),
    )
    .unwrap();
    let (ok, output) = validate(&dir);
    assert!(!ok && output.contains("'z'"), "{output}");

    // An undeclared input parameter inside a template.
    let dir = fresh_dir("argo-validate-input");
    std::fs::write(
        dir.join("input.yaml"),
        diamond.replacen(
            "{{inputs.parameters.a-result}}",
            "{{inputs.parameters.nope}}",
            1,
        ),
    )
    .unwrap();
    let (ok, output) = validate(&dir);
    assert!(!ok && output.contains("inputs.parameters.nope"), "{output}");
}

const EXIT_READS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: exit-reads
steps:
  - name: a
    script: {image: python:3.12, command: [python3], source: 'open("{{outputs.parameters.p.path}}", "w").write("7"); open("{{outputs.artifacts.log.path}}", "w").write("x"); print("done")'}
    outputs: {parameters: [{name: p, path: /tmp/p}], artifacts: [{name: log, path: /tmp/log}]}
  - name: b
    map: {items: [1, 2]}
    container: {image: alpine, command: [echo, '{{item}}']}
  - name: c
    container: {image: alpine, command: [echo, '{{steps.a.outputs.result}}']}
onExit:
  - name: notify
    when: [{input: '{{workflow.status}}', operator: eq, value: failed}]
    inputs: {artifacts: [{name: log, from: '{{steps.a.outputs.artifacts.log}}', path: /in/log}]}
    container: {image: alpine, command: [sh, -c, 'echo {{steps.a.outputs.parameters.p}} {{steps.a.outputs.result}} {{steps.b.outputs.result}} {{workflow.status}}']}
"#;

const LOOP_READS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: loop-reads
steps:
  - name: seed
    container: {image: alpine, command: [echo, '42']}
  - name: poll
    while:
      condition:
        - {input: '{{steps.poll.outputs.parameters.state}}', operator: ne, value: done}
        - {input: '{{steps.poll.outputs.result}}', operator: lt, value: 10}
      maxIterations: 3
    script:
      image: python:3.12
      command: [python3]
      source: 'open("{{outputs.parameters.state.path}}", "w").write("done"); open("{{outputs.artifacts.data.path}}", "w").write("{{steps.seed.outputs.result}}"); print(1)'
    outputs: {parameters: [{name: state, path: /tmp/state}], artifacts: [{name: data, path: /tmp/data}]}
  - name: use
    inputs: {artifacts: [{name: data, from: '{{steps.poll.outputs.artifacts.data}}', path: /in/data}]}
    container: {image: alpine, command: [echo, '{{steps.poll.outputs.result}} {{steps.poll.outputs.parameters.state}}']}
"#;

const JOB_OPTIONS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: job-options
steps:
  - name: train
    map: {items: [0.1, 0.01]}
    retry: {limit: 2}
    timeout: 1h
    hints: {nodeSelector: {pool: gpu}, tolerations: [{key: gpu, operator: Exists}]}
    resources: {cpu: 4, memory: 16Gi, gpu: 2}
    job:
      framework: pytorch
      image: pytorch/pytorch:2.3.0
      command: [python, train.py]
      args: [--lr, '{{item}}']
      workingDir: /work
      env: [{name: WANDB_KEY, secret: {name: wandb, key: api-key}}]
      replicas: {worker: {count: 3}}
"#;

const MAP_WHEN: &str = r#"
apiVersion: couler.dev/v1alpha1
name: map-when
steps:
  - name: gate
    container: {image: alpine, command: [echo, go]}
  - name: work
    depends: [gate]
    map: {items: [{size: 1}, {size: 2}]}
    when:
      - {input: '{{steps.gate.outputs.result}}', operator: eq, value: go}
      - {input: '{{item.size}}', operator: gt, value: 1}
    container: {image: alpine, command: [echo, '{{item.size}}']}
  - name: after
    depends: [work]
    container: {image: alpine, command: [echo, done]}
"#;

const NAMES: &str = r#"
apiVersion: couler.dev/v1alpha1
name: names
steps:
  - name: 1st
    container: {image: alpine, command: [echo, one]}
  - name: main
    container: {image: alpine, command: [echo, '{{steps.1st.outputs.result}}']}
  - name: llllllllllllllllllllllllllllllllllllllllllllllllllllllllllll
    map: {items: [a, b], parallelism: 1}
    container: {image: alpine, command: [echo, '{{item}}']}
"#;
