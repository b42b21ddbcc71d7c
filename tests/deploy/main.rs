//! The deployment files — `Dockerfile`, `docker-compose.yml` and the
//! kustomize overlays under `deploy/kubernetes` — checked against the code.
//! No container runtime or cluster runs here, so the files are read as
//! docker-compose and `kubectl kustomize` render them
//! (`scripts/check-deploy --render`), then:
//! - `static_checks`: every binary, subcommand, flag, port, probe, path and
//!   environment variable they name is one the built binaries have;
//! - `run`: the binaries started exactly as compose and the dev overlay
//!   start them run `examples/diamond.yaml` to success.

mod binaries;
mod files;
mod run;
mod static_checks;
