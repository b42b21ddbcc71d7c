//! Stage tokens: a token matches a step when it is the step's kind
//! (`train`, `quality_check` …) or one of the words of its name (`dedupe`
//! for `dedupe-records`, `fine-tune` for `fine-tune-llm`); a stage matches
//! when every token matches one of its steps and every step one of its
//! tokens.

use crate::decompose::{Decomposition, TaskKind};
use crate::offline::StepExplanation;

/// Whether the decomposition's stages match `want`, and what they were.
pub fn matches(
    want: &[String],
    d: &Decomposition,
    explanations: &[StepExplanation],
) -> (bool, String) {
    // Explanations follow the subtasks in order (exit handlers last).
    let mut names = explanations.iter().map(|x| x.step.as_str());
    let got: Vec<Vec<(TaskKind, &str)>> = d
        .stages
        .iter()
        .map(|s| {
            s.tasks
                .iter()
                .map(|t| (t.kind, names.next().unwrap_or("")))
                .collect()
        })
        .collect();
    let shown: Vec<String> = got
        .iter()
        .map(|stage| {
            let mut steps: Vec<String> = stage
                .iter()
                .map(|(k, n)| format!("{n}({})", k.as_str()))
                .collect();
            steps.sort();
            steps.join("|")
        })
        .collect();
    let ok = want.len() == got.len()
        && want
            .iter()
            .zip(&got)
            .all(|(tokens, steps)| stage_matches(tokens, steps));
    (ok, format!("{shown:?}"))
}

fn stage_matches(tokens: &str, steps: &[(TaskKind, &str)]) -> bool {
    let tokens: Vec<&str> = tokens.split('|').map(str::trim).collect();
    tokens
        .iter()
        .all(|t| steps.iter().any(|(k, n)| token_matches(t, *k, n)))
        && steps
            .iter()
            .all(|(k, n)| tokens.iter().any(|t| token_matches(t, *k, n)))
}

/// `token` names a step of `kind` called `name`.
pub fn token_matches(token: &str, kind: TaskKind, name: &str) -> bool {
    let token = token.to_ascii_lowercase();
    if token == kind.as_str() {
        return true;
    }
    let words: Vec<&str> = name.split('-').collect();
    let wanted: Vec<&str> = token
        .split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .collect();
    !wanted.is_empty() && words.windows(wanted.len()).any(|w| w == wanted.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_kinds_and_words_of_names() {
        assert!(token_matches("train", TaskKind::Train, "train-xgboost"));
        assert!(token_matches("xgboost", TaskKind::Train, "train-xgboost"));
        assert!(token_matches(
            "dedupe",
            TaskKind::Preprocess,
            "dedupe-records"
        ));
        assert!(token_matches("fine-tune", TaskKind::Train, "fine-tune-llm"));
        assert!(token_matches(
            "quality_check",
            TaskKind::QualityCheck,
            "quality-check"
        ));
        assert!(!token_matches("tune", TaskKind::Evaluate, "evaluate"));
        assert!(stage_matches(
            "b|c",
            &[(TaskKind::Shell, "b"), (TaskKind::Shell, "c")]
        ));
        assert!(!stage_matches(
            "b",
            &[(TaskKind::Shell, "b"), (TaskKind::Shell, "c")]
        ));
        assert!(stage_matches(
            "print",
            &[
                (TaskKind::Shell, "print-heads"),
                (TaskKind::Shell, "print-tails")
            ]
        ));
    }
}
