// Carousel mode: upload photos, get the suggested carousel (or a seamless panorama), edit it, download it.
// Settings and each photo's edits are kept in this browser (localStorage); the photos themselves belong
// to this browser's session on the server.
// The page's modules: state.js (settings, storage), photos.js (tabs, buttons, uploads), edits.js (the editor),
// strip.js and reorder.js (the cards), suggest.js (crops and slides from the server), band.js (the panorama's
// band), panels.js (preview, notes, scores), keys.js (the keyboard); this one wires the controls and starts the
// page.

import { api } from "./api.js";
import { $, allowedRatios, busy, clearErrors, controlSettings, cur, edited, fieldError, loadJSON, plural, record,
  savePhoto, saveSettings, settingsNow, showError, state, STRATEGY_WORDS, widthValue } from "./state.js";
import { newPhoto, renderTabs, select, updateButtons, upload } from "./photos.js";
import { addCrop, editor, fitPhoto, redo, undo } from "./edits.js";
import { renderStrip, updatePager } from "./strip.js";
import { installReorder } from "./reorder.js";
import { overlays, refresh, seamless, suggest } from "./suggest.js";
import { bandHistory, snapSubjects } from "./band.js";
import { renderNotes, renderPreview } from "./panels.js";
import { installKeys } from "./keys.js";

async function download(withWidth) {
  const p = cur();
  const seamlessMode = state.mode === "seamless";
  const boxes = seamlessMode ? (p && p.seam ? p.seam.boxes.map((b) => ({ ...b, ratio: p.seam.ratio })) : null) : p && p.boxes;
  if (!p || !boxes) return;
  const width = withWidth ? widthValue() : null;
  if (withWidth && !width) { fieldError("width", $("err-width").textContent || "Give a platform width first."); return; }
  const body = { ...settingsNow(), boxes, width, seamless: seamlessMode };
  const n = plural(boxes.length, seamlessMode ? "slide" : "crop");
  say(true, `${p.name}: cutting ${n} from the full-resolution photo…`);
  try {
    const r = await api("POST", `/api/photos/${p.id}/download`, body);
    const blob = await r.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (p.name.replace(/\.[^.]*$/, "") || "photo") + "_carousel.zip";
    document.body.appendChild(a); a.click(); a.remove();
    clearErrors("download", "width");
    const moved = Number(r.headers.get("X-Crops-Moved-Px") || 0);
    say(false, `${p.name}: zip of ${n} downloaded`
      + (moved ? ` · JPEG crops cut losslessly: corners moved onto the 8/16 px block grid by up to ${moved} px` : ""));
  } catch (e) { say(false, ""); showError(e, "download"); }
}

// What a download is doing, said where the person is: on the status line above the photo when it is on screen (a
// desktop), else on the line beside the download buttons (a phone, scrolled down to them), the status line then
// keeping the photo's own words.
function say(on, text) {
  const r = $("status").getBoundingClientRect();
  const seen = r.top >= 0 && r.bottom <= window.innerHeight;
  $("dlSaid").textContent = seen ? "" : text;
  if (seen) busy(on, text);
  else busy(on);
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
  // a line appearing in the bars above the photo (a setting the photo cannot meet, a refused upload) makes them
  // taller: the photo is fitted again under them, so that it never runs past the screen's bottom
  if (window.ResizeObserver) {
    const bars = new ResizeObserver(() => fitPhoto());
    for (const el of [document.querySelector("header"), document.querySelector(".addbar"), $("controls"), $("status")]) {
      bars.observe(el);
    }
  }
  installKeys();
  const existing = (await (await api("GET", "/api/photos")).json()).photos;
  for (const info of existing) state.photos.push(newPhoto(info));
  renderTabs();
  const again = existing.find((x) => x.id === kept.current) || existing[0];
  if (again) select(again.id);
  updateButtons();
}

// The names the browser tests (tests/web) read in the page: with the classic scripts before the modules, these
// (and every other top-level name) were globals.
Object.assign(window, { state, cur, editor, snapSubjects, allowedRatios });

init().catch((e) => { fieldError("upload", e.message); });
