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
  // Chunk n of the details: {callIndex: {u: lines, s: side-by-side lines}}.
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

  async function draw(call) {
    const d = await data(call);
    const box = call.querySelector(":scope > .detail");
    box.textContent = "";
    if (!d) return;
    const lines = sbs.checked && d.s ? d.s : d.u;
    const pre = document.createElement("pre");
    const frag = document.createDocumentFragment();
    for (const line of lines) {
      const row = document.createElement("span");
      row.className = line[0] ? "ln s" + line[0] : "ln";
      for (let i = 1; i + 1 < line.length; i += 2) {
        const cls = line[i], text = line[i + 1];
        if (cls) {
          const sp = document.createElement("span");
          sp.className = "s" + cls;
          appendText(sp, text);
          row.appendChild(sp);
        } else {
          appendText(row, text);
        }
      }
      if (!row.firstChild) row.appendChild(document.createTextNode(" "));
      frag.appendChild(row);
    }
    pre.appendChild(frag);
    box.appendChild(pre);
    call.dataset.drawn = sbs.checked && d.s ? "s" : "u";
  }

  function open(call, yes) {
    const box = call.querySelector(":scope > .detail");
    const btn = call.querySelector(":scope > .row");
    if (yes) {
      const want = sbs.checked ? "s" : "u";
      if (call.dataset.drawn !== want) {
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

  feed.addEventListener("click", function (ev) {
    const btn = ev.target.closest(".row");
    if (!btn || !feed.contains(btn)) return;
    const call = btn.parentElement;
    open(call, !call.classList.contains("open"));
  });

  function reveal(call) {
    for (let p = call.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") p.open = true;
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
      for (const t of document.querySelectorAll(".turn")) t.open = true;
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

  document.getElementById("fold").addEventListener("click", function () {
    for (const t of document.querySelectorAll(".turn")) t.open = false;
  });
  document.getElementById("unfold").addEventListener("click", function () {
    for (const t of document.querySelectorAll(".turn")) t.open = true;
  });
  sbs.addEventListener("change", function () {
    for (const call of document.querySelectorAll(".call.open")) open(call, true);
  });
  wrap.addEventListener("change", function () { document.body.classList.toggle("wrap", wrap.checked); });
  for (const a of document.querySelectorAll("a.goto")) {
    a.addEventListener("click", function () { setTimeout(fromHash, 0); });
  }
  // Printing: every turn unfolded, and (for a session of a readable size) every call opened.
  window.addEventListener("beforeprint", function () {
    for (const t of document.querySelectorAll(".turn")) t.open = true;
    if (calls.length <= 2000) for (const call of calls) open(call, true);
  });
  apply().then(function () {
    fromHash();
    document.documentElement.dataset.ready = "1";
  });
})();
