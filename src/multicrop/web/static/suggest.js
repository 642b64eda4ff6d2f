// The carousel page's requests for crops and slides: the suggestion for a photo's settings, the seamless
// panorama's layout, and the overlays of a reply on the photo.

import { api } from "./api.js";
import { clone, History } from "./history.js";
import { $, busy, clearErrors, copyState, cur, edited, fieldError, plural, record, savePhoto, settingsNow,
  settingsProblem, showError, state } from "./state.js";
import { renderTabs, updateButtons } from "./photos.js";
import { editor } from "./edits.js";
import { renderStrip } from "./strip.js";
import { showSeam } from "./band.js";
import { renderNotes } from "./panels.js";

export function overlays() {
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
export async function suggest(p, how) {
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

export async function seamless(p) {
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

export function refresh(p) { // the current mode's result for photo p
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
