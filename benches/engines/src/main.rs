//! syntect's two regex engines on the same files (issue 17, BENCHMARKS.md "Issue 17"): highlights
//! every file given REPS times (syntax by extension from two-face's set, `base16-ocean.dark`, as
//! `render::highlight` does) and prints the throughput, per extension too. A crate of its own
//! (its own `[workspace]`) because the engine is a feature of syntect and two-face:
//!
//!     cd benches/engines
//!     cargo build --release --features fancy && cp target/release/rawpv-engines-bench /tmp/fancy
//!     cargo build --release --features onig && cp target/release/rawpv-engines-bench /tmp/onig
//!     /tmp/fancy 5 FILES… ; /tmp/onig 5 FILES…
//!
//! The files of the figures: the `toolUseResult.file.content` of the corpus's `Read` results.
use std::time::Instant;
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;
use syntect::util::LinesWithEndings;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args[0].parse().unwrap();
    let ss = two_face::syntax::extra_newlines();
    let ts = ThemeSet::load_defaults();
    let theme = &ts.themes["base16-ocean.dark"];
    let files: Vec<(String, String)> = args[1..]
        .iter()
        .map(|p| (p.clone(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let mut per_ext: std::collections::BTreeMap<String, (usize, f64)> = Default::default();
    let t0 = Instant::now();
    let mut bytes = 0;
    for _ in 0..reps {
        for (p, text) in &files {
            let ext = p.rsplit('.').next().unwrap();
            let syn = ss.find_syntax_by_extension(ext).unwrap_or_else(|| ss.find_syntax_plain_text());
            let t = Instant::now();
            let mut h = HighlightLines::new(syn, theme);
            let mut n = 0;
            for line in LinesWithEndings::from(text) {
                n += h.highlight_line(line, &ss).unwrap().len();
            }
            std::hint::black_box(n);
            let e = per_ext.entry(ext.to_owned()).or_default();
            e.0 += text.len();
            e.1 += t.elapsed().as_secs_f64();
            bytes += text.len();
        }
    }
    let el = t0.elapsed().as_secs_f64();
    println!("total {:.3} s for {} bytes: {:.2} MB/s", el, bytes, bytes as f64 / el / 1e6);
    for (ext, (b, s)) in per_ext {
        println!("  {ext:5} {:8} bytes {:.3} s {:.2} MB/s", b, s, b as f64 / s / 1e6);
    }
}
