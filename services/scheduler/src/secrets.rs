//! The tenant secrets a run's steps read, opened for the engine that
//! delivers them: only the secrets the steps name (each with all its keys,
//! as a Kubernetes Secret mirrors the whole version), only when the run is
//! driven, and a run reading a secret or key its tenant lacks fails before
//! any step starts, naming the step and the secret. The local engine gives
//! each step only the keys it names.

use crate::Context;
use couler_engines::SecretValues;
use couler_ir::Workflow;
use couler_store::TenantId;
use std::collections::BTreeSet;

/// One step's read of a secret key.
struct Read<'a> {
    step: &'a str,
    name: &'a str,
    key: &'a str,
}

fn reads(workflow: &Workflow) -> Vec<Read<'_>> {
    workflow
        .steps
        .iter()
        .chain(&workflow.on_exit)
        .flat_map(|step| {
            step.env().iter().filter_map(move |var| {
                let secret = var.secret.as_ref()?;
                Some(Read {
                    step: &step.name,
                    name: &secret.name,
                    key: &secret.key,
                })
            })
        })
        .collect()
}

/// The values `workflow`'s steps read; `Ok(Err(message))` when the run
/// cannot have them (the run fails with that message).
pub(crate) async fn for_run(
    ctx: &Context,
    tenant: TenantId,
    workflow: &Workflow,
) -> anyhow::Result<Result<SecretValues, String>> {
    let reads = reads(workflow);
    if reads.is_empty() {
        return Ok(Ok(SecretValues::default()));
    }
    let Some(keyring) = &ctx.keyring else {
        return Ok(Err(format!(
            "step `{}` reads secret `{}`, but this scheduler has no [secrets] keys to open tenant secrets with",
            reads[0].step, reads[0].name
        )));
    };
    let names: Vec<String> = reads
        .iter()
        .map(|r| r.name.to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut tx = ctx.store.tenant(tenant).await?;
    let revealed = couler_store::secrets::reveal(&mut tx, keyring, tenant, &names).await?;
    tx.commit().await?;
    let mut problems = Vec::new();
    for read in &reads {
        let has = revealed
            .secrets
            .get(read.name)
            .is_some_and(|keys| keys.contains_key(read.key));
        if has {
            continue;
        }
        problems.push(if revealed.missing.contains(read.name) {
            format!(
                "step `{}` reads secret `{}`, which the tenant does not have",
                read.step, read.name
            )
        } else {
            format!(
                "step `{}` reads key `{}` of secret `{}`, which has no such key",
                read.step, read.key, read.name
            )
        });
    }
    if problems.is_empty() {
        Ok(Ok(SecretValues::new(revealed.secrets)))
    } else {
        problems.dedup();
        Ok(Err(problems.join("; ")))
    }
}
