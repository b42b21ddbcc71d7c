//! Steps named by letters and what each waits for ("B and C depend on A,
//! and D depends on both", "C needs A; D needs A and B", "C 依赖 A"): the
//! stages are the layers of that graph, each step in the first layer
//! after everything it needs.

use super::scan::{Class, Token, phrase_at};
use crate::decompose::{Stage, Subtask, TaskKind};
use std::collections::BTreeMap;

/// "X needs Y": X waits for Y.
const NEEDS: &[&str] = &[
    "depends on",
    "depend on",
    "depending on",
    "needs",
    "need",
    "requires",
    "require",
    "waits for",
    "wait for",
    "runs after",
    "run after",
    "comes after",
    "starts after",
    "after",
    "starts when",
    "start when",
    "runs when",
    "run when",
    "when",
    "依赖于",
    "依赖",
    "需要",
    "等待",
];
/// "X before Y": Y waits for X.
const BEFORE: &[&str] = &["runs before", "run before", "before", "precedes", "先于"];
/// Where a clause ends.
const CUTS: &[&str] = &[".", ";", "；", "。", "\n", ",", "，", "!", "！"];
/// A clause that follows the one before.
const THEN: &[&str] = &[
    "then", "next", "finally", "然后", "接着", "最后", "- >", "→",
];
/// "D depends on both": on the steps just named.
const BOTH: &[&str] = &["both", "all", "them", "two", "二者", "两者", "都"];

/// The layers of the graph the description draws between lettered steps,
/// when it draws one with words such as "needs" or "depends on".
pub fn read(tokens: &[Token]) -> Option<Vec<Stage>> {
    let mut labels: Vec<(String, &Token)> = Vec::new();
    for t in tokens.iter().filter(|t| t.is_label()) {
        if !labels.iter().any(|(l, _)| *l == t.text) {
            labels.push((t.text.clone(), t));
        }
    }
    let worded = (0..tokens.len()).any(|i| {
        NEEDS
            .iter()
            .chain(BEFORE)
            .any(|p| !["after", "when"].contains(p) && phrase_at(tokens, i, p).is_some())
    });
    if labels.len() < 2 || !worded {
        return None;
    }
    let mut deps: BTreeMap<String, Vec<String>> = labels
        .iter()
        .map(|(l, _)| (l.clone(), Vec::new()))
        .collect();
    let mut previous: Vec<String> = Vec::new();
    let mut waiting: Vec<String> = Vec::new();
    // The steps placed after the same ones so far ("run B, C and D": all three).
    let mut run: Vec<String> = Vec::new();
    for clause in clauses(tokens) {
        let follows = THEN.iter().any(|p| phrase_at(clause, 0, p).is_some());
        let named: Vec<String> = clause
            .iter()
            .filter(|t| t.is_label())
            .map(|t| t.text.clone())
            .collect();
        if named.is_empty() {
            // "When it finishes, run B, C and D": what follows waits for the
            // steps just named.
            let done = clause.iter().any(|t| {
                [
                    "finishes",
                    "finished",
                    "done",
                    "completes",
                    "completed",
                    "ends",
                ]
                .iter()
                .any(|w| t.is(w))
            });
            if done {
                waiting = previous.clone();
                run.clear();
            }
            continue;
        }
        // ("D when A is done": a bare "when" only after the step it is about.)
        let needs = (0..clause.len()).find_map(|i| {
            NEEDS
                .iter()
                .filter(|p| **p != "when" || (i > 0 && clause[i - 1].is_label()))
                .find_map(|p| phrase_at(clause, i, p))
                .map(|n| (i, n))
        });
        let before = (0..clause.len()).find_map(|i| {
            BEFORE
                .iter()
                .find_map(|p| phrase_at(clause, i, p))
                .map(|n| (i, n))
        });
        let split = |at: usize, n: usize| {
            let left: Vec<String> = clause[..at]
                .iter()
                .filter(|t| t.is_label())
                .map(|t| t.text.clone())
                .collect();
            let right: Vec<String> = clause[at + n..]
                .iter()
                .filter(|t| t.is_label())
                .map(|t| t.text.clone())
                .collect();
            let both = clause[at + n..]
                .iter()
                .any(|t| BOTH.iter().any(|w| t.is(w)));
            (left, right, both)
        };
        if let Some((at, n)) = needs {
            let (left, mut right, both) = split(at, n);
            if right.is_empty() && both {
                right = previous.clone();
            }
            if left.is_empty() {
                // "After A, B and C run": what follows waits.
                waiting = right;
                continue;
            }
            for l in &left {
                add(&mut deps, l, &right);
            }
            previous = left;
        } else if let Some((at, n)) = before {
            let (left, right, _) = split(at, n);
            for r in &right {
                add(&mut deps, r, &left);
            }
            previous = right;
        } else if follows {
            let after = std::mem::take(&mut previous);
            for l in &named {
                add(&mut deps, l, &after);
            }
            waiting.clear();
            run.clone_from(&named);
            previous = named;
        } else {
            for l in &named {
                add(&mut deps, l, &waiting);
            }
            run.extend(named);
            previous.clone_from(&run);
        }
    }
    let levels = layers(&deps)?;
    let depth = levels.values().max().copied().unwrap_or(0);
    if depth == 0 {
        return None;
    }
    Some(
        (0..=depth)
            .map(|level| Stage {
                tasks: labels
                    .iter()
                    .filter(|(l, _)| levels[l] == level)
                    .map(|(l, t)| {
                        let mut task = Subtask::new(TaskKind::Shell, l.clone());
                        task.name = Some(l.to_ascii_lowercase());
                        task.span = Some(t.span);
                        task
                    })
                    .collect(),
            })
            .collect(),
    )
}

fn add(deps: &mut BTreeMap<String, Vec<String>>, step: &str, on: &[String]) {
    let list = deps.entry(step.to_owned()).or_default();
    for o in on {
        if o != step && !list.contains(o) {
            list.push(o.clone());
        }
    }
}

/// Each step's layer: 0 without needs, else one past its deepest need;
/// none for a cycle.
fn layers(deps: &BTreeMap<String, Vec<String>>) -> Option<BTreeMap<String, usize>> {
    let mut level: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..=deps.len() {
        let mut changed = false;
        for (step, needs) in deps {
            if level.contains_key(step) {
                continue;
            }
            if needs.iter().all(|n| level.contains_key(n)) {
                let l = needs.iter().map(|n| level[n] + 1).max().unwrap_or(0);
                level.insert(step.clone(), l);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (level.len() == deps.len()).then_some(level)
}

/// The clauses of the description: cut at punctuation, each keeping a
/// leading "then".
fn clauses(tokens: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..tokens.len() {
        let cut = tokens[i].class == Class::Punct && CUTS.iter().any(|c| tokens[i].is(c));
        let then = i > start && THEN.iter().any(|p| phrase_at(tokens, i, p).is_some());
        if cut || then {
            if i > start {
                out.push(&tokens[start..i]);
            }
            start = if cut { i + 1 } else { i };
        }
    }
    if start < tokens.len() {
        out.push(&tokens[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::scan::tokenize;
    use super::*;

    fn shape(text: &str) -> Vec<Vec<String>> {
        read(&tokenize(text))
            .unwrap_or_default()
            .iter()
            .map(|s| s.tasks.iter().map(|t| t.name.clone().unwrap()).collect())
            .collect()
    }

    #[test]
    fn layers_follow_what_each_step_needs() {
        assert_eq!(
            shape("A and B both start right away; C needs A; D needs A and B"),
            [vec!["a", "b"], vec!["c", "d"]]
        );
        assert_eq!(
            shape("B and C depend on A, and D depends on both B and C"),
            [vec!["a"], vec!["b", "c"], vec!["d"]]
        );
        assert_eq!(
            shape("A 和 B 同时开始；C 依赖 A；D 依赖 A 和 B"),
            [vec!["a", "b"], vec!["c", "d"]]
        );
        assert!(shape("A, then B").is_empty(), "no dependency words");
    }
}
