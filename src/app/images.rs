//! The image keys (issue 20): `i` saves the selected row's images (a pasted image, the image
//! blocks of a call's result) to files, `I` also opens the first with the system viewer.
//!
//! Who calls it: [`App::apply_action`] (`Action::SaveImages`, `Action::OpenImage`). The bytes
//! are never kept in memory: the row's record is read back from the file (one positional read
//! of its line, `Session::line_text`) and its base64 blocks decoded
//! (`crate::import::image_meta::record_images`). Files go where copies go (private, new-only,
//! 0600: `crate::clipboard::write_image`). The viewer is started detached, its output
//! discarded; a failure to start it is said in the status bar.

use super::App;
use crate::import::image_meta;
use crate::session::Item;

impl App {
    /// Saves (and with `open`, opens) the selected row's images; the outcome is in
    /// `view.message`.
    pub(super) fn save_images(&mut self, open: bool) {
        self.view.message = Some(self.save_images_message(open));
    }

    fn save_images_message(&self, open: bool) -> String {
        let Some(item) = self.view.selected_item(&self.session) else {
            return "nothing selected".into();
        };
        let (span, call) = match self.session.items.get(item) {
            Some(Item::Event(f)) if crate::session::query::is_image_row(f) => (f.origin.span, None),
            Some(Item::Invocation(k)) => {
                let inv = &self.session.invocations[*k];
                (inv.output_span, Some(inv.invocation_id.as_str()))
            }
            _ => return "no image on this row".into(),
        };
        let Some(span) = span else {
            return "the image's bytes are only in a saved file (open the transcript, not a stream)"
                .into();
        };
        let text = match self.session.line_text(span) {
            Ok(t) => t,
            Err(e) => return format!("cannot read the image back from the file: {e}"),
        };
        let images = image_meta::record_images(&text, call);
        if images.is_empty() {
            return "no image on this row".into();
        }
        let mut saved = Vec::new();
        for img in &images {
            match crate::clipboard::write_image(&img.bytes, image_meta::extension(&img.media_type))
            {
                Ok(p) => saved.push(p),
                Err(e) => return format!("cannot write the image: {e}"),
            }
        }
        let first = crate::render::text::visible(&saved[0].display().to_string());
        let what = if saved.len() == 1 {
            format!("image saved to {first}")
        } else {
            format!("{} images saved, the first to {first}", saved.len())
        };
        if !open {
            return what;
        }
        match open_with_viewer(&saved[0]) {
            Ok(viewer) => format!("{what}; opened with {viewer}"),
            Err(e) => format!("{what}; cannot open it: {e}"),
        }
    }
}

/// Starts the system viewer on `path`, detached (stdin, stdout and stderr null; a thread reaps
/// it). Returns the program's name.
fn open_with_viewer(path: &std::path::Path) -> std::io::Result<&'static str> {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let mut child = std::process::Command::new(program)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(program)
}
