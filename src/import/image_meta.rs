//! What an image block is without drawing it (issue 20): its media type, size in bytes and
//! pixel dimensions, read from the first bytes of its base64 data (`imagesize` reads the
//! header; nothing is decoded past [`HEADER_BYTES`]); and the images of one Claude Code record
//! line, decoded, for the viewer's save and open keys.
//!
//! Who calls it: the Claude Code mapper (`super::cc_map`, `super::cc_output`) for placeholders,
//! the app (`crate::app`) when a user saves or opens an image. Invariants: never panics on bad
//! base64 or a bad header (the dimensions are then absent); work bounded by [`HEADER_BYTES`]
//! for the placeholder and by [`MAX_IMAGES`] and the line's length for the decode.

use base64::Engine as _;
use serde_json::Value;

use super::at;

/// Bytes of an image decoded to find its dimensions (a JPEG's size marker may follow its EXIF
/// block; 64 KiB covers phone photos' usual headers).
pub const HEADER_BYTES: usize = 64 * 1024;
/// Images taken from one record.
pub const MAX_IMAGES: usize = 64;

/// An image's media type, byte size and pixel size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImageMeta {
    pub media_type: Option<String>,
    /// Decoded size in bytes (from the base64 length).
    pub bytes: u64,
    pub width: Option<u64>,
    pub height: Option<u64>,
}

impl ImageMeta {
    /// `image/png · 766.4 KiB · 1280×800` (the parts known).
    pub fn words(&self) -> String {
        let mut parts = vec![self.media_type.clone().unwrap_or_else(|| "image".into())];
        parts.push(crate::fmt::bytes(self.bytes));
        if let (Some(w), Some(h)) = (self.width, self.height) {
            parts.push(format!("{w}×{h}"));
        }
        parts.join(" · ")
    }
}

/// The meta of an Anthropic image block (`{type: "image", source: {type: "base64", media_type,
/// data}}`); `None` when it has no base64 source.
pub fn block_meta(block: &Value) -> Option<ImageMeta> {
    let src = block.get("source")?;
    let data = src.get("data").and_then(Value::as_str)?;
    let mut m = base64_meta(data);
    m.media_type = src
        .get("media_type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(m)
}

/// Byte size and dimensions of base64 `data` (standard alphabet, padding optional).
pub fn base64_meta(data: &str) -> ImageMeta {
    let data = data.trim();
    let pad = data.bytes().rev().take_while(|&b| b == b'=').count();
    let bytes = (data.len() / 4 * 3).saturating_sub(pad) as u64
        + match data.len() % 4 {
            2 => 1,
            3 => 2,
            _ => 0,
        };
    // A prefix of whole 4-character groups decodes on its own.
    let take = (HEADER_BYTES / 3 * 4).min(data.len() / 4 * 4);
    let head = base64::engine::general_purpose::STANDARD
        .decode(&data.as_bytes()[..take])
        .unwrap_or_default();
    let size = imagesize::blob_size(&head).ok();
    ImageMeta {
        media_type: None,
        bytes,
        width: size.map(|s| s.width as u64),
        height: size.map(|s| s.height as u64),
    }
}

/// One image of a record: its media type and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: String,
    pub bytes: Vec<u8>,
}

/// The images of one Claude Code record (its line's text): the `image` blocks of
/// `message.content`, and those inside its `tool_result` blocks (of call `invocation_id` only,
/// when given), in order, at most [`MAX_IMAGES`]. Blocks whose data is not base64 are skipped.
pub fn record_images(text: &str, invocation_id: Option<&str>) -> Vec<Image> {
    let Ok(rec) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let blocks = at(&rec, &["message", "content"])
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("image") if invocation_id.is_none() => push_image(b, &mut out),
            Some("tool_result")
                if invocation_id
                    .is_none_or(|id| b.get("tool_use_id").and_then(Value::as_str) == Some(id)) =>
            {
                for inner in b
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice)
                {
                    if inner.get("type").and_then(Value::as_str) == Some("image") {
                        push_image(inner, &mut out);
                    }
                }
            }
            _ => {}
        }
        if out.len() >= MAX_IMAGES {
            out.truncate(MAX_IMAGES);
            break;
        }
    }
    out
}

fn push_image(b: &Value, out: &mut Vec<Image>) {
    let Some(src) = b.get("source") else { return };
    let Some(data) = src.get("data").and_then(Value::as_str) else {
        return;
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
        return;
    };
    let media_type = src
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream")
        .to_owned();
    out.push(Image { media_type, bytes });
}

/// A file extension for a media type (`image/png` → `png`; unknown: `bin`).
pub fn extension(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/bmp" => "bmp",
        "image/tiff" => "tiff",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×2 PNG's first bytes (signature and IHDR) are enough.
    const PNG_3X2: &str = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAD0lEQVR4nGNgYPgPQzAWADXeBfvilmCeAAAAAElFTkSuQmCC";

    #[test]
    fn meta_of_a_png() {
        let m = base64_meta(PNG_3X2);
        assert_eq!(
            m,
            ImageMeta {
                media_type: None,
                bytes: 72,
                width: Some(3),
                height: Some(2),
            }
        );
        let block = serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_3X2}});
        assert_eq!(
            block_meta(&block).unwrap().words(),
            "image/png · 72 B · 3×2"
        );
    }

    #[test]
    fn bad_data_has_no_dimensions() {
        assert_eq!(
            base64_meta("@@@@not base64"),
            ImageMeta {
                media_type: None,
                bytes: 10,
                width: None,
                height: None
            }
        );
        assert_eq!(base64_meta("").bytes, 0);
        assert!(record_images("{not json", None).is_empty());
    }
}
