//! The web portal in Debian's Chromium (driven by `playwright-core` from
//! `portal/e2e/`) against the real services: `couler-api` serving the
//! built portal and a `couler-scheduler` running steps on the local engine.
//! Two tenants, a token per role. The flows save screenshots under
//! `target/e2e-shots/`. Needs the portal built (`scripts/portal-build`,
//! which `scripts/test` runs first) and Chromium (`scripts/test` installs
//! it); set `COULER_SKIP_BROWSER=1` to skip.

use couler_tests::{Couler, repo_root, token};
use serde_json::json;
use std::process::Command;

#[test]
fn the_portal_flows_pass_in_a_real_browser() {
    if std::env::var_os("COULER_SKIP_BROWSER").is_some() {
        eprintln!("COULER_SKIP_BROWSER is set: not running the browser flows");
        return;
    }
    let root = repo_root();
    let portal = root.join("portal");
    assert!(
        portal.join("dist/index.html").is_file() && portal.join("node_modules").is_dir(),
        "the portal is not built: run scripts/portal-build (scripts/test does)"
    );
    let couler = Couler::start();
    let _scheduler = couler.scheduler("portal");
    let (tenant, editor) = couler.tenant("portal");
    let (_, other) = couler.tenant("portal-other");
    let role =
        |r: &str| token(json!({"sub": format!("{r}@portal"), "tenant": tenant, "roles": [r]}));
    let out = Command::new("node")
        .args(["--test", "--test-concurrency=1", "e2e/"])
        .current_dir(&portal)
        .env("COULER_URL", &couler.base)
        .env("COULER_TOKEN_EDITOR", &editor)
        .env("COULER_TOKEN_ADMIN", role("admin"))
        .env("COULER_TOKEN_VIEWER", role("viewer"))
        .env("COULER_TOKEN_OTHER", &other)
        .env("COULER_SHOTS", root.join("target/e2e-shots"))
        .output()
        .expect("node runs");
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "browser flows failed:\n{report}\n--- service logs ---\n{}",
        couler.service_logs()
    );
}
