// rawpv export: the page's only script (issue 26). It draws a call's detail from the data
// embedded once (chunks of calls as raw-deflated JSON in base64, `<script
// type="application/octet-stream" id="zN">`, inflated by DecompressionStream) when the call is
// opened,
// with textContent only (no markup is ever parsed from the session), and runs the search,
// the filters and the fold / side-by-side / wrap switches. Links in details are made only for
// http(s) URLs, with rel="noopener noreferrer".
"use strict";
(function () {
  const feed = document.getElementById("feed");
  const calls = Array.from(document.querySelectorAll(".call"));
  const sbs = document.getElementById("sbs");
  const wrap = document.getElementById("wrap");
  const URL_RE = /https?:\/\/[^\s<>"'`)\]]+/g;

  const chunks = new Map();
  // Chunk n of the details: {callIndex: {u: lines}}.
  function chunk(n) {
    if (!chunks.has(n)) {
      chunks.set(n, (async function () {
        const el = document.getElementById("z" + n);
        if (!el) return {};
        const bin = atob(el.textContent.trim());
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
        return JSON.parse(await new Response(stream).text());
      })());
    }
    return chunks.get(n);
  }
  async function data(call) {
    const all = await chunk(call.dataset.z);
    return all[call.id.slice(1)] || null;
  }
  const pending = new Set();
  // Resolves when every detail asked for is drawn (the tests wait on it).
  window.rawpvIdle = function () { return Promise.all(Array.from(pending)); };

  function appendText(parent, text) {
    let at = 0;
    for (const m of text.matchAll(URL_RE)) {
      if (m.index > at) parent.appendChild(document.createTextNode(text.slice(at, m.index)));
      const a = document.createElement("a");
      a.href = m[0];
      a.rel = "noopener noreferrer";
      a.target = "_blank";
      a.textContent = m[0];
      parent.appendChild(a);
      at = m.index + m[0].length;
    }
    if (at < text.length) parent.appendChild(document.createTextNode(text.slice(at)));
  }

  // Side by side, built here from the unified rows (the page holds each diff once): a diff row
  // is one whose first run has the diff gutter's class (`data-g` of #data) and reads
  // `OLD NEW │` (two columns of one width); its second run is the sign. A run of deletions
  // and the additions right after it share lines, i-th with i-th, as the terminal pairs them.
  const GUTTER = String(document.getElementById("data").dataset.g || "");
  function diffRow(line) {
    if (!GUTTER || line.length < 3 || String(line[1]) !== GUTTER) return null;
    const g = line[2];
    if (g.length < 4 || g.slice(-2) !== " \u2502" || (g.length - 2) % 2 !== 1) return null;
    const w = (g.length - 3) / 2;
    if (g[w] !== " " || !/^ *\d*$/.test(g.slice(0, w)) || !/^ *\d*$/.test(g.slice(w + 1, 2 * w + 1))) return null;
    const sign = line.length > 4 ? line[4] : "";
    const kind = sign === "+" ? "add" : sign === "-" ? "del" : sign === " " ? "ctx" : "mark";
    return { line: line, w: w, old: g.slice(0, w), neu: g.slice(w + 1, 2 * w + 1), kind: kind };
  }
  function sideRows(lines) {
    const out = [];
    let any = false;
    let i = 0;
    while (i < lines.length) {
      const r = diffRow(lines[i]);
      if (!r) { out.push(lines[i]); i++; continue; }
      any = true;
      if (r.kind === "ctx") { out.push({ l: r, ln: r.old, r: r, rn: r.neu }); i++; continue; }
      if (r.kind === "mark") { out.push({ l: r, ln: "", r: null }); i++; continue; }
      const dels = [], adds = [];
      while (i < lines.length) {
        const d = diffRow(lines[i]);
        if (!d || (d.kind !== "del" && !(d.kind === "mark" && dels.length && !adds.length))) break;
        dels.push(d); i++;
      }
      while (i < lines.length) {
        const a = diffRow(lines[i]);
        if (!a || (a.kind !== "add" && !(a.kind === "mark" && adds.length))) break;
        adds.push(a); i++;
      }
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k] || null, a = adds[k] || null;
        out.push({ l: d, ln: d ? d.old : "", r: a, rn: a ? a.neu : "" });
      }
    }
    return any ? out : null;
  }
  function runs(parent, line, from) {
    for (let i = from; i + 1 < line.length; i += 2) {
      const cls = line[i], text = line[i + 1];
      if (cls) {
        const sp = document.createElement("span");
        sp.className = "s" + cls;
        appendText(sp, text);
        parent.appendChild(sp);
      } else {
        appendText(parent, text);
      }
    }
  }
  function half(r, num) {
    const h = document.createElement("span");
    h.className = r && r.line[0] ? "half s" + r.line[0] : "half";
    const w = r ? r.w : 0;
    const g = document.createElement("span");
    g.className = "s" + GUTTER;
    g.textContent = (r ? (num.trim() ? num.trim().padStart(w) : " ".repeat(w)) : "") + " \u2502";
    if (r) { h.appendChild(g); runs(h, r.line, 3); }
    return h;
  }

  async function draw(call) {
    const d = await data(call);
    const box = call.querySelector(":scope > .detail");
    box.textContent = "";
    if (!d) return;
    const side = sbs.checked ? sideRows(d.u) : null;
    if (sbs.checked && !side) call.dataset.hasDiff = "no";
    const lines = side || d.u;
    const pre = document.createElement("pre");
    const frag = document.createDocumentFragment();
    for (const line of lines) {
      const row = document.createElement("span");
      if (Array.isArray(line)) {
        row.className = line[0] ? "ln s" + line[0] : "ln";
        runs(row, line, 1);
      } else {
        row.className = "ln sbs";
        row.appendChild(half(line.l, line.ln));
        row.appendChild(half(line.r, line.rn));
      }
      if (!row.firstChild) row.appendChild(document.createTextNode(" "));
      frag.appendChild(row);
    }
    pre.appendChild(frag);
    box.appendChild(pre);
    call.dataset.drawn = side ? "s" : "u";
  }

  function open(call, yes) {
    const box = call.querySelector(":scope > .detail");
    const btn = call.querySelector(":scope > .row");
    if (yes) {
      const want = sbs.checked ? "s" : "u";
      // A detail with no diff draws the same either way ("u" both times).
      if (!call.dataset.drawn || (call.dataset.drawn !== want && call.dataset.hasDiff !== "no")) {
        const p = draw(call).finally(function () { pending.delete(p); });
        pending.add(p);
      }
      box.hidden = false;
    } else {
      box.hidden = true;
    }
    call.classList.toggle("open", yes);
    btn.setAttribute("aria-expanded", yes ? "true" : "false");
  }

  function fold(turn, yes) {
    turn.classList.toggle("folded", yes);
    const b = turn.querySelector(":scope > .tt > button");
    if (b) b.setAttribute("aria-expanded", yes ? "false" : "true");
  }
  function foldAll(yes) {
    for (const t of document.querySelectorAll(".turn")) fold(t, yes);
  }
  feed.addEventListener("click", function (ev) {
    const tt = ev.target.closest(".tt > button");
    if (tt && feed.contains(tt)) {
      const turn = tt.parentElement.parentElement;
      fold(turn, !turn.classList.contains("folded"));
      return;
    }
    const btn = ev.target.closest(".row");
    if (!btn || !feed.contains(btn)) return;
    const call = btn.parentElement;
    open(call, !call.classList.contains("open"));
  });

  function reveal(call) {
    for (let p = call.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
      if (p.classList && p.classList.contains("turn")) fold(p, false);
    }
    open(call, true);
    call.scrollIntoView({ block: "start" });
  }
  function fromHash() {
    const m = /^#c(\d+)$/.exec(location.hash);
    if (m) {
      const call = document.getElementById("c" + m[1]);
      if (call) reveal(call);
    }
  }
  window.addEventListener("hashchange", fromHash);

  // Search and filters: a call shows when its row (tool, summary, status) holds the text
  // (or, with "in details", its detail data does) and its tool and status match.
  const q = document.getElementById("q");
  const ftool = document.getElementById("ftool");
  const fstatus = document.getElementById("fstatus");
  const indetail = document.getElementById("indetail");
  const shown = document.getElementById("shown");
  // The text of each call's detail, for "in details" (every chunk inflated once).
  const detailText = new Map();
  async function loadDetailTexts() {
    const ns = new Set(calls.map(function (c) { return c.dataset.z; }));
    for (const n of ns) {
      const all = await chunk(n);
      for (const k in all) {
        let t = "";
        for (const line of all[k].u) for (let i = 2; i < line.length; i += 2) t += line[i];
        detailText.set(k, t.toLowerCase());
      }
    }
  }
  let texts = null;
  async function apply() {
    if (indetail.checked && !texts) texts = loadDetailTexts();
    if (indetail.checked) await texts;
    const text = q.value.trim().toLowerCase();
    const tool = ftool.value, status = fstatus.value;
    let n = 0;
    for (const call of calls) {
      let ok = (!tool || call.dataset.tool === tool) && (!status || call.dataset.status === status);
      if (ok && text) {
        const row = call.querySelector(":scope > .row").textContent.toLowerCase();
        ok = row.includes(text);
        if (!ok && indetail.checked) {
          ok = (detailText.get(call.id.slice(1)) || "").includes(text);
        }
      }
      call.classList.toggle("hidden", !ok);
      if (ok) n++;
    }
    const filtering = text || tool || status;
    for (const m of document.querySelectorAll(".msg, .ev")) m.classList.toggle("hidden", !!filtering);
    if (filtering) {
      foldAll(false);
      // A parent shows when a nested call matches.
      for (const call of calls) {
        if (!call.classList.contains("hidden")) {
          for (let p = call.parentElement.closest(".call"); p; p = p.parentElement.closest(".call")) p.classList.remove("hidden");
        }
      }
    }
    shown.textContent = filtering ? n + " of " + calls.length + " calls match" : calls.length + " calls";
  }
  let timer = 0;
  q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 120); });
  q.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { indetail.checked = true; apply(); } });
  for (const el of [ftool, fstatus, indetail]) el.addEventListener("change", apply);

  document.getElementById("fold").addEventListener("click", function () { foldAll(true); });
  document.getElementById("unfold").addEventListener("click", function () { foldAll(false); });
  sbs.addEventListener("change", function () {
    for (const call of document.querySelectorAll(".call.open")) open(call, true);
  });
  wrap.addEventListener("change", function () { document.body.classList.toggle("wrap", wrap.checked); });
  for (const a of document.querySelectorAll("a.goto")) {
    a.addEventListener("click", function () { setTimeout(fromHash, 0); });
  }
  // Printing: every turn unfolded, and (for a session of a readable size) every call opened.
  window.addEventListener("beforeprint", function () {
    foldAll(false);
    if (calls.length <= 2000) for (const call of calls) open(call, true);
  });
  apply().then(function () {
    fromHash();
    document.documentElement.dataset.ready = "1";
  });
})();
