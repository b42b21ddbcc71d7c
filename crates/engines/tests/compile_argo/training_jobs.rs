//! Training steps become Kubeflow training-operator resources.

use super::*;

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
    let master = &specs["Master"]["template"]["spec"]["containers"][0];
    assert_eq!(master["image"], "pytorch/pytorch:2.3.0");
    let worker = &specs["Worker"]["template"]["spec"]["containers"][0];
    assert_eq!(worker["name"], "pytorch");
    // A role's own image wins over the job's.
    assert_eq!(
        worker["image"],
        "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"
    );
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
    // Each role's command and args: the job's, its own args, its own command.
    let container = |role: &str| specs[role]["template"]["spec"]["containers"][0].clone();
    assert_eq!(container("Chief")["command"], json!(["python", "train.py"]));
    assert_eq!(container("Chief")["args"], json!(["--role=chief"]));
    assert_eq!(
        container("Worker")["command"],
        json!(["python", "train.py"])
    );
    assert_eq!(container("Worker")["args"], json!(["--role=worker"]));
    assert_eq!(container("PS")["command"], json!(["python", "ps.py"]));
    assert!(container("PS").get("args").is_none());

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
        "couler-secret-wandb"
    );
    // Hints go to the job's pods, not to the pod that creates the job.
    assert!(t.get("nodeSelector").is_none());
}
