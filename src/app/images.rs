//! The image keys (issue 20): `i` saves the selected row's images (a pasted image, the image
//! blocks of a call's result) to files, `I` also opens the first with the system viewer, and `v`
//! shows them in the detail pane, drawn with half-blocks (`ratatui-image`), one at a time
//! (`v` again: the next; Esc, or another row: back to the detail).
//!
//! Who calls it: [`App::apply_action`] (`Action::SaveImages`, `Action::OpenImage`,
//! `Action::ViewImage`), the event loop ([`App::take_image_job`], `Msg::ImageDecoded`),
//! `App::prepare` ([`App::fit_image`]) and `ui::draw` (which draws [`ImageView::drawn`]). The bytes are never kept in the session: the row's record is read back
//! from the file (one positional read of its line, `Session::line_text`) and its base64 blocks
//! decoded (`crate::import::image_meta::record_images`). Files go where copies go (private,
//! new-only, 0600: `crate::clipboard::write_image`). The viewer is started detached, its output
//! discarded; a failure to start it is said in the status bar.
//!
//! Invariants of `v`: the image is decoded once, on a blocking thread ([`ImageJob`]), within
//! [`MAX_IMAGE_SIDE`] pixels a side and [`MAX_IMAGE_ALLOC`] bytes (a larger or broken image is a
//! message, never a panic), and kept shrunk to [`KEPT_IMAGE_SIDE`]; its half-blocks are
//! computed once per pane size (a draw copies cells, whatever the image);
//! the half-blocks keep the image's aspect (a cell is one pixel wide and two tall) and are
//! centred. Half-blocks are used everywhere, tmux included: they are cells like any other, so
//! the pane's cache, scrolling and diffing need nothing of the terminal. The kitty, sixel and
//! iTerm2 protocols are not used: choosing one needs a terminal query at start-up, and their
//! images live outside the cell grid the pane redraws.

use std::io::Cursor;

use ratatui::layout::Rect;
use ratatui_image::protocol::Protocol;
use ratatui_image::protocol::halfblocks::Halfblocks;

use super::App;
use crate::import::image_meta;
use crate::session::Item;

impl App {
    /// Saves (and with `open`, opens) the selected row's images; the outcome is in
    /// `view.message`.
    pub(super) fn save_images(&mut self, open: bool) {
        self.view.message = Some(self.save_images_message(open));
    }

    /// The selected row's item and its images, read back from the file; `Err`: what to say.
    fn row_images(&self) -> Result<(usize, Vec<image_meta::Image>), String> {
        let Some(item) = self.view.selected_item(&self.session) else {
            return Err("nothing selected".into());
        };
        let (span, call) = match self.session.items.get(item) {
            Some(Item::Event(f)) if crate::session::query::is_image_row(f) => (f.origin.span, None),
            Some(Item::Invocation(k)) => {
                let inv = &self.session.invocations[*k];
                (inv.output_span, Some(inv.invocation_id.as_str()))
            }
            _ => return Err("no image on this row".into()),
        };
        let Some(span) = span else {
            return Err(
                "the image's bytes are only in a saved file (open the transcript, not a stream)"
                    .into(),
            );
        };
        let text = self
            .session
            .line_text(span)
            .map_err(|e| format!("cannot read the image back from the file: {e}"))?;
        let images = image_meta::record_images(&text, call);
        if images.is_empty() {
            return Err("no image on this row".into());
        }
        Ok((item, images))
    }

    /// `v`: shows the selected row's first image in the detail pane, or its next one when one
    /// of this row's is shown; a message when there is none or it cannot be decoded.
    pub(super) fn view_image(&mut self) {
        let next = self.image_view.as_ref().and_then(|v| {
            (Some(v.item) == self.view.selected_item(&self.session)).then_some(v.index + 1)
        });
        let (item, images) = match self.row_images() {
            Ok(x) => x,
            Err(m) => {
                self.view.message = Some(m);
                return;
            }
        };
        let index = next.unwrap_or(0) % images.len();
        let img = &images[index];
        let size = imagesize::blob_size(&img.bytes).ok();
        let words = image_meta::ImageMeta {
            media_type: Some(img.media_type.clone()),
            bytes: img.bytes.len() as u64,
            width: size.map(|s| s.width as u64),
            height: size.map(|s| s.height as u64),
        }
        .words();
        // Decoded on a blocking thread (the loop spawns the job): a large photo takes 100 ms
        // and more; the pane says "decoding" until it arrives.
        self.view.message = None;
        self.image_view = Some(ImageView {
            item,
            index,
            count: images.len(),
            words: words.clone(),
            image: None,
            drawn: None,
        });
        self.image_job = Some(ImageJob {
            item,
            index,
            words,
            bytes: images
                .into_iter()
                .nth(index)
                .map(|i| i.bytes)
                .unwrap_or_default(),
        });
    }

    /// The image to decode, for the loop to run on `spawn_blocking` (`v`).
    pub fn take_image_job(&mut self) -> Option<ImageJob> {
        self.image_job.take()
    }

    /// A decoded image arrived: shown when its row and index are still the ones asked for;
    /// a failure is said in the status bar.
    pub(super) fn on_image_decoded(&mut self, done: ImageDecoded) -> bool {
        let Some(v) = &mut self.image_view else {
            return false;
        };
        if (v.item, v.index) != (done.item, done.index) {
            return false;
        }
        match done.image {
            Ok(image) => {
                // Fitted to the pane as last laid out (a resize before the next draw fits it
                // again in `App::prepare`).
                let area = crate::ui::Areas::inner(self.areas.detail);
                v.drawn = halfblocks(&image, area).map(|p| (area, p));
                v.image = Some(image);
            }
            Err(e) => {
                self.image_view = None;
                self.view.message = Some(format!("cannot show the image ({}): {e}", done.words));
            }
        }
        true
    }

    /// Fits the shown image to the detail pane's inner area `area` (the half-blocks are made
    /// again only when the area changed), and drops it once its row is no longer selected.
    pub(super) fn fit_image(&mut self, area: Rect) {
        let selected = self.view.selected_item(&self.session);
        let Some(v) = &mut self.image_view else {
            return;
        };
        if Some(v.item) != selected || self.view.tab != crate::view::Tab::Detail {
            self.image_view = None;
            return;
        }
        if v.drawn.as_ref().is_some_and(|(a, _)| *a == area) {
            return;
        }
        if let Some(image) = &v.image {
            v.drawn = halfblocks(image, area).map(|p| (area, p));
        }
    }

    fn save_images_message(&self, open: bool) -> String {
        let images = match self.row_images() {
            Ok((_, images)) => images,
            Err(m) => return m,
        };
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

/// Longest side, in pixels, of an image `v` decodes.
pub const MAX_IMAGE_SIDE: u32 = 8192;
/// Most bytes `v` lets the decoder allocate for one image.
pub const MAX_IMAGE_ALLOC: u64 = 128 * 1024 * 1024;

/// The image `v` shows: which row and which of its images, what it is, the decoded pixels, and
/// its half-blocks for the pane area they were made for.
pub struct ImageView {
    pub item: usize,
    /// Which of the row's images (0-based), of `count`.
    pub index: usize,
    pub count: usize,
    /// `image/png · 155 B · 64×48`.
    pub words: String,
    /// `None` while its job decodes it.
    image: Option<image::DynamicImage>,
    drawn: Option<(Rect, Protocol)>,
}

/// Longest side, in pixels, an image is kept at once decoded (shrunk with its aspect kept):
/// more than any terminal shows in half-blocks, so fitting it to the pane on a resize is cheap.
pub const KEPT_IMAGE_SIDE: u32 = 1024;

/// `v`'s decode, run off the app task ([`App::take_image_job`]).
#[derive(Debug)]
pub struct ImageJob {
    item: usize,
    index: usize,
    words: String,
    bytes: Vec<u8>,
}

/// What an [`ImageJob`] gives back (`Msg::ImageDecoded`).
#[derive(Debug)]
pub struct ImageDecoded {
    item: usize,
    index: usize,
    words: String,
    image: Result<image::DynamicImage, String>,
}

impl ImageJob {
    /// Decodes the image within the limits and shrinks it to [`KEPT_IMAGE_SIDE`] (blocking).
    pub fn run(self) -> ImageDecoded {
        let image = decode(&self.bytes).map(|i| {
            if i.width() > KEPT_IMAGE_SIDE || i.height() > KEPT_IMAGE_SIDE {
                i.thumbnail(KEPT_IMAGE_SIDE, KEPT_IMAGE_SIDE)
            } else {
                i
            }
        });
        ImageDecoded {
            item: self.item,
            index: self.index,
            words: self.words,
            image,
        }
    }
}

impl std::fmt::Debug for ImageView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageView")
            .field("item", &self.item)
            .field("index", &self.index)
            .field("count", &self.count)
            .field("words", &self.words)
            .field("drawn", &self.drawn.as_ref().map(|(a, p)| (*a, p.area())))
            .finish_non_exhaustive()
    }
}

impl ImageView {
    /// The pane title: `Image 1/2 · image/png · 155 B · 64×48 · v next · Esc back`
    /// (`… · decoding · …` until the image arrives).
    pub fn title(&self) -> String {
        let next = if self.count > 1 { "v next · " } else { "" };
        let state = if self.image.is_none() {
            "decoding · "
        } else {
            ""
        };
        format!(
            " Image {}/{} · {} · {state}{next}Esc back ",
            self.index + 1,
            self.count,
            crate::render::text::visible(&self.words)
        )
    }

    /// The half-blocks and the area (inside the pane) they are drawn at, once fitted.
    pub fn drawn(&self) -> Option<(Rect, &Protocol)> {
        self.drawn.as_ref().map(|(_, p)| (p.area(), p))
    }
}

/// Decodes `bytes` (PNG, JPEG, GIF, WebP, BMP; the format from the bytes) within the limits.
fn decode(bytes: &[u8]) -> Result<image::DynamicImage, String> {
    let mut reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_IMAGE_ALLOC);
    reader.limits(limits);
    reader.decode().map_err(|e| e.to_string())
}

/// The half-blocks of `image` fitted into `area`: the largest size with the image's aspect (a
/// cell is one pixel wide and two tall), centred. `None` when the area is empty.
fn halfblocks(image: &image::DynamicImage, area: Rect) -> Option<Protocol> {
    let (w, h) = (u64::from(image.width()), u64::from(image.height()));
    let (cols, px_rows) = (u64::from(area.width), u64::from(area.height) * 2);
    if w == 0 || h == 0 || cols == 0 || px_rows == 0 {
        return None;
    }
    // Fit w×h into cols×px_rows, keeping w:h.
    let (fw, fh) = if w * px_rows <= h * cols {
        ((w * px_rows / h).max(1), px_rows)
    } else {
        (cols, (h * cols / w).max(1))
    };
    let rows = fh.div_ceil(2);
    let fit = Rect {
        x: area.x + u16::try_from((cols - fw) / 2).unwrap_or(0),
        y: area.y + u16::try_from((u64::from(area.height) - rows) / 2).unwrap_or(0),
        width: u16::try_from(fw).unwrap_or(area.width),
        height: u16::try_from(rows).unwrap_or(area.height),
    };
    Halfblocks::new(image.clone(), fit)
        .ok()
        .map(Protocol::Halfblocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(image::RgbImage::new(w, h))
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    fn job(bytes: Vec<u8>) -> ImageDecoded {
        ImageJob {
            item: 3,
            index: 1,
            words: "image/png".into(),
            bytes,
        }
        .run()
    }

    #[test]
    fn a_decoded_image_is_kept_within_the_side_its_aspect_kept() {
        let big = job(png(3000, 1500)).image.unwrap();
        assert_eq!(
            (big.width(), big.height()),
            (KEPT_IMAGE_SIDE, KEPT_IMAGE_SIDE / 2)
        );
        let small = job(png(64, 48)).image.unwrap();
        assert_eq!((small.width(), small.height()), (64, 48));
        assert!(job(png(MAX_IMAGE_SIDE + 1, 1)).image.is_err());
        assert!(job(b"GIF89a".to_vec()).image.is_err());
    }

    #[test]
    fn half_blocks_keep_the_aspect_and_are_centred() {
        let img = image::DynamicImage::ImageRgb8(image::RgbImage::new(200, 100));
        // 50 columns × 10 rows = 50×20 pixels: 200×100 fits as 40×20, centred.
        let p = halfblocks(&img, Rect::new(2, 3, 50, 10)).unwrap();
        assert_eq!(p.area(), Rect::new(7, 3, 40, 10));
        // A tall image in a wide pane: 100×400 in 50×20 pixels fits as 5×20.
        let tall = image::DynamicImage::ImageRgb8(image::RgbImage::new(100, 400));
        assert_eq!(
            halfblocks(&tall, Rect::new(0, 0, 50, 10)).unwrap().area(),
            Rect::new(22, 0, 5, 10)
        );
        assert!(halfblocks(&img, Rect::new(0, 0, 0, 10)).is_none());
    }
}
