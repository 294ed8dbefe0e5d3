//! Helpers shared by the integration test modules.

pub mod corpus;
pub mod headless;
pub mod transcripts;
