//! Render cache: rendered (and wrapped) lines per block, keyed so stale entries are never used.
//!
//! Who calls it: the detail pane and the app (which fills it from `spawn_blocking` render jobs),
//! `print --detail` does not need it. A cache is derived data: throw it away at any time.
//!
//! Key: (invocation index, block, invocation `rev`, width, theme id, render flags) — any change
//! of those makes a new key; [`RenderCache::invalidate`] drops an invocation's entries eagerly.
//! The JSON tree's toggle set (`RenderCtx::toggled`) is not part of the key: call
//! [`RenderCache::invalidate`] for the invocation when the user folds or unfolds a node.
//! Value: the lines ready to draw (wrapped at `width` when the render context asked for wrap)
//! plus their count, so the pane's height and scrollbar are O(1) and drawing slices
//! `lines[scroll..scroll + height]`. Capacity is bounded (least recently inserted goes first).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use ratatui::text::Line;

use super::{RenderCtx, Rendered};

/// Which block of an invocation's detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// The request's input.
    Input,
    /// The result's output.
    Output,
    /// The streamed chunks.
    Stream,
}

/// Cache key (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Index into `Session::invocations`.
    pub invocation: usize,
    pub block: BlockKind,
    /// `Invocation::rev` when rendered.
    pub rev: u64,
    /// Columns.
    pub width: u16,
    pub theme_id: u8,
    /// [`RenderCtx::flags`].
    pub flags: u8,
}

impl CacheKey {
    /// The key for a block rendered with `cx`.
    pub fn new(invocation: usize, block: BlockKind, rev: u64, cx: &RenderCtx<'_>) -> Self {
        Self {
            invocation,
            block,
            rev,
            width: cx.width,
            theme_id: cx.theme.id,
            flags: cx.flags(),
        }
    }

    /// The same key without highlighting (the cheap rendering shown while highlighting runs).
    #[must_use]
    pub fn plain(self) -> Self {
        Self {
            flags: self.flags & !1,
            ..self
        }
    }
}

/// Lines ready to draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CachedLines {
    /// Wrapped (when the context asked for it) rows.
    pub lines: Vec<Line<'static>>,
    /// The renderer cut something ([`super::Limits`]).
    pub truncated: bool,
}

impl CachedLines {
    /// Builds from a renderer's output, wrapping at `width` when `wrap`.
    pub fn new(rendered: Rendered, width: u16, wrap: bool) -> Self {
        let lines = if wrap {
            super::wrap::wrap_lines(&rendered.lines, width)
        } else {
            rendered.lines
        };
        Self {
            lines,
            truncated: rendered.truncated,
        }
    }

    /// Rows (O(1)).
    pub fn height(&self) -> usize {
        self.lines.len()
    }

    /// The rows `scroll..scroll + height`, clamped to what exists.
    pub fn slice(&self, scroll: usize, height: usize) -> &[Line<'static>] {
        let start = scroll.min(self.lines.len());
        let end = start.saturating_add(height).min(self.lines.len());
        &self.lines[start..end]
    }
}

/// Bounded map from [`CacheKey`] to shared [`CachedLines`].
#[derive(Debug, Default)]
pub struct RenderCache {
    map: HashMap<CacheKey, Arc<CachedLines>>,
    order: VecDeque<CacheKey>,
    capacity: usize,
}

/// Default number of cached blocks.
pub const DEFAULT_CAPACITY: usize = 256;

impl RenderCache {
    /// A cache holding at most `capacity` blocks (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&self, key: &CacheKey) -> Option<Arc<CachedLines>> {
        self.map.get(key).cloned()
    }

    /// The entry for `key`, else its un-highlighted variant.
    pub fn get_best(&self, key: &CacheKey) -> Option<Arc<CachedLines>> {
        self.get(key).or_else(|| self.get(&key.plain()))
    }

    /// Stores lines for `key` (replacing any), evicting the oldest entry when full.
    pub fn insert(&mut self, key: CacheKey, lines: CachedLines) -> Arc<CachedLines> {
        let v = Arc::new(lines);
        if self.map.insert(key, Arc::clone(&v)).is_none() {
            self.order.push_back(key);
            while self.order.len() > self.capacity.max(1) {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
        v
    }

    /// The entry for `key`, rendering (and wrapping) it with `render` when missing.
    pub fn get_or_render(
        &mut self,
        key: CacheKey,
        wrap: bool,
        render: impl FnOnce() -> Rendered,
    ) -> Arc<CachedLines> {
        if let Some(v) = self.get(&key) {
            return v;
        }
        let lines = CachedLines::new(render(), key.width, wrap);
        self.insert(key, lines)
    }

    /// Drops every entry of one invocation.
    pub fn invalidate(&mut self, invocation: usize) {
        self.map.retain(|k, _| k.invocation != invocation);
        self.order.retain(|k| k.invocation != invocation);
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;

    #[test]
    fn caches_wraps_and_evicts() {
        let t = Theme::dark();
        let cx = RenderCtx::new(3, &t);
        let mut c = RenderCache::new(2);
        let k = CacheKey::new(0, BlockKind::Output, 1, &cx);
        let mut calls = 0;
        let e = c.get_or_render(k, true, || {
            calls += 1;
            Rendered {
                lines: vec![Line::from("abcdefg")],
                truncated: false,
            }
        });
        assert_eq!(e.height(), 3);
        assert_eq!(e.slice(1, 10).len(), 2);
        assert_eq!(e.slice(9, 10).len(), 0);
        let _ = c.get_or_render(k, true, || unreachable!());
        assert_eq!(calls, 1);
        assert!(
            c.get_best(&CacheKey {
                flags: k.flags | 1,
                ..k
            })
            .is_some()
        );
        c.insert(CacheKey { rev: 2, ..k }, CachedLines::default());
        c.insert(CacheKey { rev: 3, ..k }, CachedLines::default());
        assert_eq!(c.len(), 2);
        assert!(c.get(&k).is_none());
        c.invalidate(0);
        assert!(c.is_empty());
    }
}
