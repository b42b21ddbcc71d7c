//! The tenant secrets a run's steps read, opened for the engine that
//! delivers them: only the keys the steps name, only when the run is
//! driven, and a run reading a secret or key its tenant lacks fails before
//! any step starts, naming the step and the secret.

use crate::Context;
use couler_engines::SecretValues;
use couler_ir::Workflow;
use couler_store::TenantId;
use secrecy::SecretString;
use std::collections::{BTreeMap, BTreeSet};

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
    let mut revealed = couler_store::secrets::reveal(&mut tx, keyring, tenant, &names).await?;
    tx.commit().await?;
    let mut values: BTreeMap<String, BTreeMap<String, SecretString>> = BTreeMap::new();
    let mut problems = Vec::new();
    for read in &reads {
        let value = revealed
            .secrets
            .get_mut(read.name)
            .and_then(|keys| keys.get(read.key).cloned());
        match value {
            Some(value) => {
                values
                    .entry(read.name.to_owned())
                    .or_default()
                    .insert(read.key.to_owned(), value);
            }
            None if revealed.missing.contains(read.name) => problems.push(format!(
                "step `{}` reads secret `{}`, which the tenant does not have",
                read.step, read.name
            )),
            None => problems.push(format!(
                "step `{}` reads key `{}` of secret `{}`, which has no such key",
                read.step, read.key, read.name
            )),
        }
    }
    if problems.is_empty() {
        Ok(Ok(SecretValues::new(values)))
    } else {
        problems.dedup();
        Ok(Err(problems.join("; ")))
    }
}
