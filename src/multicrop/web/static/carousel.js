// Carousel mode: upload photos, get the suggested carousel, edit it, download it.
"use strict";

const $ = (id) => document.getElementById(id);
const crops = (n) => `${n} crop${n === 1 ? "" : "s"}`;
const state = { photos: [], current: null, settings: null };

function message(text, kind) {
  const d = document.createElement("div");
  d.className = `msg ${kind || "error"}`;
  d.textContent = text;
  $("messages").appendChild(d);
  if (kind === "info") setTimeout(() => d.remove(), 6000);
}

function settingsNow() {
  return { k: $("k").value, ratios: $("ratios").value, strategy: $("strategy").value };
}

function busy(on, text) {
  $("busy").classList.toggle("hidden", !on);
  if (text !== undefined) $("status").textContent = text;
}

const editor = new BoxEditor($("overlay"), {
  draw: false,
  onChange: (boxes, final) => { const p = cur(); if (p) { p.boxes = boxes.map((b) => ({ ...b })); renderStrip(); } },
});

function cur() { return state.photos.find((p) => p.id === state.current); }

function renderTabs() {
  const tabs = $("tabs");
  tabs.innerHTML = "";
  for (const p of state.photos) {
    const t = document.createElement("div");
    t.className = "tab" + (p.id === state.current ? " active" : "");
    t.textContent = p.name;
    const st = document.createElement("span");
    st.className = "st";
    st.textContent = p.status === "ready" ? (p.boxes ? crops(p.boxes.length) : "ready") : p.status;
    t.appendChild(st);
    t.onclick = () => select(p.id);
    tabs.appendChild(t);
  }
}

function outSize(b) {
  const w = Math.round(b.w), h = Math.round(b.h);
  const pw = Number($("width").value) || 0;
  if (!pw) return `${w}×${h}`;
  if (w < pw) return `${w}×${h}, under ${pw} px: kept full size`;
  return `${pw}×${Math.round(h * pw / w)}`;
}

function renderStrip() {
  const p = cur();
  const strip = $("strip");
  strip.innerHTML = "";
  if (!p || !p.boxes) return;
  $("count").textContent = `${crops(p.boxes.length)} · swipe order`;
  const img = $("photo");
  p.boxes.forEach((b, i) => {
    const card = document.createElement("div");
    card.className = "card";
    card.dataset.index = i;
    const pw = Number($("width").value) || 0;
    if (pw && b.w < pw / 2) {
      card.classList.add("warn");
      card.title = `only ${Math.round(b.w)} px wide: it would look soft at ${pw} px`;
    }
    if (img.complete && img.naturalWidth) {
      const c = thumbnail(img, b, p.width, 220);
      card.appendChild(c);
      card.style.width = `${Math.max(c.width, 150) + 14}px`;
    }
    const meta = document.createElement("div");
    meta.className = "meta";
    const label = document.createElement("span");
    label.className = "what";
    label.textContent = `${i + 1} · ${b.ratio} · ${outSize(b)}`;
    meta.appendChild(label);
    const btns = document.createElement("span");
    for (const [txt, title, fn] of [["◀", "move earlier", () => swap(i, i - 1)], ["▶", "move later", () => swap(i, i + 1)],
                                     ["✕", "delete", () => remove(i)]]) {
      const bt = document.createElement("button");
      bt.textContent = txt; bt.title = title; bt.onclick = fn;
      btns.appendChild(bt);
    }
    meta.appendChild(btns);
    card.appendChild(meta);
    const table = $("showScores").checked && p.scores && p.scoresKey === scoresKey(p) ? scoreTable(p.scores[i]) : null;
    if (table) card.appendChild(table);
    strip.appendChild(card);
    // a panel's table is wider than a portrait thumbnail: widen the card to it rather than cut columns off
    if (table && table.offsetWidth + 14 > card.offsetWidth) card.style.width = `${table.offsetWidth + 14}px`;
  });
  renderTabs();
  if ($("showScores").checked) scheduleScores(p);
}

// Judge scores: the five rubric dimensions and the holistic score of each crop (offline measured judge)
const scoresKey = (p) => JSON.stringify(p.boxes.map((b) => [b.x, b.y, b.w, b.h, b.ratio]));
let scoresTimer = null;

function scheduleScores(p) {
  if (p.scoresKey === scoresKey(p) || p.scoresPending === scoresKey(p)) return;
  clearTimeout(scoresTimer);
  scoresTimer = setTimeout(() => fetchScores(p), 300);
}

async function fetchScores(p) {
  if (!p.boxes || !p.boxes.length) return;
  const key = scoresKey(p);
  p.scoresPending = key;
  try {
    const r = await api("POST", `/api/photos/${p.id}/scores`, { ...settingsNow(), boxes: p.boxes });
    const body = await r.json();
    if (p.boxes && scoresKey(p) === key) { p.scores = body.crops; p.scoresKey = key; if (p === cur()) renderStrip(); }
  } catch (e) { message(`${p.name}: judge scores: ${e.message}`); }
  finally { if (p.scoresPending === key) p.scoresPending = null; }
}

function scoreTable(s) {
  if (s && s.families) return panelTable(s);
  const t = document.createElement("div");
  t.className = "scores";
  if (!s) return t;
  for (const [dim, v] of Object.entries(s.dimensions)) {
    const row = document.createElement("div");
    row.className = "dim";
    const proxy = s.proxies.includes(dim);
    row.textContent = `${dim.replace(/_/g, " ")}${proxy ? " (proxy)" : ""}: ${v.toFixed(2)} / 5`;
    if (proxy) row.title = "no pixel statistic measures this: a proxy";
    t.appendChild(row);
  }
  const h = document.createElement("div");
  h.className = "holistic";
  h.textContent = `holistic: ${s.holistic.toFixed(2)} / 10`;
  t.appendChild(h);
  return t;
}

// A served panel: one row per family (holistic, then the five dimensions), and the panel mean
const DIM_ABBR = { technical_quality: "tech", composition: "comp", colour_and_tone: "col",
                   distinctiveness: "dist", emotional_impact: "emo" };

function panelTable(s) {
  const t = document.createElement("table");
  t.className = "scores panel";
  const dims = [...new Set(s.families.flatMap((f) => Object.keys(f.dimensions)))];
  const cell = (tag, text, title, cls) => {
    const c = document.createElement(tag);
    c.textContent = text;
    if (title) c.title = title;
    if (cls) c.className = cls;
    return c;
  };
  const num = (v, dim, scale, proxy) => {
    const name = dim.replace(/_/g, " ");
    if (v === null || v === undefined) return cell("td", "–", `${name}: no score (the calls failed or gave no score)`, "none");
    return cell("td", v.toFixed(1) + (proxy ? "*" : ""),
                `${name}: ${+v.toFixed(3)} / ${scale}${proxy ? " (proxy: no pixel statistic measures this)" : ""}`,
                proxy ? "proxy" : "");
  };
  const head = document.createElement("tr");
  head.appendChild(cell("th", "judge"));
  head.appendChild(cell("th", "hol", "holistic, 1-10"));
  for (const d of dims) head.appendChild(cell("th", DIM_ABBR[d] || d.slice(0, 4), `${d.replace(/_/g, " ")}, 1-5`));
  t.appendChild(head);
  const addRow = (name, title, r, proxies, cls) => {
    const tr = document.createElement("tr");
    tr.className = cls;
    tr.dataset.family = name;
    tr.appendChild(cell("th", name, title));
    tr.appendChild(num(r.holistic, "holistic", 10, false));
    for (const d of dims) tr.appendChild(num(r.dimensions[d], d, 5, proxies.includes(d)));
    t.appendChild(tr);
  };
  for (const f of s.families) {
    const none = f.holistic === null && Object.values(f.dimensions).every((v) => v === null);
    addRow(f.family, `family ${f.family}` + (none ? ": no score (its calls failed or gave no score)" : ""),
           f, f.proxies, none ? "family failed" : "family");
  }
  // a mean over a proxy is marked as well: it is partly a proxy
  const anyProxy = [...new Set(s.families.flatMap((f) => f.proxies))];
  if (s.mean) addRow("mean", `plain mean of the ${s.mean.families} families that gave scores`, s.mean, anyProxy, "mean");
  if (s.families.some((f) => f.proxies.length)) {
    const foot = document.createElement("caption");
    foot.textContent = "* a proxy, or a mean over one: no pixel statistic measures it";
    t.prepend(foot);
  }
  return t;
}

function setBoxes(boxes) {
  const p = cur();
  p.boxes = boxes.map((b) => ({ ...b }));
  editor.setBoxes(p.boxes);
  renderStrip();
}

function swap(i, j) {
  const p = cur();
  if (j < 0 || j >= p.boxes.length) return;
  const b = p.boxes.slice();
  [b[i], b[j]] = [b[j], b[i]];
  setBoxes(b);
}

function remove(i) {
  const p = cur();
  const b = p.boxes.slice();
  b.splice(i, 1);
  setBoxes(b);
}

function addCrop() {
  const p = cur();
  if (!p) return;
  const ratio = $("ratios").value.split(",")[0];
  const r = ratioValue(ratio);
  let w = Math.min(p.width / 3, p.height / 3 * r);
  const h = w / r;
  setBoxes([...(p.boxes || []), { x: (p.width - w) / 2, y: (p.height - h) / 2, w, h, ratio }]);
}

function overlays() {
  const p = cur();
  const r = p && p.result;
  editor.faces = $("showFaces").checked && r ? r.faces : [];
  editor.regions = $("showRegions").checked && r && r.partition ? (r.partition.regions || []) : [];
  $("saliency").classList.toggle("hidden", !$("showSaliency").checked);
  if ($("showSaliency").checked && p && $("saliency").dataset.id !== p.id) {
    $("saliency").dataset.id = p.id;
    $("saliency").src = `/api/photos/${p.id}/saliency`;
  }
  editor.render();
}

async function waitReady(p) {
  while (true) {
    const info = await (await api("GET", `/api/photos/${p.id}`)).json();
    Object.assign(p, { status: info.status, error: info.error });
    if (p.id === state.current) busy(info.status !== "ready" && info.status !== "error",
      `${p.name}: ${info.status === "error" ? info.error : info.stage} (${info.elapsed.toFixed(1)} s)`);
    renderTabs();
    if (info.status === "ready" || info.status === "error") return info;
    await new Promise((res) => setTimeout(res, 300));
  }
}

async function suggest(p) {
  const seq = p.seq = (p.seq || 0) + 1;
  const info = await waitReady(p);
  if (info.status === "error") { message(info.error); return; }
  if (p.id === state.current) busy(true, `${p.name}: choosing crops…`);
  try {
    const r = await (await api("POST", `/api/photos/${p.id}/crops`, settingsNow())).json();
    if (seq !== p.seq) return; // newer settings for this photo are on their way
    p.result = r;
    p.boxes = r.crops.map((c) => ({ ...c.box, ratio: c.ratio }));
    if (p.id === state.current) {
      editor.setBoxes(p.boxes);
      overlays();
      renderStrip();
      busy(false, `${p.name}: ${r.size[0]}×${r.size[1]} px, ${crops(r.k)}` + (r.failure ? ` — note: ${r.failure}` : ""));
    }
  } catch (e) {
    if (p.id === state.current) busy(false, `${p.name}: ${e.message}`);
    message(`${p.name}: ${e.message}`);
  }
  renderTabs();
}

function select(id) {
  state.current = id;
  const p = cur();
  $("work").classList.remove("hidden");
  editor.setSize(p.width, p.height);
  editor.setBoxes(p.boxes || []);
  $("photo").src = `/api/photos/${p.id}/image`;
  $("saliency").dataset.id = "";
  overlays();
  renderTabs();
  if (!p.boxes) suggest(p);
  else { renderStrip(); busy(false, `${p.name}: ${p.width}×${p.height} px`); }
}

async function upload(files) {
  if (!files.length) return;
  const fd = new FormData();
  for (const f of files) fd.append("files", f, f.name);
  busy(true, `uploading ${files.length} photo${files.length === 1 ? "" : "s"}…`);
  try {
    const r = await (await api("POST", "/api/photos", fd)).json();
    for (const bad of r.refused) message(bad.error);
    for (const info of r.photos) state.photos.push({ ...info, boxes: null });
    renderTabs();
    if (r.photos.length) select(r.photos[0].id);
    for (const info of r.photos.slice(1)) suggest(state.photos.find((p) => p.id === info.id));
  } catch (e) {
    busy(false, "");
    message(e.message);
  }
}

async function download(withWidth) {
  const p = cur();
  if (!p || !p.boxes) return;
  const body = { ...settingsNow(), boxes: p.boxes, width: withWidth ? Number($("width").value) : null };
  busy(true, `${p.name}: cutting ${p.boxes.length} crops from the full-resolution photo…`);
  try {
    const r = await api("POST", `/api/photos/${p.id}/download`, body);
    const blob = await r.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (p.name.replace(/\.[^.]*$/, "") || "photo") + "_carousel.zip";
    document.body.appendChild(a); a.click(); a.remove();
    busy(false, `${p.name}: zip of ${crops(p.boxes.length)} downloaded`);
  } catch (e) { busy(false, ""); message(`${p.name}: ${e.message}`); }
}

async function init() {
  const s = await (await api("GET", "/api/settings")).json();
  state.settings = s;
  const k = $("k");
  if (s.auto_k.length) k.add(new Option("auto", "auto"));
  for (let i = 1; i <= 10; i++) k.add(new Option(String(i), String(i)));
  k.value = String(s.default.k);
  for (const [label, value] of Object.entries(s.presets)) $("ratios").add(new Option(label, value));
  $("ratios").value = Object.values(s.presets).includes(s.default.ratios) ? s.default.ratios : "2:3,3:2";
  for (const st of s.strategies) $("strategy").add(new Option(st, st));
  $("strategy").value = s.default.strategy;
  $("limit").textContent = `up to ${s.max_upload_mb} MB each · ${s.suffixes.join(" ")}`;
  $("labelLink").classList.toggle("hidden", !s.label_mode);
  for (const id of ["k", "ratios", "strategy"]) $(id).onchange = () => {
    // k=auto exists only with some strategies: switch to one when auto is chosen
    if (id === "k" && k.value === "auto" && !s.auto_k.includes($("strategy").value)) $("strategy").value = s.auto_k[0];
    if (id === "strategy" && k.value === "auto" && !s.auto_k.includes($("strategy").value)) k.value = String(s.default.k);
    for (const p of state.photos) if (p.id !== state.current) { p.boxes = null; p.seq = (p.seq || 0) + 1; }
    const p = cur(); if (p) suggest(p);
  };
  $("width").oninput = renderStrip;
  for (const id of ["showSaliency", "showFaces", "showRegions"]) $(id).onchange = overlays;
  $("showScores").onchange = renderStrip;
  $("files").onchange = (e) => { upload([...e.target.files]); e.target.value = ""; };
  const drop = $("drop");
  drop.ondragover = (e) => { e.preventDefault(); drop.classList.add("over"); };
  drop.ondragleave = () => drop.classList.remove("over");
  drop.ondrop = (e) => { e.preventDefault(); drop.classList.remove("over"); upload([...e.dataTransfer.files]); };
  $("photo").onload = renderStrip;
  $("add").onclick = addCrop;
  $("reset").onclick = () => { const p = cur(); if (p) { p.boxes = null; suggest(p); } };
  $("dlFull").onclick = () => download(false);
  $("dlWidth").onclick = () => download(true);
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "Delete" || e.key === "Backspace") { if (editor.deleteSelected()) e.preventDefault(); }
  });
  const existing = (await (await api("GET", "/api/photos")).json()).photos;
  for (const info of existing) state.photos.push({ ...info, boxes: null });
  if (existing.length) select(existing[0].id);
}

init().catch((e) => message(e.message));
