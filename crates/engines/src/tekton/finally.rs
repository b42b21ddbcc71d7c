//! Exit handlers as `finally` tasks. Tekton starts every finally task at
//! once and lets none of them use `runAfter` or another finally task's
//! results, so exit handlers that wait for each other in a chain run as
//! the steps of one finally task, in order: a failing step stops the steps
//! after it, as a failed dependency stops its dependents.

use super::model::{PipelineTask, PipelineTaskRunSpec, PodTemplate};
use super::task::Compiled;
use super::text::Problems;
use super::{Ctx, waits_for};
use couler_ir::Graph;
use std::collections::BTreeMap;

/// One running exit handler, compiled on its own.
pub struct Exit {
    /// Plan index.
    pub index: usize,
    pub compiled: Compiled,
    pub pod: Option<PodTemplate>,
}

/// The finally tasks, their pod templates, and how many task pods they
/// start at once (`None`: unknown).
pub fn tasks(
    ctx: &Ctx<'_>,
    graph: &Graph,
    exits: Vec<Exit>,
    problems: &mut Problems,
) -> (Vec<PipelineTask>, Vec<PipelineTaskRunSpec>, Option<usize>) {
    let main = ctx.plan.workflow.steps.len();
    let waits = waits_for(ctx.plan, graph, main);
    // Chains: each exit handler joins the component of what it waits for.
    let mut component: Vec<usize> = (0..graph.len()).collect();
    fn root(c: &mut [usize], mut x: usize) -> usize {
        while c[x] != x {
            c[x] = c[c[x]];
            x = c[x];
        }
        x
    }
    for e in &exits {
        let k = e.index - main;
        for &u in &waits[k] {
            let (a, b) = (root(&mut component, k), root(&mut component, u as usize));
            component[a.max(b)] = a.min(b);
        }
    }
    let position: BTreeMap<u32, usize> = graph
        .order()
        .iter()
        .enumerate()
        .map(|(p, &n)| (n, p))
        .collect();
    let mut groups: BTreeMap<usize, Vec<Exit>> = BTreeMap::new();
    for e in exits {
        let r = root(&mut component, e.index - main);
        groups.entry(r).or_default().push(e);
    }
    let mut tasks = Vec::new();
    let mut specs = Vec::new();
    let mut width = Some(0usize);
    for (_, mut members) in groups {
        members.sort_by_key(|e| position[&((e.index - main) as u32)]);
        let (task, pod, w) = if members.len() == 1 {
            let e = members.pop().expect("one member");
            (e.compiled.task, e.pod, e.compiled.width)
        } else {
            let (task, pod) = merge(ctx, &waits, members, problems);
            (task, pod, Some(1))
        };
        if let Some(pod) = pod {
            specs.push(PipelineTaskRunSpec {
                pipeline_task_name: task.name.clone(),
                pod_template: pod,
            });
        }
        width = width.zip(w).map(|(a, b)| a + b);
        tasks.push(task);
    }
    (tasks, specs, width)
}

/// One finally task running a chain of exit handlers as its steps.
fn merge(
    ctx: &Ctx<'_>,
    waits: &[Vec<u32>],
    members: Vec<Exit>,
    problems: &mut Problems,
) -> (PipelineTask, Option<PodTemplate>) {
    let main = ctx.plan.workflow.steps.len();
    let names: Vec<String> = members
        .iter()
        .map(|e| ctx.plan.ir_step(e.index).name.clone())
        .collect();
    let chain = names.join(", ");
    for pair in members.windows(2) {
        if !waits[pair[1].index - main].contains(&((pair[0].index - main) as u32)) {
            problems.unsupported(
                &names[0],
                format_args!(
                    "exit handlers {chain} wait for each other but not in one chain: Tekton starts `finally` tasks together, so ordered exit handlers run as the steps of one finally task, one after another"
                ),
            );
            break;
        }
    }
    let indexes: Vec<usize> = members.iter().map(|e| e.index).collect();
    let mut pods: Vec<PodTemplate> = Vec::new();
    let mut members = members.into_iter();
    let first = members.next().expect("a chain has members");
    let mut task = first.compiled.task;
    let check = |name: &str,
                 t: &PipelineTask,
                 reads: &std::collections::BTreeSet<usize>,
                 problems: &mut Problems| {
        for (what, set) in [
            ("`when`", !t.when.is_empty()),
            (
                "`retry`",
                t.retries.is_some() || t.task_spec.steps.len() > 1,
            ),
            ("`map`", t.matrix.is_some()),
        ] {
            if set {
                problems.unsupported(
                    name,
                    format_args!(
                        "{what} on an exit handler that runs as a step of the finally task for {chain}: Tekton guards, retries and fans out whole tasks"
                    ),
                );
            }
        }
        for r in reads {
            if indexes.contains(r) {
                problems.unsupported(
                    name,
                    format_args!(
                        "reads the outputs of exit handler `{}`, a step of the same finally task",
                        ctx.plan.ir_step(*r).name
                    ),
                );
            }
        }
    };
    check(&names[0], &task, &first.compiled.reads, problems);
    pods.extend(first.pod);
    let timeout = task.timeout.take();
    set_step_timeout(&mut task, timeout);
    for (e, name) in members.zip(&names[1..]) {
        let mut t = e.compiled.task;
        check(name, &t, &e.compiled.reads, problems);
        if let Some(pod) = e.pod
            && !pods.contains(&pod)
        {
            pods.push(pod);
        }
        let timeout = t.timeout.take();
        set_step_timeout(&mut t, timeout);
        for p in t.params {
            if !task.params.contains(&p) {
                task.params.push(p);
            }
        }
        task.params.sort_by(|a, b| a.name.cmp(&b.name));
        let spec = &mut task.task_spec;
        for p in t.task_spec.params {
            if !spec.params.contains(&p) {
                spec.params.push(p);
            }
        }
        spec.params.sort_by(|a, b| a.name.cmp(&b.name));
        for r in t.task_spec.results {
            if spec.results.iter().any(|x| x.name == r.name) {
                problems.unsupported(
                    name,
                    format_args!(
                        "its result `{}` clashes with another exit handler's in the finally task for {chain}",
                        r.name
                    ),
                );
            } else {
                spec.results.push(r);
            }
        }
        for w in t.task_spec.workspaces {
            if !spec.workspaces.contains(&w) {
                spec.workspaces.push(w);
            }
        }
        for w in t.workspaces {
            if !task.workspaces.contains(&w) {
                task.workspaces.push(w);
            }
        }
        spec.steps.extend(t.task_spec.steps);
    }
    if pods.len() > 1 {
        problems.unsupported(
            &names[0],
            format_args!(
                "exit handlers {chain} run as one finally task, which takes one set of scheduling hints, and theirs differ"
            ),
        );
    }
    if let Some(meta) = &mut task.task_spec.metadata {
        meta.annotations
            .insert("couler.dev/steps".to_owned(), names.join(","));
    }
    (task, pods.pop())
}

/// A member's task timeout becomes its step's: the finally task runs the
/// members one after another.
fn set_step_timeout(task: &mut PipelineTask, timeout: Option<String>) {
    if let Some(step) = task.task_spec.steps.last_mut() {
        step.timeout = timeout;
    }
}
