//! User intents: what a key, a mouse gesture or a test asks the viewer to do.
//!
//! Who uses it: the [`crate::keymap`] maps key chords to actions; [`crate::app::App::update`]
//! applies them to the view state. Actions are plain data (serde `snake_case` names) so a config
//! file can name them and tests can drive the app without a terminal.

use serde::{Deserialize, Serialize};

/// One user intent. Imperative verbs; the focused pane decides what "down" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave the viewer.
    Quit,
    /// Stop the process (Ctrl-Z); the terminal is restored meanwhile.
    Suspend,
    /// Next row (feed) or one line down (detail).
    MoveDown,
    /// Previous row (feed) or one line up (detail).
    MoveUp,
    /// One page down in the focused pane.
    PageDown,
    /// One page up in the focused pane.
    PageUp,
    /// First row / top of the detail.
    Top,
    /// Last row / bottom of the detail (and follow new output).
    Bottom,
    /// Switch focus between the feed and the detail pane.
    FocusNext,
    /// Open the selected row: focus the detail; in the detail, expand folded output.
    Open,
    /// Expand / fold long output in the detail pane.
    ToggleExpand,
    /// Resume following the tail of a running call's stream.
    Follow,
    /// Show or hide quiet rows (token usage, progress ticks).
    ToggleQuiet,
    /// Give the detail pane the whole screen (again: back to feed + detail).
    ToggleZoom,
    /// Wrap long lines in the detail pane.
    ToggleWrap,
    /// Show diffs side by side.
    ToggleSideBySide,
    /// Give the feed less of the width (side by side).
    FeedNarrower,
    /// Give the feed more of the width (side by side).
    FeedWider,
    /// Start typing a search regex.
    StartSearch,
    /// Next row matching the search.
    SearchNext,
    /// Previous row matching the search.
    SearchPrev,
    /// Next failed call (or call with a failed hook, or error row).
    NextError,
    /// Previous failed call (or call with a failed hook, or error row).
    PrevError,
    /// Next user prompt.
    NextPrompt,
    /// Previous user prompt.
    PrevPrompt,
    /// Next compaction row (from the last one, the first again).
    NextCompaction,
    /// Fold the selected row's turn (prompt and its rows) into one row, or unfold it.
    ToggleFold,
    /// Fold the selected row's turn.
    FoldTurn,
    /// Unfold the selected row's turn.
    UnfoldTurn,
    /// Fold every turn.
    FoldAll,
    /// Unfold every turn.
    UnfoldAll,
    /// Start typing a feed filter (`tool:NAME status:STATUS session:ID text`).
    StartFilter,
    /// Show the tool catalog panel (again: back to the detail).
    ShowCatalog,
    /// Show the problems (findings) panel (again: back to the detail).
    ShowProblems,
    /// Show the files panel: what the session changed (again: back to the detail).
    ShowFiles,
    /// Show the audit panel: shell, network, outside writes, permissions, approvals.
    ShowAudit,
    /// In the audit panel: the next kind of entry listed.
    AuditKind,
    /// Show the sessions list (again: back to the detail); Enter filters the feed to a session.
    ShowSessions,
    /// In the files panel: write the patch of every changed file to a file.
    WritePatch,
    /// Save the selected row's images (a pasted image, a result's image blocks) to files.
    SaveImages,
    /// Save them and open the first with the system viewer (`xdg-open`, `open`).
    OpenImage,
    /// Show the selected row's image in the detail pane (again: its next image).
    ViewImage,
    /// Show or hide the key help.
    ToggleHelp,
    /// Close a popup, clear the search, then the filter.
    Cancel,
    /// Replay: play or pause (`rawpv --replay FILE`).
    TogglePlay,
    /// Replay: twice as fast (up to 64×).
    SpeedUp,
    /// Replay: half as fast (down to 0.25×).
    SpeedDown,
    /// Replay: apply one more frame (pauses).
    StepForward,
    /// Replay: take back one frame (pauses).
    StepBack,
    /// Replay: jump to the next turn (prompt or `session.turn.end`).
    NextTurn,
    /// Replay: jump to the previous turn.
    PrevTurn,
    /// Replay: seek to this percent of the timeline (keys 0–9 give 0–90).
    Seek(u8),
    /// Copy the selected call's input to the clipboard (OSC 52; big ones go to a file).
    CopyInput,
    /// Copy the selected call's output.
    CopyOutput,
    /// Copy the selected row's frames as RAWP JSON lines.
    CopyRaw,
    /// Redact secrets in what `y` / `Y` / `r` copy (on / off; `crate::redact`).
    ToggleRedactCopies,
    /// Write the session as a self-contained HTML page (redacted) and say where.
    ExportPage,
}
