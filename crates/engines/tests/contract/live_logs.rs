//! A running step's log read as it grows (`logs_since`), through the same
//! cursor from the step's first line to its end.

use super::*;
use couler_engines::LogCursor;

/// `talk` says `first`, waits for the file `go`, then says `second`.
const TALK_SLOWLY: &str = r#"
apiVersion: couler.dev/v1alpha1
name: talk-slowly
steps:
  - name: talk
    container: {image: alpine, command: [sh, -c, "echo first; while [ ! -e @S@/go ]; do sleep 0.05; done; echo second"]}
"#;

/// Reads through `cursor` until the text read contains `wanted` (a read
/// may fail while the engine has no log for the step yet).
async fn read_until(
    engine: &dyn EngineAdapter,
    spec: &RunSpec,
    at: &str,
    cursor: &mut LogCursor,
    text: &mut String,
    wanted: &str,
) {
    let deadline = Instant::now() + RUN_LIMIT;
    let mut last_error = None;
    while !text.contains(wanted) {
        assert!(
            Instant::now() < deadline,
            "{wanted:?} never came; read {text:?}, last error {last_error:?}"
        );
        match engine.logs_since(spec, at, "talk", cursor).await {
            Ok(new) => text.push_str(&new),
            Err(e) => last_error = Some(e.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn a_running_steps_log_is_read_as_it_grows(h: &Harness) {
    let s = h.scratch("live-log");
    let spec = h.run_spec("live-log");
    let engine = (h.engine)();
    let mut started = engine
        .start(&spec, plan(&s.yaml(TALK_SLOWLY)), vec![])
        .await
        .expect("start");
    let seen = watch(&mut started.updates, |st| {
        st.name == "talk" && st.phase == StepPhase::Running
    })
    .await;
    let at = started.engine_ref.clone();
    let mut cursor = LogCursor::new(0);
    let mut text = String::new();
    read_until(&*engine, &spec, &at, &mut cursor, &mut text, "first\n").await;
    // Engines may add lines of their own (Airflow's task log does).
    assert!(
        !text.contains("second"),
        "read before the step could say more: {text:?}"
    );
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut started.updates, seen).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    // The same cursor takes the rest, and nothing twice.
    read_until(&*engine, &spec, &at, &mut cursor, &mut text, "second\n").await;
    assert_eq!(text.matches("first\n").count(), 1, "{text:?}");
    assert_eq!(text.matches("second\n").count(), 1, "{text:?}");
    assert!(text.find("first\n") < text.find("second\n"), "{text:?}");
}
