//! Compile time of a generated 10,000-step workflow for every engine, and
//! Argo's as a ratio to hera (Argo's Python SDK) building the same Workflow
//! and serializing it to YAML, measured in the same run.
//!
//! Run: `cargo bench -p couler-engines --bench compile`
//! (`COULER_BENCH_ENGINES=kfp` measures only the engines listed.)
//! Targets: every engine compiles 10k steps in under 100 ms; Argo is at
//! least 50x faster than hera.
//!
//! The hera side (`benches/hera_build.py`, run by the Python of
//! `scripts/validate-argo`'s virtualenv) builds the workflow from a JSON
//! description written here, in hera's documented `with` style and with the
//! same objects passed as lists (much faster at this size), times itself
//! without interpreter start-up and imports, and compares each YAML with
//! Couler's Argo manifest. The ratio is taken against the fastest style
//! whose Workflow equals Couler's, so it is never flattered by a slow path.

use couler_engines::RunSpec;
use couler_engines::compile::{ENGINES, compile};
use couler_optimizer::{Facts, Pipeline};
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The allocator Couler's binaries use.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STEPS: usize = 10_000;
/// Steps per layer; each layer reads the ones before it.
const WIDTH: usize = 100;
const SEED: u64 = 0x00C0_FFEE;
/// Timed compiles per engine, after one warm-up.
const RUNS: usize = 7;
const ENGINE_TARGET: Duration = Duration::from_millis(100);
const HERA_TARGET: f64 = 50.0;

const STAGES: &[&str] = &["fetch", "clean", "featurize", "train", "evaluate", "report"];
const IMAGES: &[&str] = &["python:3.12-slim", "alpine:3.20", "ghcr.io/acme/etl:1.4.2"];
const CPUS: &[&str] = &["250m", "500m", "2"];
const MEMORY: &[&str] = &["256Mi", "1Gi", "4Gi"];
const LR: &str = "0.01";

/// SplitMix64: the same workflow on every platform and crate version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }
}

/// One generated step, written out for Couler's IR and for hera alike.
struct Gen {
    name: String,
    stage: &'static str,
    shard: usize,
    image: &'static str,
    script: bool,
    /// Steps whose `out` parameter the step's command line or source reads.
    reads: Vec<String>,
    /// A step it waits for without reading it.
    after: Option<String>,
    /// A condition over the first read step's `out`.
    when: Option<Cond>,
    retry: bool,
    timeout: bool,
    secret: bool,
    cpu: &'static str,
    memory: &'static str,
}

#[derive(Clone, Copy)]
enum Cond {
    Ne(&'static str),
    In(&'static [&'static str]),
}

/// How a step's text spells the learning rate and a read of another
/// step's `out`: Couler's references, or what a hera user writes (the
/// template's input parameter; workflow parameters are resolved by the
/// planner, so Argo gets their value).
struct Spelling {
    lr: &'static str,
    read: fn(&str) -> String,
}

fn ir_read(step: &str) -> String {
    format!("{{{{steps.{step}.outputs.parameters.out}}}}")
}

fn hera_read(step: &str) -> String {
    format!("{{{{inputs.parameters.{step}-out}}}}")
}

fn stage(layer: usize) -> &'static str {
    STAGES[layer * STAGES.len() / (STEPS / WIDTH)]
}

fn step_name(i: usize) -> String {
    format!("{}-{i:05}", stage(i / WIDTH))
}

/// A layered DAG: every step past the first layer reads a step of the
/// layer before (a quarter also one up to three layers back), a third wait
/// for one more step, one in 25 run only on a condition, one in 10 retry,
/// one in 20 have a timeout, one in 5 are Python scripts or use a secret.
fn generate() -> Vec<Gen> {
    let mut rng = Rng(SEED);
    let mut steps = Vec::with_capacity(STEPS);
    for i in 0..STEPS {
        let layer = i / WIDTH;
        let mut reads: Vec<String> = Vec::new();
        let mut after = None;
        let mut when = None;
        if layer > 0 {
            let earlier = |rng: &mut Rng, back: usize| {
                let l = layer - 1 - rng.below(back.min(layer));
                step_name(l * WIDTH + rng.below(WIDTH))
            };
            reads.push(earlier(&mut rng, 1));
            if rng.one_in(4) {
                let r = earlier(&mut rng, 3);
                if !reads.contains(&r) {
                    reads.push(r);
                }
            }
            if rng.one_in(3) {
                let a = earlier(&mut rng, 1);
                if !reads.contains(&a) {
                    after = Some(a);
                }
            }
            if rng.one_in(25) {
                when = Some(if rng.one_in(2) {
                    Cond::Ne("skip")
                } else {
                    Cond::In(&["ok", "partial"])
                });
            }
        }
        steps.push(Gen {
            name: step_name(i),
            stage: stage(layer),
            shard: i % WIDTH,
            image: rng.pick(IMAGES),
            script: rng.one_in(5),
            reads,
            after,
            when,
            retry: rng.one_in(10),
            timeout: rng.one_in(20),
            secret: rng.one_in(5),
            cpu: rng.pick(CPUS),
            memory: rng.pick(MEMORY),
        });
    }
    steps
}

impl Gen {
    fn command(&self) -> Vec<String> {
        if self.script {
            vec!["python3".into()]
        } else {
            vec![
                "python3".into(),
                "-m".into(),
                format!("acme.{}", self.stage),
            ]
        }
    }

    fn args(&self, sp: &Spelling) -> Vec<String> {
        let mut args = vec![format!("--shard={}", self.shard), format!("--lr={}", sp.lr)];
        args.extend(
            self.reads
                .iter()
                .map(|r| format!("--input={}", (sp.read)(r))),
        );
        args
    }

    fn source(&self, sp: &Spelling) -> String {
        let upstream: Vec<String> = self
            .reads
            .iter()
            .map(|r| format!("\"{}\"", (sp.read)(r)))
            .collect();
        format!(
            "import json\n\nupstream = [{}]\nwith open(\"/tmp/out\", \"w\") as f:\n    json.dump({{\"stage\": \"{}\", \"shard\": {}, \"lr\": float(\"{}\"), \"upstream\": upstream}}, f)\n",
            upstream.join(", "),
            self.stage,
            self.shard,
            sp.lr
        )
    }

    fn env(&self) -> Vec<Value> {
        let mut env = vec![json!({"name": "SHARD", "value": self.shard.to_string()})];
        if self.secret {
            env.push(json!({"name": "API_TOKEN", "secret": {"name": "acme-api", "key": "token"}}));
        }
        env
    }

    /// The step in Couler's IR.
    fn ir(&self) -> Value {
        let sp = Spelling {
            lr: "{{workflow.parameters.lr}}",
            read: ir_read,
        };
        let mut step = json!({
            "name": self.name,
            "resources": {"cpu": self.cpu, "memory": self.memory},
            "outputs": {"parameters": [{"name": "out", "path": "/tmp/out"}]},
        });
        if self.script {
            step["script"] = json!({"image": self.image, "command": self.command(), "source": self.source(&sp), "env": self.env()});
        } else {
            step["container"] = json!({"image": self.image, "command": self.command(), "args": self.args(&sp), "env": self.env()});
        }
        if let Some(a) = &self.after {
            step["depends"] = json!([a]);
        }
        if let Some(c) = self.when {
            let input = ir_read(&self.reads[0]);
            step["when"] = match c {
                Cond::Ne(v) => json!([{"input": input, "operator": "ne", "value": v}]),
                Cond::In(vs) => json!([{"input": input, "operator": "in", "values": vs}]),
            };
        }
        if self.retry {
            step["retry"] = json!({"limit": 2, "backoff": {"duration": "10s", "factor": 2}});
        }
        if self.timeout {
            step["timeout"] = json!("1h");
        }
        step
    }

    /// The step as hera_build.py reads it: what a hera user would write.
    fn hera(&self) -> Value {
        let sp = Spelling {
            lr: LR,
            read: hera_read,
        };
        let mut depends = self.reads.clone();
        depends.extend(self.after.clone());
        let mut step = json!({
            "name": self.name,
            "image": self.image,
            "command": self.command(),
            "env": self.env(),
            "cpu": self.cpu,
            "memory": self.memory,
            "reads": self.reads,
            "depends": depends,
            "outputs": [{"name": "out", "path": "/tmp/out"}],
        });
        if self.script {
            step["source"] = json!(self.source(&sp));
        } else {
            step["args"] = json!(self.args(&sp));
        }
        if let Some(c) = self.when {
            let (op, values) = match c {
                Cond::Ne(v) => ("ne", vec![v]),
                Cond::In(vs) => ("in", vs.to_vec()),
            };
            step["when"] =
                json!({"step": self.reads[0], "param": "out", "op": op, "values": values});
        }
        if self.retry {
            step["retry"] = json!({"limit": 2, "backoff": "10s", "factor": 2});
        }
        if self.timeout {
            step["timeoutSeconds"] = json!(3600);
        }
        step
    }
}

fn ir(steps: &[Gen]) -> Value {
    json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "nightly-etl",
        "description": "Generated 10,000-step layered DAG for the compile benchmark.",
        "labels": {"team": "data"},
        "parameters": [{"name": "lr", "default": LR}],
        "steps": steps.iter().map(Gen::ir).collect::<Vec<_>>(),
    })
}

/// The workflow for hera: the steps, plus the run's names and labels taken
/// from Couler's Argo manifest (they come from the run, not the DAG).
fn hera_shape(steps: &[Gen], argo: &Value) -> Value {
    json!({
        "metadata": argo["metadata"],
        "entrypoint": argo["spec"]["entrypoint"],
        "parameters": argo["spec"]["arguments"]["parameters"],
        "podLabels": argo["spec"]["podMetadata"]["labels"],
        "steps": steps.iter().map(Gen::hera).collect::<Vec<_>>(),
    })
}

/// Median of `runs` timings of `f`; dropping its result is not timed.
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let out = black_box(f());
            let took = start.elapsed();
            drop(out);
            took
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

/// The last lines of a process's stderr, for a one-line reason.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" | ")
}

/// Runs hera_build.py on the workflow; its JSON report, or why it could
/// not run.
fn hera(root: &Path, dir: &Path, shape: &Value, argo_yaml: &Path) -> Result<Value, String> {
    let setup = Command::new(root.join("scripts/validate-argo"))
        .arg("--setup")
        .output()
        .map_err(|e| format!("could not run scripts/validate-argo --setup: {e}"))?;
    if !setup.status.success() {
        return Err(format!(
            "scripts/validate-argo --setup failed: {}",
            tail(&setup.stderr)
        ));
    }
    let shape_path = dir.join("hera-shape.json");
    let text = serde_json::to_vec(shape).map_err(|e| e.to_string())?;
    std::fs::write(&shape_path, text)
        .map_err(|e| format!("could not write {}: {e}", shape_path.display()))?;
    let python = root.join(".tools/venv-argo/bin/python");
    let out = Command::new(&python)
        .arg(root.join("crates/engines/benches/hera_build.py"))
        .arg(&shape_path)
        .arg(argo_yaml)
        .arg(dir.join("hera-workflow.yaml"))
        .output()
        .map_err(|e| format!("could not run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!("hera_build.py failed: {}", tail(&out.stderr)));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| format!("hera_build.py printed {line:?}: {e}"))
}

/// Prints hera's timings per style and Argo's ratio to the fastest style
/// whose Workflow equals Couler's (to the fastest overall, flagged, if none
/// does).
fn report_hera(h: &Value, argo: Duration) {
    println!(
        "hera {} (Python {}), build + to_yaml, median of {}:",
        h["hera"].as_str().unwrap_or("?"),
        h["python"].as_str().unwrap_or("?"),
        h["runs"]
    );
    let styles = h["styles"].as_object().cloned().unwrap_or_default();
    let mut fastest: Option<(&str, f64, bool)> = None;
    for (style, r) in &styles {
        let total = r["median_ms"].as_f64().unwrap_or(f64::NAN);
        let differences = r["differences"].as_u64().unwrap_or(u64::MAX);
        let equal = differences == 0;
        println!(
            "  {style:<8} build {:>6.0} ms + to_yaml {:>6.0} ms = {:>6.0} ms (runs {}), {:.2} MB, {}",
            r["build_ms"].as_f64().unwrap_or(f64::NAN),
            r["yaml_ms"].as_f64().unwrap_or(f64::NAN),
            total,
            r["runs_ms"],
            r["yaml_mb"].as_f64().unwrap_or(f64::NAN),
            if equal {
                "equal to Couler's Argo manifest".to_owned()
            } else {
                format!("DIFFERS from Couler's Argo manifest in {differences} place(s), e.g.:")
            }
        );
        for e in r["examples"].as_array().into_iter().flatten() {
            println!("    {}", e.as_str().unwrap_or_default());
        }
        let better = match fastest {
            None => true,
            Some((_, t, eq)) => (equal, -total) > (eq, -t),
        };
        if better {
            fastest = Some((style, total, equal));
        }
    }
    println!(
        "  (compared as parsed YAML: templates, tasks and parameters matched by name, `depends` terms as a set)"
    );
    let Some((style, hera_ms, equal)) = fastest else {
        println!("argo vs hera: not measured (hera_build.py reported no style)");
        return;
    };
    let ratio = hera_ms / ms(argo);
    let caveat = if equal {
        ""
    } else {
        " (workflows differ; indicative only)"
    };
    println!(
        "argo vs hera ({style}): {ratio:.1}x faster (target >= {HERA_TARGET}x): {}{caveat}",
        verdict(ratio >= HERA_TARGET)
    );
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compile-bench");
    std::fs::create_dir_all(&dir).expect("the bench's scratch directory");

    let steps = generate();
    let doc = ir(&steps);
    let ir_bytes = serde_json::to_string(&doc).map_or(0, |t| t.len());
    let started = Instant::now();
    let workflow = couler_ir::load_value(doc, &couler_ir::Limits::default())
        .unwrap_or_else(|p| panic!("the generated workflow is invalid: {p}"));
    let plan = Pipeline::default()
        .plan(workflow, &Facts::default(), |_, f| f())
        .expect("the generated workflow plans");
    let planned = started.elapsed();
    let run = RunSpec::new("tnt_bench", "run_bench", 1);
    let mb = |bytes: usize| bytes as f64 / 1e6;

    println!(
        "workflow: {STEPS} steps in {} layers of {WIDTH} (seed {SEED:#x}), IR {:.2} MB JSON; loaded and planned in {:.0} ms (not timed)",
        STEPS / WIDTH,
        mb(ir_bytes),
        ms(planned)
    );
    println!(
        "{:<8} {:>22} {:>10}  target < {} ms",
        "engine",
        format!("compile ms (median/{RUNS})"),
        "output MB",
        ENGINE_TARGET.as_millis()
    );
    let mut argo = None;
    // `COULER_BENCH_ENGINES=kfp,tekton` measures only those (for profiling).
    let only = std::env::var("COULER_BENCH_ENGINES").ok();
    let chosen = |e: &str| only.as_deref().is_none_or(|o| o.split(',').any(|x| x == e));
    for &engine in ENGINES.iter().filter(|e| chosen(e)) {
        // Warm-up, and the output measured.
        let manifest = compile(engine, &plan, &run).unwrap_or_else(|e| panic!("{engine}: {e}"));
        let bytes: usize = manifest.files.iter().map(|f| f.content.len()).sum();
        let took = median(RUNS, || compile(engine, black_box(&plan), &run));
        println!(
            "{engine:<8} {:>22.1} {:>10.2}  {}",
            ms(took),
            mb(bytes),
            verdict(took < ENGINE_TARGET)
        );
        if engine == "argo" {
            argo = Some((took, manifest.files[0].content.clone()));
        }
    }
    let Some((argo_took, argo_yaml)) = argo else {
        println!("argo vs hera: not measured (no argo engine)");
        return;
    };

    let argo_path = dir.join("couler-argo-workflow.yaml");
    std::fs::write(&argo_path, &argo_yaml).expect("the Argo manifest written");
    let options = serde_saphyr::options! { budget: None };
    let argo_value: Value = serde_saphyr::from_str_with_options(&argo_yaml, options)
        .expect("Couler's Argo manifest reads back");
    match hera(&root, &dir, &hera_shape(&steps, &argo_value), &argo_path) {
        Err(why) => {
            println!("hera: NOT MEASURED: {why}");
            println!("argo vs hera: not measured (target >= {HERA_TARGET}x)");
        }
        Ok(h) => report_hera(&h, argo_took),
    }
    println!("files: {}", dir.display());
}
