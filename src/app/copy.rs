//! Copy actions of the app (`y` input, `Y` output, `r` raw frame JSON): picks the selected row's
//! text with [`crate::clipboard`], queues the OSC 52 sequence for the loop (the only terminal
//! writer), or writes a file when the text is too big and says where in the status bar.
//!
//! Who calls it: [`App::apply_action`] and the event loop ([`write_osc52`]).

use std::io::Write;

use super::App;
use crate::clipboard::{self, CopyWhat, MAX_OSC52_BYTES};
use crate::tui::Tui;

impl App {
    /// Copies `what` of the selected row; the outcome is in `view.message`.
    pub(super) fn copy(&mut self, what: CopyWhat) {
        let Some(item) = self.view.selected_item(&self.session) else {
            self.view.message = Some("nothing selected to copy".into());
            return;
        };
        let text = match clipboard::copy_result(&self.session, item, what) {
            Ok(Some(text)) => text,
            Ok(None) => {
                self.view.message = Some(format!("no {} to copy", what.label()));
                return;
            }
            Err(why) => {
                self.view.message = Some(format!("cannot copy the {}: {why}", what.label()));
                return;
            }
        };
        // Never raw controls on the clipboard (a pasted `ESC[201~` ends bracketed paste).
        let (text, removed) = clipboard::clean(&text);
        let note = if removed == 0 {
            String::new()
        } else {
            format!(
                "; {} removed",
                crate::fmt::plural(removed, "control character")
            )
        };
        if text.len() <= MAX_OSC52_BYTES {
            self.clipboard_out = Some(clipboard::osc52(&text));
            self.view.message = Some(format!(
                "copied the {} ({} bytes) to the clipboard{note}",
                what.label(),
                text.len()
            ));
            return;
        }
        self.view.message = Some(match clipboard::write_fallback(&text) {
            Ok(p) => format!(
                "{} is {} bytes, too big for the clipboard: written to {}{note}",
                what.label(),
                text.len(),
                crate::render::text::visible(&p.display().to_string())
            ),
            Err(e) => format!("cannot write the {} to a file: {e}", what.label()),
        });
    }
}

/// Writes a queued OSC 52 sequence through the terminal's backend.
///
/// # Errors
/// The terminal cannot be written.
pub(super) fn write_osc52(tui: &mut Tui, seq: &str) -> std::io::Result<()> {
    let out = tui.terminal.backend_mut();
    out.write_all(seq.as_bytes())?;
    out.flush()
}
