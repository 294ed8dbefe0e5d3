//! The file reader decodes RAWP NDJSON on two threads (`source::file`): the items, their order,
//! line numbers and byte spans are exactly those of decoding the whole input on one thread
//! (`import::load_bytes`), batches hold at most `BATCH` items, and the reader stops as soon as
//! the sink says so.
#![allow(clippy::unwrap_used)]

use std::io::Write;

use rawpv::import::{self, Decoded};
use rawpv::source::BATCH;
use rawpv::source::file::{FileEvent, ReadOptions, read_path_with};

use crate::generator;

/// A generated recording with odd lines mixed in: blank, `\r\n`, bad JSON, invalid UTF-8.
fn recording() -> Vec<u8> {
    let mut buf = Vec::new();
    generator::generate(&mut buf, 12_000, 3).unwrap();
    let mut out = Vec::with_capacity(buf.len() + 4096);
    for (i, line) in buf.split(|&b| b == b'\n').enumerate() {
        out.extend_from_slice(line);
        match i % 997 {
            1 => out.extend_from_slice(b"\r\n\n"),
            2 => out.extend_from_slice(b"\n{not json\n"),
            3 => out.extend_from_slice(
                b"\n{\"type\":\"agent.text.done\",\"payload\":{\"text\":\"\xff\"}}\n",
            ),
            _ => out.push(b'\n'),
        }
    }
    out
}

fn read(bytes: &[u8], opts: ReadOptions) -> (Vec<Decoded>, Vec<usize>) {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    let (mut items, mut sizes) = (Vec::new(), Vec::new());
    read_path_with(f.path(), opts, |ev| {
        if let FileEvent::Batch(b) = ev {
            sizes.push(b.len());
            items.extend(b);
        }
        true
    })
    .unwrap();
    // Spans point at each frame's own line; then they are cleared to compare with `load_bytes`.
    for d in &mut items {
        if let Decoded::Frame(fr) = d {
            let span = fr.origin.span.take().unwrap();
            let line = &bytes[span.offset as usize..span.end() as usize];
            let text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(line));
            let again = rawpv::protocol::parse_line(fr.origin.line, &text).unwrap();
            assert_eq!(again.envelope, fr.envelope);
            assert_eq!(again.frame_type, fr.frame_type);
            fr.origin.output_skipped = false;
        }
    }
    (items, sizes)
}

#[test]
fn two_threads_decode_exactly_like_one() {
    let bytes = recording();
    assert!(bytes.len() > 5_000_000, "more than one read of 4 MiB");
    let want = import::load_bytes(&bytes).items;
    let (got, sizes) = read(&bytes, ReadOptions::default());
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    assert!(sizes.iter().all(|&n| n <= BATCH), "{sizes:?}");
    // With outputs skipped: the same frames but for results' outputs.
    let (skipped, _) = read(
        &bytes,
        ReadOptions {
            defer_outputs: true,
        },
    );
    assert_eq!(skipped.len(), want.len());
    for (g, w) in skipped.iter().zip(&want) {
        match (g, w) {
            (Decoded::Frame(g), Decoded::Frame(w)) => {
                assert_eq!(g.origin, w.origin);
                assert_eq!(g.envelope, w.envelope);
                assert_eq!(g.frame_type, w.frame_type);
            }
            (g, w) => assert_eq!(g, w),
        }
    }
}

#[test]
fn the_reader_stops_at_the_first_batch_when_asked() {
    let bytes = recording();
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(&bytes).unwrap();
    let mut first = None;
    read_path_with(f.path(), ReadOptions::default(), |ev| {
        if let FileEvent::Batch(b) = ev {
            first.get_or_insert(b.len());
            return false; // stop at once: the viewer quit
        }
        true
    })
    .unwrap();
    assert_eq!(first, Some(BATCH));
}
