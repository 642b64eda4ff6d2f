// The box editor's drawing, shared by the carousel and label pages: the crops, the selected crop's handles,
// the number tags (no two overlap), and the faces, regions, focus point, thirds and snap guides, into the SVG.

import { BoxGeometry, HANDLES } from "./geometry.js";

const SVGNS = "http://www.w3.org/2000/svg";
const COLOURS = ["#2ecc71", "#3498db", "#f1c40f", "#e74c3c", "#9b59b6", "#1abc9c", "#e67e22", "#ecf0f1"];
const CURSORS = { nw: "nwse-resize", se: "nwse-resize", ne: "nesw-resize", sw: "nesw-resize",
                  n: "ns-resize", s: "ns-resize", e: "ew-resize", w: "ew-resize" };

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

export class BoxDrawing extends BoxGeometry {
  // faces, regions: [{x, y, w, h}] drawn under the crops; focus: {x, y} or null.  What it draws follows the
  // editor's state as well (drag: the thirds and snap guides; opts.locked: no handles).
  constructor(svg, opts) {
    super(svg, opts);
    this.faces = [];
    this.regions = [];
    this.focus = null;
  }

  // Where a tag of tw x th goes for box b: a corner inside the box that no tag (or handle) placed yet covers,
  // else just outside it, else the first free place below (then beside) its top-left corner; always inside
  // the photo.
  _tagPlace(b, tw, th, m, placed) {
    const gap = th * 0.15;
    const hits = (x, y) => placed.some((q) => x < q.x + q.w + gap && q.x < x + tw + gap && y < q.y + q.h + gap && q.y < y + th + gap);
    const inPhoto = ([x, y]) => [Math.min(Math.max(x, 0), Math.max(0, this.W - tw)), Math.min(Math.max(y, 0), Math.max(0, this.H - th))];
    const cands = [[b.x + m, b.y + m], [b.x + b.w - tw - m, b.y + m], [b.x + m, b.y + b.h - th - m],
                   [b.x + b.w - tw - m, b.y + b.h - th - m]];
    for (const off of [gap, gap + 2.5 * m]) { // just outside the crop (clear of its handles, the second time)
      cands.push([b.x, b.y - th - off], [b.x, b.y + b.h + off], [b.x + b.w - tw, b.y - th - off],
                 [b.x + b.w - tw, b.y + b.h + off], [b.x - tw - off, b.y], [b.x + b.w + off, b.y]);
    }
    for (let n = 1; n < 60; n++) cands.push([b.x + m, b.y + m + n * (th + gap)]);
    for (let n = 1; n < 60; n++) cands.push([b.x + m + n * (tw + gap), b.y + m]);
    for (let n = 1; n < 400; n++) cands.push([(n * (tw + gap)) % Math.max(tw, this.W), Math.floor(n * (tw + gap) / Math.max(tw, this.W)) * (th + gap)]);
    for (const c of cands) { const [x, y] = inPhoto(c); if (!hits(x, y)) return [x, y]; }
    return inPhoto(cands[0]);
  }

  render() {
    const svg = this.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const u = this.unit();
    const coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
    const stroke = { "vector-effect": "non-scaling-stroke" };
    for (const r of this.regions) {
      el("rect", { x: r.x, y: r.y, width: r.w, height: r.h, class: "region", "stroke-width": 2, ...stroke }, svg);
    }
    for (const f of this.faces) {
      el("rect", { x: f.x, y: f.y, width: f.w, height: f.h, class: "face", "stroke-width": 2,
                   "stroke-dasharray": "6 4", ...stroke }, svg);
    }
    const handleRects = []; // the selected crop's handles: no tag may cover them
    const order = this.boxes.map((_, i) => i).filter((i) => i !== this.selected);
    if (this.selected >= 0 && this.selected < this.boxes.length) order.push(this.selected);
    for (const i of order) {
      const b = this.boxes[i];
      const colour = COLOURS[i % COLOURS.length];
      const sel = i === this.selected;
      const g = el("g", { class: "box" + (sel ? " selected" : "") }, svg);
      // an outline only: a tint would colour the photo the person is judging (the fill stays, unseen, for the pointer)
      el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, fill: colour, "fill-opacity": 0,
                   stroke: colour, "stroke-width": sel ? 4 : 2.5, "data-index": i, "data-role": "box",
                   class: "crop-box", ...stroke }, g);
      for (let k = 1; k < (b.slides || 1); k++) { // a panorama band: where one slide ends and the next begins
        const sx = b.x + b.w * k / b.slides;
        el("line", { x1: sx, y1: b.y, x2: sx, y2: b.y + b.h, stroke: colour, class: "seam", "stroke-width": 2,
                     "stroke-dasharray": "8 5", ...stroke }, g);
      }
      if (sel && this.drag) { // rule-of-thirds grid while the crop is dragged
        for (const t of [1 / 3, 2 / 3]) {
          el("line", { x1: b.x + b.w * t, y1: b.y, x2: b.x + b.w * t, y2: b.y + b.h, class: "thirds", ...stroke }, g);
          el("line", { x1: b.x, y1: b.y + b.h * t, x2: b.x + b.w, y2: b.y + b.h * t, class: "thirds", ...stroke }, g);
        }
      }
      if (sel && !this.opts.locked) {
        // finger-sized on a touch screen, but never so large that the handles hide the crop they belong to
        // (drawn small on a small crop; each answers to a target of at least 24 CSS px, 32 on a touch screen)
        const hs = Math.min(coarse ? 26 : 14, Math.max(8, Math.min(b.w, b.h) / u / 4)) * u;
        const ht = Math.max(hs, (coarse ? 32 : 24) * u);
        this._hs = hs;
        for (const [name, [fx, fy]] of Object.entries(HANDLES)) {
          handleRects.push({ x: b.x + b.w * fx - hs / 2, y: b.y + b.h * fy - hs / 2, w: hs, h: hs });
          el("rect", { x: b.x + b.w * fx - hs / 2, y: b.y + b.h * fy - hs / 2, width: hs, height: hs, fill: colour,
                       stroke: "#000", "stroke-width": 1, "data-handle": name, class: "handle", ...stroke }, g);
          // the target reaches outwards from the crop, so it never takes more of the crop's inside than the handle
          const out = (f) => (f === 0 ? ht - hs / 2 : f === 1 ? hs / 2 : ht / 2);
          el("rect", { x: b.x + b.w * fx - out(fx), y: b.y + b.h * fy - out(fy), width: ht, height: ht, fill: "#000",
                       "fill-opacity": 0, "data-index": i, "data-handle": name, class: "handle-target",
                       style: `cursor:${CURSORS[name]}` }, g);
        }
      }
    }
    if (this.drag) { // the line a snapped edge lies on
      for (const gd of this.guides) {
        if (gd.x !== undefined) el("line", { x1: gd.x, y1: 0, x2: gd.x, y2: this.H, class: "snap-guide", ...stroke }, svg);
        else el("line", { x1: 0, y1: gd.y, x2: this.W, y2: gd.y, class: "snap-guide", ...stroke }, svg);
      }
    }
    // number tags above every crop: a crop under another can always be picked by its number; no two overlap
    const placed = [...handleRects];
    this.boxes.forEach((b, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const fs = 16 * u, pad = 4 * u;
      // on a small overlay (a phone) the tag is the number alone, so that it can sit by its crop; the card says the ratio
      const label = b.label || (this.opts.locked || this.svg.getBoundingClientRect().width < 500 ? `${i + 1}` : `${i + 1} · ${b.ratio}`);
      const tw = (label.length * 0.62 * fs) + 2 * pad;
      const [tx, ty] = this._tagPlace(b, tw, fs + 2 * pad, 6 * u, placed);
      placed.push({ x: tx, y: ty, w: tw, h: fs + 2 * pad });
      const g = el("g", { class: "tag" + (i === this.selected ? " selected" : "") }, svg);
      el("rect", { x: tx, y: ty, width: tw, height: fs + 2 * pad, rx: 3 * u, fill: colour, "data-index": i,
                   "data-role": "tag", class: "box-tag-bg" }, g);
      const t = el("text", { x: tx + pad, y: ty + pad + fs * 0.82, "font-size": fs, class: "box-tag" }, g);
      t.textContent = label;
    });
    if (this.focus) {
      const r = 9 * u;
      el("circle", { cx: this.focus.x, cy: this.focus.y, r, class: "focus-mark", "stroke-width": 3, ...stroke }, svg);
    }
  }
}
