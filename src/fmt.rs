//! Small text helpers every output shares: plurals, durations, byte sizes, display widths and
//! fitting text to a number of columns (cutting at the end, or keeping the tail).
//!
//! Who calls it: the widgets (`ui/`), the renderers (`render/`), the commands (`cmd/`) and
//! `serve`. It is the one place for these: a second copy elsewhere drifts (the catalog once said
//! `62m00s` where the feed said `1h02m`).
//!
//! Invariants: pure functions of their arguments; widths are display columns
//! (`unicode-width`), never bytes or chars; a cut string ends (or, keeping the tail, starts)
//! with `…` and is never wider than asked.

pub mod words;

use unicode_width::UnicodeWidthChar;

/// Display width of a string in columns.
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `n` and a noun, pluralised: `1 error`, `2 errors`, `0 calls` (`noun` is the singular;
/// English `-s` plural).
pub fn plural(n: impl Count, noun: &str) -> String {
    let n = n.get();
    format!("{n} {noun}{}", plural_s(n))
}

/// The plural ending for a count: `""` for 1, else `"s"` (`format!("{n} chunk{}", plural_s(n))`).
pub fn plural_s(n: impl Count) -> &'static str {
    if n.get() == 1 { "" } else { "s" }
}

/// A count of things, whatever integer type holds it (for [`plural`]).
pub trait Count: Copy {
    fn get(self) -> u64;
}

macro_rules! count_from {
    ($($t:ty),*) => {$(
        impl Count for $t {
            fn get(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}
count_from!(u8, u16, u32, u64);

impl Count for usize {
    fn get(self) -> u64 {
        self as u64
    }
}

/// Human duration of `ms` milliseconds, at most 6 columns: `850ms`, `1.2s`, `12m03s`, `1h02m`,
/// `11d19h`, `400d`; `?` when negative or not finite.
pub fn duration_ms(ms: f64) -> String {
    if !ms.is_finite() || ms < 0.0 {
        return "?".to_owned();
    }
    if ms < 1000.0 {
        return format!("{ms:.0}ms");
    }
    let s = ms / 1000.0;
    if s < 60.0 {
        return format!("{s:.1}s");
    }
    let total = s as u64;
    if total < 3600 {
        return format!("{}m{:02}s", total / 60, total % 60);
    }
    if total < 86_400 {
        return format!("{}h{:02}m", total / 3600, (total % 3600) / 60);
    }
    // Days, so a call running for weeks still fits the feed's 6 columns (`11d19h`).
    let days = total / 86_400;
    if days < 100 {
        return format!("{days}d{:02}h", (total % 86_400) / 3600);
    }
    format!("{days}d")
}

/// Human byte size, at most 9 columns: `512 B`, `12.3 KiB`, `4.0 MiB`, `1.2 GiB`, `3.0 TiB`. The
/// unit steps up at 1000 of the smaller one (`1022 KiB` shows as `1.0 MiB`), so the number
/// never has four digits before the point.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 999.95 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// `s` cut to at most `max` bytes at a char boundary, and whether it was cut.
pub fn cut_bytes(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

/// Cuts `s` to at most `width` columns, ending with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > width - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Cuts `s` to at most `width` columns by dropping its start, so a path keeps its file name:
/// `…ompaction-A-excerpt.jsonl`.
pub fn truncate_keep_tail(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept = Vec::new();
    let mut used = 1; // the ellipsis
    for ch in s.chars().rev() {
        let cw = ch.width().unwrap_or(0);
        if used + cw > width {
            break;
        }
        used += cw;
        kept.push(ch);
    }
    let mut out = String::from("…");
    out.extend(kept.iter().rev());
    out
}

/// Cuts a path to at most `width` columns so its file name stays: the middle components give
/// way first (`/home/…/services/waiting_summary.ex`), then the head (`…/services/x.ex`), and a
/// file name wider than `width` keeps its tail (`…summary.ex`). Text that is not a path (no `/`)
/// is cut like [`truncate_keep_tail`]. A leading change letter (`M `, `A `, `D `: the `diff`
/// and `apply_patch` summaries) is kept before the cut path (attack 7 #14).
pub fn elide_path(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_owned();
    }
    let b = s.as_bytes();
    if width > 4 && b.len() > 2 && b[0].is_ascii_uppercase() && b[1] == b' ' && b[2] != b' ' {
        return format!("{} {}", &s[..1], elide_path(&s[2..], width - 2));
    }
    let parts: Vec<&str> = s.split('/').collect();
    if parts.len() < 2 {
        return truncate_keep_tail(s, width);
    }
    // The head kept before the ellipsis: `/home` for an absolute path, `src` for a relative one.
    let head = if parts[0].is_empty() && parts.len() > 2 {
        format!("/{}", parts[1])
    } else {
        parts[0].to_owned()
    };
    let head_n = if parts[0].is_empty() { 2 } else { 1 };
    let tail_of = |n: usize| parts[parts.len() - n..].join("/");
    let name = parts[parts.len() - 1];
    for (prefix, avail) in [
        (format!("{head}/…/"), parts.len() - head_n),
        ("…/".to_owned(), parts.len() - 1),
    ] {
        let pw = self::width(&prefix);
        if pw + self::width(name) > width {
            continue;
        }
        let mut n = 1;
        while n < avail && pw + self::width(&tail_of(n + 1)) <= width {
            n += 1;
        }
        return format!("{prefix}{}", tail_of(n));
    }
    truncate_keep_tail(s, width)
}

/// `s` with every path inside `cwd` (an absolute directory, no trailing `/`) made relative to
/// it: `/home/u/proj/src/x.rs` → `src/x.rs`, `/home/u/proj` itself → `.`. A path starts the
/// string or follows a space, `,`, `(`, `'`, `"` or `=`; `/home/u/project2` is not inside
/// `/home/u/proj`; `cwd/` alone becomes `./`, and a path whose rest has a `..` segment is kept
/// whole (it may leave the directory). Borrowed when nothing changes.
pub fn relative_to<'a>(s: &'a str, cwd: &str) -> std::borrow::Cow<'a, str> {
    let cwd = cwd.trim_end_matches('/');
    if cwd.is_empty() || !s.contains(cwd) {
        return std::borrow::Cow::Borrowed(s);
    }
    let starts_token = |i: usize| {
        i == 0
            || s[..i]
                .chars()
                .next_back()
                .is_some_and(|c| matches!(c, ' ' | ',' | '(' | '\'' | '"' | '='))
    };
    let ends_token = |c: char| matches!(c, ' ' | ',' | ')' | '\'' | '"');
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut changed = false;
    while let Some(k) = s[i..].find(cwd) {
        let at = i + k;
        let after = at + cwd.len();
        let next = s[after..].chars().next();
        out.push_str(&s[i..at]);
        // The rest of the path after `cwd/`, up to where its token ends.
        let rest = s
            .get(after + 1..)
            .map_or("", |r| r.split(ends_token).next().unwrap_or(""));
        if starts_token(at)
            && next == Some('/')
            && !rest.is_empty()
            && !rest.split('/').any(|seg| seg == "..")
        {
            i = after + 1;
            changed = true;
        } else if starts_token(at) && next == Some('/') && rest.is_empty() {
            // `cwd/` alone: the directory itself, its slash kept (`rm -rf ./`).
            out.push('.');
            i = after;
            changed = true;
        } else if starts_token(at) && next.is_none_or(ends_token) {
            out.push('.');
            i = after;
            changed = true;
        } else {
            out.push_str(cwd);
            i = after;
        }
    }
    if !changed {
        return std::borrow::Cow::Borrowed(s);
    }
    out.push_str(&s[i..]);
    std::borrow::Cow::Owned(out)
}

/// [`elide_path`], then padded with spaces to exactly `width` columns.
pub fn fit_path(s: &str, width: usize) -> String {
    pad_right(elide_path(s, width), width)
}

/// [`truncate`], then padded with spaces to exactly `width` columns (left-aligned).
pub fn fit(s: &str, width: usize) -> String {
    pad_right(truncate(s, width), width)
}

/// [`truncate`], then padded on the left to exactly `width` columns (right-aligned).
pub fn fit_right(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let mut out: String = std::iter::repeat_n(' ', width.saturating_sub(self::width(&t))).collect();
    out.push_str(&t);
    out
}

/// [`truncate_keep_tail`], then padded with spaces to exactly `width` columns.
pub fn fit_keep_tail(s: &str, width: usize) -> String {
    pad_right(truncate_keep_tail(s, width), width)
}

fn pad_right(mut t: String, width: usize) -> String {
    let w = self::width(&t);
    t.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_cwd_become_relative() {
        let cwd = "/home/u/proj";
        assert_eq!(relative_to("/home/u/proj/src/x.rs", cwd), "src/x.rs");
        assert_eq!(relative_to("/home/u/proj", cwd), ".");
        assert_eq!(
            relative_to("/home/u/project2/a.rs", cwd),
            "/home/u/project2/a.rs"
        );
        assert_eq!(relative_to("/etc/hosts", cwd), "/etc/hosts");
        assert_eq!(
            relative_to("M /home/u/proj/a.rs, A /home/u/proj/b/c.rs", cwd),
            "M a.rs, A b/c.rs"
        );
        assert_eq!(
            relative_to("fn main  in /home/u/proj/src", "/home/u/proj/"),
            "fn main  in src"
        );
        assert_eq!(
            relative_to("cat x/home/u/proj/a", cwd),
            "cat x/home/u/proj/a"
        );
        // attack 7 #6 and #9: the directory with its slash, and `..` that may leave it.
        assert_eq!(
            relative_to("rm -rf /home/u/proj/ --no-preserve-root", cwd),
            "rm -rf ./ --no-preserve-root"
        );
        assert_eq!(
            relative_to("/home/u/proj/../secret/id_rsa", cwd),
            "/home/u/proj/../secret/id_rsa"
        );
        assert_eq!(
            relative_to("/home/u/proj/a/../b", cwd),
            "/home/u/proj/a/../b"
        );
        assert!(matches!(
            relative_to("ls", cwd),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1u64, "call"), "1 call");
        assert_eq!(plural(0u64, "call"), "0 calls");
        assert_eq!(plural(2u32, "error"), "2 errors");
        assert_eq!(format!("chunk{}", plural_s(3u8)), "chunks");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms(850.0), "850ms");
        assert_eq!(duration_ms(1250.0), "1.2s");
        assert_eq!(duration_ms(723_000.0), "12m03s");
        // The catalog used to say 62m00s here.
        assert_eq!(duration_ms(3_720_000.0), "1h02m");
        // Long-running calls stay within the feed's 6 columns.
        assert_eq!(duration_ms(86_399_000.0), "23h59m");
        assert_eq!(duration_ms(1_018_800_000.0), "11d19h");
        assert_eq!(duration_ms(400.0 * 86_400_000.0), "400d");
        assert_eq!(duration_ms(f64::NAN), "?");
    }

    #[test]
    fn byte_sizes_fit_nine_columns() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1234), "1.2 KiB");
        assert_eq!(bytes(1022 * 1024), "1.0 MiB");
        assert_eq!(bytes(4 << 20), "4.0 MiB");
        assert_eq!(bytes(3 << 40), "3.0 TiB");
        for n in [0, 999, 1000, 1023, 1_048_575, 999 << 40] {
            assert!(bytes(n).len() <= 9, "{n}: {}", bytes(n));
        }
    }

    #[test]
    fn fitting_counts_columns() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(fit("日本語", 4), "日… ");
        assert_eq!(fit_right("ab", 4), "  ab");
        assert_eq!(truncate("abc", 0), "");
        assert_eq!(
            truncate_keep_tail("/a/b/session.jsonl", 40),
            "/a/b/session.jsonl"
        );
        assert_eq!(truncate_keep_tail("/a/b/session.jsonl", 10), "…ion.jsonl");
        assert_eq!(truncate_keep_tail("/a/日本.jsonl", 9), "…本.jsonl");
        assert_eq!(truncate_keep_tail("/a/日本.jsonl", 8), "….jsonl");
        assert_eq!(truncate_keep_tail("abc", 0), "");
        assert_eq!(fit_keep_tail("/a/b/c.txt", 8), "…b/c.txt");
    }

    #[test]
    fn elided_paths_keep_the_file_name() {
        let p = "/home/user/projects/spotter/lib/spotter/services/waiting_summary.ex";
        assert_eq!(elide_path(p, 200), p);
        assert_eq!(elide_path(p, 36), "/home/…/services/waiting_summary.ex");
        assert_eq!(
            elide_path(p, 44),
            "/home/…/spotter/services/waiting_summary.ex"
        );
        assert_eq!(elide_path(p, 42), "/home/…/services/waiting_summary.ex");
        assert_eq!(elide_path(p, 27), "/home/…/waiting_summary.ex");
        assert_eq!(
            elide_path("A tests/fixtures/check_blocked_request_answered.ndjson", 44),
            "A …/check_blocked_request_answered.ndjson"
        );
        assert_eq!(elide_path(p, 22), "…/waiting_summary.ex");
        assert_eq!(elide_path(p, 12), "…_summary.ex");
        assert_eq!(elide_path("src/a/b/c/main.rs", 14), "src/…/main.rs");
        assert_eq!(elide_path("no-slash-here-at-all", 8), "…-at-all");
        assert_eq!(fit_path("/a/b", 6), "/a/b  ");
    }

    #[test]
    fn byte_sizes_are_nine_columns_at_most() {
        let got: Vec<String> = [0, 999, 1000, 12_595, 1_046_828, 1_992_169, 1_073_741_824]
            .into_iter()
            .map(bytes)
            .collect();
        assert_eq!(
            got,
            [
                "0 B", "999 B", "1.0 KiB", "12.3 KiB", "1.0 MiB", "1.9 MiB", "1.0 GiB"
            ]
        );
        for b in [1_023_999, 1_048_575, 1_048_575_999, 1_000_000_000_000] {
            assert!(bytes(b).chars().count() <= 9, "{}", bytes(b));
        }
    }
}
