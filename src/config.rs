//! User configuration: a TOML file merged over embedded defaults (STYLE 4.9).
//!
//! Who calls it: [`crate::app::run`] (theme, key bindings, render limits, syntect theme,
//! browser directories) before the terminal is taken, so warnings and errors go to stderr;
//! `rawpv print --detail` (render limits, syntect theme).
//!
//! Where: `--config FILE` / `RAWPV_CONFIG`, else `ProjectDirs("rawpv")/config.toml` (e.g.
//! `~/.config/rawpv/config.toml` on Linux). A missing default file means "defaults"; a missing
//! explicit file is an error.
//!
//! Invariants: the defaults ([`DEFAULTS`], `config/default.toml`) always parse and equal
//! [`Config::default`]; user values replace defaults key by key (tables merge, arrays and scalars
//! replace); an unknown key (or action name) is a warning naming the key and the file, never a
//! failure; a bad value is a [`ConfigError`] naming the key and the file (exit 2).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyModifiers};
use serde::Deserialize;
use toml::{Table, Value};

use crate::action::Action;
use crate::keymap::{KeyChord, Keymap};
use crate::theme::Theme;

/// The embedded defaults.
pub const DEFAULTS: &str = include_str!("../config/default.toml");

/// A config problem that stops the program (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {file}: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {file} is not valid TOML: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("config file {file}: bad value for `{key}`: {message}")]
    Value {
        file: PathBuf,
        key: String,
        message: String,
    },
}

/// Colour theme choice (config `theme`, flag `--theme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ThemeName {
    /// Ask the terminal for its background colour (OSC 11) and pick dark or light; dark when it
    /// does not answer, and wherever nothing may be asked (`print`, stdout not a terminal).
    #[default]
    Auto,
    Dark,
    Light,
    /// The 16 basic ANSI colours only: the dark palette without its RGB diff tints (changed
    /// lines in green / red, changed words bold and underlined).
    #[serde(rename = "16")]
    #[value(name = "16")]
    Ansi16,
    Mono,
}

/// Render limits (see `crate::render::Limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct LimitsConfig {
    pub max_lines_per_block: usize,
    /// Bytes.
    pub max_bytes_per_block: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        let l = crate::render::Limits::default();
        Self {
            max_lines_per_block: l.max_lines,
            max_bytes_per_block: l.max_bytes,
        }
    }
}

impl LimitsConfig {
    /// The render limits these settings give (zero means "none": at least 1 line / byte is
    /// kept so a block always says what was cut).
    pub fn limits(&self) -> crate::render::Limits {
        crate::render::Limits {
            max_lines: self.max_lines_per_block.max(1),
            max_bytes: self.max_bytes_per_block.max(1),
        }
    }
}

/// Session browser settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct BrowserConfig {
    /// Extra session directories, listed besides `~/.claude/projects`.
    pub dirs: Vec<PathBuf>,
}

/// The session library's settings (issue 27).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct LibraryConfig {
    /// Keep the library index (`library.sqlite` in the cache directory); `false` is
    /// `--no-index` everywhere.
    pub index: bool,
}

impl Default for LibraryConfig {
    fn default() -> Self {
        Self { index: true }
    }
}

/// The `[live]` table: when a session counts as being written now, idle, stuck or looping
/// (`crate::session::live`, issue 21).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct LiveConfig {
    /// A session file changed within this is being written now; frames stamped within this of
    /// the clock make an input live.
    #[serde(deserialize_with = "duration")]
    pub recent: std::time::Duration,
    /// Nothing written this long and no call running: idle.
    #[serde(deserialize_with = "duration")]
    pub idle_after: std::time::Duration,
    /// A call of a tool with fewer than 3 finished calls in the session is stuck after this.
    #[serde(deserialize_with = "duration")]
    pub stuck_after: std::time::Duration,
    /// The least stuck threshold derived from a tool's durations (5 × their 90th percentile).
    #[serde(deserialize_with = "duration")]
    pub stuck_min: std::time::Duration,
    /// Failures in a row of the same tool and input that make a loop.
    pub loop_after: u32,
    /// Stuck thresholds by tool name, over the derived ones (`Bash = "30m"`).
    #[serde(deserialize_with = "durations")]
    pub stuck_tools: BTreeMap<String, std::time::Duration>,
}

impl Default for LiveConfig {
    fn default() -> Self {
        let t = crate::session::live::Thresholds::default();
        Self {
            recent: t.recent,
            idle_after: t.idle_after,
            stuck_after: t.stuck_after,
            stuck_min: t.stuck_min,
            loop_after: t.loop_after,
            stuck_tools: t.stuck_tools,
        }
    }
}

impl LiveConfig {
    /// The live state's thresholds.
    pub fn thresholds(&self) -> crate::session::live::Thresholds {
        crate::session::live::Thresholds {
            recent: self.recent,
            idle_after: self.idle_after,
            stuck_after: self.stuck_after,
            stuck_min: self.stuck_min,
            stuck_tools: self.stuck_tools.clone(),
            loop_after: self.loop_after,
        }
    }
}

/// The `[notify]` table: what rings the bell and sends a desktop notification (`crate::notify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct NotifyConfig {
    pub waiting: bool,
    pub stuck: bool,
    pub looping: bool,
    pub turn_end: bool,
    pub bell: bool,
    pub desktop: crate::notify::Desktop,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        let n = crate::notify::Notify::default();
        Self {
            waiting: n.waiting,
            stuck: n.stuck,
            looping: n.looping,
            turn_end: n.turn_end,
            bell: n.bell,
            desktop: crate::notify::Desktop::Auto,
        }
    }
}

impl NotifyConfig {
    /// The settings for this process's terminal (`TERM`, `TMUX`).
    pub fn resolve_env(&self) -> crate::notify::Notify {
        crate::notify::Notify {
            waiting: self.waiting,
            stuck: self.stuck,
            looping: self.looping,
            turn_end: self.turn_end,
            bell: self.bell,
            ..crate::notify::Notify::default()
        }
        .from_env(self.desktop)
    }
}

/// A duration in the usual human syntax (`90s`, `10m`, `1h 30m`).
fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<std::time::Duration, D::Error> {
    let s = String::deserialize(d)?;
    humantime::parse_duration(s.trim()).map_err(|e| {
        serde::de::Error::custom(format!(
            "`{s}` is not a duration ({e}; e.g. \"90s\", \"10m\")"
        ))
    })
}

/// Tool name → duration.
fn durations<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, std::time::Duration>, D::Error> {
    let m = BTreeMap::<String, String>::deserialize(d)?;
    m.into_iter()
        .map(|(k, v)| {
            humantime::parse_duration(v.trim())
                .map(|d| (k.clone(), d))
                .map_err(|e| {
                    serde::de::Error::custom(format!("{k} = `{v}` is not a duration ({e})"))
                })
        })
        .collect()
}

/// The syntect theme `theme = "light"` uses when `syntax_theme` is not set.
pub const LIGHT_SYNTAX_THEME: &str = "InspiredGitHub";

/// The `[diff]` table: styles of changed lines and words in git's colour syntax (see
/// [`crate::theme::parse_style`]); `""` keeps the theme's own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct DiffConfig {
    /// An added line (its background across the pane).
    pub plus: String,
    /// A removed line.
    pub minus: String,
    /// An added word inside a changed line (patched over its syntax colour).
    #[serde(rename = "plus-emph")]
    pub plus_emph: String,
    /// A removed word.
    #[serde(rename = "minus-emph")]
    pub minus_emph: String,
}

impl DiffConfig {
    /// The parsed styles; a bad one is skipped here ([`load_str`] refused it already).
    pub fn styles(&self) -> crate::theme::DiffStyles {
        let one = |s: &str| {
            (!s.trim().is_empty())
                .then(|| crate::theme::parse_style(s).ok())
                .flatten()
        };
        crate::theme::DiffStyles {
            plus: one(&self.plus),
            minus: one(&self.minus),
            plus_emph: one(&self.plus_emph),
            minus_emph: one(&self.minus_emph),
        }
    }

    /// `(key, value)` of every style, for checking.
    fn entries(&self) -> [(&'static str, &str); 4] {
        [
            ("diff.plus", &self.plus),
            ("diff.minus", &self.minus),
            ("diff.plus-emph", &self.plus_emph),
            ("diff.minus-emph", &self.minus_emph),
        ]
    }
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct Config {
    pub theme: ThemeName,
    /// syntect theme name.
    pub syntax_theme: String,
    /// Whether the user's file names `syntax_theme` (else a light theme picks
    /// [`LIGHT_SYNTAX_THEME`]).
    #[serde(skip)]
    pub syntax_theme_set: bool,
    /// Diff styles over the theme's.
    pub diff: DiffConfig,
    pub limits: LimitsConfig,
    /// Action name (`Action`'s serde name) → key specs; checked by [`Config::keymap`].
    pub keys: BTreeMap<String, Vec<String>>,
    pub browser: BrowserConfig,
    pub library: LibraryConfig,
    /// Live state thresholds (issue 21).
    pub live: LiveConfig,
    /// Bell and desktop notifications (issue 21).
    pub notify: NotifyConfig,
    /// Most of the width the feed takes beside the detail pane, in percent (20 to 80; `{` / `}`
    /// change it while viewing).
    pub feed_width: u16,
    /// Model name → prices in USD per million tokens, over the embedded table
    /// (`config/prices.toml`; `crate::usage::price`).
    pub prices: BTreeMap<String, crate::usage::price::Price>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            theme: ThemeName::Auto,
            syntax_theme: "base16-ocean.dark".into(),
            syntax_theme_set: false,
            diff: DiffConfig::default(),
            limits: LimitsConfig::default(),
            keys: BTreeMap::new(),
            browser: BrowserConfig::default(),
            library: LibraryConfig::default(),
            live: LiveConfig::default(),
            notify: NotifyConfig::default(),
            feed_width: crate::ui::Split::DEFAULT_SHARE,
            prices: BTreeMap::new(),
        }
    }
}

/// A loaded configuration with what to tell the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub config: Config,
    /// The file read, if any.
    pub file: Option<PathBuf>,
    /// Unknown keys and the like: print on stderr, go on.
    pub warnings: Vec<String>,
}

/// The platform's default config file (`<config dir>/rawpv/config.toml`).
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "rawpv").map(|d| d.config_dir().join("config.toml"))
}

/// Loads the config: `explicit` (from `--config` / `RAWPV_CONFIG`) must exist; the default file
/// may be missing (then: the defaults).
///
/// # Errors
/// The file cannot be read, is not TOML, or has a bad value ([`ConfigError`]).
pub fn load(explicit: Option<&Path>) -> Result<Loaded, ConfigError> {
    let file = match explicit {
        Some(p) => p.to_path_buf(),
        None => match default_path() {
            Some(p) if p.exists() => p,
            Some(_) | None => {
                return Ok(Loaded {
                    config: Config::default(),
                    file: None,
                    warnings: Vec::new(),
                });
            }
        },
    };
    let text = std::fs::read_to_string(&file).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    load_str(&text, &file)
}

/// Merges the user's TOML text (read from `file`, for messages) over the defaults.
///
/// # Errors
/// Not TOML, or a bad value (naming the key).
pub fn load_str(text: &str, file: &Path) -> Result<Loaded, ConfigError> {
    let user: Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
        file: file.to_path_buf(),
        message: e.message().to_owned(),
    })?;
    let defaults: Table = toml::from_str(DEFAULTS).unwrap_or_default();
    let mut warnings = Vec::new();
    unknown_keys(&defaults, &user, "", file, &mut warnings);
    // Each user value alone, so an error names its key.
    for (key, value) in leaves(&user, "") {
        // Model names hold dots (`gpt-5.1`): prices are checked whole, below.
        if key.starts_with("prices.") {
            continue;
        }
        let mut one = Table::new();
        insert_path(&mut one, &key, value.clone());
        if let Err(e) = Value::Table(one).try_into::<Config>() {
            return Err(ConfigError::Value {
                file: file.to_path_buf(),
                key,
                message: e.message().trim().to_owned(),
            });
        }
    }
    let syntax_set = user.contains_key("syntax_theme");
    let merged_prices = user.get("prices").cloned();
    // Prices: each model's table must be a price (its own error names the model).
    if let Some(Value::Table(prices)) = merged_prices.as_ref() {
        for (model, v) in prices {
            if let Err(e) = v.clone().try_into::<crate::usage::price::Price>() {
                return Err(ConfigError::Value {
                    file: file.to_path_buf(),
                    key: format!("prices.\"{model}\""),
                    message: e.message().trim().to_owned(),
                });
            }
        }
    }
    let mut merged = defaults;
    merge(&mut merged, user);
    let mut config: Config = Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Value {
            file: file.to_path_buf(),
            key: "?".into(),
            message: e.message().trim().to_owned(),
        })?;
    if let Err(message) = crate::usage::price::Table::builtin().with_overrides(&config.prices) {
        return Err(ConfigError::Value {
            file: file.to_path_buf(),
            key: "prices".into(),
            message,
        });
    }
    // Key bindings: unknown actions warn; bad key specs are errors.
    for (name, specs) in &config.keys {
        if parse_action(name).is_none() {
            warnings.push(format!(
                "{}: unknown action `keys.{name}` (ignored)",
                file.display()
            ));
            continue;
        }
        for s in specs {
            if parse_chord(s).is_none() {
                return Err(ConfigError::Value {
                    file: file.to_path_buf(),
                    key: format!("keys.{name}"),
                    message: format!(
                        "`{s}` is not a key (try \"q\", \"C-c\", \"Space\", \"PgDn\")"
                    ),
                });
            }
        }
    }
    let share = crate::ui::Split::MIN_SHARE..=crate::ui::Split::MAX_SHARE;
    if !share.contains(&config.feed_width) {
        warnings.push(format!(
            "{}: feed_width = {} is outside {}..={} percent (the nearest is used)",
            file.display(),
            config.feed_width,
            share.start(),
            share.end()
        ));
    }
    for (key, text) in config.diff.entries() {
        if let Err(message) = crate::theme::parse_style(text) {
            return Err(ConfigError::Value {
                file: file.to_path_buf(),
                key: key.to_owned(),
                message: format!(
                    "{message} (a style is up to two colours, text then background: a name, \
                     0-255 or #rrggbb, `normal` for none, and bold, dim, italic, ul, reverse, strike)"
                ),
            });
        }
    }
    config.syntax_theme_set = syntax_set;
    config.set_theme(config.theme);
    if !crate::render::highlight::has_theme(&config.syntax_theme) {
        warnings.push(format!(
            "{}: {}",
            file.display(),
            crate::render::highlight::unknown_theme_message(&config.syntax_theme)
        ));
    }
    Ok(Loaded {
        config,
        file: Some(file.to_path_buf()),
        warnings,
    })
}

impl Config {
    /// The theme to use: `mono` whenever `no_color` (the `NO_COLOR` variable is set and not
    /// empty), else the configured one with the `[diff]` styles over it (`auto` not resolved
    /// by [`Config::pick_theme`]: dark).
    pub fn theme(&self, no_color: bool) -> Theme {
        if no_color {
            return Theme::mono();
        }
        let base = match self.theme {
            ThemeName::Auto | ThemeName::Dark => Theme::dark(),
            ThemeName::Ansi16 => Theme::ansi16(),
            ThemeName::Light => Theme::light(),
            ThemeName::Mono => return Theme::mono(),
        };
        base.with_diff_styles(&self.diff.styles())
    }

    /// Sets the theme; a light one gets a light syntax theme unless the file names one (the
    /// dark default's pale greys and yellows are hard to read on white).
    pub fn set_theme(&mut self, theme: ThemeName) {
        self.theme = theme;
        if theme == ThemeName::Light && !self.syntax_theme_set {
            LIGHT_SYNTAX_THEME.clone_into(&mut self.syntax_theme);
        }
    }

    /// Resolves `theme = "auto"` (issue 22.9): `ask` is called (it asks the terminal, see
    /// [`crate::theme::probe_background`]) unless `NO_COLOR` (`no_color`) makes the choice
    /// moot; a light background picks the light theme, anything else (a dark one, no answer)
    /// the dark one. An explicit theme is kept and nothing is asked. Returns what to tell the
    /// user (the status bar): only when the terminal's answer chose light, the palette that
    /// differs from the default.
    pub fn pick_theme(
        &mut self,
        no_color: bool,
        ask: impl FnOnce() -> crate::theme::Probe,
    ) -> Option<String> {
        if self.theme != ThemeName::Auto || no_color {
            return None;
        }
        let probe = ask();
        let light = probe.light == Some(true);
        tracing::info!(
            light = ?probe.light,
            background = ?probe.background_hex(),
            took_ms = probe.took.as_secs_f64() * 1000.0,
            error = ?probe.error,
            "theme auto: asked the terminal for its background (OSC 11)"
        );
        self.set_theme(if light {
            ThemeName::Light
        } else {
            ThemeName::Dark
        });
        light.then(|| {
            format!(
                "light theme: the terminal's background is {} (theme = \"dark\" in the config \
                 or --theme dark keeps dark)",
                probe.background_hex().unwrap_or_else(|| "light".into())
            )
        })
    }

    /// Applies the render settings that are process-wide: the syntect theme (an unknown name
    /// keeps the default; [`load_str`] already warned about it).
    pub fn apply_render_settings(&self) {
        let _ = crate::render::highlight::set_theme(&self.syntax_theme);
    }

    /// The default keymap with the configured bindings applied (unknown actions and bad keys
    /// were reported by [`load_str`] and are skipped here).
    pub fn keymap(&self) -> Keymap {
        let mut km = Keymap::default();
        for (name, specs) in &self.keys {
            let Some(action) = parse_action(name) else {
                continue;
            };
            let chords: Vec<KeyChord> = specs.iter().filter_map(|s| parse_chord(s)).collect();
            km.rebind(action, &chords);
        }
        km
    }
}

/// Whether `NO_COLOR` asks for no colour (set and not empty, per no-color.org).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// An action by its serde (`snake_case`) name; `None` for unknown names and actions with data.
pub fn parse_action(name: &str) -> Option<Action> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).ok()
}

/// A key spec: `q`, `C-c`, `M-x`, `Space`, `Enter`, `PgDn`, `F5`, … (the help's spelling).
pub fn parse_chord(spec: &str) -> Option<KeyChord> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = spec;
    loop {
        if let Some(r) = rest.strip_prefix("C-") {
            mods |= KeyModifiers::CONTROL;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("M-") {
            mods |= KeyModifiers::ALT;
            rest = r;
        } else {
            break;
        }
    }
    let code = match rest {
        "Space" => KeyCode::Char(' '),
        "Enter" => KeyCode::Enter,
        "Esc" => KeyCode::Esc,
        "Tab" => KeyCode::Tab,
        "S-Tab" => KeyCode::BackTab,
        "Backspace" => KeyCode::Backspace,
        "Up" | "↑" => KeyCode::Up,
        "Down" | "↓" => KeyCode::Down,
        "Left" | "←" => KeyCode::Left,
        "Right" | "→" => KeyCode::Right,
        "PgUp" => KeyCode::PageUp,
        "PgDn" => KeyCode::PageDown,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        f if f.len() > 1 && f.starts_with('F') => {
            let n: u8 = f[1..].parse().ok()?;
            if !(1..=12).contains(&n) {
                return None;
            }
            KeyCode::F(n)
        }
        c => {
            let mut it = c.chars();
            let ch = it.next()?;
            if it.next().is_some() || ch.is_control() {
                return None;
            }
            KeyCode::Char(ch)
        }
    };
    Some(KeyChord::new(code, mods))
}

/// Warns for every user key the defaults do not have (`keys`, `prices`, `live.stuck_tools` and
/// `browser.dirs` hold free-form content and are checked elsewhere).
fn unknown_keys(defaults: &Table, user: &Table, prefix: &str, file: &Path, out: &mut Vec<String>) {
    for (k, v) in user {
        let path = format!("{prefix}{k}");
        match defaults.get(k) {
            None => out.push(format!(
                "{}: unknown key `{path}` (ignored)",
                file.display()
            )),
            Some(Value::Table(d))
                if path != "keys" && path != "prices" && path != "live.stuck_tools" =>
            {
                if let Value::Table(u) = v {
                    unknown_keys(d, u, &format!("{path}."), file, out);
                }
            }
            Some(_) => {}
        }
    }
}

/// `(dotted key, value)` for every non-table value.
fn leaves<'a>(t: &'a Table, prefix: &str) -> Vec<(String, &'a Value)> {
    let mut out = Vec::new();
    for (k, v) in t {
        let path = format!("{prefix}{k}");
        match v {
            Value::Table(inner) if !inner.is_empty() => {
                out.extend(leaves(inner, &format!("{path}.")));
            }
            other => out.push((path, other)),
        }
    }
    out
}

fn insert_path(t: &mut Table, dotted: &str, v: Value) {
    match dotted.split_once('.') {
        None => {
            t.insert(dotted.to_owned(), v);
        }
        Some((head, rest)) => {
            let entry = t
                .entry(head.to_owned())
                .or_insert_with(|| Value::Table(Table::new()));
            if let Value::Table(inner) = entry {
                insert_path(inner, rest, v);
            }
        }
    }
}

/// Deep merge: tables merge, everything else in `over` replaces.
fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> PathBuf {
        PathBuf::from("/home/u/.config/rawpv/config.toml")
    }

    #[test]
    fn embedded_defaults_parse_and_equal_default() {
        let l = load_str("", &file()).unwrap();
        assert_eq!(l.config, Config::default());
        assert!(l.warnings.is_empty());
    }

    #[test]
    fn user_values_merge_over_defaults() {
        let l = load_str(
            "theme = \"light\"\n[limits]\nmax_lines_per_block = 50\n[keys]\nquit = [\"x\", \"C-q\"]\n[browser]\ndirs = [\"/s\"]\n",
            &file(),
        )
        .unwrap();
        let mut want = Config {
            theme: ThemeName::Light,
            // Light without a syntax_theme: the light syntax theme.
            syntax_theme: LIGHT_SYNTAX_THEME.into(),
            ..Config::default()
        };
        want.limits.max_lines_per_block = 50;
        want.keys
            .insert("quit".into(), vec!["x".into(), "C-q".into()]);
        want.browser.dirs = vec![PathBuf::from("/s")];
        assert_eq!(l.config, want);
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        let km = l.config.keymap();
        assert_eq!(km.key_for(Action::Quit), Some(KeyChord::ch('x')));
    }

    #[test]
    fn unknown_keys_warn_with_key_and_file() {
        let l = load_str(
            "colour = 1\n[limits]\nmax_cats = 3\n[keys]\nfly = [\"f\"]\n",
            &file(),
        )
        .unwrap();
        assert_eq!(l.config, {
            let mut c = Config::default();
            c.keys.insert("fly".into(), vec!["f".into()]);
            c
        });
        assert_eq!(
            l.warnings,
            vec![
                "/home/u/.config/rawpv/config.toml: unknown key `colour` (ignored)",
                "/home/u/.config/rawpv/config.toml: unknown key `limits.max_cats` (ignored)",
                "/home/u/.config/rawpv/config.toml: unknown action `keys.fly` (ignored)",
            ]
        );
    }

    #[test]
    fn bad_values_name_the_key_and_file() {
        let e = load_str("theme = \"blue\"\n", &file()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("config file /home/u/.config/rawpv/config.toml: bad value for `theme`: unknown variant `blue`"),
            "{msg}"
        );
        let e = load_str("[limits]\nmax_lines_per_block = \"many\"\n", &file()).unwrap_err();
        assert!(
            e.to_string()
                .contains("bad value for `limits.max_lines_per_block`"),
            "{e}"
        );
        let e = load_str("[keys]\nquit = [\"Ctrl+Q\"]\n", &file()).unwrap_err();
        assert!(
            e.to_string()
                .contains("bad value for `keys.quit`: `Ctrl+Q` is not a key"),
            "{e}"
        );
        let e = load_str("theme = \n", &file()).unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { .. }), "{e}");
    }

    #[test]
    fn a_light_theme_picks_a_light_syntax_theme_unless_one_is_set() {
        let l = load_str("theme = \"light\"\n", &file()).unwrap();
        assert_eq!(l.config.syntax_theme, LIGHT_SYNTAX_THEME);
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        let l = load_str(
            "theme = \"light\"\nsyntax_theme = \"base16-ocean.dark\"\n",
            &file(),
        )
        .unwrap();
        assert_eq!(l.config.syntax_theme, "base16-ocean.dark");
        let l = load_str("theme = \"dark\"\n", &file()).unwrap();
        assert_eq!(l.config.syntax_theme, "base16-ocean.dark");
    }

    #[test]
    fn no_color_wins_over_the_theme() {
        let c = Config {
            theme: ThemeName::Light,
            ..Config::default()
        };
        assert_eq!(c.theme(true), Theme::mono());
        assert_eq!(c.theme(false), Theme::light());
    }

    fn answer(light: Option<bool>, bg: Option<(u8, u8, u8)>) -> crate::theme::Probe {
        crate::theme::Probe {
            light,
            background: bg,
            took: std::time::Duration::from_millis(2),
            error: light.is_none().then(|| "timed out".to_owned()),
        }
    }

    #[test]
    fn auto_asks_the_terminal_and_takes_its_answer() {
        // The default is auto; a light background: the light theme and its syntax theme.
        let mut c = load_str("", &file()).unwrap().config;
        assert_eq!(c.theme, ThemeName::Auto);
        let note = c.pick_theme(false, || answer(Some(true), Some((0xfd, 0xf6, 0xe3))));
        assert_eq!(
            note.as_deref(),
            Some(
                "light theme: the terminal's background is #fdf6e3 (theme = \"dark\" in the \
                 config or --theme dark keeps dark)"
            )
        );
        assert_eq!(
            (c.theme, c.syntax_theme.as_str()),
            (ThemeName::Light, LIGHT_SYNTAX_THEME)
        );
        assert_eq!(c.theme(false), Theme::light());
        // A dark one, or no answer: dark, nothing said.
        for a in [answer(Some(false), Some((0, 0, 0))), answer(None, None)] {
            let mut c = Config::default();
            assert_eq!(c.pick_theme(false, || a), None);
            assert_eq!(
                c,
                Config {
                    theme: ThemeName::Dark,
                    ..Config::default()
                }
            );
        }
        // A syntax theme named in the file stays.
        let mut c = load_str("syntax_theme = \"Nord\"\n", &file())
            .unwrap()
            .config;
        c.pick_theme(false, || answer(Some(true), Some((255, 255, 255))));
        assert_eq!(
            (c.theme, c.syntax_theme.as_str()),
            (ThemeName::Light, "Nord")
        );
    }

    #[test]
    fn an_explicit_theme_or_no_color_asks_nothing() {
        for text in [
            "theme = \"dark\"\n",
            "theme = \"light\"\n",
            "theme = \"16\"\n",
            "theme = \"mono\"\n",
        ] {
            let mut c = load_str(text, &file()).unwrap().config;
            let before = c.clone();
            assert_eq!(c.pick_theme(false, || panic!("asked with {text}")), None);
            assert_eq!(c, before);
        }
        let mut c = Config::default();
        assert_eq!(c.pick_theme(true, || panic!("asked under NO_COLOR")), None);
        assert_eq!(c.theme(true), Theme::mono());
        // `--theme light` over an auto config: the light syntax theme too.
        let mut c = Config::default();
        c.set_theme(ThemeName::Light);
        assert_eq!(c.syntax_theme, LIGHT_SYNTAX_THEME);
    }

    #[test]
    fn diff_styles_replace_the_themes_and_bad_ones_name_the_key() {
        use ratatui::style::Color;
        let l = load_str(
            "[diff]\nplus-emph = \"bold #005f00\"\nminus = \"normal 52\"\n",
            &file(),
        )
        .unwrap();
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        let t = l.config.theme(false);
        let dark = Theme::dark();
        assert_eq!(
            t.diff_add_emph,
            dark.diff_add_emph
                .fg(Color::Rgb(0, 0x5f, 0))
                .add_modifier(ratatui::style::Modifier::BOLD)
        );
        assert_eq!(t.diff_del_line, dark.diff_del_line.bg(Color::Indexed(52)));
        assert_eq!(
            (t.diff_add_line, t.diff_del_emph),
            (dark.diff_add_line, dark.diff_del_emph)
        );
        assert_ne!(
            t.id, dark.id,
            "a patched palette is another render-cache key"
        );
        // Under NO_COLOR (or theme = "mono") the styles' colours do not apply.
        assert_eq!(l.config.theme(true), Theme::mono());
        let e = load_str("[diff]\nplus-emph = \"bold grean\"\n", &file()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("config file /home/u/.config/rawpv/config.toml: bad value for `diff.plus-emph`: Error parsing style \"bold grean\": unknown word: \"grean\""),
            "{msg}"
        );
        let e = load_str("[diff]\nminus = \"red blue green\"\n", &file()).unwrap_err();
        assert!(e.to_string().contains("bad value for `diff.minus`"), "{e}");
        let l = load_str("[diff]\nplus-emphasis = \"bold\"\n", &file()).unwrap();
        assert_eq!(
            l.warnings,
            vec!["/home/u/.config/rawpv/config.toml: unknown key `diff.plus-emphasis` (ignored)"]
        );
    }

    #[test]
    fn key_specs() {
        assert_eq!(parse_chord("q"), Some(KeyChord::ch('q')));
        assert_eq!(parse_chord("C-c"), Some(KeyChord::ctrl('c')));
        assert_eq!(parse_chord("Space"), Some(KeyChord::ch(' ')));
        assert_eq!(parse_chord("F5"), Some(KeyChord::key(KeyCode::F(5))));
        assert_eq!(parse_chord("F13"), None);
        assert_eq!(parse_chord("qq"), None);
        assert_eq!(parse_chord(""), None);
        assert_eq!(parse_action("toggle_play"), Some(Action::TogglePlay));
        assert_eq!(parse_action("seek"), None);
    }

    #[test]
    fn an_unknown_syntax_theme_warns_with_the_choices() {
        let l = load_str("syntax_theme = \"Solarized (neon)\"\n", &file()).unwrap();
        assert_eq!(l.config.syntax_theme, "Solarized (neon)");
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        let w = &l.warnings[0];
        assert!(
            w.starts_with("/home/u/.config/rawpv/config.toml: unknown syntax_theme `Solarized (neon)` (using base16-ocean.dark); available: "),
            "{w}"
        );
        assert!(
            w.contains("InspiredGitHub") && w.contains("Solarized (dark)"),
            "{w}"
        );
        let l = load_str("syntax_theme = \"InspiredGitHub\"\n", &file()).unwrap();
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    }

    #[test]
    fn limits_become_render_limits() {
        let l = load_str(
            "[limits]\nmax_lines_per_block = 7\nmax_bytes_per_block = 0\n",
            &file(),
        )
        .unwrap();
        let r = l.config.limits.limits();
        assert_eq!((r.max_lines, r.max_bytes), (7, 1));
        assert_eq!(
            Config::default().limits.limits(),
            crate::render::Limits::default()
        );
    }

    #[test]
    fn a_missing_explicit_file_is_an_error() {
        let e = load(Some(Path::new("/nonexistent/rawpv.toml"))).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read config file /nonexistent/rawpv.toml")
        );
    }
}
