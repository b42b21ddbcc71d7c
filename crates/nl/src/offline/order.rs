//! The order of clauses: "X after Y", "Before Y, X", "Y之前X" and "X …;
//! Y first" move clauses to where their order words put them.

use super::clause;
use super::scan::{Order, Segment, Sep, Token};
use crate::decompose::{Span, TaskKind};

/// Clauses that make one step (or one group of steps) and the separator
/// before them.
pub(crate) struct Group {
    pub sep: Sep,
    pub segs: Vec<usize>,
    /// A bare object after "and" that the step before acts on too.
    pub inherits: bool,
}

impl Group {
    /// The tokens of its clauses, in order.
    pub fn tokens(&self, segs: &[Segment]) -> Vec<Token> {
        self.segs
            .iter()
            .flat_map(|&s| segs[s].tokens.iter().cloned())
            .collect()
    }

    /// Where its clauses lie in the description.
    pub fn span(&self, segs: &[Segment]) -> Span {
        self.segs
            .iter()
            .map(|&s| segs[s].span())
            .reduce(Span::join)
            .expect("a group has segments")
    }
}

/// Groups in the order their order words ask for: "X after Y" and
/// "Before Y, X" run Y first, "X before Y" and "After Y, X" keep theirs,
/// "Y之前X" runs X first. A Y that only names a step asked for elsewhere
/// ("add a quality check before training") places X next to that step and
/// is no step of its own. X and Y are runs of clauses: a leading "Before Y,"
/// is about the rest of its sentence, and "and" extends either side.
pub(super) fn in_order(mut groups: Vec<Group>, segs: &[Segment]) -> Vec<Group> {
    // The end of the run of clauses starting at `from`: up to the next
    // sequence (`sentence: false`) or sentence separator.
    let run_end = |groups: &[Group], from: usize, sentence: bool| {
        (from + 1..groups.len())
            .find(|&j| {
                let sep = groups[j].sep;
                sep == Sep::Sentence || (!sentence && sep >= Sep::Sequence)
            })
            .unwrap_or(groups.len())
    };
    let mut i = 0;
    while i < groups.len() {
        // ("…, but pseudonymize the email and phone columns first": said at
        // the end of the step's last clause.)
        let last_first = || {
            groups[i]
                .segs
                .iter()
                .skip(1)
                .find_map(|&s| segs[s].order.filter(|&o| o == Order::PrecedesPrevious))
        };
        let Some(order) = groups[i]
            .segs
            .first()
            .and_then(|&s| segs[s].order)
            .or_else(last_first)
        else {
            i += 1;
            continue;
        };
        let leading = i == 0 || groups[i].sep == Sep::Sentence;
        // The anchor's clauses, the other's, and whether the other runs first.
        let (anchor, other, first) = match order {
            Order::Before | Order::After if leading => (
                i..i + 1,
                i + 1..run_end(&groups, i, true),
                order == Order::Before,
            ),
            Order::Before | Order::After if i > 0 => (
                i..run_end(&groups, i, false),
                i - 1..i,
                order == Order::Before,
            ),
            Order::PrecedesPrevious if i > 0 => (i - 1..i, i..run_end(&groups, i, false), true),
            _ => (0..0, 0..0, false),
        };
        if anchor.is_empty() || other.is_empty() {
            i += 1;
            continue;
        }
        let resume = anchor.end.max(other.end);
        let mentioned = mentions(&groups, anchor.clone(), segs);
        let lo = anchor.start.min(other.start);
        let other_first = other.start < anchor.start;
        if let Some(keys) = mentioned {
            // Next to the steps the anchor names; the anchor goes.
            let mut taken: Vec<Group> = groups.drain(lo..resume).collect();
            let moved: Vec<Group> = if other_first {
                taken.drain(..other.len()).collect()
            } else {
                taken.drain(anchor.len()..).collect()
            };
            let found = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| identity(g, segs).is_some_and(|k| keys.contains(&k)))
                .map(|(g, _)| g);
            let at = if first {
                found.min().unwrap_or(lo)
            } else {
                found.max().map_or(lo, |g| g + 1)
            };
            // A step named in a later sentence ("X runs after B; B runs
            // after A"): after that sentence, whose own order is read next.
            let later = !first && at > lo;
            let at = if later {
                run_end(&groups, at - 1, true)
            } else {
                at
            };
            let end = at + moved.len();
            groups.splice(at..at, moved);
            sequence(&mut groups, &[at, end]);
            i = if later { lo } else { end.max(i) };
            continue;
        }
        if other_first != first {
            let width = if other_first {
                other.len()
            } else {
                anchor.len()
            };
            groups[lo..resume].rotate_left(width);
            sequence(&mut groups, &[lo, resume - width, resume]);
        }
        i = resume;
    }
    groups
}

/// After reordering, the clauses at `starts` follow what precedes them in
/// sequence, never joining it in parallel.
fn sequence(groups: &mut [Group], starts: &[usize]) {
    for &g in starts {
        if let Some(group) = groups.get_mut(g) {
            group.sep = group.sep.max(Sep::Sequence);
        }
    }
}

/// What the anchor's clauses only name ("training", "B and C"), when each
/// names a step asked for elsewhere: their identities.
fn mentions(
    groups: &[Group],
    anchor: std::ops::Range<usize>,
    segs: &[Segment],
) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for a in anchor.clone() {
        let c = clause::read(&groups[a].tokens(segs));
        let key = identity(&groups[a], segs)?;
        if (c.is_modifier() && !c.generic) || !c.leftover.is_empty() {
            return None;
        }
        let elsewhere = (0..groups.len())
            .filter(|g| !anchor.contains(g))
            .any(|g| identity(&groups[g], segs).as_ref() == Some(&key));
        if !elsewhere {
            return None;
        }
        keys.push(key);
    }
    (!keys.is_empty()).then_some(keys)
}

/// What a clause asks for, to tell mentions of the same step: its kind
/// (training of any sort is one), or a generic step's name.
fn identity(group: &Group, segs: &[Segment]) -> Option<String> {
    let c = clause::read(&group.tokens(segs));
    match (c.kind.or(c.refers_to)?, c.name) {
        (TaskKind::Shell, Some(name)) if c.generic => Some(format!("step:{name}")),
        (TaskKind::DistributedTrain, _) => Some(TaskKind::Train.as_str().into()),
        (k, _) => Some(k.as_str().into()),
    }
}
