//! Natural language and LLMs: an OpenAI-compatible chat-completions client
//! (used by the `llm` tuning strategy), and natural language → workflow:
//! the [`decompose`] intermediate form, the step [`library`], the
//! deterministic [`offline`] planner, [`safety`] checks and the [`eval`]
//! harness.

pub mod decompose;
pub mod eval;
pub mod generate;
pub mod library;
pub mod llm;
pub mod offline;
pub mod safety;

pub use llm::{ChatRequest, ChatResponse, LlmClient, LlmConfig, LlmError};
