//! Shell commands that may write files without a recorded edit (issue 23 item 4): a redirect
//! into a file, `tee`, `mv`, `cp`, `rm`, `sed -i`, a formatter, a code generator, a package
//! manager, a `git` command that rewrites the work tree.
//!
//! Who calls it: [`super::files`] (the "commands that may have written files and are not in
//! this patch" list, and the calls that may explain an outside change) and [`super::audit`].
//!
//! How: the command is split into simple commands on `;`, `&&`, `||`, `|`, `&` and newlines,
//! outside quotes; each is split into words (single and double quotes, backslashes), its
//! leading `VAR=value`s, `sudo`, `env`, `time`, `nice`, `command`, `exec` and `xargs` skipped,
//! and its first word (its base name) and flags looked up. A redirect (`>`, `>>`, `&>`, `N>`)
//! counts unless its target is `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/tty` or a
//! descriptor (`2>&1`). Heredoc bodies are not commands (`<<EOF` … `EOF` is skipped).
//!
//! This reads a command as a shell would only roughly (no expansion, no functions, no
//! `eval`, no scripts run by name): a command it flags may not have written anything, and one
//! it does not flag may have (a Python one-liner). It is a hint list for a reviewer, said so
//! wherever it is shown, never proof.
//!
//! Invariants: pure; linear in the command's length; never panics (fuzzed:
//! `fuzz/fuzz_targets/review.rs`). The script of `sh -c` / `bash -c` is read too, one level
//! deep (attack 8 #29).

/// Why a command may have written files: a short phrase (`redirects output to out.txt`, `rm`,
/// `sed -i`, `formatter: cargo fmt`), for one line of a list. Untrusted text in it (a file
/// name) is raw; callers make it visible.
pub fn writes(command: &str) -> Vec<String> {
    let mut why = writes_at(command, true);
    why.dedup();
    why
}

fn writes_at(command: &str, nested: bool) -> Vec<String> {
    let mut why = Vec::new();
    for cmd in simple_commands(command) {
        let words = &cmd.words;
        if let Some(w) = cmd.redirect.as_deref() {
            push(&mut why, format!("redirects output to {w}"));
        }
        let Some(k) = first_word(words) else {
            continue;
        };
        let name = base(&words[k]);
        let args = &words[k + 1..];
        if let Some(w) = writer(name, args) {
            push(&mut why, w);
        }
        if nested
            && matches!(name, "sh" | "bash" | "zsh" | "dash")
            && let Some(i) = args
                .iter()
                .position(|w| w.starts_with('-') && w.contains('c'))
            && let Some(script) = args.get(i + 1)
        {
            for w in writes_at(script, false) {
                push(&mut why, w);
            }
        }
    }
    why
}

/// The files `command` may write by name: its redirect targets, the last argument of `cp`, `mv`,
/// `install`, `ln`, every argument of `tee`, `dd`'s `of=`, `sed -i`'s files (raw words; `~`
/// not expanded). For `review::audit`'s writes outside the working directory.
pub fn targets(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for cmd in simple_commands(command) {
        out.extend(cmd.redirect.iter().cloned());
        let Some(k) = first_word(&cmd.words) else {
            continue;
        };
        let args: Vec<&String> = cmd.words[k + 1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .collect();
        match base(&cmd.words[k]) {
            "cp" | "mv" | "install" | "ln" | "rsync" => {
                out.extend(args.last().map(|a| (*a).clone()));
            }
            "tee" | "touch" | "truncate" | "rm" => out.extend(args.iter().map(|a| (*a).clone())),
            "dd" => out.extend(
                args.iter()
                    .filter_map(|a| a.strip_prefix("of="))
                    .map(str::to_owned),
            ),
            "sed" | "perl" if cmd.words[k + 1..].iter().any(|a| a.starts_with("-i")) => {
                out.extend(args.iter().skip(1).map(|a| (*a).clone()));
            }
            _ => {}
        }
    }
    out
}

/// The programs `command` runs with their arguments (each simple command's words from its
/// command word on, wrappers and assignments skipped; the script of `sh -c` / `bash -c` is
/// read as commands too, one level deep). For `review::audit`'s network commands.
pub fn programs(command: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for cmd in simple_commands(command) {
        let Some(k) = first_word(&cmd.words) else {
            continue;
        };
        let words: Vec<String> = cmd.words[k..].to_vec();
        let shell = matches!(base(&words[0]), "sh" | "bash" | "zsh" | "dash");
        if shell
            && let Some(i) = words
                .iter()
                .position(|w| w.starts_with('-') && w.contains('c'))
            && let Some(script) = words.get(i + 1)
        {
            for inner in simple_commands(script) {
                if let Some(j) = first_word(&inner.words) {
                    out.push(inner.words[j..].to_vec());
                }
            }
        }
        out.push(words);
    }
    out
}

fn push(why: &mut Vec<String>, w: String) {
    if !why.contains(&w) {
        why.push(w);
    }
}

/// The last path segment of a command word (`/usr/bin/rm` → `rm`).
pub fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// Index of the command word: past assignments and wrappers.
fn first_word(words: &[String]) -> Option<usize> {
    let mut k = 0;
    while let Some(w) = words.get(k) {
        let b = base(w);
        let assignment = w.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        // Shell keywords before a command (`if`, `then`, `do`, `!`) are skipped like wrappers.
        let keyword = matches!(
            b,
            "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!"
        );
        if assignment
            || keyword
            || matches!(
                b,
                "sudo"
                    | "env"
                    | "time"
                    | "nice"
                    | "command"
                    | "exec"
                    | "xargs"
                    | "nohup"
                    | "timeout"
            )
        {
            k += 1;
            // Their own flags and a `timeout`'s duration / `nice`'s level.
            while words.get(k).is_some_and(|w| {
                w.starts_with('-')
                    || (b == "timeout" && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            }) {
                k += 1;
            }
            continue;
        }
        return Some(k);
    }
    None
}

fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter().any(|a| {
        a == long
            || a.starts_with(&format!("{long}="))
            || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
    })
}

fn sub(args: &[String]) -> &str {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .map_or("", String::as_str)
}

/// Why the command `name args` may write files, if it may.
fn writer(name: &str, args: &[String]) -> Option<String> {
    let named = |s: &str| Some(s.to_owned());
    match name {
        "mv" | "cp" | "rm" | "rmdir" | "touch" | "tee" | "truncate" | "dd" | "install" | "ln"
        | "patch" | "rsync" | "unzip" | "shred" | "git-apply" => named(name),
        // Codex's patch tool run through a shell (attack 8 #42): its files are not parsed here.
        "apply_patch" | "applypatch" => named("apply_patch (through the shell)"),
        "tar"
            if args
                .iter()
                .any(|a| a.starts_with('-') && a.contains('x') || a.starts_with('x')) =>
        {
            named("tar (extract)")
        }
        "sed" | "perl" | "ruby"
            if args.iter().any(|a| {
                a.starts_with("-i")
                    || a == "--in-place"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            }) =>
        {
            Some(format!("{name} -i"))
        }
        "git" => {
            let s = sub(args);
            matches!(
                s,
                "checkout"
                    | "restore"
                    | "reset"
                    | "stash"
                    | "apply"
                    | "am"
                    | "merge"
                    | "rebase"
                    | "pull"
                    | "cherry-pick"
                    | "revert"
                    | "switch"
                    | "clean"
                    | "mv"
                    | "rm"
                    | "clone"
                    | "worktree"
            )
            .then(|| format!("git {s}"))
        }
        "rustfmt" | "gofmt" | "goimports" | "black" | "isort" | "autopep8" | "yapf"
        | "prettier" | "clang-format" | "shfmt" | "stylua" | "swift-format" | "ktlint"
        | "rubocop" | "standardrb" | "dprint" | "biome" | "eslint" | "stylelint" | "djlint" => {
            let fixes = match name {
                "gofmt" | "goimports" | "shfmt" => has_flag(args, 'w', "--write"),
                "prettier" | "biome" | "dprint" => {
                    has_flag(args, 'w', "--write") || matches!(sub(args), "fmt" | "format")
                }
                "clang-format" | "autopep8" | "yapf" | "swift-format" => {
                    has_flag(args, 'i', "--in-place")
                }
                "eslint" | "stylelint" | "rubocop" | "standardrb" | "ktlint" => args
                    .iter()
                    .any(|a| a.starts_with("--fix") || a == "-a" || a == "-A" || a == "-F"),
                _ => !args.iter().any(|a| a == "--check" || a == "--diff"),
            };
            fixes.then(|| format!("formatter: {name}"))
        }
        "cargo" => match sub(args) {
            s @ ("fmt" | "fix" | "add" | "remove" | "update" | "new" | "init" | "generate") => {
                (!args.iter().any(|a| a == "--check")).then(|| format!("cargo {s}"))
            }
            "clippy" if args.iter().any(|a| a == "--fix") => named("cargo clippy --fix"),
            _ => None,
        },
        "ruff" => match sub(args) {
            "format" if !args.iter().any(|a| a == "--check" || a == "--diff") => {
                named("formatter: ruff format")
            }
            _ if args.iter().any(|a| a == "--fix") => named("ruff --fix"),
            _ => None,
        },
        "go" => match sub(args) {
            s @ ("generate" | "fmt" | "get") => Some(format!("go {s}")),
            "mod" => named("go mod"),
            _ => None,
        },
        "mix" => match sub(args) {
            "format" if !args.iter().any(|a| a == "--check-formatted") => {
                named("formatter: mix format")
            }
            s @ ("deps.get" | "igniter.install" | "phx.gen.html" | "phx.gen.live"
            | "ecto.gen.migration") => Some(format!("mix {s}")),
            s if s.starts_with("phx.gen") || s.rsplit('.').next() == Some("gen") => {
                Some(format!("mix {s}"))
            }
            _ => None,
        },
        "npm" | "pnpm" | "yarn" | "bun" => match sub(args) {
            s @ ("install" | "i" | "add" | "remove" | "uninstall" | "update" | "init" | "ci") => {
                Some(format!("{name} {s}"))
            }
            "run" | "exec" | "x" => args
                .iter()
                .skip_while(|a| a.as_str() != "run" && a.as_str() != "exec" && a.as_str() != "x")
                .nth(1)
                .filter(|s| {
                    [
                        "format", "fmt", "lint:fix", "fix", "generate", "codegen", "gen",
                    ]
                    .contains(&s.as_str())
                })
                .map(|s| format!("{name} run {s}")),
            _ => None,
        },
        "npx" | "pnpx" | "bunx" => {
            let tool = args
                .iter()
                .find(|a| !a.starts_with('-'))
                .map_or("", |s| base(s));
            writer(tool, args.get(1..).unwrap_or_default()).map(|w| format!("{name} {w}"))
        }
        "uv" | "poetry" | "pip" | "pip3" | "bundle" | "gem" | "composer" | "dotnet" => {
            match sub(args) {
                s @ ("add" | "remove" | "sync" | "lock" | "install" | "update" | "format"
                | "init") => Some(format!("{name} {s}")),
                _ => None,
            }
        }
        "terraform" | "deno" | "zig" if sub(args) == "fmt" => {
            Some(format!("formatter: {name} fmt"))
        }
        "protoc"
        | "buf"
        | "sqlc"
        | "openapi-generator"
        | "openapi-generator-cli"
        | "prisma"
        | "bindgen"
        | "flatc"
        | "thrift"
        | "swagger-codegen" => named(&format!("code generator: {name}")),
        _ => None,
    }
}

/// One simple command: its words and the first file it redirects output into.
#[derive(Debug, Default)]
struct Simple {
    words: Vec<String>,
    redirect: Option<String>,
}

/// Splits `command` into simple commands (module docs).
/// The words being read: the word so far, the simple command so far, and what the next word is
/// (a redirect's target, a heredoc's delimiter).
#[derive(Default)]
struct Lexer {
    word: String,
    in_word: bool,
    cur: Simple,
    /// Set after `>`: the next word is the target.
    redirect_next: bool,
    /// Set after `<<`: the next word is a heredoc delimiter.
    heredoc_next: bool,
    /// Heredoc delimiters whose bodies start at the next newline.
    heredocs: Vec<String>,
}

impl Lexer {
    /// Ends the word being read, if any: a heredoc delimiter, a redirect target or a word.
    fn end_word(&mut self) {
        if !self.in_word {
            return;
        }
        let w = std::mem::take(&mut self.word);
        self.in_word = false;
        if self.heredoc_next {
            self.heredoc_next = false;
            self.heredocs.push(w);
        } else if self.redirect_next {
            self.redirect_next = false;
            let quiet = w.starts_with('&')
                || matches!(
                    w.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
                )
                || w.is_empty();
            if !quiet && self.cur.redirect.is_none() {
                self.cur.redirect = Some(w);
            }
        } else {
            self.cur.words.push(w);
        }
    }
}

fn simple_commands(command: &str) -> Vec<Simple> {
    let chars: Vec<char> = command.chars().collect();
    let mut out = Vec::new();
    let mut lx = Lexer::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                lx.in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    lx.word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                lx.in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    lx.word.push(chars[i]);
                    i += 1;
                }
            }
            '\\' => {
                lx.in_word = true;
                if let Some(&n) = chars.get(i + 1) {
                    if n != '\n' {
                        lx.word.push(n);
                    }
                    i += 1;
                }
            }
            '#' if !lx.in_word => {
                // A comment to the end of the line.
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\t' => lx.end_word(),
            '\n' | ';' | '|' | '&' | '(' | ')' | '{' | '}' | '`'
                if !(c == '&' && chars.get(i + 1) == Some(&'>')
                    || matches!(c, '{' | '}') && lx.in_word) =>
            {
                lx.end_word();
                // `{`, `}` only as words of their own (`${x}` stays in its word).
                out.push(std::mem::take(&mut lx.cur));
                lx.redirect_next = false;
                if c == '\n' && !lx.heredocs.is_empty() {
                    i = skip_heredocs(&chars, i + 1, &mut lx.heredocs);
                    continue;
                }
            }
            '<' => {
                lx.end_word();
                if chars.get(i + 1) == Some(&'<') {
                    i += 1;
                    if chars.get(i + 1) == Some(&'<') {
                        // `<<<` here-string: the next word is input.
                        i += 1;
                    } else {
                        if chars.get(i + 1) == Some(&'-') {
                            i += 1;
                        }
                        lx.heredoc_next = true;
                    }
                } else {
                    // An input redirect's file is not a command word.
                    lx.redirect_next = false;
                    lx.heredoc_next = false;
                    // Read the file name as a word and drop it.
                    let mut j = i + 1;
                    while j < chars.len() && chars[j] == ' ' {
                        j += 1;
                    }
                    while j < chars.len()
                        && !matches!(chars[j], ' ' | '\t' | '\n' | ';' | '|' | '&' | ')')
                    {
                        j += 1;
                    }
                    i = j;
                    continue;
                }
            }
            '>' | '&' => {
                // `>`, `>>`, `&>`, `>|`, and `N>`: the word before is a descriptor number.
                if lx.in_word && lx.word.chars().all(|c| c.is_ascii_digit()) {
                    lx.word.clear();
                    lx.in_word = false;
                } else {
                    lx.end_word();
                }
                if c == '&' {
                    i += 1; // the `>` after it
                }
                while matches!(chars.get(i + 1), Some('>' | '|')) {
                    i += 1;
                }
                // `>&2`: a descriptor, not a file.
                lx.redirect_next = true;
            }
            _ => {
                lx.in_word = true;
                lx.word.push(c);
            }
        }
        i += 1;
    }
    lx.end_word();
    out.push(lx.cur);
    out.retain(|s| !s.words.is_empty() || s.redirect.is_some());
    out
}

/// Past the bodies of the pending heredocs starting at `i` (each ends at a line equal to its
/// delimiter, tabs trimmed); returns where commands resume.
fn skip_heredocs(chars: &[char], mut i: usize, heredocs: &mut Vec<String>) -> usize {
    for delim in heredocs.drain(..) {
        loop {
            if i >= chars.len() {
                return i;
            }
            let start = i;
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let line: String = chars[start..i].iter().collect();
            i += 1;
            if line.trim_start_matches('\t') == delim {
                break;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn w(c: &str) -> Vec<String> {
        writes(c)
    }

    #[test]
    fn redirects_and_writers_are_found() {
        assert_eq!(w("echo hi > out.txt"), vec!["redirects output to out.txt"]);
        assert_eq!(w("cat a >> 'my log'"), vec!["redirects output to my log"]);
        assert_eq!(w("make 2>&1 | tail -5"), Vec::<String>::new());
        assert_eq!(w("ls > /dev/null 2>&1"), Vec::<String>::new());
        assert_eq!(w("cmd &> all.log"), vec!["redirects output to all.log"]);
        assert_eq!(w("mv a b && rm -f c"), vec!["mv", "rm"]);
        assert_eq!(w("sed -i 's/a/b/' x.rs"), vec!["sed -i"]);
        assert_eq!(w("sed 's/a/b/' x.rs"), Vec::<String>::new());
        assert_eq!(
            w("mix format && mix compile 2>&1 | tail -5"),
            vec!["formatter: mix format"]
        );
        assert_eq!(w("cargo fmt --check"), Vec::<String>::new());
        assert_eq!(w("cargo fmt"), vec!["cargo fmt"]);
        assert_eq!(w("git checkout -- src/a.rs"), vec!["git checkout"]);
        assert_eq!(w("git status 2>&1"), Vec::<String>::new());
        assert_eq!(w("sudo -E rm -rf build"), vec!["rm"]);
        assert_eq!(
            w("FOO=1 npx prettier --write ."),
            vec!["npx formatter: prettier"]
        );
        assert_eq!(w("echo '> not a redirect; rm x'"), Vec::<String>::new());
        // attack 8 #29: inside `sh -c`.
        assert_eq!(w("bash -c 'rm -rf build'"), vec!["rm"]);
        assert_eq!(
            w("cd /proj && apply_patch <<'EOF'\n*** Begin Patch\nEOF"),
            vec!["apply_patch (through the shell)"]
        );
        assert_eq!(w("sh -c \"echo hi > f\""), vec!["redirects output to f"]);
    }

    #[test]
    fn targets_are_named() {
        assert_eq!(
            targets("echo x >> ~/.bashrc; cp a /tmp/b && sudo tee /etc/hosts < h; dd if=z of=/o"),
            vec!["~/.bashrc", "/tmp/b", "/etc/hosts", "/o"]
        );
        assert_eq!(targets("sed -i 's/a/b/' f.rs g.rs"), vec!["f.rs", "g.rs"]);
        assert_eq!(targets("ls -la 2>&1"), Vec::<String>::new());
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        let c = "git commit -m \"$(cat <<'EOF'\nrm -rf / > x\nEOF\n)\"";
        assert_eq!(w(c), Vec::<String>::new());
        let c = "cat > notes.md <<EOF\nrm everything\nEOF\nls";
        assert_eq!(w(c), vec!["redirects output to notes.md"]);
    }
}
