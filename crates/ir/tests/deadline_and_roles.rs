//! The workflow's deadline (`timeout`) and a training job's per-role
//! image, command and args: how they read, validate, hash and resolve.

use couler_ir::hash::canonical_json;
use couler_ir::{Code, Format, load};

const HEAD: &str = "apiVersion: couler.dev/v1alpha1\nname: w\n";

fn doc(body: &str) -> String {
    format!("{HEAD}{body}")
}

const STEP: &str = "steps: [{name: s, container: {image: a, command: [sh]}}]\n";

const JOB: &str = "steps:
  - name: train
    job:
      framework: pytorch
      image: trainer:1
      command: [python, train.py]
      replicas:
        master: {count: 1}
        worker:
          count: 2
          image: trainer-gpu:1
          command: [python, worker.py]
          args: ['--rank={{workflow.parameters.rank}}']
parameters: [{name: rank, default: '0'}]
";

#[test]
fn a_workflow_deadline_reads_as_a_duration_within_thirty_days() {
    let wf = load(&doc(&format!("timeout: 1h\n{STEP}")), Format::Yaml).unwrap();
    assert_eq!(wf.timeout.unwrap().as_std().as_secs(), 3600);
    let wf = load(&doc(&format!("timeout: 90\n{STEP}")), Format::Yaml).unwrap();
    assert_eq!(wf.timeout.unwrap().as_std().as_secs(), 90);
    for bad in ["0", "31d"] {
        let p = load(&doc(&format!("timeout: {bad}\n{STEP}")), Format::Yaml).unwrap_err();
        assert!(
            p.iter()
                .any(|p| p.path == "/timeout" && p.code == Code::OutOfRange),
            "{bad}: {p}"
        );
    }
}

#[test]
fn new_fields_stay_out_of_the_canonical_form_when_unset() {
    // Exactly what the canonical form was before the fields existed, so
    // that stored workflows keep their content hashes.
    let wf = load(
        &doc("steps:\n  - name: t\n    job: {framework: mpi, image: m, command: [run], replicas: {launcher: {count: 1}, worker: {count: 2}}}\n"),
        Format::Yaml,
    )
    .unwrap();
    assert_eq!(
        canonical_json(&wf),
        r#"{"apiVersion":"couler.dev/v1alpha1","name":"w","steps":[{"name":"t","job":{"framework":"mpi","image":"m","command":["run"],"replicas":{"launcher":{"count":1},"worker":{"count":2}}}}]}"#
    );
    let timed = load(&doc(&format!("timeout: 2h\n{STEP}")), Format::Yaml).unwrap();
    assert!(canonical_json(&timed).ends_with(r#""timeout":"2h"}"#));
}

#[test]
fn roles_run_their_own_image_and_command() {
    let wf = load(&doc(JOB), Format::Yaml).unwrap();
    let job = wf.steps[0].job.as_ref().unwrap();
    assert_eq!(job.leader(), "master");
    assert_eq!(job.image_of("master"), "trainer:1");
    assert_eq!(job.image_of("worker"), "trainer-gpu:1");
    let (command, args) = job.argv_of("master");
    assert_eq!((command, args), (&job.command[..], &[][..]));
    let (command, args) = job.argv_of("worker");
    assert_eq!(command, ["python", "worker.py"]);
    assert_eq!(args, ["--rank={{workflow.parameters.rank}}"]);
    assert_eq!(wf.steps[0].images(), ["trainer:1", "trainer-gpu:1"]);
}

#[test]
fn mpi_workers_run_only_what_they_set() {
    let wf = load(
        &doc("steps:\n  - name: t\n    job: {framework: mpi, image: m, command: [mpirun, x], replicas: {launcher: {count: 1}, worker: {count: 2, args: [-d]}}}\n"),
        Format::Yaml,
    )
    .unwrap();
    let job = wf.steps[0].job.as_ref().unwrap();
    assert_eq!(job.argv_of("launcher").0, ["mpirun", "x"]);
    let (command, args) = job.argv_of("worker");
    assert!(command.is_empty());
    assert_eq!(args, ["-d"]);
}

#[test]
fn role_fields_are_validated_with_their_paths() {
    let p = load(
        &doc("steps:\n  - name: t\n    job: {framework: pytorch, image: m, replicas: {worker: {count: 1, image: 'a b', args: ['{{steps.nope.outputs.result}}']}}}\n"),
        Format::Yaml,
    )
    .unwrap_err();
    assert!(
        p.iter().any(|p| p.path == "/steps/0/job/replicas/worker/image"
            && p.code == Code::InvalidValue),
        "{p}"
    );
    assert!(
        p.iter()
            .any(|p| p.path == "/steps/0/job/replicas/worker/args/0"),
        "{p}"
    );
}
