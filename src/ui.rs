//! Widgets: place prepared lines into areas (STYLE 4.2). The viewer's layout (`draw`) lives here
//! once the TUI lands; until then this file only declares the panels.

pub mod catalog;
pub mod problems;
