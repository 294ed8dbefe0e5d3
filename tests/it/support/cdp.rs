//! A real headless Chromium driven over the `DevTools` protocol, for the export's browser tests
//! (issue 26 item 7).
//!
//! The browser is Debian's `chromium` (`.ci/run` installs it when missing), started with a
//! fresh profile and `--remote-debugging-port=0`; the client is a few commands over the
//! WebSocket crate the product already uses (tokio-tungstenite): `Target.createTarget`,
//! `Target.attachToTarget` (flat sessions), `Page.navigate`, `Runtime.evaluate`. Every console
//! error, uncaught exception and browser log error (a CSP violation, a failed load) is kept in
//! [`Tab::errors`]. Why not a CDP crate: the maintained ones generate the whole protocol at
//! build time (minutes of CI on two cores) for the five commands used here.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The chromium binary, or `None` (with a visible `skipped:` line) when it is not installed;
/// under CI (`CI=true`) a missing browser fails instead.
pub fn chromium() -> Option<String> {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return Some(c.to_owned());
        }
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(!ci, "chromium is missing (CI=true: .ci/run installs it)");
    println!("skipped: chromium is not installed (apt-get install chromium)");
    None
}

/// A running browser; killed on drop.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: Ws,
    next: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One page, attached with a flat session.
pub struct Tab {
    session: String,
    /// Console errors, uncaught exceptions and browser log errors seen so far.
    pub errors: Vec<String>,
}

impl Browser {
    /// Starts `bin` headless with a fresh profile, `width`×`height` window.
    pub async fn start(bin: &str, width: u32, height: u32) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_mins(2))
            .expect("chromium says where DevTools listens");
        let (ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        Self {
            child,
            _profile: profile,
            ws,
            next: 1,
        }
    }

    /// Sends `method` (to `session`, or the browser) and waits for its answer; events that
    /// arrive meanwhile go to `on_event`.
    async fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        mut on_event: impl FnMut(&Value),
    ) -> Value {
        let id = self.next;
        self.next += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).await.unwrap();
        loop {
            let m = tokio::time::timeout(Duration::from_mins(1), self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("{method}: no answer in 60 s"))
                .expect("the browser is still there")
                .unwrap();
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            on_event(&v);
        }
    }

    /// Waits for an event named `name` of `tab` (others go to its errors when they are ones).
    async fn wait_event(&mut self, tab: &mut Tab, name: &str) {
        loop {
            let m = tokio::time::timeout(Duration::from_mins(1), self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no {name} in 60 s"))
                .expect("the browser is still there")
                .unwrap();
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["method"] == json!(name) {
                return;
            }
            collect(&mut tab.errors, &v);
        }
    }

    /// Opens a tab with the runtime, log and page domains on.
    pub async fn tab(&mut self) -> Tab {
        let t = self
            .call(
                None,
                "Target.createTarget",
                json!({"url": "about:blank"}),
                |_| {},
            )
            .await;
        let target = t["targetId"].as_str().unwrap().to_owned();
        let a = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                |_| {},
            )
            .await;
        let session = a["sessionId"].as_str().unwrap().to_owned();
        let mut tab = Tab {
            session,
            errors: Vec::new(),
        };
        for m in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.send(&mut tab, m, json!({})).await;
        }
        tab
    }

    async fn send(&mut self, tab: &mut Tab, method: &str, params: Value) -> Value {
        let session = tab.session.clone();
        let errors = &mut tab.errors;
        self.call(Some(&session), method, params, |v| collect(errors, v))
            .await
    }

    /// Loads `path` and waits for its load event.
    pub async fn open(&mut self, tab: &mut Tab, path: &Path) {
        let url = format!("file://{}", path.display());
        self.send(tab, "Page.navigate", json!({"url": url})).await;
        self.wait_event(tab, "Page.loadEventFired").await;
    }

    /// Evaluates `expr` in the page (promises awaited) and returns its value.
    pub async fn eval(&mut self, tab: &mut Tab, expr: &str) -> Value {
        let r = self
            .send(
                tab,
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expr}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// A PNG screenshot of the whole page at `width` CSS pixels, `dark` or light.
    pub async fn screenshot(&mut self, tab: &mut Tab, dark: bool) -> Vec<u8> {
        let scheme = if dark { "dark" } else { "light" };
        self.send(
            tab,
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        )
        .await;
        let shot = self
            .send(tab, "Page.captureScreenshot", json!({"format": "png"}))
            .await;
        base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            shot["data"].as_str().unwrap(),
        )
        .unwrap()
    }
}

/// Keeps `v` in `errors` when it is a console error, an uncaught exception or a log error.
fn collect(errors: &mut Vec<String>, v: &Value) {
    match v["method"].as_str() {
        Some("Runtime.exceptionThrown") => errors.push(v["params"].to_string()),
        Some("Runtime.consoleAPICalled") if v["params"]["type"] == json!("error") => {
            errors.push(v["params"].to_string());
        }
        Some("Log.entryAdded") if v["params"]["entry"]["level"] == json!("error") => {
            errors.push(v["params"]["entry"].to_string());
        }
        _ => {}
    }
}
