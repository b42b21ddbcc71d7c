//! The step library: curated IR step templates with descriptions and
//! keywords, and a deterministic BM25 ranking of templates against a
//! subtask. The built-in templates live in `library/builtin.yaml`; per-tenant
//! libraries (later) are the same [`Template`]s from the store.

use crate::decompose::{Subtask, TaskKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

const BUILTIN: &str = include_str!("../library/builtin.yaml");

/// The template of a step the library has nothing for: the builder names
/// it from the request's words and the user fills in what it runs.
pub const GENERIC_TEMPLATE: &str = "generic-step";

/// What the planner wires into a template when it places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    Data,
    Models,
    Scores,
    Best,
    Source,
    Target,
    ModelUri,
    Webhook,
    Message,
    Command,
    Model,
}

impl Need {
    pub const ALL: [Need; 11] = [
        Need::Data,
        Need::Models,
        Need::Scores,
        Need::Best,
        Need::Source,
        Need::Target,
        Need::ModelUri,
        Need::Webhook,
        Need::Message,
        Need::Command,
        Need::Model,
    ];
}

/// One curated step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    pub id: String,
    pub kind: TaskKind,
    pub description: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub needs: Vec<Need>,
    /// Workflow parameters the template reads.
    #[serde(default)]
    pub parameters: Vec<serde_json::Value>,
    /// An IR step without its name.
    pub step: serde_json::Value,
}

impl Template {
    /// The image the template's step runs in.
    pub fn image(&self) -> Option<&str> {
        ["container", "script", "job"]
            .iter()
            .find_map(|k| self.step.get(k)?.get("image")?.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("step library is not valid YAML: {0}")]
    Parse(String),
    #[error("step library template {0:?} is defined twice")]
    Duplicate(String),
}

/// A template and how well it fits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<'a> {
    pub template: &'a Template,
    pub score: f64,
}

/// Templates with a BM25 index over id, description and keywords.
#[derive(Debug, Clone)]
pub struct Library {
    templates: Vec<Template>,
    docs: Vec<HashMap<String, u32>>,
    lengths: Vec<f64>,
    average_length: f64,
    document_frequency: HashMap<String, u32>,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Library {
    /// The built-in templates.
    pub fn builtin() -> Library {
        Library::from_yaml(BUILTIN).expect("the built-in step library is valid")
    }

    pub fn from_yaml(text: &str) -> Result<Library, LibraryError> {
        let templates: Vec<Template> =
            serde_saphyr::from_str(text).map_err(|e| LibraryError::Parse(e.to_string()))?;
        Library::new(templates)
    }

    pub fn new(templates: Vec<Template>) -> Result<Library, LibraryError> {
        for (i, t) in templates.iter().enumerate() {
            if templates[..i].iter().any(|u| u.id == t.id) {
                return Err(LibraryError::Duplicate(t.id.clone()));
            }
        }
        let docs: Vec<HashMap<String, u32>> = templates
            .iter()
            .map(|t| {
                let mut text = format!("{} {} {}", t.id, t.description, t.keywords.join(" "));
                text.push(' ');
                text.push_str(t.kind.as_str());
                term_counts(&text)
            })
            .collect();
        let lengths: Vec<f64> = docs
            .iter()
            .map(|d| f64::from(d.values().sum::<u32>()))
            .collect();
        let average_length = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        let mut document_frequency = HashMap::new();
        for d in &docs {
            for term in d.keys() {
                *document_frequency.entry(term.clone()).or_insert(0) += 1;
            }
        }
        Ok(Library {
            templates,
            docs,
            lengths,
            average_length,
            document_frequency,
        })
    }

    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    pub fn get(&self, id: &str) -> Option<&Template> {
        self.templates.iter().find(|t| t.id == id)
    }

    /// BM25 relevance of every template to `query`, best first; ties go to
    /// the template listed first.
    pub fn rank(&self, query: &str) -> Vec<Ranked<'_>> {
        let query = term_counts(query);
        self.ranked((0..self.templates.len()).collect(), &query)
    }

    /// Templates of the subtask's kind, best first. Terms every candidate
    /// shares ("load" for loaders) say nothing about which fits, so only
    /// the others count; with no telling term the first listed wins.
    pub fn rank_for(&self, task: &Subtask) -> Vec<Ranked<'_>> {
        let candidates: Vec<usize> = (0..self.templates.len())
            .filter(|&i| self.templates[i].kind == task.kind)
            .collect();
        let mut query = term_counts(&query_for(task));
        if candidates.len() > 1 {
            query.retain(|t, _| !candidates.iter().all(|&i| self.docs[i].contains_key(t)));
        }
        self.ranked(candidates, &query)
    }

    fn ranked(&self, candidates: Vec<usize>, query: &HashMap<String, u32>) -> Vec<Ranked<'_>> {
        let mut ranked: Vec<(usize, f64)> = candidates
            .into_iter()
            .map(|i| (i, self.bm25(i, query)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .map(|(i, score)| Ranked {
                template: &self.templates[i],
                score,
            })
            .collect()
    }

    fn bm25(&self, i: usize, query: &HashMap<String, u32>) -> f64 {
        let n = self.templates.len() as f64;
        let doc = &self.docs[i];
        let mut score = 0.0;
        // Summed in one order, so that equal queries score equal bits.
        let mut terms: Vec<&String> = query.keys().collect();
        terms.sort_unstable();
        for term in terms {
            let Some(&tf) = doc.get(term) else { continue };
            let df = f64::from(self.document_frequency[term]);
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            let tf = f64::from(tf);
            let norm = 1.0 - B + B * self.lengths[i] / self.average_length;
            score += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
        }
        score
    }

    /// The best template for a subtask, if the library has one of its kind.
    pub fn best_for(&self, task: &Subtask) -> Option<Ranked<'_>> {
        self.rank_for(task).into_iter().next()
    }
}

/// What a subtask is searched by: its words, its kind, its model family and
/// the scheme or extension of its target.
pub fn query_for(task: &Subtask) -> String {
    // One subtask of "train an LSTM and an SVM" is about its own model only.
    let others = |w: &str| {
        let w = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        task.model.as_deref().is_some_and(|m| {
            crate::offline::lexicon::MODELS
                .iter()
                .any(|(name, spellings)| *name != m && spellings.contains(&w.as_str()))
        })
    };
    // A URL counts by its scheme (and a non-CSV extension) only, below.
    let text = match &task.target {
        Some(target) => task.text.replace(target.as_str(), " "),
        None => task.text.clone(),
    };
    let words: Vec<&str> = text.split_whitespace().filter(|w| !others(w)).collect();
    let mut q = format!(
        "{} {}",
        words.join(" "),
        task.kind.as_str().replace('_', " ")
    );
    if let Some(model) = &task.model {
        q.push(' ');
        q.push_str(model);
        if let Some(family) = crate::offline::kinds::family(model) {
            q.push(' ');
            q.push_str(family);
        }
    }
    if let Some(target) = &task.target {
        if let Some((scheme, _)) = target.split_once("://") {
            q.push(' ');
            q.push_str(scheme);
        }
        if let Some((_, ext)) = target.rsplit_once('.')
            && !ext.eq_ignore_ascii_case("csv")
        {
            q.push(' ');
            q.push_str(ext);
        }
    }
    q
}

/// Terms: lowercase ASCII words (lightly stemmed), each CJK character pair.
fn term_counts(text: &str) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    let mut add = |t: String| *counts.entry(t).or_insert(0) += 1;
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_cjk = |cjk: &mut Vec<char>, add: &mut dyn FnMut(String)| {
        if cjk.len() == 1 {
            add(cjk[0].to_string());
        }
        for pair in cjk.windows(2) {
            let pair: String = pair.iter().collect();
            if !CJK_STOPWORDS.contains(&pair.as_str()) {
                add(pair);
            }
        }
        cjk.clear();
    };
    for c in text.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c.to_ascii_lowercase());
            flush_cjk(&mut cjk, &mut add);
            continue;
        }
        if !word.is_empty() {
            if !STOPWORDS.contains(&word.as_str()) {
                add(stem(&word));
            }
            word.clear();
        }
        if crate::offline::scan::is_cjk(c) {
            cjk.push(c);
        } else {
            flush_cjk(&mut cjk, &mut add);
        }
    }
    counts
}

/// Chinese words every kind of model or data shares: "训练模型" says
/// nothing about which trainer fits (one template's "大模型" would win).
const CJK_STOPWORDS: &[&str] = &["模型", "数据", "一下", "然后", "一个"];

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or",
    "the", "them", "then", "this", "that", "to", "with",
];

fn stem(word: &str) -> String {
    for suffix in ["ing", "ation", "ion", "ed", "es", "s"] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.len() >= 3
        {
            return stem.to_owned();
        }
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn best(kind: TaskKind, text: &str, model: Option<&str>, target: Option<&str>) -> String {
        let mut task = Subtask::new(kind, text);
        task.model = model.map(str::to_owned);
        task.target = target.map(str::to_owned);
        Library::builtin()
            .best_for(&task)
            .unwrap()
            .template
            .id
            .clone()
    }

    #[test]
    fn builtin_library_loads_with_a_template_per_kind() {
        let lib = Library::builtin();
        for kind in TaskKind::ALL {
            assert!(
                lib.templates().iter().any(|t| t.kind == kind),
                "no template for {kind}"
            );
        }
    }

    #[test]
    fn a_model_in_chinese_is_no_language_model() {
        assert_eq!(
            best(TaskKind::Train, "训练模型", None, None),
            best(TaskKind::Train, "train a model", None, None)
        );
        assert_eq!(
            best(TaskKind::Train, "微调大模型", None, None),
            "train-llm-lora"
        );
    }

    #[test]
    fn ranking_follows_the_subtask() {
        assert_eq!(
            best(TaskKind::Train, "train an LSTM", Some("lstm"), None),
            "train-pytorch-rnn"
        );
        assert_eq!(
            best(TaskKind::Train, "train an SVM", Some("svm"), None),
            "train-sklearn"
        );
        assert_eq!(
            best(TaskKind::Train, "fit xgboost", Some("xgboost"), None),
            "train-gbdt"
        );
        assert_eq!(
            best(TaskKind::Train, "train a sentiment classifier", None, None),
            "train-text-transformer"
        );
        assert_eq!(
            best(TaskKind::Load, "load the data", None, Some("s3://b/k.csv")),
            "load-s3"
        );
        assert_eq!(
            best(
                TaskKind::Load,
                "从s3://b/k.csv读取",
                None,
                Some("s3://b/k.csv")
            ),
            "load-s3"
        );
        assert_eq!(
            best(
                TaskKind::Load,
                "load https://x.org/k.parquet",
                None,
                Some("https://x.org/k.parquet")
            ),
            "load-parquet-url"
        );
        assert_eq!(
            best(TaskKind::Load, "read the parquet table", None, None),
            "load-parquet-url"
        );
        assert_eq!(
            best(TaskKind::Load, "load the csv", None, None),
            "load-csv-url"
        );
        assert_eq!(
            best(TaskKind::Register, "save the model to a bucket", None, None),
            "register-bucket"
        );
        assert_eq!(
            best(TaskKind::Train, "训练LSTM", Some("lstm"), None),
            "train-pytorch-rnn"
        );
    }

    #[test]
    fn ranking_is_ordered_and_deterministic() {
        let lib = Library::builtin();
        let a = lib.rank("train a gradient boosted xgboost model");
        let b = lib.rank("train a gradient boosted xgboost model");
        assert_eq!(a[0].template.id, "train-gbdt");
        assert!(a.windows(2).all(|w| w[0].score >= w[1].score));
        let ids = |r: &[Ranked]| r.iter().map(|x| x.template.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
    }
}
