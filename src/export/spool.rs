//! Where an export keeps what it has written until the document can be put together: a page's
//! header figures, style classes and filter lists are known only at the end of the input, and a
//! call still open is written where it stands only once its result comes.
//!
//! Who calls it: [`super::html`] and [`super::markdown`], which write rows as the input folds
//! (`rawpv export` of a file drops the rows written, as `print` does) and put the document
//! together at the end. [`Spool`] holds bytes in memory up to [`MEMORY_BYTES`], then in an
//! anonymous temporary file (in memory again if none can be made). [`Pieces`] is a spool with
//! holes: a piece of text whose content comes later (an open call's row, a turn's header with
//! its counts) is a hole, filled once known; [`Pieces::copy_to`] writes the text with every
//! hole filled, in order.
//!
//! Invariants: bytes come back in the order written; a hole never filled writes nothing.

use std::io::{Read, Seek, Write};

/// Bytes a spool holds in memory before it moves to a temporary file.
pub const MEMORY_BYTES: usize = 1024 * 1024;

/// Bytes written to be read back once, in order.
#[derive(Debug)]
pub enum Spool {
    Memory(Vec<u8>),
    File(std::io::BufWriter<std::fs::File>),
}

impl Default for Spool {
    fn default() -> Self {
        Self::Memory(Vec::new())
    }
}

impl Spool {
    /// Appends `s`.
    ///
    /// # Errors
    /// Writing the temporary file failed.
    pub fn push(&mut self, s: &str) -> std::io::Result<()> {
        match self {
            Self::Memory(v) => {
                v.extend_from_slice(s.as_bytes());
                if v.len() > MEMORY_BYTES
                    && let Ok(f) = tempfile::tempfile()
                {
                    let mut f = std::io::BufWriter::with_capacity(256 * 1024, f);
                    f.write_all(v)?;
                    *self = Self::File(f);
                }
                Ok(())
            }
            Self::File(f) => f.write_all(s.as_bytes()),
        }
    }

    /// A reader of everything pushed, from the start.
    ///
    /// # Errors
    /// Flushing or rewinding the temporary file failed.
    pub fn into_reader(self) -> std::io::Result<Box<dyn Read>> {
        Ok(match self {
            Self::Memory(v) => Box::new(std::io::Cursor::new(v)),
            Self::File(f) => {
                let mut f = f
                    .into_inner()
                    .map_err(std::io::IntoInnerError::into_error)?;
                f.rewind()?;
                Box::new(std::io::BufReader::with_capacity(256 * 1024, f))
            }
        })
    }

    /// Writes everything pushed to `out`.
    ///
    /// # Errors
    /// Reading the spool or writing `out` failed.
    pub fn copy_to(self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut r = self.into_reader()?;
        std::io::copy(&mut r, out)?;
        Ok(())
    }
}

/// A run of the text: `n` bytes of the spool, or a hole.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Text(u64),
    Hole(usize),
}

/// Text with holes filled later ([`Self::hole`], [`Self::fill`]).
#[derive(Debug, Default)]
pub struct Pieces {
    spool: Spool,
    runs: Vec<Piece>,
    fills: Vec<Option<String>>,
}

/// A place in [`Pieces`] whose text comes later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hole(usize);

impl Pieces {
    /// Appends `s`.
    ///
    /// # Errors
    /// As [`Spool::push`].
    pub fn push(&mut self, s: &str) -> std::io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        self.spool.push(s)?;
        let n = s.len() as u64;
        match self.runs.last_mut() {
            Some(Piece::Text(m)) => *m += n,
            _ => self.runs.push(Piece::Text(n)),
        }
        Ok(())
    }

    /// Appends a hole.
    pub fn hole(&mut self) -> Hole {
        let h = self.fills.len();
        self.fills.push(None);
        self.runs.push(Piece::Hole(h));
        Hole(h)
    }

    /// Gives hole `h` its text.
    pub fn fill(&mut self, h: Hole, text: String) {
        if let Some(slot) = self.fills.get_mut(h.0) {
            *slot = Some(text);
        }
    }

    /// Writes the text to `out`, every hole filled.
    ///
    /// # Errors
    /// Reading the spool or writing `out` failed.
    pub fn copy_to(self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut r = self.spool.into_reader()?;
        let mut fills = self.fills;
        for p in self.runs {
            match p {
                Piece::Text(n) => {
                    let copied = std::io::copy(&mut (&mut r).take(n), out)?;
                    if copied != n {
                        return Err(std::io::Error::other("the export's spool ended early"));
                    }
                }
                Piece::Hole(h) => {
                    if let Some(Some(t)) = fills.get_mut(h).map(Option::take) {
                        out.write_all(t.as_bytes())?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_filled_in_place_in_memory_and_from_a_file() {
        for big in [false, true] {
            let mut p = Pieces::default();
            let filler = "x".repeat(if big { MEMORY_BYTES + 10 } else { 10 });
            p.push("a").unwrap_or_default();
            let h1 = p.hole();
            p.push(&filler).unwrap_or_default();
            let h2 = p.hole();
            let _never = p.hole();
            p.push("z").unwrap_or_default();
            p.fill(h2, "2".into());
            p.fill(h1, "1".into());
            let mut out = Vec::new();
            p.copy_to(&mut out).unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&out), format!("a1{filler}2z"));
        }
    }
}
