// The carousel page's photo and the box editor over it: the editor's wiring to the page, the edits made
// outside it (a card's buttons, Add crop) and undo/redo.

import { clone } from "./history.js";
import { ratioValue } from "./geometry.js";
import { BoxEditor } from "./editor.js";
import { $, allowedRatios, clearErrors, cur, record, savePhoto, showSettings, state } from "./state.js";
import { updateButtons } from "./photos.js";
import { markSelected, renderStrip } from "./strip.js";
import { suggest } from "./suggest.js";
import { bandMoved, bandStep, snapSubjects } from "./band.js";
import { renderNotes } from "./panels.js";

// The photo as large as its column and the screen allow (a small photo is enlarged too), never past the
// screen's bottom on a desktop; on a narrow screen it leaves room for the carousel below it.
export function fitPhoto() {
  const img = $("photo"), p = cur();
  if (!p || !img.naturalWidth) return;
  const col = $("stage").parentElement.clientWidth;
  // from the status line's bottom: the progress bar under it comes and goes with each request, and the photo is
  // fitted whenever the bars above it change height (carousel.js), so it must not count
  const top = $("status").getBoundingClientRect().bottom + window.scrollY;
  const narrow = window.matchMedia("(max-width: 1000px)").matches;
  const room = narrow ? window.innerHeight * (window.matchMedia("(max-width: 700px)").matches ? 0.45 : 0.7)
    : window.innerHeight - top - 12;
  const w = Math.max(120, Math.min(col, Math.max(160, room) * p.width / p.height));
  img.style.width = `${Math.floor(w)}px`;
  img.style.height = "auto";
}

// -- the editor -------------------------------------------------------------------------------
// Built when this module is evaluated, so it may use only what comes from outside the page's import cycles
// (editor.js, state.js); its callbacks run later, when every module has been evaluated.
export const editor = new BoxEditor($("overlay"), {
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

export function undo() { const p = cur(); if (!p) return; if (state.mode === "seamless") { bandStep(p, "undo"); return; } const st = p.history.undo(); if (st) applyState(p, st); }
export function redo() { const p = cur(); if (!p) return; if (state.mode === "seamless") { bandStep(p, "redo"); return; } const st = p.history.redo(); if (st) applyState(p, st); }

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

export function edit(boxes) { // a change made outside the editor (card buttons): one undo step
  const p = cur();
  p.boxes = clone(boxes);
  record(p);
  applyBoxes(p, boxes);
}

export function addCrop() {
  const p = cur();
  if (!p || !p.boxes) return;
  // "one for all slides" (without Mix ratios): the new crop takes the carousel's shape, the first slide's
  const allowed = allowedRatios(), first = p.boxes[0];
  const oneShape = state.settings.one_ratio[p.settings.ratios] && !p.settings.mixed && first
    && allowed.includes(first.ratio);
  const ratio = oneShape ? first.ratio : allowed[0] || "1:1";
  const r = ratioValue(ratio);
  const w = Math.min(p.width / 3, p.height / 3 * r);
  const h = w / r;
  const boxes = [...clone(p.boxes), { x: (p.width - w) / 2, y: (p.height - h) / 2, w, h, ratio }];
  editor.selected = boxes.length - 1;
  edit(boxes);
}
