//! Natural language and LLMs: an OpenAI-compatible chat-completions client
//! (used by the `llm` tuning strategy, later by NL → workflow generation).

pub mod llm;

pub use llm::{ChatRequest, ChatResponse, LlmClient, LlmConfig, LlmError};
