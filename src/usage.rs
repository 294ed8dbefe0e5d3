//! Usage and cost (issue 28): the price table and a usage row's cost (`price`), the facts a
//! session file gives a report (`facts`), the cache that keeps them between runs (`cache`), and
//! `rawpv stats`' report over many sessions (`report`).
//!
//! Who calls it: `crate::cmd::stats` (reports), the viewer's prompt rows and status bar and the
//! browser (costs, through `price::table`). Layering: reads the session model and the importers'
//! `session.usage` frames; nothing here draws.

pub mod cache;
pub mod facts;
pub mod price;
pub mod report;
