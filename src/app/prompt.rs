//! Editing the search and filter prompts like a shell line: the cursor (Left/Right, Home/End,
//! Ctrl-A/E), deleting (Backspace, Delete, Ctrl-U to the start, Ctrl-W a word, Ctrl-K to the
//! end), history (Up/Down through the committed texts of the prompt's mode), and a selected
//! text (the filter prompt reopens with the old filter selected: typing replaces it).
//!
//! Who calls it: `App::on_input_key` for every key but Enter, Esc and Ctrl-C.
//! Invariants: `view.input_cursor` stays at a character boundary of `view.input`, at most its
//! length; pure state changes, no I/O.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::view::{Mode, ViewState};

/// Applies key `k` to the prompt's text; returns whether the text changed (the caller then
/// previews it). Keys that mean nothing here are ignored.
pub fn edit(view: &mut ViewState, k: &KeyEvent) -> bool {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    let cur = view.input_cursor.min(view.input.len());
    let selected = std::mem::take(&mut view.input_selected);
    let before = view.input.clone();
    match k.code {
        KeyCode::Char(c) if !ctrl => {
            if selected {
                view.input.clear();
                view.input.push(c);
                view.input_cursor = c.len_utf8();
            } else {
                view.input.insert(cur, c);
                view.input_cursor = cur + c.len_utf8();
            }
        }
        KeyCode::Backspace | KeyCode::Delete if selected => clear(view),
        KeyCode::Backspace => {
            let start = prev_boundary(&view.input, cur);
            view.input.replace_range(start..cur, "");
            view.input_cursor = start;
        }
        KeyCode::Delete => {
            let end = next_boundary(&view.input, cur);
            view.input.replace_range(cur..end, "");
        }
        KeyCode::Left => view.input_cursor = prev_boundary(&view.input, cur),
        KeyCode::Right => view.input_cursor = next_boundary(&view.input, cur),
        KeyCode::Home => view.input_cursor = 0,
        KeyCode::End => view.input_cursor = view.input.len(),
        KeyCode::Char('a') if ctrl => view.input_cursor = 0,
        KeyCode::Char('e') if ctrl => view.input_cursor = view.input.len(),
        KeyCode::Char('u') if ctrl => {
            view.input.replace_range(..cur, "");
            view.input_cursor = 0;
        }
        KeyCode::Char('k') if ctrl => view.input.truncate(cur),
        KeyCode::Char('w') if ctrl => {
            let head = view.input[..cur].trim_end();
            let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
            view.input.replace_range(start..cur, "");
            view.input_cursor = start;
        }
        KeyCode::Up | KeyCode::Down => recall(view, k.code == KeyCode::Up),
        _ => view.input_selected = selected,
    }
    view.input != before
}

fn clear(view: &mut ViewState) {
    view.input.clear();
    view.input_cursor = 0;
}

/// Up (`older`) / Down through the committed texts of the open prompt's mode; Down past the
/// newest gives an empty line.
fn recall(view: &mut ViewState, older: bool) {
    let list = match view.mode {
        Mode::Filter => &view.history.filter,
        Mode::Search | Mode::Normal => &view.history.search,
    };
    if list.is_empty() {
        return;
    }
    let pos = match (view.history.pos, older) {
        (None, true) => Some(list.len() - 1),
        (None, false) => None,
        (Some(p), true) => Some(p.saturating_sub(1)),
        (Some(p), false) => (p + 1 < list.len()).then_some(p + 1),
    };
    view.input = pos.map_or_else(String::new, |p| list[p].clone());
    view.history.pos = pos;
    view.input_cursor = view.input.len();
}

fn prev_boundary(s: &str, i: usize) -> usize {
    s[..i].char_indices().next_back().map_or(0, |(j, _)| j)
}

fn next_boundary(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(i, |c| i + c.len_utf8())
}
