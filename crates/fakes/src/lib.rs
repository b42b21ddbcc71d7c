//! Stand-ins for the control planes of engines that cannot run on a test
//! machine (there is no Kubernetes cluster here), faithful to the shapes
//! the engines document so that Couler's adapters talk to them exactly as
//! they would to the real thing:
//!
//! - [`kube`]: a Kubernetes API server for custom resources (create, get,
//!   list, watch, merge-patch, delete) and pod logs;
//! - [`kubelet`]: runs a container's command as a local process with a
//!   private `/tmp`, the way a pod has its own filesystem (images are not
//!   pulled: the command must exist on this machine);
//! - controllers that play Argo Workflows and Tekton Pipelines over those,
//!   and a Kubeflow Pipelines `v2beta1` REST server.
//!
//! Beside them, [`s3`] runs a real S3-compatible server over a directory
//! (the fake KFP's MinIO bucket, say).

pub mod argo;
mod cel;
pub mod kfp;
pub mod kube;
pub mod kubelet;
pub mod s3;
pub mod tekton;

/// A name no other test of this machine uses now: time, process and a
/// counter (tests start side by side within one clock tick).
pub fn uuid_like() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{:x}_{:x}_{n:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
        std::process::id()
    )
}
