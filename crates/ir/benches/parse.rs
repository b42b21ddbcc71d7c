//! Parse + validate + hash of generated workflows, as a ratio to a plain
//! `serde_json::Value` parse of the same text measured in the same run.
//!
//! Run: `cargo bench -p couler-ir --bench parse`
//! Targets: full path ≤ 4x raw parse at 10k steps; 100k steps ≤ 12x 10k.

use couler_ir::{Format, hash::hashes, load};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A layered DAG of realistic steps: each reads an output of a step in the
/// previous layer, with env, resources, retries and caching set.
fn generate(steps: usize) -> String {
    let width = 50;
    let mut out = String::with_capacity(steps * 420);
    out.push_str(r#"{"apiVersion":"couler.dev/v1alpha1","name":"bench","labels":{"team":"ml"},"parameters":[{"name":"lr","default":"0.01"}],"steps":["#);
    for i in 0..steps {
        if i > 0 {
            out.push(',');
        }
        let read = if i >= width {
            format!(
                r#","--input={{{{steps.s{}.outputs.parameters.out}}}}""#,
                i - width + (i * 7) % width
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            r#"{{"name":"s{i}","container":{{"image":"python:3.12-slim","command":["python3","train.py"],"args":["--lr={{{{workflow.parameters.lr}}}}","--shard={i}"{read}],"env":[{{"name":"SHARD","value":"{i}"}},{{"name":"TOKEN","secret":{{"name":"hf","key":"token"}}}}]}},"resources":{{"cpu":"500m","memory":"1Gi"}},"outputs":{{"parameters":[{{"name":"out","path":"/tmp/out"}}]}},"retry":{{"limit":2,"backoff":{{"duration":"5s"}}}},"timeout":"1h","cache":{{"version":"1"}}}}"#
        ));
    }
    out.push_str("]}");
    out
}

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn full(text: &str) {
    let wf = load(text, Format::Json).expect("generated workflows are valid");
    black_box(hashes(&wf));
}

fn main() {
    let small = generate(10_000);
    let large = generate(100_000);
    full(&small); // warm up and prove validity

    let raw = median(15, || {
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&small)).unwrap());
    });
    let full_small = median(15, || full(black_box(&small)));
    let full_large = median(5, || full(black_box(&large)));

    let vs_raw = full_small.as_secs_f64() / raw.as_secs_f64();
    let growth = full_large.as_secs_f64() / full_small.as_secs_f64();
    let verdict = |ok: bool| if ok { "target met" } else { "TARGET MISSED" };
    println!(
        "document: 10k steps = {} KiB, 100k steps = {} KiB",
        small.len() >> 10,
        large.len() >> 10
    );
    println!("raw serde_json::Value parse, 10k steps : {raw:>10.2?}");
    println!("parse+validate+hash, 10k steps         : {full_small:>10.2?}");
    println!("parse+validate+hash, 100k steps        : {full_large:>10.2?}");
    println!(
        "ratio full/raw (10k)    = {vs_raw:.2}x  (target <= 4x: {})",
        verdict(vs_raw <= 4.0)
    );
    println!(
        "ratio 100k/10k          = {growth:.2}x  (target <= 12x: {})",
        verdict(growth <= 12.0)
    );
}
