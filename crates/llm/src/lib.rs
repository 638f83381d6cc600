//! The `LanguageModel` adapters of Redline.
//!
//! - [`openai`]: any OpenAI-compatible Chat Completions endpoint with tool calling (OpenAI,
//!   vLLM, llama.cpp server, Ollama, LM Studio), streamed or not, with retries of transient
//!   failures.
//!
//! **Invariant:** an adapter never panics on what an upstream answers; every failure becomes
//! one `LlmError`.

pub mod builtin;
pub mod openai;
