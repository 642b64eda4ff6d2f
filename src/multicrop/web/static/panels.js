// The carousel page's side panels: the post preview, the notes and the judge scores of each card.

import { api } from "./api.js";
import { $, allowedRatios, cur, edited, platformPreset, plural, settingsNow, showError, state } from "./state.js";
import { editor } from "./edits.js";
import { renderStrip } from "./strip.js";

// -- the post preview ------------------------------------------------------------------------------
// Each slide cut from the full-resolution photo by the server at the frame's width times the screen's pixel
// ratio, shown at the first slide's shape (a platform preset re-crops the others to it: shown as it would).
let previewTimer = null;
export function schedulePreview() { clearTimeout(previewTimer); previewTimer = setTimeout(renderPreview, 150); }

export function renderPreview() {
  const p = cur();
  const seamless = state.mode === "seamless";
  const boxes = seamless ? (p && p.seam ? p.seam.boxes.map((b) => ({ ...b, ratio: p.seam.ratio })) : null) : p && p.boxes;
  $("preview").classList.toggle("hidden", !(boxes && boxes.length));
  if (!boxes || !boxes.length || editor.drag || !document.body.classList.contains("previewing")) return;
  const frame = $("frame");
  const first = boxes[0];
  frame.style.setProperty("--post-ratio", `${first.w} / ${first.h}`);
  const width = Math.max(16, Math.round(frame.clientWidth * Math.min(window.devicePixelRatio || 1, 3)));
  const key = JSON.stringify([p.id, width, boxes.map((b) => [Math.round(b.x), Math.round(b.y), Math.round(b.w), Math.round(b.h)])]);
  if (frame.dataset.key === key) return;
  frame.dataset.key = key;
  const keep = frame.scrollLeft;
  frame.innerHTML = "";
  boxes.forEach((b, i) => {
    const slide = document.createElement("div");
    slide.className = "slide";
    slide.setAttribute("role", "listitem");
    const img = document.createElement("img");
    const q = new URLSearchParams({ x: Math.round(b.x), y: Math.round(b.y), w: Math.round(b.w), h: Math.round(b.h), width });
    img.src = `/api/photos/${p.id}/render?${q}`;
    img.alt = `Slide ${i + 1} of ${boxes.length}`;
    img.draggable = false;
    const n = document.createElement("span");
    n.className = "n";
    n.textContent = `${i + 1}/${boxes.length}`;
    slide.append(img, n);
    frame.appendChild(slide);
  });
  frame.scrollLeft = keep;
  const off = boxes.map((b, i) => [i + 1, b]).filter(([, b]) => Math.abs(b.w / b.h - first.w / first.h) > 0.01 * first.w / first.h);
  $("previewNote").textContent = (seamless ? "Swipe: the slides join edge to edge. " : "Swipe to preview. ")
    + (off.length ? `Shown at slide 1's shape (${first.ratio}), as Instagram shows a carousel: slide${off.length > 1 ? "s" : ""} `
      + `${off.map(([i]) => i).join(", ")} ${off.length > 1 ? "are" : "is"} re-cropped.` : `Every slide ${first.ratio}.`);
}

// -- notes ----------------------------------------------------------------------------------------
// The notes describe what is on screen now: the ratio notes come from the boxes shown; the server's notes
// about named crops are shown only while the crops are the suggestion (after an edit they would be stale).
function carouselNotes(p) {
  const notes = [];
  const items = p.noteItems || [];
  const kinds = [...new Set(p.boxes.map((b) => b.ratio))];
  const allowed = allowedRatios();
  const isEdited = edited(p);
  if (isEdited) {
    notes.push("You have edited these crops: they stay whatever you change; “Reset to suggestion” replaces them with the suggestion for these settings.");
  }
  const off = p.boxes.map((b, i) => [i + 1, b.ratio]).filter(([, r]) => allowed.length && !allowed.includes(r));
  if (off.length) {
    const which = off.map(([i, r]) => `crop ${i} is ${r}`).join(", ");
    notes.push({ warn: true, text: `${which[0].toUpperCase()}${which.slice(1)}, not a ratio of “${ratioLabel()}”: its card's menu changes it.` });
  }
  if (kinds.length > 1) {
    notes.push({ warn: true, text: `Mixed shapes (${kinds.join(", ")}): ` + (platformPreset()
      ? "Instagram shows every slide at the first slide's shape and would re-crop the others."
      : "a platform that shows one shape per carousel would re-crop some slides.") });
  } else if (!isEdited && kinds.length === 1) {
    const said = items.find((n) => n.kind === "ratio" && n.text.startsWith(`All slides are ${kinds[0]}`));
    if (said) notes.push(said.text);
    else if (p.ratioNote && p.ratioNote.startsWith(`All slides are ${kinds[0]}`)) notes.push(p.ratioNote);
  }
  const asked = Number(p.settings.k);
  const got = (p.suggested || p.boxes).length;
  const count = items.filter((n) => n.kind === "count").map((n) => n.text);
  if (Number.isInteger(asked) && got < asked && !count.length) { // fewer than asked: always said, in plain words
    count.push(`You asked for ${plural(asked, "crop")}; this photo gave ${got} distinct enough to keep.`);
  }
  if (isEdited) notes.push(...count.map((t) => `The suggestion: ${t}`));
  else {
    notes.push(...count);
    notes.push(...items.filter((n) => n.kind === "crops" || n.kind === "photo").map((n) => n.text));
  }
  if (p.focus && p.settings.strategy !== "direct") notes.push("The focus point is used by the direct strategy only.");
  return notes;
}

export function fewerThanAsked(p) { // the suggestion came back with fewer crops than the number asked for (and is shown)
  const asked = Number(p.settings && p.settings.k);
  return Number.isInteger(asked) && !edited(p) && p.boxes && p.boxes.length < asked;
}

function ratioLabel() {
  const sel = $("ratios");
  return sel.selectedIndex >= 0 ? sel.options[sel.selectedIndex].text : sel.value;
}

export function renderNotes() {
  const p = cur();
  const ul = $("notes");
  ul.innerHTML = "";
  if (!p) return;
  const notes = [];
  if (state.mode === "seamless") {
    if (p.seam) notes.push(...(p.seam.ratio_note ? [p.seam.ratio_note] : []), ...p.seam.plain_notes);
  } else if (p.boxes) notes.push(...carouselNotes(p));
  for (const n of [...new Set(notes.map((x) => (typeof x === "string" ? x : JSON.stringify(x))))].map((x) => (x.startsWith("{") ? JSON.parse(x) : x))) {
    const li = document.createElement("li");
    li.textContent = typeof n === "string" ? n : n.text;
    if (n.warn) li.className = "warn";
    ul.appendChild(li);
  }
}

// -- judge scores -----------------------------------------------------------------------------------
export const scoresKey = (p) => JSON.stringify((p.boxes || []).map((b) => [b.x, b.y, b.w, b.h, b.ratio]));
let scoresTimer = null;

export function scheduleScores(p) {
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
  } catch (e) { showError(e, "download"); }
  finally { if (p.scoresPending === key) p.scoresPending = null; }
}

function holisticOf(s) {
  if (!s) return null;
  if (s.mean) return s.mean.holistic;
  return s.holistic === undefined ? null : s.holistic;
}

export function bestIndex(scores) {
  let best = -1;
  scores.forEach((s, i) => { const v = holisticOf(s); if (v !== null && (best < 0 || v > holisticOf(scores[best]))) best = i; });
  return scores.length > 1 ? best : -1;
}

export function scoreTable(s) {
  if (s && s.families) return panelTable(s);
  const t = document.createElement("div");
  t.className = "scores";
  if (!s) return t;
  for (const [dim, v] of Object.entries(s.dimensions)) {
    const row = document.createElement("div");
    row.className = "dim";
    const proxy = s.proxies.includes(dim);
    row.textContent = `${dim.replace(/_/g, " ")}${proxy ? " (proxy)" : ""}: ${v.toFixed(2)} / 5`;
    if (proxy) row.title = "a proxy: no pixel statistic measures this; see the note under the carousel";
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
