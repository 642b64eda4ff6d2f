// Box editor shared by the carousel and label pages.
// Boxes are {x, y, w, h, ratio: "2:3"} in source pixels; the SVG's viewBox is the
// photo's source size, so no coordinate is ever converted by hand.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const COLOURS = ["#2ecc71", "#3498db", "#f1c40f", "#e74c3c", "#9b59b6", "#1abc9c", "#e67e22", "#ecf0f1"];

function ratioValue(r) {
  const [a, b] = String(r).split(":").map(Number);
  return a / b;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

class BoxEditor {
  // svg: the <svg> over the photo; opts: {onChange(boxes, final), draw: bool, drawRatio(): "2:3"}
  constructor(svg, opts) {
    this.svg = svg;
    this.opts = opts || {};
    this.W = 1; this.H = 1;
    this.boxes = [];
    this.faces = [];
    this.regions = [];
    this.selected = -1;
    this.drag = null;
    svg.addEventListener("pointerdown", (e) => this._down(e));
    svg.addEventListener("pointermove", (e) => this._move(e));
    svg.addEventListener("pointerup", (e) => this._up(e));
    svg.addEventListener("pointercancel", (e) => this._up(e));
  }

  setSize(W, H) {
    this.W = W; this.H = H;
    this.svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    this.svg.setAttribute("preserveAspectRatio", "none");
  }

  setBoxes(boxes) { this.boxes = boxes.map((b) => ({ ...b })); this.render(); }

  _pt(e) {
    const r = this.svg.getBoundingClientRect();
    return { x: (e.clientX - r.left) * this.W / r.width, y: (e.clientY - r.top) * this.H / r.height };
  }

  _unit() { // source pixels per screen pixel
    const r = this.svg.getBoundingClientRect();
    return r.width ? this.W / r.width : 1;
  }

  _clampMove(b) {
    b.x = Math.min(Math.max(b.x, 0), this.W - b.w);
    b.y = Math.min(Math.max(b.y, 0), this.H - b.h);
  }

  _sized(x, y, w, ratio) { // a box of `ratio`, top-left at x,y, width w, kept in the photo
    const r = ratioValue(ratio);
    const minW = Math.max(8, 24 * this._unit());
    w = Math.max(minW, Math.min(w, this.W - x, (this.H - y) * r));
    return { x, y, w, h: w / r, ratio };
  }

  _down(e) {
    const p = this._pt(e);
    const t = e.target;
    const idx = t.dataset.index !== undefined ? Number(t.dataset.index) : -1;
    if (idx >= 0) {
      this.selected = idx;
      const b = this.boxes[idx];
      this.drag = t.dataset.role === "handle"
        ? { kind: "resize", idx }
        : { kind: "move", idx, dx: p.x - b.x, dy: p.y - b.y };
    } else if (this.opts.draw) {
      const ratio = this.opts.drawRatio();
      const b = this._sized(Math.min(p.x, this.W - 8), Math.min(p.y, this.H - 8), 1, ratio);
      this.boxes.push(b);
      this.selected = this.boxes.length - 1;
      this.drag = { kind: "resize", idx: this.selected, fresh: true };
    } else {
      this.selected = -1;
    }
    if (this.drag) this.svg.setPointerCapture(e.pointerId);
    this.render();
    e.preventDefault();
  }

  _move(e) {
    if (!this.drag) return;
    const p = this._pt(e);
    const b = this.boxes[this.drag.idx];
    if (this.drag.kind === "move") {
      b.x = p.x - this.drag.dx; b.y = p.y - this.drag.dy;
      this._clampMove(b);
    } else {
      Object.assign(b, this._sized(b.x, b.y, p.x - b.x, b.ratio));
    }
    this.drag.moved = true;
    this.render();
    if (this.opts.onChange) this.opts.onChange(this.boxes, false);
  }

  _up(e) {
    if (!this.drag) return;
    const d = this.drag;
    this.drag = null;
    if (d.fresh && !d.moved) { // a click without a drag: a box of a third of the photo
      const b = this.boxes[d.idx];
      Object.assign(b, this._sized(b.x, b.y, this.W / 3, b.ratio));
      this._clampMove(b);
    }
    this.render();
    if ((d.moved || d.fresh) && this.opts.onChange) this.opts.onChange(this.boxes, true);
  }

  deleteSelected() {
    if (this.selected < 0) return false;
    this.boxes.splice(this.selected, 1);
    this.selected = -1;
    this.render();
    if (this.opts.onChange) this.opts.onChange(this.boxes, true);
    return true;
  }

  render() {
    const svg = this.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const u = this._unit();
    for (const r of this.regions) {
      el("rect", { x: r.x, y: r.y, width: r.w, height: r.h, class: "region", "stroke-width": 2 * u }, svg);
    }
    for (const f of this.faces) {
      el("rect", { x: f.x, y: f.y, width: f.w, height: f.h, class: "face", "stroke-width": 2 * u,
                   "stroke-dasharray": `${6 * u} ${4 * u}` }, svg);
    }
    this.boxes.forEach((b, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const g = el("g", { class: "box" + (i === this.selected ? " selected" : "") }, svg);
      el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, fill: colour, "fill-opacity": 0.12,
                   stroke: colour, "stroke-width": (i === this.selected ? 4 : 3) * u,
                   "data-index": i, "data-role": "box", class: "crop-box" }, g);
      const tag = el("text", { x: b.x + 8 * u, y: b.y + 24 * u, "font-size": 20 * u, fill: colour,
                               class: "box-tag" }, g);
      tag.textContent = `${i + 1} · ${b.ratio}`;
      const hs = 16 * u;
      el("rect", { x: b.x + b.w - hs, y: b.y + b.h - hs, width: hs, height: hs, fill: colour,
                   "data-index": i, "data-role": "handle", class: "handle" }, g);
    });
  }
}

function thumbnail(img, box, W, height) {
  // A canvas of `box` (source px) cut from the displayed copy `img` of a W-wide photo.
  const c = document.createElement("canvas");
  const s = img.naturalWidth / W;
  c.height = height;
  c.width = Math.max(1, Math.round(height * box.w / box.h));
  const ctx = c.getContext("2d");
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(img, box.x * s, box.y * s, box.w * s, box.h * s, 0, 0, c.width, c.height);
  return c;
}

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const r = await fetch(url, init);
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`;
    try {
      const j = await r.json();
      msg = typeof j.detail === "string" ? j.detail
        : (j.detail || []).map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
    } catch (_) { /* not JSON */ }
    throw new Error(msg);
  }
  return r;
}
