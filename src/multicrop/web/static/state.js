// The carousel page's state: the photos of this session, the settings controls, the errors beside them and
// what this browser keeps of them (localStorage).

import { clone } from "./history.js";

export const $ = (id) => document.getElementById(id);
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
export const STORE = "multicrop.v1";
const FIELDS = ["upload", "k", "ratios", "strategy", "slides", "width", "download"];
// The strategies in a photographer's words (the values stay the library's names)
export const STRATEGY_WORDS = { direct: "Subjects (recommended)", partition: "Regions (as in the Carousel paper)",
                                topk: "Best-scoring crops anywhere" };
export const state = { photos: [], current: null, settings: null, mode: "carousel", replies: 0, restStatus: "" };

// -- stored state ----------------------------------------------------------------------------
export function loadJSON(key, fallback) {
  try { const v = JSON.parse(localStorage.getItem(`${STORE}.${key}`)); return v === null ? fallback : v; }
  catch (_) { return fallback; }
}
function saveJSON(key, value) {
  try { localStorage.setItem(`${STORE}.${key}`, JSON.stringify(value)); } catch (_) { /* private mode: not kept */ }
}
export function saveSettings() {
  saveJSON("settings", { k: $("k").value, ratios: $("ratios").value, strategy: $("strategy").value,
                         width: $("width").value, mixed: $("mixed").checked, slides: $("slides").value,
                         mode: state.mode, current: state.current, scores: $("showScores").checked });
}
// Each photo keeps its own settings, boxes and the suggestion they started from (so "edited" survives a reload)
export function savePhoto(p) {
  if (p.boxes || p.band) saveJSON(`photo.${p.id}`, { boxes: p.boxes, focus: p.focus || null, settings: p.settings,
                                                     suggested: p.suggested || null, band: p.band || null });
}
export const copyState = (st) => ({ boxes: clone(st.boxes), settings: { ...st.settings }, suggested: st.suggested ? clone(st.suggested) : null });
const sameBoxes = (a, b) => JSON.stringify(a || null) === JSON.stringify(b || null);
export function edited(p) { return !!(p && p.boxes && p.suggested && !sameBoxes(p.boxes, p.suggested)); }
export function record(p) { p.history.record({ boxes: p.boxes, settings: p.settings, suggested: p.suggested }); }

// -- errors beside their controls --------------------------------------------------------------
export function fieldError(name, text) {
  const span = $(`err-${name}`);
  if (!span) return false;
  // a new error beside a setting opens the Settings a phone keeps folded: the reason is seen, not hidden
  if (text && span.textContent !== text && span.closest("#controls")) $("controls").open = true;
  span.textContent = text || "";
  const ctl = { download: null, upload: $("upload") }[name] ?? $(name);
  if (ctl) { if (text) ctl.setAttribute("aria-invalid", "true"); else ctl.removeAttribute("aria-invalid"); }
  return true;
}
export function clearErrors(...names) { for (const n of names) fieldError(n, ""); }

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

export function showError(e, fallback) { fieldError(fieldFor(e, fallback), e.message); }

// -- the page's settings --------------------------------------------------------------------
export function widthValue() { // the platform width, or null (and an error beside the field) when it is not one
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

export function controlSettings() { // what the settings controls show
  return { k: $("k").value, ratios: $("ratios").value, strategy: $("strategy").value, mixed: $("mixed").checked };
}

export function showSettings(st) { // a photo's settings into the controls
  for (const id of ["k", "ratios", "strategy"]) {
    if ([...$(id).options].some((o) => o.value === String(st[id]))) $(id).value = String(st[id]);
  }
  $("mixed").checked = !!st.mixed;
}

export function settingsNow(p) { // the request body of photo p's settings (and its focus point)
  p = p || cur();
  const st = (p && p.settings) || controlSettings();
  return { k: st.k, ratios: st.ratios, strategy: st.strategy, mixed: !!st.mixed, ...(p && p.focus ? { focus: p.focus } : {}) };
}

export function settingsProblem(st) { // a combination the server would refuse, said beside the control
  const s = state.settings;
  if (st.k === "auto" && !s.auto_k.includes(st.strategy)) {
    const words = s.auto_k.map((x) => `“${(STRATEGY_WORDS[x] || x).split(" (")[0]}”`).join(" or ");
    return ["k", `“auto” needs “Crops follow” set to ${words}: choose it there, or a number of crops.`];
  }
  return null;
}

export function allowedRatios() { return (state.settings.preset_ratios[$("ratios").value] || []).slice(); }
export function platformPreset() { return Object.keys(state.settings.platform_sizes).length && allowedRatios().every((r) => r in state.settings.platform_sizes); }

export function busy(on, text) {
  $("busy").classList.toggle("hidden", !on);
  if (text !== undefined) $("status").textContent = text;
  if (!on && text !== undefined) state.restStatus = text; // what the line says once nothing is going on
}

export function cur() { return state.photos.find((p) => p.id === state.current); }
