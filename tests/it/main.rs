//! The integration tests, as one crate: one module per area, so the suite compiles and links
//! the library once instead of once per file (41+ test binaries before).
//!
//! Who runs it: `cargo test` (`cargo test --test it MODULE::` runs one area). Conventions: shared
//! helpers are `support/` (headless driving and drawing, corpus access, transcripts); fixtures
//! are `tests/fixtures/`; insta snapshots are `tests/it/snapshots/it__MODULE__NAME.snap`. Tests
//! that read `../shared/corpus` go through `support::corpus`: a missing corpus prints a visible
//! `skipped:` line, and fails under CI (`CI=true`).

mod support;

/// The recording generator of `examples/gen.rs`, shared by the tests that make big inputs.
#[path = "../../examples/gen.rs"]
#[allow(dead_code, clippy::all, clippy::pedantic)]
mod generator;

mod anthropic_recordings;
mod browser_screen;
mod cc_forks;
mod cc_placement;
mod cc_records;
mod cc_stream;
mod cc_switch;
mod check_cli;
mod check_demo;
mod check_fold;
mod check_formats;
mod check_panels;
mod check_rules;
mod check_tui;
mod copy_keys;
mod detail_print_tui;
mod export_browser;
mod export_markdown;
mod export_stream;
mod feed_widths;
mod file_changes;
mod file_two_threads;
mod hostile_output;
mod hostile_tui;
mod import_agents;
mod import_agents_attack;
mod import_anthropic;
mod import_claude_code;
mod import_stream_json;
mod library;
mod library_append;
mod library_live;
mod limits_input;
mod live_follow;
mod live_loop;
mod live_net;
mod live_pty;
mod live_session_cap;
mod live_state;
mod live_stdin;
mod log_file;
mod multi_input;
mod open_documents;
mod oracle_outputs;
mod parse_lenient;
mod parse_oracle;
mod prop_reducer;
mod prop_render;
mod reducer;
mod relative_paths;
mod render_claude;
mod render_diff;
mod render_input;
mod render_polish;
mod render_props;
mod render_terminal;
mod replay_player;
mod review_audit;
mod review_files;
mod review_hostile;
mod review_patch;
mod review_tui;
mod screen_sizes;
mod seed_rules;
mod serve_relay;
mod sessions;
mod sessions_tui;
mod signals_pty;
mod skip_outputs;
mod stats_cli;
mod tui_config;
mod tui_fold;
mod tui_perf;
mod tui_prompt;
mod tui_rebase;
mod tui_scan;
mod tui_screens;
mod tui_step;
mod tui_toggles;
mod usage_oracle;
mod viewer_cli;
