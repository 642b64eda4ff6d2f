// Carousel mode: upload photos, get the suggested carousel (or a seamless panorama), edit it, download it.
// Settings and each photo's edits are kept in this browser (localStorage); the photos themselves belong
// to this browser's session on the server.
"use strict";

const $ = (id) => document.getElementById(id);
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const STORE = "multicrop.v1";
const FIELDS = ["upload", "k", "ratios", "strategy", "slides", "width", "download"];
// The strategies in a photographer's words (the values stay the library's names)
const STRATEGY_WORDS = { direct: "Subjects (recommended)", partition: "Regions (as in the Carousel paper)",
                         topk: "Best-scoring crops anywhere" };
const state = { photos: [], current: null, settings: null, mode: "carousel", replies: 0 };

// -- stored state ----------------------------------------------------------------------------
function loadJSON(key, fallback) {
  try { const v = JSON.parse(localStorage.getItem(`${STORE}.${key}`)); return v === null ? fallback : v; }
  catch (_) { return fallback; }
}
function saveJSON(key, value) {
  try { localStorage.setItem(`${STORE}.${key}`, JSON.stringify(value)); } catch (_) { /* private mode: not kept */ }
}
function saveSettings() {
  saveJSON("settings", { k: $("k").value, ratios: $("ratios").value, strategy: $("strategy").value,
                         width: $("width").value, mixed: $("mixed").checked, slides: $("slides").value,
                         mode: state.mode, current: state.current, scores: $("showScores").checked });
}
// Each photo keeps its own settings, boxes and the suggestion they started from (so "edited" survives a reload)
function savePhoto(p) {
  if (p.boxes || p.band) saveJSON(`photo.${p.id}`, { boxes: p.boxes, focus: p.focus || null, settings: p.settings,
                                                     suggested: p.suggested || null, band: p.band || null });
}
const copyState = (st) => ({ boxes: clone(st.boxes), settings: { ...st.settings }, suggested: st.suggested ? clone(st.suggested) : null });
const sameBoxes = (a, b) => JSON.stringify(a || null) === JSON.stringify(b || null);
function edited(p) { return !!(p && p.boxes && p.suggested && !sameBoxes(p.boxes, p.suggested)); }
function record(p) { p.history.record({ boxes: p.boxes, settings: p.settings, suggested: p.suggested }); }

// -- errors beside their controls --------------------------------------------------------------
function fieldError(name, text) {
  const span = $(`err-${name}`);
  if (!span) return false;
  span.textContent = text || "";
  const ctl = { download: null, upload: $("upload") }[name] ?? $(name);
  if (ctl) { if (text) ctl.setAttribute("aria-invalid", "true"); else ctl.removeAttribute("aria-invalid"); }
  return true;
}
function clearErrors(...names) { for (const n of names) fieldError(n, ""); }

function fieldFor(e, fallback) {
  const f = (e.field || "").split(".")[0];
  if (f === "boxes") return "download";
  if (FIELDS.includes(f)) return f;
  const m = e.message || "";
  if (/^k\b|\bk must|k='auto'/.test(m)) return "k";
  if (/ratio/i.test(m) && !/^boxes/.test(m)) return "ratios";
  if (/strategy/.test(m)) return "strategy";
  if (/^width/.test(m)) return "width";
  if (/^slides/.test(m)) return "slides";
  if (/^boxes\[/.test(m)) return "download";
  return fallback;
}

function showError(e, fallback) { fieldError(fieldFor(e, fallback), e.message); }

// -- the page's settings --------------------------------------------------------------------
function widthValue() { // the platform width, or null (and an error beside the field) when it is not one
  const raw = $("width").value.trim();
  if (raw === "") { clearErrors("width"); return null; }
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 16 || v > 20000) {
    fieldError("width", "Platform width: a whole number of pixels from 16 to 20000.");
    return NaN;
  }
  clearErrors("width");
  return v;
}

function controlSettings() { // what the settings controls show
  return { k: $("k").value, ratios: $("ratios").value, strategy: $("strategy").value, mixed: $("mixed").checked };
}

function showSettings(st) { // a photo's settings into the controls
  for (const id of ["k", "ratios", "strategy"]) {
    if ([...$(id).options].some((o) => o.value === String(st[id]))) $(id).value = String(st[id]);
  }
  $("mixed").checked = !!st.mixed;
}

function settingsNow(p) { // the request body of photo p's settings (and its focus point)
  p = p || cur();
  const st = (p && p.settings) || controlSettings();
  return { k: st.k, ratios: st.ratios, strategy: st.strategy, mixed: !!st.mixed, ...(p && p.focus ? { focus: p.focus } : {}) };
}

function settingsProblem(st) { // a combination the server would refuse, said beside the control
  const s = state.settings;
  if (st.k === "auto" && !s.auto_k.includes(st.strategy)) {
    const words = s.auto_k.map((x) => `“${(STRATEGY_WORDS[x] || x).split(" (")[0]}”`).join(" or ");
    return ["k", `“auto” needs “Crops follow” set to ${words}: choose it there, or a number of crops.`];
  }
  return null;
}

function allowedRatios() { return (state.settings.preset_ratios[$("ratios").value] || []).slice(); }
function platformPreset() { return Object.keys(state.settings.platform_sizes).length && allowedRatios().every((r) => r in state.settings.platform_sizes); }

function busy(on, text) {
  $("busy").classList.toggle("hidden", !on);
  if (text !== undefined) $("status").textContent = text;
}

// The photo as large as its column and the screen allow (a small photo is enlarged too), never past the
// screen's bottom on a desktop; on a narrow screen it leaves room for the carousel below it.
function fitPhoto() {
  const img = $("photo"), p = cur();
  if (!p || !img.naturalWidth) return;
  const col = $("stage").parentElement.clientWidth;
  const top = $("stage").getBoundingClientRect().top + window.scrollY;
  const narrow = window.matchMedia("(max-width: 1000px)").matches;
  const room = narrow ? window.innerHeight * (window.matchMedia("(max-width: 700px)").matches ? 0.45 : 0.7)
    : window.innerHeight - top - 12;
  const w = Math.max(120, Math.min(col, Math.max(160, room) * p.width / p.height));
  img.style.width = `${Math.floor(w)}px`;
  img.style.height = "auto";
}

function cur() { return state.photos.find((p) => p.id === state.current); }

// -- the editor -------------------------------------------------------------------------------
const editor = new BoxEditor($("overlay"), {
  draw: false,
  snap: true,
  subjects: () => snapSubjects(cur()),
  onChange: (boxes, final) => {
    const p = cur();
    if (p && state.mode === "seamless" && p.seam && boxes[0]) { bandMoved(p, boxes[0], final); return; }
    if (!p || state.mode !== "carousel") return;
    p.boxes = clone(boxes);
    if (final) { record(p); savePhoto(p); clearErrors("download"); }
    renderStrip(final);
    if (final) renderNotes(); // not while dragging
    updateButtons();
  },
  onSelect: (i) => markSelected(i),
  onEmpty: (x, y) => {
    const p = cur();
    if (!p || !$("focusMode").checked || state.mode !== "carousel") return;
    p.focus = [Math.round(x), Math.round(y)];
    editor.focus = { x, y };
    suggest(p, "reset"); // a click asks for crops around that point (Undo brings the previous ones back)
  },
});

function markSelected(i) {
  for (const c of document.querySelectorAll("#strip .card")) {
    const on = Number(c.dataset.index) === i;
    c.classList.toggle("selected", on);
    c.setAttribute("aria-current", on ? "true" : "false");
    if (on && !c.contains(document.activeElement)) showInStrip(c);
  }
}

function showInStrip(card) { // scroll the strip (never the page, which would move the photo under the pointer)
  const strip = $("strip");
  const cr = card.getBoundingClientRect(), sr = strip.getBoundingClientRect();
  if (cr.left < sr.left) strip.scrollLeft -= sr.left - cr.left;
  else if (cr.right > sr.right) strip.scrollLeft += Math.min(cr.right - sr.right, cr.left - sr.left);
  if (cr.top < sr.top) strip.scrollTop -= sr.top - cr.top;
  else if (cr.bottom > sr.bottom) strip.scrollTop += Math.min(cr.bottom - sr.bottom, cr.top - sr.top);
}

function undo() { const p = cur(); if (!p) return; if (state.mode === "seamless") { bandStep(p, "undo"); return; } const st = p.history.undo(); if (st) applyState(p, st); }
function redo() { const p = cur(); if (!p) return; if (state.mode === "seamless") { bandStep(p, "redo"); return; } const st = p.history.redo(); if (st) applyState(p, st); }

function applyState(p, st) { // an undo or redo: the boxes, and the settings they were made with
  const settingsChanged = JSON.stringify(st.settings) !== JSON.stringify(p.settings);
  p.settings = { ...st.settings };
  p.suggested = st.suggested ? clone(st.suggested) : p.suggested;
  if (p.id === state.current) { showSettings(p.settings); clearErrors("k", "ratios", "strategy"); }
  applyBoxes(p, st.boxes);
  if (settingsChanged) suggest(p, "keep"); // the notes and overlays of those settings; the boxes stay
}

function applyBoxes(p, boxes) { // an undo/redo or a card's button: the boxes as given
  p.boxes = clone(boxes);
  editor.setBoxes(p.boxes);
  savePhoto(p);
  renderStrip(true);
  renderNotes();
  updateButtons();
}

function edit(boxes) { // a change made outside the editor (card buttons): one undo step
  const p = cur();
  p.boxes = clone(boxes);
  record(p);
  applyBoxes(p, boxes);
}

// -- tabs ---------------------------------------------------------------------------------------
function renderTabs() {
  const tabs = $("tabs");
  tabs.innerHTML = "";
  for (const p of state.photos) {
    const t = document.createElement("div");
    t.className = "tab" + (p.id === state.current ? " active" : "");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "tab-main";
    b.setAttribute("aria-pressed", p.id === state.current ? "true" : "false");
    const shown = state.mode === "seamless" ? (p.seam ? plural(p.seam.slides, "slide") : null)
      : (p.boxes ? plural(p.boxes.length, "crop") : null);
    const status = p.status === "ready" ? shown || "ready" : p.status;
    b.textContent = p.name;
    const st = document.createElement("span");
    st.className = "st";
    st.textContent = status;
    b.appendChild(st);
    b.onclick = () => select(p.id);
    const x = document.createElement("button");
    x.type = "button";
    x.className = "tab-x";
    x.textContent = "✕";
    x.title = `Remove ${p.name} from the server`;
    x.setAttribute("aria-label", `Remove photo ${p.name}`);
    x.onclick = () => removePhoto(p);
    t.append(b, x);
    tabs.appendChild(t);
  }
  $("drop").classList.toggle("compact", state.photos.length > 0);
  $("limit").classList.toggle("hidden", state.photos.length > 0); // said on the first screen; room for the photo after
}

async function removePhoto(p) {
  try { await api("DELETE", `/api/photos/${p.id}`); }
  catch (e) { if (e.status !== 404) { fieldError("upload", `${p.name}: ${e.message}`); return; } }
  try { localStorage.removeItem(`${STORE}.photo.${p.id}`); } catch (_) { /* nothing kept */ }
  const i = state.photos.indexOf(p);
  state.photos.splice(i, 1);
  if (state.current === p.id) {
    const next = state.photos[Math.min(i, state.photos.length - 1)];
    state.current = null;
    if (next) select(next.id);
    else { $("work").classList.add("hidden"); busy(false, ""); }
  }
  renderTabs();
  saveSettings();
  updateButtons();
}

// -- the strip ----------------------------------------------------------------------------------
function outSize(b) {
  const w = Math.round(b.w), h = Math.round(b.h);
  const pw = widthValue();
  if (!pw) return `${w}×${h}`;
  if (w < pw) return `${w}×${h} (under ${pw} px: kept full size)`;
  const exact = state.settings.platform_sizes[b.ratio];
  return `${pw}×${exact ? Math.round(pw * exact[1] / exact[0]) : Math.round(h * pw / w)}`;
}

function thumbHeight(boxes) {
  const phone = window.matchMedia("(max-width: 700px)").matches;
  if (state.mode === "seamless" && boxes && boxes.length && !phone) { // every slide side by side in the strip's width
    const room = Math.max(120, $("strip").clientWidth - 6);
    const aspect = boxes.reduce((a, b) => a + b.w / b.h, 0);
    return Math.max(40, Math.min(220, Math.floor(room / aspect)));
  }
  // a phone: one card at a time, low enough that the photo and the card share the screen
  if (phone) return Math.max(120, Math.min(420, Math.round(window.innerWidth * 0.9), Math.round(window.innerHeight * 0.27)));
  return 150;
}

function cardButton(txt, label, fn, disabled) {
  const bt = document.createElement("button");
  bt.type = "button";
  bt.textContent = txt;
  bt.title = label;
  bt.setAttribute("aria-label", label);
  bt.disabled = !!disabled;
  bt.onclick = (e) => { e.stopPropagation(); fn(); };
  return bt;
}

function renderStrip(keepFocus) {
  const p = cur();
  const strip = $("strip");
  const active = document.activeElement;
  const focusedCard = keepFocus !== false && active && active.closest ? active.closest("#strip .card") : null;
  const focusIndex = focusedCard ? Number(focusedCard.dataset.index) : -1;
  const focusRole = focusedCard && active !== focusedCard ? active.dataset.role : null;
  strip.innerHTML = "";
  const seamless = state.mode === "seamless";
  strip.classList.toggle("seamless", seamless);
  const boxes = seamless ? (p && p.seam ? p.seam.boxes.map((b) => ({ ...b, ratio: p.seam.ratio })) : null) : p && p.boxes;
  if (!p || !boxes) { $("count").textContent = ""; $("pager").textContent = ""; $("preview").classList.add("hidden"); return; }
  $("count").textContent = seamless ? `· ${plural(boxes.length, "slide")} of ${boxes[0] ? `${boxes[0].ratio}, ${outSize(boxes[0])}` : ""}, edge to edge`
    : `· ${plural(boxes.length, "crop")} in swipe order` + (fewerThanAsked(p) ? ` (${p.settings.k} asked)` : "");
  const img = $("photo");
  const best = !seamless && $("showScores").checked && p.scores && p.scoresKey === scoresKey(p) ? bestIndex(p.scores) : -1;
  const ratios = allowedRatios();
  const n = boxes.length;
  boxes.forEach((b, i) => {
    const card = document.createElement("div");
    card.className = "card" + (i === editor.selected && !seamless ? " selected" : "") + (i === best ? " best" : "");
    card.dataset.index = i;
    card.setAttribute("role", "listitem");
    card.tabIndex = 0;
    card.setAttribute("aria-label", `${seamless ? "Slide" : "Crop"} ${i + 1} of ${n}: ${b.ratio}, ${outSize(b)}`
      + (i === best ? ", best judge score" : ""));
    const pw = widthValue();
    if (pw && b.w < pw / 2) {
      card.classList.add("warn");
      card.title = `only ${Math.round(b.w)} px wide: it would look soft at ${pw} px`;
    }
    if (img.complete && img.naturalWidth) card.appendChild(stripThumb(p, img, b, thumbHeight(boxes)));
    if (i === best) {
      const badge = document.createElement("span");
      badge.className = "badge";
      badge.textContent = "★ best";
      card.appendChild(badge);
    }
    const meta = document.createElement("div");
    meta.className = "meta";
    const label = document.createElement("span");
    label.className = "what";
    // a slide's card is as wide as its picture, so that the slides touch as they will when swiped
    label.textContent = seamless ? `${i + 1}` : `${i + 1} · ${b.ratio} · ${outSize(b)}`;
    if (seamless) card.title = `slide ${i + 1}: ${b.ratio}, ${outSize(b)}`;
    meta.appendChild(label);
    if (!seamless) {
      const btns = document.createElement("span");
      btns.className = "card-buttons";
      const sel = document.createElement("select");
      sel.dataset.role = "ratio";
      sel.setAttribute("aria-label", `Ratio of crop ${i + 1}`);
      for (const r of [...new Set([...ratios, b.ratio, turnedRatio(b.ratio, ratios)])]) sel.add(new Option(r, r));
      sel.value = b.ratio;
      sel.onchange = () => { editor.select(i); editor.setRatio(i, sel.value); };
      sel.onclick = (e) => e.stopPropagation();
      btns.appendChild(sel);
      const move = (j) => { const bx = clone(p.boxes); [bx[i], bx[j]] = [bx[j], bx[i]]; editor.selected = j; edit(bx); };
      const left = cardButton("◀", `Move crop ${i + 1} earlier`, () => move(i - 1), i === 0);
      left.dataset.role = "earlier";
      const right = cardButton("▶", `Move crop ${i + 1} later`, () => move(i + 1), i === n - 1);
      right.dataset.role = "later";
      const del = cardButton("✕", `Delete crop ${i + 1}`, () => { const bx = clone(p.boxes); bx.splice(i, 1); editor.selected = -1; edit(bx); });
      del.dataset.role = "delete";
      const grip = document.createElement("span");
      grip.className = "grip";
      grip.textContent = "⠿";
      grip.title = "drag to reorder (or ◀ ▶)";
      grip.setAttribute("aria-hidden", "true");
      btns.append(grip, left, right, del);
      meta.appendChild(btns);
    }
    card.appendChild(meta);
    const table = !seamless && $("showScores").checked && p.scores && p.scoresKey === scoresKey(p) ? scoreTable(p.scores[i]) : null;
    if (table) card.appendChild(table);
    if (!seamless) {
      card.addEventListener("focus", () => { if (editor.selected !== i) editor.select(i); });
      card.addEventListener("click", () => editor.select(i));
    }
    strip.appendChild(card);
  });
  $("scoreNote").classList.toggle("hidden", !(!seamless && $("showScores").checked));
  if (focusIndex >= 0) {
    const card = strip.querySelector(`.card[data-index="${Math.min(focusIndex, n - 1)}"]`);
    const target = card && (focusRole ? card.querySelector(`[data-role="${focusRole}"]:not(:disabled)`) || card : card);
    if (target) target.focus({ preventScroll: true });
  }
  updatePager();
  renderTabs();
  schedulePreview();
  if (!seamless && $("showScores").checked) scheduleScores(p);
}

function updatePager() {
  const strip = $("strip");
  const n = strip.children.length;
  if (!n || !window.matchMedia("(max-width: 700px)").matches) { $("pager").textContent = ""; return; }
  const i = Math.min(n - 1, Math.round(strip.scrollLeft / Math.max(1, strip.clientWidth)));
  $("pager").textContent = `${i + 1} / ${n} · swipe`;
}

// -- crops and slides from the server --------------------------------------------------------------
function addCrop() {
  const p = cur();
  if (!p || !p.boxes) return;
  const ratio = allowedRatios()[0] || "1:1";
  const r = ratioValue(ratio);
  const w = Math.min(p.width / 3, p.height / 3 * r);
  const h = w / r;
  const boxes = [...clone(p.boxes), { x: (p.width - w) / 2, y: (p.height - h) / 2, w, h, ratio }];
  editor.selected = boxes.length - 1;
  edit(boxes);
}

function overlays() {
  const p = cur();
  const r = p && p.result;
  editor.faces = $("showFaces").checked && r ? r.faces : [];
  editor.regions = state.mode === "carousel" && $("showRegions").checked && r && r.partition ? (r.partition.regions || []) : [];
  editor.focus = p && p.focus && state.mode === "carousel" ? { x: p.focus[0], y: p.focus[1] } : null;
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

// Every request whose reply changes what is shown takes a ticket; a reply is used only while its ticket is
// its photo's latest, so a late reply never overwrites a newer state (point 8).
let tickets = 0;

// The suggestion for photo p's settings.  how: "new" (the boxes follow it unless the person edited them),
// "keep" (only its notes and overlays: the boxes stay, as after a reload), "reset" (the boxes become it).
async function suggest(p, how) {
  how = how || "new";
  const ticket = p.ticket = ++tickets;
  const settings = { ...p.settings };
  const problem = settingsProblem(settings);
  if (problem) {
    p.problem = { field: problem[0], message: problem[1] };
    p.loading = false;
    if (p.id === state.current) { fieldError(...problem); busy(false, `${p.name}: no carousel for these settings`); }
    renderNotes();
    updateButtons();
    return;
  }
  let keep = how === "keep" || (how === "new" && edited(p));
  p.loading = !(keep && p.boxes); // kept boxes stay usable while their overlays load
  updateButtons();
  try {
    const info = await waitReady(p);
    if (ticket !== p.ticket) return;
    if (info.status === "error") { fieldError("upload", info.error); return; }
    if (p.id === state.current && p.loading) busy(true, `${p.name}: choosing crops…`);
    let r;
    try { r = await (await api("POST", `/api/photos/${p.id}/crops`, settingsNow(p))).json(); }
    finally { state.replies += 1; } // every reply counted, used or not (the tests wait on it, never on time)
    if (ticket !== p.ticket) return; // newer settings for this photo are on their way
    p.problem = null;
    if (p.id === state.current) clearErrors("k", "ratios", "strategy");
    p.result = r;
    p.notes = r.plain_notes || [];
    p.noteItems = r.note_items || p.notes.map((text) => ({ text, kind: "photo" }));
    p.ratioNote = r.ratio_note;
    const suggestion = r.crops.map((c) => ({ ...c.box, ratio: c.ratio }));
    const first = !p.boxes;
    const wasEdited = edited(p);
    keep = how === "keep" || (how === "new" && wasEdited); // an edit made while the reply was on its way stays
    if (!keep || first) {
      p.boxes = clone(suggestion);
      p.suggested = clone(suggestion);
      if (first) p.history = new History({ boxes: p.boxes, settings: p.settings, suggested: p.suggested }, 200, copyState);
      else record(p); // (the first suggestion starts the history: one Undo never leaves no crops)
    } else if (how === "new" && wasEdited) {
      p.suggested = clone(suggestion); // the person's boxes stay, edited against the suggestion of these settings
      p.history.now.suggested = clone(suggestion);
    }
    savePhoto(p);
    if (p.id === state.current && state.mode === "carousel") {
      editor.opts.locked = false;
      editor.setBoxes(p.boxes, -1);
      overlays();
      renderStrip();
      busy(false, `${p.name}: ${r.size[0]}×${r.size[1]} px`);
      // after an upload from the keyboard, the first card has the focus (no twenty Tabs to reach it)
      const idle = !document.activeElement || document.activeElement === document.body || document.activeElement.id === "upload";
      if (state.focusAfterUpload === p.id && idle) {
        const card = document.querySelector("#strip .card");
        if (card) card.focus({ preventScroll: true });
      }
      if (state.focusAfterUpload === p.id) state.focusAfterUpload = null;
    }
  } catch (e) {
    if (ticket !== p.ticket) return;
    p.problem = e; // shown beside its control when this photo is on screen
    if (p.id === state.current) { busy(false, `${p.name}: no carousel for these settings`); showError(e, "k"); }
  } finally {
    if (ticket === p.ticket) {
      p.loading = false;
      renderNotes();
      renderTabs();
      updateButtons();
    }
  }
}

async function seamless(p) {
  const seq = p.ticket = ++tickets;
  p.loading = true;
  updateButtons();
  try {
    const info = await waitReady(p);
    if (info.status === "error") { fieldError("upload", info.error); return; }
    if (p.id === state.current) busy(true, `${p.name}: laying out the panorama…`);
    const slides = $("slides").value;
    const band = p.band && p.band.ratios === $("ratios").value ? p.band : null; // the band the person placed
    const body = { ratios: $("ratios").value, ...(slides === "auto" ? {} : { slides: Number(slides) }),
                   ...(band ? { slides: band.slides, band: { x: band.x, y: band.y, w: band.w, h: band.h, ratio: band.ratio } } : {}) };
    const r = await (await api("POST", `/api/photos/${p.id}/seamless`, body)).json();
    if (seq !== p.ticket) return;
    clearErrors("ratios", "slides");
    p.seam = r;
    if (p.id === state.current && state.mode === "seamless") {
      if (!editor.drag) showSeam(p); // (a band being dragged again keeps following the pointer)
      overlays();
      busy(false, `${p.name}: ${plural(r.slides, "slide")} of ${r.slide_size[0]}×${r.slide_size[1]} px, `
        + `${Math.round(r.kept * 100)} % of the photo`);
    }
  } catch (e) {
    if (seq !== p.ticket) return;
    if (p.id === state.current) busy(false, `${p.name}: no panorama for these settings`);
    showError(e, "slides");
  } finally {
    if (seq === p.ticket) p.loading = false;
    renderNotes();
    updateButtons();
  }
}

function refresh(p) { // the current mode's result for photo p
  if (state.mode === "seamless") {
    if (p.seam) showSeam(p);
    else seamless(p);
  } else if (!p.boxes) { renderStrip(); suggest(p); } // never the previous photo's cards beside this one
  else {
    editor.opts.locked = false;
    editor.setBoxes(p.boxes, -1);
    renderStrip();
    if (!p.result) suggest(p, "keep");
  }
}

function select(id) {
  state.current = id;
  const p = cur();
  showSettings(p.settings); // this photo's own settings
  $("work").classList.remove("hidden");
  editor.setSize(p.width, p.height);
  editor.selected = -1;
  editor.setBoxes([]);
  $("photo").src = `/api/photos/${p.id}/image`;
  $("photo").alt = `${p.name}, ${p.width}×${p.height} px`;
  $("saliency").dataset.id = "";
  busy(false, `${p.name}: ${p.width}×${p.height} px`);
  clearErrors("k", "ratios", "strategy", "slides", "download");
  if (p.problem) showError(p.problem, p.problem.field || "k");
  refresh(p);
  overlays();
  renderTabs();
  renderNotes();
  updateButtons();
  saveSettings();
}

function updateButtons() {
  const p = cur();
  const seamlessMode = state.mode === "seamless";
  const ready = !!(p && p.status === "ready" && !p.loading && (seamlessMode ? p.seam : p.boxes));
  const hasCrops = ready && (seamlessMode ? p.seam.boxes.length : p.boxes.length) > 0;
  $("add").disabled = !ready || seamlessMode;
  $("reset").disabled = !ready;
  $("dlFull").disabled = !hasCrops;
  const w = widthValue();
  $("dlWidth").disabled = !hasCrops || !w;
  $("dlWidth").title = w ? `each crop ${w} px wide (narrower crops kept at full size)` : "give a platform width first";
  const hist = p && (seamlessMode ? bandHistory(p) : p.history);
  $("undo").disabled = !(hist && hist.past.length);
  $("redo").disabled = !(hist && hist.future.length);
  $("mixed").disabled = !state.settings.one_ratio[$("ratios").value];
  document.body.classList.toggle("mode-seamless", seamlessMode);
}

// -- uploads: each file checked here before it is sent, then sent on its own ----------------------
const SIGNATURES = [ // what the first bytes of each format the server opens look like
  (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff, // JPEG
  (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47, // PNG
  (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46, // GIF
  (b) => b[0] === 0x42 && b[1] === 0x4d, // BMP
  (b) => b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45, // WebP
  (b) => (b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a) || (b[0] === 0x4d && b[1] === 0x4d && b[3] === 0x2a), // TIFF
  (b) => b[4] === 0x66 && b[5] === 0x74 && b[6] === 0x79 && b[7] === 0x70, // HEIC/HEIF (ISO media "ftyp")
];
const NOT_A_PHOTO = "this file is not a photo the page can open (JPEG, PNG, WebP, TIFF or HEIC).";

async function fileProblem(f) { // why the server would refuse f, found before anything is sent (or null)
  const s = state.settings;
  const dot = f.name.lastIndexOf(".");
  const suffix = dot >= 0 ? f.name.slice(dot).toLowerCase() : "";
  if (!s.suffixes.includes(suffix)) return NOT_A_PHOTO;
  if (f.size === 0) return "the file is empty";
  if (f.size > s.max_upload_mb * 1024 * 1024) return `larger than the ${s.max_upload_mb} MB upload limit`;
  try {
    const head = new Uint8Array(await f.slice(0, 16).arrayBuffer());
    if (!SIGNATURES.some((sig) => sig(head))) return NOT_A_PHOTO;
  } catch (_) { return "the file could not be read"; }
  return null;
}

async function upload(files) {
  if (!files.length) return;
  const refused = [];
  const ok = [];
  for (const f of files) {
    const why = await fileProblem(f);
    if (why) refused.push(`${f.name}: ${why}`); else ok.push(f);
  }
  fieldError("upload", refused.join(" ")); // at once, beside the button, before any upload
  if (!ok.length) return;
  $("upload").disabled = true;
  let opened = false;
  try {
    for (const [i, f] of ok.entries()) { // one request per photo: one bad file never fails another
      busy(true, `uploading ${f.name}` + (ok.length > 1 ? ` (${i + 1} of ${ok.length})` : "") + "…");
      const fd = new FormData();
      fd.append("files", f, f.name);
      try {
        const r = await (await api("POST", `/api/photos?name=${encodeURIComponent(f.name)}`, fd)).json();
        refused.push(...r.refused.map((bad) => bad.error));
        for (const info of r.photos) {
          const p = newPhoto(info);
          state.photos.push(p);
          renderTabs();
          if (!opened) { opened = true; state.focusAfterUpload = state.keyboardUpload ? p.id : null; select(p.id); }
          else if (state.mode === "carousel") suggest(p, "new");
        }
      } catch (e) { refused.push(e.message.startsWith(f.name) ? e.message : `${f.name}: ${e.message}`); }
      fieldError("upload", refused.join(" "));
    }
  } finally {
    $("upload").disabled = false;
    if (!opened) busy(false, cur() ? undefined : "");
  }
}

function newPhoto(info) { // a photo of this session: what this browser kept of it, or the settings now
  const kept = loadJSON(`photo.${info.id}`, null);
  const boxes = kept && Array.isArray(kept.boxes) ? kept.boxes : null;
  const settings = kept && kept.settings && typeof kept.settings === "object" ? { ...controlSettings(), ...kept.settings }
    : controlSettings();
  const suggested = kept && Array.isArray(kept.suggested) ? kept.suggested : boxes;
  return { ...info, boxes, suggested, settings, focus: kept ? kept.focus : null, band: kept && kept.band ? kept.band : null,
           history: new History({ boxes: boxes || [], settings }, 200, copyState) };
}

async function download(withWidth) {
  const p = cur();
  const seamlessMode = state.mode === "seamless";
  const boxes = seamlessMode ? (p && p.seam ? p.seam.boxes.map((b) => ({ ...b, ratio: p.seam.ratio })) : null) : p && p.boxes;
  if (!p || !boxes) return;
  const width = withWidth ? widthValue() : null;
  if (withWidth && !width) { fieldError("width", $("err-width").textContent || "Give a platform width first."); return; }
  const body = { ...settingsNow(), boxes, width, seamless: seamlessMode };
  busy(true, `${p.name}: cutting ${plural(boxes.length, seamlessMode ? "slide" : "crop")} from the full-resolution photo…`);
  try {
    const r = await api("POST", `/api/photos/${p.id}/download`, body);
    const blob = await r.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (p.name.replace(/\.[^.]*$/, "") || "photo") + "_carousel.zip";
    document.body.appendChild(a); a.click(); a.remove();
    clearErrors("download", "width");
    const moved = Number(r.headers.get("X-Crops-Moved-Px") || 0);
    busy(false, `${p.name}: zip of ${plural(boxes.length, seamlessMode ? "slide" : "crop")} downloaded`
      + (moved ? ` · JPEG crops cut losslessly: corners moved onto the 8/16 px block grid by up to ${moved} px` : ""));
  } catch (e) { busy(false, ""); showError(e, "download"); }
}

function setMode(mode) {
  state.mode = mode;
  for (const r of document.querySelectorAll("input[name=mode]")) r.checked = r.value === mode;
  document.body.classList.toggle("mode-seamless", mode === "seamless");
  const p = cur();
  if (p) { refresh(p); overlays(); }
  renderNotes();
  updateButtons();
  saveSettings();
}

async function init() {
  const s = await (await api("GET", "/api/settings")).json();
  state.settings = s;
  const kept = loadJSON("settings", {});
  const k = $("k");
  if (s.auto_k.length) k.add(new Option(`auto (with ${s.auto_k.map((x) => (STRATEGY_WORDS[x] || x).split(" (")[0]).join(", ")})`, "auto"));
  for (let i = 1; i <= 10; i++) k.add(new Option(String(i), String(i)));
  for (const [label, value] of Object.entries(s.presets)) $("ratios").add(new Option(label, value));
  for (const st of s.strategies) $("strategy").add(new Option(STRATEGY_WORDS[st] || st, st));
  $("slides").add(new Option("auto (from the photo's width)", "auto"));
  for (let i = 2; i <= 10; i++) $("slides").add(new Option(String(i), String(i)));
  const pick = (sel, value, fallback) => {
    $(sel).value = [...$(sel).options].some((o) => o.value === String(value)) ? String(value) : String(fallback);
  };
  pick("k", kept.k, s.default.k);
  pick("ratios", kept.ratios, s.default.ratios);
  pick("strategy", kept.strategy, s.default.strategy);
  pick("slides", kept.slides, "auto");
  if (kept.width !== undefined) $("width").value = kept.width;
  $("mixed").checked = !!kept.mixed;
  $("showScores").checked = !!kept.scores;
  state.mode = kept.mode === "seamless" ? "seamless" : "carousel";
  for (const r of document.querySelectorAll("input[name=mode]")) {
    r.checked = r.value === state.mode;
    r.onchange = () => { if (r.checked) setMode(r.value); };
  }
  $("limit").textContent = `Up to ${s.max_upload_mb} MB each · ${s.suffixes.join(" ")}`;
  $("labelLink").classList.toggle("hidden", !s.label_mode);
  if (window.matchMedia("(max-width: 700px)").matches) $("controls").open = false;

  // a setting changes the photo on screen only (and is what the next photos start with); edited crops stay
  const changed = () => {
    saveSettings();
    clearErrors("k", "ratios", "strategy", "slides");
    const p = cur();
    if (!p) { updateButtons(); return; }
    p.settings = controlSettings();
    if (edited(p)) record(p); // edited crops stay; the setting change is one undo step
    if (state.mode === "seamless") seamless(p);
    else suggest(p, "new");
  };
  for (const id of ["k", "ratios", "strategy", "mixed"]) $(id).onchange = () => {
    if (state.mode === "seamless" && id !== "ratios") { saveSettings(); const p = cur(); if (p) p.settings = controlSettings(); return; }
    const p = cur();
    if (p) p.seam = null;
    changed();
  };
  $("slides").onchange = () => { const p = cur(); if (p) { p.seam = null; p.band = null; } changed(); };
  $("width").oninput = () => { saveSettings(); widthValue(); renderStrip(); updateButtons(); };
  for (const id of ["showSaliency", "showFaces", "showRegions"]) $(id).onchange = overlays;
  $("showScores").onchange = () => { saveSettings(); renderStrip(); };
  $("focusMode").onchange = () => {
    const p = cur();
    if (!$("focusMode").checked && p && p.focus) { p.focus = null; savePhoto(p); overlays(); suggest(p, "new"); }
  };
  // the picker opens after the key or click that asked for it has been handled (Enter opened it unreliably)
  $("upload").onclick = (e) => { state.keyboardUpload = e.detail === 0; setTimeout(() => $("files").click(), 0); };
  $("upload2").onclick = (e) => { state.keyboardUpload = e.detail === 0; $("files").click(); };
  $("files").onchange = (e) => { upload([...e.target.files]); e.target.value = ""; };
  document.addEventListener("dragover", (e) => { e.preventDefault(); $("drop").classList.add("over"); });
  document.addEventListener("dragleave", (e) => { if (!e.relatedTarget) $("drop").classList.remove("over"); });
  document.addEventListener("drop", (e) => { e.preventDefault(); $("drop").classList.remove("over"); upload([...e.dataTransfer.files]); });
  $("photo").onload = () => { fitPhoto(); editor.render(); renderStrip(); };
  $("add").onclick = addCrop;
  $("reset").onclick = () => {
    const p = cur();
    if (!p) return;
    if (state.mode === "seamless") { bandHistory(p); p.seam = null; p.band = null; bandHistory(p).record({ band: null }); savePhoto(p); seamless(p); }
    else { p.focus = null; suggest(p, "reset"); }
  };
  $("previewToggle").onclick = () => {
    const on = !document.body.classList.contains("previewing");
    document.body.classList.toggle("previewing", on);
    $("previewToggle").setAttribute("aria-pressed", String(on));
    $("previewToggle").textContent = on ? "Show the crops" : "Preview the post";
    $("frame").dataset.key = "";
    renderPreview();
  };
  $("undo").onclick = undo;
  $("redo").onclick = redo;
  $("dlFull").onclick = () => download(false);
  $("dlWidth").onclick = () => download(true);
  $("strip").addEventListener("scroll", updatePager, { passive: true });
  installReorder();
  window.addEventListener("resize", () => { fitPhoto(); renderStrip(); });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = (t.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(t.type)) || t.tagName === "TEXTAREA"
      || t.tagName === "SELECT";
    const key = e.key.toLowerCase();
    if ((e.ctrlKey || e.metaKey) && !e.altKey && (key === "z" || key === "y")) {
      if (typing) return;
      if (key === "y" || e.shiftKey) redo(); else undo();
      e.preventDefault();
      return;
    }
    if (typing) return;
    if (state.mode === "seamless") { // the band: arrows move it, + and - resize it (nothing deletes it)
      const p = cur(), grid = p && p.seam && p.seam.block; // on a JPEG's block grid an arrow moves it a block
      const n = e.shiftKey ? 10 : 1, moves = { ArrowLeft: [-n, 0], ArrowRight: [n, 0], ArrowUp: [0, -n], ArrowDown: [0, n] };
      if (moves[e.key] && grid && !e.altKey && !e.ctrlKey && !e.metaKey) {
        if (editor.nudge(...moves[e.key], grid)) e.preventDefault();
      } else if ((moves[e.key] || ["+", "=", "-", "_"].includes(e.key)) && editor.keydown(e)) e.preventDefault();
      return;
    }
    if (state.mode !== "carousel") return;
    if (t.tagName === "BUTTON" && (e.key === "Enter" || e.key === " ")) return;
    if (key === "o" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const b = editor.boxes[editor.selected];
      if (b && editor.setRatio(editor.selected, turnedRatio(b.ratio, allowedRatios()))) e.preventDefault();
      return;
    }
    if (editor.keydown(e)) e.preventDefault();
  });
  const existing = (await (await api("GET", "/api/photos")).json()).photos;
  for (const info of existing) state.photos.push(newPhoto(info));
  renderTabs();
  const again = existing.find((x) => x.id === kept.current) || existing[0];
  if (again) select(again.id);
  updateButtons();
}

init().catch((e) => { fieldError("upload", e.message); });
