//! Deployment files are checked offline (no Docker engine here): the
//! compose file parses and is internally consistent, and the Dockerfile's
//! stages and packages exist.

use couler_tests::{read_yaml, repo_root};
use std::collections::HashSet;

#[test]
fn compose_file_is_consistent() {
    let compose = read_yaml("docker-compose.yml");
    let services = compose["services"].as_object().expect("services mapping");
    let image = |name: &str| {
        services[name]["image"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(image("postgres").starts_with("postgres:16"), "Postgres 16");
    assert!(image("redis").starts_with("redis:7"), "Redis 7");
    assert!(services.contains_key("api"), "the API service");
    let api_env = services["api"]["environment"]
        .as_object()
        .expect("api environment");
    assert!(
        api_env["DATABASE_URL"]
            .as_str()
            .unwrap()
            .contains("@postgres:5432/")
    );
    assert!(
        api_env["REDIS_URL"]
            .as_str()
            .unwrap()
            .contains("redis:6379")
    );

    let volumes: HashSet<&str> = compose["volumes"]
        .as_object()
        .map(|v| v.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for (name, service) in services {
        assert!(
            service.get("image").is_some() || service.get("build").is_some(),
            "{name} needs an image or a build"
        );
        if let Some(deps) = service["depends_on"].as_object() {
            for dep in deps.keys() {
                assert!(
                    services.contains_key(dep),
                    "{name} depends on unknown service {dep}"
                );
            }
        }
        for mount in service["volumes"].as_array().into_iter().flatten() {
            let source = mount.as_str().unwrap().split(':').next().unwrap();
            if !source.starts_with('.') && !source.starts_with('/') {
                assert!(
                    volumes.contains(source),
                    "{name} mounts undeclared volume {source}"
                );
            }
        }
        if let Some(build) = service.get("build") {
            let dockerfile = build["dockerfile"].as_str().unwrap_or("Dockerfile");
            assert!(
                repo_root().join(dockerfile).exists(),
                "{name} builds from missing {dockerfile}"
            );
        }
    }
}

#[test]
fn dockerfile_stages_and_packages_exist() {
    let text = std::fs::read_to_string(repo_root().join("Dockerfile")).unwrap();
    let mut stages = Vec::new();
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["FROM", _, "AS", name] => stages.push(name.to_string()),
            ["COPY", from, ..] if from.starts_with("--from=") => {
                let stage = &from["--from=".len()..];
                assert!(
                    stages.iter().any(|s| s == stage),
                    "COPY from unknown stage {stage}"
                );
            }
            _ => {}
        }
    }
    assert!(stages.len() >= 2, "a multi-stage build");

    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    for package in text
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[0] == "-p" && w[1].starts_with("couler-"))
        .map(|w| w[1])
    {
        let dir = package.trim_start_matches("couler-");
        let member = ["crates/", "services/"]
            .iter()
            .any(|p| manifest.contains(&format!("\"{p}{dir}\"")));
        assert!(
            member,
            "Dockerfile builds {package}, which is not a workspace member"
        );
    }
}
