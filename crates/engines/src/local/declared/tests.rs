use super::*;
use serde_json::json;

/// A step declaring `inputs` (name, path) and output `parameters` and
/// `artifacts`.
fn step(inputs: &[(&str, &str)], parameters: &[(&str, &str)], artifacts: &[(&str, &str)]) -> Step {
    let named = |list: &[(&str, &str)]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|(name, path)| json!({"name": name, "path": path}))
            .collect()
    };
    let inputs: Vec<serde_json::Value> = inputs
        .iter()
        .map(|(name, path)| json!({"name": name, "path": path, "from": "{{steps.a.outputs.artifacts.x}}"}))
        .collect();
    serde_json::from_value(json!({
        "name": "s",
        "container": {"image": "x", "command": ["true"]},
        "inputs": {"artifacts": inputs},
        "outputs": {"parameters": named(parameters), "artifacts": named(artifacts)},
    }))
    .expect("a step")
}

fn reserved<'a>(mounts: &'a [HostMount], spare_binds: usize) -> Reserved<'a> {
    Reserved {
        system: crate::local::sandbox::SYSTEM,
        data_dir: Path::new("/var/lib/couler"),
        mounts,
        spare_binds,
    }
}

fn p(path: &str) -> PathBuf {
    PathBuf::from(path)
}

#[test]
fn declared_paths_live_in_the_work_directorys_mirror_in_the_sandbox() {
    let s = step(
        &[("data", "/data/in.csv")],
        &[("p", "/mnt/hello_world.txt"), ("q", "/mnt//q.txt")],
        &[("model", "/mnt/out/model"), ("log", "/result.txt")],
    );
    let files = Files::new(Path::new("/d/s/1"), &s, true);
    assert_eq!(files.input("data"), p("/d/s/1/work/paths/data/in.csv"));
    assert_eq!(
        files.parameter("p"),
        p("/d/s/1/work/paths/mnt/hello_world.txt")
    );
    assert_eq!(files.parameter("q"), p("/d/s/1/work/paths/mnt/q.txt"));
    assert_eq!(
        files.artifact("model"),
        p("/d/s/1/work/paths/mnt/out/model")
    );
    // /mnt/out is part of /mnt: one directory each for /data and /mnt.
    assert_eq!(
        files.binds,
        vec![
            (p("/d/s/1/work/paths/data"), p("/data")),
            (p("/d/s/1/work/paths/mnt"), p("/mnt")),
        ]
    );
    assert_eq!(
        files.dirs,
        vec![
            p("/d/s/1/work/paths/data"),
            p("/d/s/1/work/paths/mnt"),
            p("/d/s/1/work/paths/mnt/out"),
        ]
    );
    // A file in `/` is a link to its host file.
    assert_eq!(
        files.links,
        vec![(p("/d/s/1/work/paths/result.txt"), p("/result.txt"))]
    );
    assert_eq!(
        files.host_of(Path::new("/mnt/out/sub")),
        Some(p("/d/s/1/work/paths/mnt/out/sub"))
    );
    assert_eq!(files.host_of(Path::new("/opt/app")), None);
    assert!(files.refusals(&reserved(&[], 6)).is_empty());
}

#[test]
fn without_the_sandbox_references_keep_the_work_directory_layout() {
    let s = step(
        &[("data", "/data/in.csv")],
        &[("p", "/mnt/p.txt")],
        &[("m", "/mnt/m")],
    );
    let files = Files::new(Path::new("/d/s/1"), &s, false);
    assert_eq!(files.input("data"), p("/d/s/1/work/inputs/data"));
    assert_eq!(files.parameter("p"), p("/d/s/1/work/outputs/parameters/p"));
    assert_eq!(files.artifact("m"), p("/d/s/1/work/outputs/artifacts/m"));
    assert!(files.binds.is_empty() && files.links.is_empty() && files.dirs.is_empty());
    // A name the step does not declare keeps that layout too.
    let shown = Files::new(Path::new("/d/s/1"), &s, true);
    assert_eq!(
        shown.parameter("other"),
        p("/d/s/1/work/outputs/parameters/other")
    );
}

#[test]
fn paths_the_sandbox_gives_a_meaning_of_its_own_are_refused_by_name() {
    let mounts = [HostMount {
        path: p("/srv/datasets"),
        writable: false,
    }];
    let refused = |path: &str| {
        let files = Files::new(Path::new("/d"), &step(&[], &[("p", path)], &[]), true);
        files.refusals(&reserved(&mounts, 5))
    };
    for (path, why) in [
        (
            "/etc/app/conf",
            "/etc/app is in /etc, the host's, shown read only",
        ),
        ("/usr/local/out.txt", "is in /usr, the host's"),
        ("/lib/x", "/lib is the host's"),
        ("/proc/self/x", "/proc/self is in /proc, the kernel's"),
        ("/dev/shm/x", "the kernel's"),
        ("/sys/x/y", "the kernel's"),
        (
            "/var/lib/couler/cas/x",
            "is in /var/lib/couler, the engine's data directory",
        ),
        (
            "/srv/datasets/out/x",
            "is in /srv/datasets, a host directory every step sees",
        ),
        ("/tmp", "/tmp is the step's private temporary directory"),
        (
            "/var",
            "/var holds /var/lib/couler, the engine's data directory",
        ),
        ("/usr", "/usr is the host's, shown read only"),
        ("/mnt/../etc/x", "not a plain absolute path"),
    ] {
        let problems = refused(path);
        assert_eq!(problems.len(), 1, "{path}: {problems:?}");
        assert!(
            problems[0].starts_with(&format!("output parameter `p` at {path}: ")),
            "{path}: {problems:?}"
        );
        assert!(problems[0].contains(why), "{path}: {problems:?}");
    }
    // Directories above the data directory or a mount, and /tmp, can be
    // shown: they are bound first, the work directory and mounts on top.
    for path in [
        "/var/out.txt",
        "/srv/x.txt",
        "/tmp/out.txt",
        "/tmp/a/b.txt",
        "/mnt/x",
    ] {
        assert_eq!(refused(path), Vec::<String>::new(), "{path}");
    }
    // A file in `/` that another path makes a directory.
    let files = Files::new(
        Path::new("/d"),
        &step(&[], &[("p", "/out"), ("q", "/out/q.txt")], &[]),
        true,
    );
    let problems = files.refusals(&reserved(&[], 6));
    assert_eq!(
        problems,
        vec!["output parameter `p` at /out: /out is also a declared directory".to_owned()]
    );
}

#[test]
fn a_plan_is_refused_naming_each_step_and_the_bind_budget_holds() {
    let mut good = step(&[], &[("p", "/mnt/p")], &[]);
    good.name = "good".into();
    let mut bad = step(&[("i", "/etc/in")], &[], &[]);
    bad.name = "bad".into();
    assert_eq!(
        refusals(&[&good, &bad], &reserved(&[], 6)),
        vec![
            "step `bad`: input artifact `i` at /etc/in: /etc is the host's, shown read only"
                .to_owned()
        ]
    );
    let spread = step(&[], &[("a", "/a/x"), ("b", "/b/x"), ("c", "/c/x")], &[]);
    let files = Files::new(Path::new("/d"), &spread, true);
    assert!(files.refusals(&reserved(&[], 3)).is_empty());
    let problems = files.refusals(&reserved(&[], 2));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("lie in 3 directories (/a, /b, /c)")
            && problems[0].contains("at most 2"),
        "{problems:?}"
    );
}
