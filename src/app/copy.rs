//! Copy actions of the app (`y` input, `Y` output, `r` raw frame JSON; in the files panel `y` /
//! `Y` the selected file's / every file's patch, `W` the patch to a file): picks the selected row's
//! text with [`crate::clipboard`], queues the OSC 52 sequence for the loop (the only terminal
//! writer), or writes a file when the text is too big and says where in the status bar; `X`
//! exports the session as an HTML page, built on a blocking job ([`ExportJob`]).
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
        if self.redact_copies {
            let mut red = crate::redact::Redactor::new();
            let text = red.text(&text).into_owned();
            let label = format!("{} ({})", what.label(), red.summary());
            self.put_on_clipboard(&label, &text);
        } else {
            self.put_on_clipboard(what.label(), &text);
        }
    }

    /// `X`: the session as a self-contained HTML page, secrets redacted, written new-only
    /// where copies go (`clipboard::write_export`). The page is built off the app task (the
    /// page of a 100 MB session takes a few seconds): this leaves an [`ExportJob`] for the loop
    /// to run on `spawn_blocking`; its [`Exported`] comes back as `Msg::Exported` and the status
    /// bar says where and what was redacted. A session backed by a saved file leaves the job the
    /// file's path: the job reads it as `rawpv export FILE` does, so nothing of the session is
    /// copied on the app task (a copy of a 100 MB transcript's session took a frame or more); a
    /// live session (stdin, a stream, a followed file) is copied as it is now.
    pub(super) fn export_page(&mut self) {
        if self.exporting || self.export_job.is_some() {
            self.view.message = Some("an export is already being written".into());
            return;
        }
        let title = std::path::Path::new(&self.source_label)
            .file_name()
            .map_or_else(
                || self.source_label.clone(),
                |n| n.to_string_lossy().into_owned(),
            );
        let opts = crate::export::Options {
            title,
            ..crate::export::Options::default()
        };
        let of = match (&self.session.backing, self.live) {
            (Some(path), false) => Of::File(path.to_path_buf()),
            _ => Of::Session(Box::new(self.session.clone())),
        };
        self.export_job = Some(ExportJob { of, opts });
        self.view.message = Some("exporting the session…".into());
    }

    /// Takes the export job `X` left for the loop (which runs it on `spawn_blocking` and
    /// sends its outcome back as `Msg::Exported`).
    pub fn take_export_job(&mut self) -> Option<ExportJob> {
        let job = self.export_job.take();
        self.exporting |= job.is_some();
        job
    }

    /// An export's outcome, in the status bar.
    pub(super) fn on_exported(&mut self, done: Exported) {
        self.exporting = false;
        self.view.message = Some(match done.outcome {
            Ok(p) => format!(
                "exported {} to {} ({})",
                crate::fmt::plural(p.calls, "call"),
                crate::render::text::visible(&p.path.display().to_string()),
                p.redacted
            ),
            Err(e) => format!(
                "cannot export the session: {}",
                crate::render::text::visible(&e)
            ),
        });
    }
}

/// `X`'s page to build: the saved file the session is read from, or (live) the session as it
/// was when the key was pressed; and the options.
#[derive(Debug)]
pub struct ExportJob {
    of: Of,
    opts: crate::export::Options,
}

/// What an [`ExportJob`] writes the page of.
#[derive(Debug)]
enum Of {
    /// A saved file, read and written as it folds (`crate::export::write_path`).
    File(std::path::PathBuf),
    Session(Box<crate::session::Session>),
}

impl ExportJob {
    /// Builds the page and writes it (blocking: the loop runs it on `spawn_blocking`, the
    /// headless harness inline).
    pub fn run(self) -> Exported {
        let mut page = Vec::new();
        let html = crate::export::Format::Html;
        let written = match &self.of {
            Of::File(path) => {
                crate::export::write_path(&mut page, path, html, &self.opts).map_err(|e| match e {
                    crate::export::PathError::Read(e) => std::io::Error::new(
                        e.kind(),
                        format!("cannot read {}: {e}", path.display()),
                    ),
                    crate::export::PathError::Write(e) => e,
                    crate::export::PathError::NotSession => {
                        std::io::Error::other("the file holds no session's record")
                    }
                })
            }
            Of::Session(session) => crate::export::write(&mut page, session, html, &self.opts),
        };
        let outcome = written
            .and_then(|report| {
                clipboard::write_export(&page, "html").map(|path| ExportedPage {
                    path,
                    calls: report.calls,
                    redacted: report
                        .redacted
                        .map_or_else(|| "not redacted".to_owned(), |r| r.summary()),
                })
            })
            .map_err(|e| e.to_string());
        Exported { outcome }
    }
}

/// An export job's outcome: the page written, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub outcome: Result<ExportedPage, String>,
}

/// A page `X` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedPage {
    /// Where (a new file where copies go).
    pub path: std::path::PathBuf,
    /// Calls on the page.
    pub calls: usize,
    /// What was redacted (`Redactor::summary`), or "not redacted".
    pub redacted: String,
}

impl App {
    /// `y` / `Y` in the files panel: the selected file's patch, or every changed file's, to the
    /// clipboard (a file when too big); the outcome is in `view.message`.
    pub(super) fn copy_patch(&mut self, all: bool) {
        let file = if all {
            None
        } else {
            let Some(k) = self.view.files.selected_file(&self.panels.files) else {
                self.view.message = Some("select a file to copy its patch (Y: all files)".into());
                return;
            };
            Some(k)
        };
        if self.panels.files.model().is_none() {
            self.view.message = Some("still reading the session's files".into());
            return;
        }
        let label = if all {
            "patch of every file"
        } else {
            "file's patch"
        };
        match self
            .panels
            .files
            .patch_of(&self.session, file, &self.source_label)
        {
            // A copy is cleaned of controls (the bar), which would make it another patch
            // (CRLF files, escapes in content: attack 8 #13); `W` writes the exact bytes.
            Ok(p) if p.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => {
                let key = self.keymap.key_for(crate::action::Action::WritePatch);
                let key = key.map_or_else(|| "W".to_owned(), |k| k.to_string());
                self.view.message = Some(format!(
                    "this patch holds control characters (CR, ESC…) a copy would drop: {key} writes it exactly to a file"
                ));
            }
            Ok(p) => {
                self.put_on_clipboard(label, &p);
                if p.contains("\n# NOT in this patch") {
                    // A partial patch says so where it is copied (attack 8 #30).
                    if let Some(m) = self.view.message.as_mut() {
                        m.push_str(" · partial: see its header");
                    }
                }
            }
            Err(why) => self.view.message = Some(format!("no patch to copy: {why}")),
        }
    }

    /// `W`: every changed file's patch written to a new file (mode 0600); says where.
    pub(super) fn write_patch(&mut self) {
        self.panels.files.ensure_built(&self.session);
        self.view.message = Some(
            match self
                .panels
                .files
                .patch_of(&self.session, None, &self.source_label)
            {
                Ok(p) => match clipboard::write_fallback(&p) {
                    Ok(path) => format!(
                        "patch written to {} (git apply it from the session's directory){}",
                        crate::render::text::visible(&path.display().to_string()),
                        if p.contains("\n# NOT in this patch") {
                            " · partial: see its header"
                        } else {
                            ""
                        }
                    ),
                    Err(e) => format!("cannot write the patch: {e}"),
                },
                Err(why) => format!("no patch to write: {why}"),
            },
        );
    }

    /// Puts `text` on the clipboard, or in a file when too big; never raw controls on the
    /// clipboard (a pasted `ESC[201~` ends bracketed paste).
    fn put_on_clipboard(&mut self, label: &str, text: &str) {
        let (text, removed) = clipboard::clean(text);
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
                "copied the {label} ({} bytes) to the clipboard{note}",
                text.len()
            ));
            return;
        }
        self.view.message = Some(match clipboard::write_fallback(&text) {
            Ok(p) => format!(
                "{label} is {} bytes, too big for the clipboard: written to {}{note}",
                text.len(),
                crate::render::text::visible(&p.display().to_string())
            ),
            Err(e) => format!("cannot write the {label} to a file: {e}"),
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
