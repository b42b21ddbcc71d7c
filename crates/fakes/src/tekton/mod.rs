//! A Tekton Pipelines (`tekton.dev/v1`) controller over the fake cluster.
//!
//! [`spawn`] runs two controllers, as Tekton does: the PipelineRun
//! controller ([`pipelinerun`]) walks the pipeline and creates TaskRuns;
//! the TaskRun controller ([`taskrun`]) runs each TaskRun's steps as one
//! pod through the kubelet. They talk only through the store, so adapters
//! see exactly the objects a real cluster holds: `PipelineRun`s with
//! `conditions`, `childReferences` and `skippedTasks`, `TaskRun`s named
//! `<pipelinerun>-<task>` (matrix: `-0`, `-1`, …) labelled
//! `tekton.dev/pipelineRun` / `tekton.dev/pipelineTask`, and pods
//! `<taskrun>-pod` whose logs the API server serves.
//!
//! Differences from Tekton: images are not pulled (step commands must
//! exist on this machine); steps of one TaskRun share the pod's `/tmp`,
//! and their logs are one stream; feature flags are not checked (matrix
//! and CEL `when` always work); workspaces bound to a claim or a
//! `volumeClaimTemplate` are host directories under the kubelet's root,
//! which therefore must not be under `/tmp` (pods see their own `/tmp`).

mod children;
pub mod pipelinerun;
pub mod taskrun;
pub mod vars;

#[cfg(test)]
mod tests;

use crate::kube::{Cluster, Resource};

pub fn pipelineruns() -> Resource {
    Resource::new("tekton.dev", "v1", "pipelineruns")
}

pub fn pipelines() -> Resource {
    Resource::new("tekton.dev", "v1", "pipelines")
}

pub fn taskruns() -> Resource {
    Resource::new("tekton.dev", "v1", "taskruns")
}

pub fn tasks() -> Resource {
    Resource::new("tekton.dev", "v1", "tasks")
}

pub fn pods() -> Resource {
    Resource::new("", "v1", "pods")
}

/// Starts the controllers; aborting the handle stops them and every run
/// they drive (pods already started are left to the kubelet).
pub fn spawn(cluster: &Cluster) -> tokio::task::JoinHandle<()> {
    let (store, kubelet) = (cluster.store.clone(), cluster.kubelet.clone());
    tokio::spawn(async move {
        tokio::join!(
            pipelinerun::control(store.clone()),
            taskrun::control(store, kubelet)
        );
    })
}
