// The carousel page's photos: their tabs, the one on screen and the buttons that act on it, uploads (each file
// checked here before it is sent) and removal from the server.

import { api } from "./api.js";
import { History } from "./history.js";
import { $, busy, clearErrors, controlSettings, copyState, cur, fieldError, loadJSON, plural, saveSettings, showError,
  showSettings, state, STORE, widthValue } from "./state.js";
import { editor } from "./edits.js";
import { overlays, refresh, suggest } from "./suggest.js";
import { bandHistory } from "./band.js";
import { renderNotes } from "./panels.js";

// -- tabs ---------------------------------------------------------------------------------------
export function renderTabs() {
  const tabs = $("tabs");
  const scrolled = tabs.scrollLeft; // a phone's row of tabs scrolls sideways: kept through the repaint
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
    const status = p.status === "ready" ? shown || (p.problem ? "no carousel" : "ready") : p.status;
    const nm = document.createElement("span");
    nm.className = "nm"; // (shortened with … on a phone; the whole name in the tooltip)
    nm.textContent = p.name;
    b.title = p.name;
    b.appendChild(nm);
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
  tabs.scrollLeft = scrolled;
  showActiveTab(scrolled);
  $("drop").classList.toggle("compact", state.photos.length > 0);
  $("limit").classList.toggle("hidden", state.photos.length > 0); // said on the first screen; room for the photo after
}

// The photo on screen's tab, whole in the row once it is chosen (and while it grows: "ready" → "2 crops"), until
// the person swipes the row; the row scrolls, never the page.
let shownTab = null, shownLeft = null;
function showActiveTab(scrolled) {
  const tabs = $("tabs"), t = tabs.querySelector(".tab.active");
  if (!t || (shownTab === state.current && scrolled !== shownLeft)) return;
  shownTab = state.current;
  const tr = t.getBoundingClientRect(), rr = tabs.getBoundingClientRect();
  if (tr.left < rr.left) tabs.scrollLeft -= rr.left - tr.left;
  else if (tr.right > rr.right) tabs.scrollLeft += Math.min(tr.right - rr.right, tr.left - rr.left);
  shownLeft = tabs.scrollLeft;
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

export function select(id) {
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
  $("dlSaid").textContent = ""; // (what a download of the photo before said)
  clearErrors("k", "ratios", "strategy", "slides", "download");
  if (p.problem) showError(p.problem, p.problem.field || "k");
  refresh(p);
  overlays();
  renderTabs();
  renderNotes();
  updateButtons();
  saveSettings();
}

export function updateButtons() {
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
  // nothing to preview without crops (while previewing, the button is the way back to them)
  $("previewToggle").disabled = !hasCrops && !document.body.classList.contains("previewing");
  // the regions are what "Regions" chose the crops from; the other strategies have none to show
  $("showRegions").disabled = $("strategy").value !== "partition";
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

export async function upload(files) {
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
  let said = null; // the upload's own line, while it is shown
  try {
    for (const [i, f] of ok.entries()) { // one request per photo: one bad file never fails another
      busy(true, said = `uploading ${f.name}` + (ok.length > 1 ? ` (${i + 1} of ${ok.length})` : "") + "…");
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
    // the upload's line gives way to the photo on screen's (a refused file, or a reply that came meanwhile);
    // a photo still loading says how it ends itself
    const p = cur();
    if ($("status").textContent === said && !(p && p.loading)) busy(false, p ? state.restStatus : "");
  }
}

export function newPhoto(info) { // a photo of this session: what this browser kept of it, or the settings now
  const kept = loadJSON(`photo.${info.id}`, null);
  const boxes = kept && Array.isArray(kept.boxes) ? kept.boxes : null;
  const settings = kept && kept.settings && typeof kept.settings === "object" ? { ...controlSettings(), ...kept.settings }
    : controlSettings();
  const suggested = kept && Array.isArray(kept.suggested) ? kept.suggested : boxes;
  return { ...info, boxes, suggested, settings, focus: kept ? kept.focus : null, band: kept && kept.band ? kept.band : null,
           history: new History({ boxes: boxes || [], settings }, 200, copyState) };
}
