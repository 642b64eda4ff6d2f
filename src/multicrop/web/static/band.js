// The carousel page's seamless panorama band: one box of n slides on the photo, moved and resized (ratio locked)
// like a crop; the slides follow it at once and the server cuts them when it is let go; its own undo history.
// Also where dragged edges snap (the subjects).

import { History } from "./history.js";
import { $, savePhoto, state } from "./state.js";
import { editor } from "./edits.js";
import { renderStrip } from "./strip.js";
import { seamless } from "./suggest.js";

// The subjects' boxes (source px) a dragged edge snaps to: of the suggestion's reply, or the panorama's
export function snapSubjects(p) {
  const subs = (p && (state.mode === "seamless" ? p.seam && p.seam.subjects : p.result && p.result.subjects)) || [];
  return subs.map((s) => ({ x: s.box[0], y: s.box[1], w: s.box[2], h: s.box[3] }));
}

// -- the seamless panorama's band: one box of n slides, moved and resized (ratio locked) like a crop --------
function bandBox(seam) { // the band as the editor's box: its ratio is n slides of the slides' ratio
  const [a, b] = seam.ratio.split(":").map(Number);
  return { ...seam.band, ratio: `${+(a * seam.slides).toFixed(6)}:${b}`, slides: seam.slides,
           label: `${seam.slides} × ${seam.ratio}` };
}

export function showSeam(p) {
  editor.opts.locked = false;
  editor.setBoxes([bandBox(p.seam)], 0);
  renderStrip();
}

export function bandMoved(p, band, final) { // the slides follow the band at once; the server cuts them when it is let go
  const n = p.seam.slides, w = band.w / n;
  p.seam = { ...p.seam, band: { x: band.x, y: band.y, w: band.w, h: band.h },
             boxes: Array.from({ length: n }, (_, i) => ({ x: band.x + i * w, y: band.y, w, h: band.h })) };
  renderStrip(final);
  if (!final) return;
  bandHistory(p); // (its first state: the band before this move)
  p.band = { x: band.x, y: band.y, w: band.w, h: band.h, ratio: p.seam.ratio, slides: n, ratios: $("ratios").value };
  bandHistory(p).record({ band: p.band });
  savePhoto(p);
  seamless(p);
}

// The band's own history: each placement (or Reset) one step; a step back to no placement is the suggested layout
export function bandHistory(p) {
  if (!p.bandHistory) p.bandHistory = new History({ band: p.band || null }, 200, (st) => ({ band: st.band ? { ...st.band } : null }));
  return p.bandHistory;
}
export function bandStep(p, which) {
  const st = bandHistory(p)[which]();
  if (!st) return;
  p.band = st.band;
  if (!p.band) p.seam = null;
  savePhoto(p);
  seamless(p);
}
