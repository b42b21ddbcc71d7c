//! The controller against Tekton's documented behaviour, through the store.

use super::taskrun::is_done;
use super::{pipelineruns, spawn, taskruns};
use crate::kube::Cluster;
use serde_json::{Value, json};
use std::time::Duration;

struct Fake {
    cluster: Cluster,
    controller: tokio::task::JoinHandle<()>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

async fn fake(name: &str) -> Fake {
    let root = std::env::temp_dir().join(format!("couler-tekton-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cluster = Cluster::start(root).await.unwrap();
    let controller = spawn(&cluster);
    Fake {
        cluster,
        controller,
    }
}

fn sh(name: &str, script: &str) -> Value {
    json!({"name": name, "image": "alpine", "command": ["sh", "-c", script]})
}

impl Fake {
    fn submit(&self, name: &str, spec: Value) {
        let pr = json!({
            "apiVersion": "tekton.dev/v1",
            "kind": "PipelineRun",
            "metadata": {"name": name},
            "spec": spec,
        });
        self.cluster
            .store
            .create(&pipelineruns(), "ns", pr)
            .unwrap();
    }

    fn get(&self, name: &str) -> Value {
        self.cluster.store.get(&pipelineruns(), "ns", name).unwrap()
    }

    /// Waits until the PipelineRun satisfies `until` (which may look at
    /// its TaskRuns too).
    async fn wait(&self, name: &str, until: impl Fn(&Value) -> bool) -> Value {
        let mut runs = self
            .cluster
            .store
            .watch(&pipelineruns(), Some("ns"), Some(0));
        let mut tasks = self.cluster.store.watch(&taskruns(), Some("ns"), Some(0));
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let pr = self.get(name);
                if until(&pr) {
                    return pr;
                }
                tokio::select! {
                    _ = runs.recv() => {}
                    _ = tasks.recv() => {}
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("gave up waiting for {name}: {:#}", self.get(name)))
    }

    async fn finish(&self, name: &str) -> Value {
        self.wait(name, is_done).await
    }

    fn taskrun(&self, name: &str) -> Value {
        self.cluster
            .store
            .get(&taskruns(), "ns", name)
            .unwrap_or_else(|| panic!("no TaskRun {name}"))
    }

    fn result(&self, taskrun: &str, result: &str) -> Value {
        let tr = self.taskrun(taskrun);
        tr["status"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == result)
            .unwrap()["value"]
            .clone()
    }
}

fn condition(pr: &Value) -> (&str, &str) {
    let c = &pr["status"]["conditions"][0];
    (c["status"].as_str().unwrap(), c["reason"].as_str().unwrap())
}

fn skipped(pr: &Value) -> Vec<(String, String)> {
    pr["status"]["skippedTasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_guards_only_its_task_and_missing_results_skip() {
    let f = fake("when").await;
    let result = |name: &str| json!({"results": [{"name": "r", "type": "string"}], "steps": [sh(name, "printf tails > $(results.r.path)")]});
    f.submit(
        "pr",
        json!({"pipelineSpec": {"tasks": [
            {"name": "flip", "taskSpec": result("flip")},
            {"name": "heads", "when": [{"input": "$(tasks.flip.results.r)", "operator": "in", "values": ["heads"]}],
             "taskSpec": result("heads")},
            {"name": "after-heads", "runAfter": ["heads"], "taskSpec": {"steps": [sh("a", "true")]}},
            {"name": "reads-heads", "params": [{"name": "x", "value": "$(tasks.heads.results.r)"}],
             "taskSpec": {"params": [{"name": "x"}], "steps": [sh("b", "echo $(params.x)")]}},
        ]}}),
    );
    let pr = f.finish("pr").await;
    assert_eq!(condition(&pr), ("True", "Completed"));
    assert_eq!(
        skipped(&pr),
        [
            (
                "heads".to_owned(),
                "When Expressions evaluated to false".to_owned()
            ),
            ("reads-heads".to_owned(), "Results were missing".to_owned()),
        ]
    );
    assert_eq!(
        pr["status"]["skippedTasks"][0]["whenExpressions"][0]["input"],
        "tails"
    );
    assert_eq!(
        condition(&f.taskrun("pr-after-heads")),
        ("True", "Succeeded")
    );
    assert_eq!(f.result("pr-flip", "r"), "tails");
    assert_eq!(
        pr["status"]["conditions"][0]["message"],
        "Tasks Completed: 2 (Failed: 0, Cancelled 0), Skipped: 2"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrices_fan_out_and_gather_results() {
    let f = fake("matrix").await;
    f.submit(
        "pr",
        json!({
            "params": [{"name": "greeting", "value": "hi"}],
            "pipelineSpec": {"params": [{"name": "greeting", "type": "string"}], "tasks": [
                {"name": "square", "matrix": {"params": [{"name": "n", "value": ["2", "3"]}]},
                 "taskSpec": {"params": [{"name": "n"}], "results": [{"name": "sq"}],
                     "steps": [sh("s", "printf $(( $(params.n) * $(params.n) )) > $(results.sq.path)")]}},
                {"name": "show", "matrix": {"params": [{"name": "v", "value": "$(tasks.square.results.sq[*])"}]},
                 "taskSpec": {"params": [{"name": "v"}], "results": [{"name": "out"}],
                     "steps": [sh("s", "printf '$(params.greeting) $(params.v) $(context.pipelineRun.name)' > $(results.out.path)")]}},
            ]},
        }),
    );
    let pr = f.finish("pr").await;
    assert_eq!(condition(&pr), ("True", "Succeeded"), "{pr:#}");
    assert_eq!(f.result("pr-square-0", "sq"), "4");
    assert_eq!(f.result("pr-square-1", "sq"), "9");
    assert_eq!(f.result("pr-show-1", "out"), "hi 9 pr");
    let children: Vec<&str> = pr["status"]["childReferences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        children,
        ["pr-square-0", "pr-square-1", "pr-show-0", "pr-show-1"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_stops_the_dag_and_finally_sees_it() {
    let f = fake("failure").await;
    f.submit(
        "pr",
        json!({"pipelineSpec": {
            "tasks": [
                {"name": "bad", "taskSpec": {"steps": [sh("bad", "exit 3"), sh("never", "true")]}},
                {"name": "after", "runAfter": ["bad"], "taskSpec": {"steps": [sh("a", "true")]}},
            ],
            "finally": [{"name": "report",
                "params": [{"name": "all", "value": "$(tasks.status)"}, {"name": "bad", "value": "$(tasks.bad.status)"}],
                "taskSpec": {"params": [{"name": "all"}, {"name": "bad"}], "results": [{"name": "seen"}],
                    "steps": [sh("r", "printf '$(params.all) $(params.bad)' > $(results.seen.path)")]}}],
        }}),
    );
    let pr = f.finish("pr").await;
    assert_eq!(condition(&pr), ("False", "Failed"));
    assert_eq!(
        skipped(&pr),
        [("after".to_owned(), "PipelineRun was stopping".to_owned())]
    );
    let bad = f.taskrun("pr-bad");
    assert_eq!(
        bad["status"]["conditions"][0]["message"],
        "\"step-bad\" exited with code 3"
    );
    assert_eq!(bad["status"]["steps"][0]["terminated"]["exitCode"], 3);
    assert_eq!(bad["status"]["steps"][1]["terminationReason"], "Skipped");
    assert_eq!(f.result("pr-report", "seen"), "Failed Failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_kills_pods_and_skips_finally() {
    let f = fake("cancel").await;
    let spec = json!({"pipelineSpec": {
        "tasks": [{"name": "long", "taskSpec": {"steps": [sh("s", "sleep 60")]}}],
        "finally": [{"name": "cleanup", "taskSpec": {"steps": [sh("c", "true")]}}],
    }});
    for (name, mode, finally_runs) in [
        ("hard", "Cancelled", false),
        ("soft", "CancelledRunFinally", true),
    ] {
        f.submit(name, spec.clone());
        let run = format!("{name}-long");
        f.wait(name, |_| {
            f.cluster
                .store
                .get(&taskruns(), "ns", &run)
                .is_some_and(|t| t["status"]["podName"].is_string())
        })
        .await;
        f.cluster.store.update(&pipelineruns(), "ns", name, |pr| {
            pr["spec"]["status"] = mode.into()
        });
        let pr = f.finish(name).await;
        assert_eq!(condition(&pr), ("False", "Cancelled"), "{mode}");
        assert_eq!(
            condition(&f.taskrun(&run)),
            ("False", "TaskRunCancelled"),
            "{mode}"
        );
        let cleanup = f
            .cluster
            .store
            .get(&taskruns(), "ns", &format!("{name}-cleanup"));
        assert_eq!(cleanup.is_some(), finally_runs, "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_lets_running_tasks_finish() {
    let f = fake("stop").await;
    let wait = "while [ ! -e /tmp/go ]; do sleep 0.05; done";
    f.submit(
        "pr",
        json!({"pipelineSpec": {
            "tasks": [
                {"name": "running", "taskSpec": {"steps": [sh("s", wait)]}},
                {"name": "later", "runAfter": ["running"], "taskSpec": {"steps": [sh("s", "true")]}},
            ],
            "finally": [{"name": "cleanup", "taskSpec": {"steps": [sh("c", "true")]}}],
        }}),
    );
    f.wait("pr", |_| {
        f.cluster
            .store
            .get(&taskruns(), "ns", "pr-running")
            .is_some_and(|t| t["status"]["podName"].is_string())
    })
    .await;
    f.cluster.store.update(&pipelineruns(), "ns", "pr", |pr| {
        pr["spec"]["status"] = "StoppedRunFinally".into()
    });
    f.wait("pr", |pr| {
        pr["status"]["conditions"][0]["reason"] == "StoppedRunningFinally"
    })
    .await;
    // The pod's /tmp is a host directory of its own (maybe not made yet).
    let tmp = f.cluster.kubelet.tmp("ns", "pr-running-pod");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("go"), b"").unwrap();
    let pr = f.finish("pr").await;
    assert_eq!(condition(&pr), ("False", "Cancelled"));
    assert_eq!(condition(&f.taskrun("pr-running")), ("True", "Succeeded"));
    assert_eq!(
        skipped(&pr),
        [(
            "later".to_owned(),
            "PipelineRun was gracefully stopped".to_owned()
        )]
    );
    assert_eq!(condition(&f.taskrun("pr-cleanup")), ("True", "Succeeded"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_end_taskruns_and_pipelineruns() {
    let f = fake("timeouts").await;
    f.submit(
        "task",
        json!({"pipelineSpec": {"tasks": [{"name": "slow", "timeout": "200ms", "retries": 1,
            "taskSpec": {"steps": [sh("s", "sleep 30")]}}]}}),
    );
    f.submit(
        "whole",
        json!({"timeouts": {"pipeline": "300ms"},
            "pipelineSpec": {"tasks": [{"name": "slow", "taskSpec": {"steps": [sh("s", "sleep 30")]}}]}}),
    );
    let task = f.finish("task").await;
    assert_eq!(condition(&task), ("False", "Failed"));
    let slow = f.taskrun("task-slow");
    assert_eq!(condition(&slow), ("False", "TaskRunTimeout"));
    assert_eq!(slow["status"]["retriesStatus"].as_array().unwrap().len(), 1);
    assert_eq!(slow["status"]["podName"], "task-slow-pod-retry1");
    let whole = f.finish("whole").await;
    assert_eq!(condition(&whole), ("False", "PipelineRunTimeout"));
    assert_eq!(
        condition(&f.taskrun("whole-slow")),
        ("False", "TaskRunCancelled")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_controller_kills_its_pods() {
    let f = fake("abort").await;
    f.submit(
        "pr",
        json!({"pipelineSpec": {"tasks": [{"name": "long",
            "taskSpec": {"steps": [sh("s", "echo $$ > /tmp/pid.tmp && mv /tmp/pid.tmp /tmp/pid && exec sleep 60")]}}]}}),
    );
    let pid_file = f.cluster.kubelet.tmp("ns", "pr-long-pod").join("pid");
    // Files make no events: poll.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !pid_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the pod never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    f.controller.abort();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive() {
        assert!(
            std::time::Instant::now() < deadline,
            "the pod outlived its controller"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
