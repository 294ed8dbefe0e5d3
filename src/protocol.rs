//! The RAWP protocol model: frames, their parsing, and the SPEC 3.4 rules.
//!
//! Who uses it: everything. It imports neither ratatui nor tokio (STYLE 4.2 layering).

pub mod model;
pub mod parse;
pub mod rules;

pub use model::*;
pub use parse::{
    ParseError, ParseErrorKind, ParseOptions, frame_from_value, parse_line, parse_line_one_pass,
    parse_line_with,
};
