//! The contract's secret case: a run's tenant secrets reach the steps that
//! read them, as the environment variables they name, and no other step.

use super::{Harness, plan, run};
use couler_engines::{RunOutcome, SecretValues, StepPhase};
use secrecy::SecretString;
use std::collections::BTreeMap;

/// The value the case's secret holds.
pub const TOKEN: &str = "s3cr3t-contract-token";

/// `hub` with keys `token` (read) and `unread`.
pub fn hub_secret() -> SecretValues {
    SecretValues::new(BTreeMap::from([(
        "hub".to_owned(),
        BTreeMap::from([
            ("token".to_owned(), SecretString::from(TOKEN)),
            ("unread".to_owned(), SecretString::from("never-read")),
        ]),
    )]))
}

pub async fn secrets_reach_the_steps_that_read_them(h: &Harness) {
    let engine = (h.engine)();
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: secrets
steps:
  - name: reads
    container:
      image: alpine
      command: [sh, -c, 'echo "token=$HUB_TOKEN"']
      env:
        - {name: HUB_TOKEN, secret: {name: hub, key: token}}
  - name: other
    container: {image: alpine, command: [sh, -c, 'echo "token=${HUB_TOKEN:-unset}"']}
"#,
    );
    let mut spec = h.run_spec("secrets");
    spec.secrets = hub_secret();
    let r = run(&*engine, &spec, plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("reads", StepPhase::Succeeded),
        ("other", StepPhase::Succeeded),
    ]);
    assert_eq!(r.result("reads"), format!("token={TOKEN}"));
    assert_eq!(r.result("other"), "token=unset");
}
