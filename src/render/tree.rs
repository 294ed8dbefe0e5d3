//! `file_list` renderer: paths as a directory tree (common prefix folded into the root line,
//! single-child directory chains joined, file counts on directories), or a flat list with
//! `cx.flat_list`.
//!
//! Who calls it: `renderer_for(FileList)`.
//! Shapes: an array of path strings; `{filenames: [...], num_files?, truncated?}` (camelCase
//! too). Claude Code's Grep in `content` mode (`{mode:"content", content, filenames: []}`) shows
//! its `content` as text. Anything else: JSON tree. Both `/` and `\` separate components.
//! Order: directories first, then files, each sorted by name (byte order).

use std::collections::BTreeMap;

use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Block, Out, RenderCtx, Rendered, Renderer, field};

/// `file_list` renderer (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeRenderer;

impl Renderer for TreeRenderer {
    fn render(&self, block: &Block<'_>, cx: &RenderCtx<'_>) -> Rendered {
        let v = block.output;
        let (list, declared, truncated) = match v {
            Value::Array(a) => (a, None, false),
            Value::Object(_) => {
                let names = field(v, &["filenames", "files", "paths"]).and_then(Value::as_array);
                match names {
                    Some(a) if !a.is_empty() || field(v, &["content"]).is_none() => (
                        a,
                        field(v, &["num_files", "numFiles"]).and_then(Value::as_u64),
                        field(v, &["truncated"]).and_then(Value::as_bool) == Some(true),
                    ),
                    _ => {
                        return match field(v, &["content"]) {
                            Some(Value::String(s)) => super::text::build_ansi_lines(s, cx),
                            _ => super::json::build_json_lines(v, cx),
                        };
                    }
                }
            }
            Value::String(s) => return super::text::build_ansi_lines(s, cx),
            Value::Null => return Rendered::default(),
            other => return super::json::build_json_lines(other, cx),
        };
        let paths: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
        build_tree_lines(&paths, declared, truncated, cx)
    }
}

/// A directory in the tree model.
#[derive(Debug, Default)]
struct Dir<'a> {
    dirs: BTreeMap<&'a str, Self>,
    files: Vec<&'a str>,
    /// Files at or below this directory.
    count: usize,
}

impl<'a> Dir<'a> {
    fn insert(&mut self, parts: &[&'a str]) {
        self.count += 1;
        match parts {
            [] => {}
            [file] => self.files.push(file),
            [dir, rest @ ..] => self.dirs.entry(dir).or_default().insert(rest),
        }
    }
}

fn split(p: &str) -> Vec<&str> {
    p.split(['/', '\\']).filter(|c| !c.is_empty()).collect()
}

/// Paths as a tree (or flat list); `declared` is the tool's own count, `truncated` its flag.
pub fn build_tree_lines(
    paths: &[&str],
    declared: Option<u64>,
    truncated: bool,
    cx: &RenderCtx<'_>,
) -> Rendered {
    let theme = cx.theme;
    let mut out = Out::new(cx);
    if paths.is_empty() {
        out.push(Line::from(Span::styled("(no files)", theme.dim)));
        return out.finish(theme);
    }
    let split_paths: Vec<Vec<&str>> = paths.iter().map(|p| split(p)).collect();
    // Common directory prefix (never the whole path of a file).
    let mut common = split_paths[0].len().saturating_sub(1);
    for s in &split_paths[1..] {
        common = common.min(s.len().saturating_sub(1));
        let same = split_paths[0]
            .iter()
            .zip(s)
            .take(common)
            .take_while(|(a, b)| a == b)
            .count();
        common = same;
    }
    let absolute = paths[0].starts_with('/');
    let prefix = {
        let mut p = split_paths[0][..common].join("/");
        if absolute {
            p.insert(0, '/');
        }
        if !p.is_empty() && !p.ends_with('/') {
            p.push('/');
        }
        p
    };
    let n = paths.len();
    let mut head = vec![];
    if !prefix.is_empty() {
        head.extend(super::text::plain_spans(&prefix, theme.diff_file, theme));
        head.push(Span::raw(" "));
    }
    let count = match declared {
        Some(d) if d as usize != n => format!("{n} of {d} files"),
        _ => crate::fmt::plural(n, "file"),
    };
    head.push(Span::styled(count, theme.dim));
    if truncated {
        head.push(Span::styled(" (truncated)", theme.hint));
    }
    out.push(Line::from(head));

    if cx.flat_list {
        for (i, s) in split_paths.iter().enumerate() {
            if out.full() {
                out.skip(n - i);
                break;
            }
            out.push(super::text::plain_line(
                &s[common..].join("/"),
                theme.text,
                theme,
            ));
        }
        return out.finish(theme);
    }
    let mut root = Dir::default();
    for s in &split_paths {
        root.insert(&s[common..]);
    }
    walk(&mut out, &root, "", cx);
    out.finish(theme)
}

fn walk(out: &mut Out, dir: &Dir<'_>, indent: &str, cx: &RenderCtx<'_>) {
    let theme = cx.theme;
    let mut files = dir.files.clone();
    files.sort_unstable();
    let total = dir.dirs.len() + files.len();
    for (i, (name, sub)) in dir.dirs.iter().enumerate() {
        if out.full() {
            out.skip(sub.count);
            continue;
        }
        let last = i + 1 == total;
        // Fold single-child directory chains: `a/b/c/`.
        let mut label = (*name).to_owned();
        let mut d = sub;
        while d.files.is_empty() && d.dirs.len() == 1 {
            let Some((n, s)) = d.dirs.iter().next() else {
                break;
            };
            label.push('/');
            label.push_str(n);
            d = s;
        }
        let mut spans = vec![Span::styled(
            format!("{indent}{}", if last { "└── " } else { "├── " }),
            theme.dim,
        )];
        spans.extend(super::text::plain_spans(
            &format!("{label}/"),
            theme.hint,
            theme,
        ));
        spans.push(Span::styled(format!(" {}", d.count), theme.dim));
        out.push(Line::from(spans));
        let child = format!("{indent}{}", if last { "    " } else { "│   " });
        walk(out, d, &child, cx);
    }
    for (j, f) in files.iter().enumerate() {
        if out.full() {
            out.skip(files.len() - j);
            break;
        }
        let last = dir.dirs.len() + j + 1 == total;
        let mut spans = vec![Span::styled(
            format!("{indent}{}", if last { "└── " } else { "├── " }),
            theme.dim,
        )];
        spans.extend(super::text::plain_spans(f, theme.text, theme));
        out.push(Line::from(spans));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::OutputType;
    use crate::render::{lines_to_string, render_output};
    use crate::theme::Theme;
    use serde_json::json;

    #[test]
    fn tree_folds_prefix_and_chains() {
        let t = Theme::dark();
        let cx = RenderCtx::new(80, &t);
        let v = json!({"filenames": ["/p/src/a/b/x.rs", "/p/src/main.rs", "/p/README.md", "/p/src/a/b/y.rs"], "numFiles": 4});
        let r = render_output(&OutputType::FileList, &v, "Glob", &Value::Null, &cx);
        assert_eq!(
            lines_to_string(&r.lines),
            "/p/ 4 files\n├── src/ 3\n│   ├── a/b/ 2\n│   │   ├── x.rs\n│   │   └── y.rs\n│   └── main.rs\n└── README.md\n"
        );
        let mut flat = cx;
        flat.flat_list = true;
        let r = render_output(
            &OutputType::FileList,
            &json!(["a/x", "a/y"]),
            "Glob",
            &Value::Null,
            &flat,
        );
        assert_eq!(lines_to_string(&r.lines), "a/ 2 files\nx\ny\n");
    }
}
