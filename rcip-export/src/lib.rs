//! The rcip catalog in the exact tool forms MCP, OpenAI, Anthropic and Gemini accept.
#![deny(missing_docs)]

pub mod check;
mod profile;

pub use profile::{Profile, UnknownProfile};
