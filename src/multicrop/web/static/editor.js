// Box editor shared by the carousel and label pages.
// Boxes are {x, y, w, h, ratio: "2:3"} in source pixels; the SVG's viewBox is the
// photo's source size, so no coordinate is ever converted by hand.
//
// The selected crop is drawn last (on top) and owns the eight handles; a press on
// the photo goes to the selected crop when it lies under the pointer, otherwise to
// the smallest crop there (so a crop lying inside another can always be taken).
// Every crop's number tag is drawn above all crops and selects it.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const COLOURS = ["#2ecc71", "#3498db", "#f1c40f", "#e74c3c", "#9b59b6", "#1abc9c", "#e67e22", "#ecf0f1"];
const HANDLES = { nw: [0, 0], n: [0.5, 0], ne: [1, 0], e: [1, 0.5], se: [1, 1], s: [0.5, 1], sw: [0, 1], w: [0, 0.5] };
const SNAP_PX = 6; // a dragged edge this close (CSS px) to the photo's thirds or a subject's edge lands on it (Alt: never)
const CURSORS = { nw: "nwse-resize", se: "nwse-resize", ne: "nesw-resize", sw: "nesw-resize",
                  n: "ns-resize", s: "ns-resize", e: "ew-resize", w: "ew-resize" };

function ratioValue(r) {
  const [a, b] = String(r).split(":").map(Number);
  return a / b;
}

// The ratio of the other orientation: from `allowed` when it has one, else the inverse (2:3 -> 3:2).
function turnedRatio(ratio, allowed) {
  const v = ratioValue(ratio);
  if (Math.abs(v - 1) < 1e-9) return ratio;
  const other = (allowed || []).find((r) => (ratioValue(r) < 1) !== (v < 1) && Math.abs(ratioValue(r) - 1) > 1e-9);
  if (other) return other;
  const [a, b] = String(ratio).split(":");
  return `${b}:${a}`;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

class BoxEditor {
  // svg: the <svg> over the photo; opts: {onChange(boxes, final), onSelect(i), draw: bool, drawRatio(): "2:3",
  // locked: bool (boxes shown, not edited), onEmpty(x, y) (a click on no box), snap: bool (dragged edges snap to
  // the thirds and to subjects(): [{x, y, w, h}], Alt held: not)}
  constructor(svg, opts) {
    this.svg = svg;
    this.opts = opts || {};
    this.W = 1; this.H = 1;
    this.boxes = [];
    this.faces = [];
    this.regions = [];
    this.focus = null;
    this.selected = -1;
    this.drag = null;
    this.guides = []; // the snap targets the dragged crop's edges lie on: [{x} | {y}], drawn while dragging
    this.pointers = new Map(); // pointer id -> its point (source px): two of them on a crop make a pinch
    svg.addEventListener("pointerdown", (e) => this._down(e));
    svg.addEventListener("pointermove", (e) => this._move(e));
    svg.addEventListener("pointerup", (e) => this._up(e));
    svg.addEventListener("pointercancel", (e) => this._up(e));
    // redraw at the new scale whenever the photo's size on screen changes (tab switch, resize, rotation)
    if (window.ResizeObserver) new ResizeObserver(() => this.render()).observe(svg);
  }

  setSize(W, H) {
    this.W = W; this.H = H;
    this.svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    this.svg.setAttribute("preserveAspectRatio", "none");
  }

  setBoxes(boxes, selected) {
    this.boxes = boxes.map((b) => ({ ...b }));
    this.selected = selected !== undefined ? selected : Math.min(this.selected, this.boxes.length - 1);
    this.render();
  }

  select(i) {
    const j = i >= 0 && i < this.boxes.length ? i : -1;
    const changed = j !== this.selected;
    this.selected = j;
    this.render();
    if (changed && this.opts.onSelect) this.opts.onSelect(j);
  }

  _changed(final) { if (this.opts.onChange) this.opts.onChange(this.boxes, final); }

  _pt(e) {
    const r = this.svg.getBoundingClientRect();
    return { x: (e.clientX - r.left) * this.W / r.width, y: (e.clientY - r.top) * this.H / r.height };
  }

  unit() { // source pixels per screen pixel
    const r = this.svg.getBoundingClientRect();
    return r.width ? this.W / r.width : 1;
  }

  _minW() { return Math.max(8, 24 * this.unit()); }

  _clampMove(b) {
    b.x = Math.min(Math.max(b.x, 0), this.W - b.w);
    b.y = Math.min(Math.max(b.y, 0), this.H - b.h);
  }

  _sized(x, y, w, ratio) { // a box of `ratio`, top-left at x,y, width w, kept in the photo
    const r = ratioValue(ratio);
    w = Math.max(this._minW(), Math.min(w, this.W - x, (this.H - y) * r));
    return { x, y, w, h: w / r, ratio };
  }

  // Resize box `b0` by dragging handle `hd` to point p, ratio locked: the opposite corner (or edge) stays.
  // With `snap`, a moving edge within SNAP_PX of a snap target (the photo's thirds, a subject's edge) lands on it.
  _resized(b0, hd, p, snap) {
    const r = ratioValue(b0.ratio);
    const [fx, fy] = HANDLES[hd];
    const corner = fx !== 0.5 && fy !== 0.5;
    let w;
    if (corner) {
      const ax = fx ? b0.x : b0.x + b0.w, ay = fy ? b0.y : b0.y + b0.h;
      w = Math.max(Math.abs(p.x - ax), Math.abs(p.y - ay) * r);
    } else if (fy === 0.5) w = Math.abs(p.x - (fx ? b0.x : b0.x + b0.w));
    else w = Math.abs(p.y - (fy ? b0.y : b0.y + b0.h)) * r;
    let b = this._withWidth(b0, hd, w);
    if (snap) {
      const t = this._snapTargets(), lim = SNAP_PX * this.unit();
      let best = null; // [distance, width that puts the edge on the target, guide]
      const tryEdge = (edge, targets, toW, axis) => {
        for (const v of targets) {
          const d = Math.abs(v - edge);
          if (d <= lim && (!best || d < best[0])) best = [d, toW(v), { [axis]: v }];
        }
      };
      if (fx !== 0.5) tryEdge(fx ? b.x + b.w : b.x, t.xs, (v) => Math.abs(v - (fx ? b0.x : b0.x + b0.w)), "x");
      if (fy !== 0.5) tryEdge(fy ? b.y + b.h : b.y, t.ys, (v) => Math.abs(v - (fy ? b0.y : b0.y + b0.h)) * r, "y");
      if (best) {
        const snapped = this._withWidth(b0, hd, best[1]);
        if (Math.abs(snapped.w - best[1]) < 1e-6) { b = snapped; this.guides = [best[2]]; }
      }
    }
    return b;
  }

  _withWidth(b0, hd, w) { // box b0 resized by handle hd to width w (ratio locked), kept in the photo
    const r = ratioValue(b0.ratio);
    const [fx, fy] = HANDLES[hd];
    const minW = this._minW();
    if (fx !== 0.5 && fy !== 0.5) { // corner: anchor the opposite corner
      const ax = fx ? b0.x : b0.x + b0.w, ay = fy ? b0.y : b0.y + b0.h;
      const maxW = Math.min(fx ? this.W - ax : ax, (fy ? this.H - ay : ay) * r);
      w = Math.max(Math.min(w, maxW), Math.min(minW, maxW));
      const h = w / r;
      return { ...b0, w, h, x: fx ? ax : ax - w, y: fy ? ay : ay - h };
    }
    if (fy === 0.5) { // left or right edge: that side moves, the height follows about the centre
      const ax = fx ? b0.x : b0.x + b0.w, cy = b0.y + b0.h / 2;
      const maxW = Math.min(fx ? this.W - ax : ax, this.H * r);
      w = Math.max(Math.min(w, maxW), Math.min(minW, maxW));
      const h = w / r;
      return { ...b0, w, h, x: fx ? ax : ax - w, y: Math.min(Math.max(cy - h / 2, 0), this.H - h) };
    }
    const ay = fy ? b0.y : b0.y + b0.h, cx = b0.x + b0.w / 2; // top or bottom edge
    const maxH = Math.min(fy ? this.H - ay : ay, this.W / r);
    const h = Math.max(Math.min(w / r, maxH), Math.min(minW / r, maxH));
    w = h * r;
    return { ...b0, w, h, y: fy ? ay : ay - h, x: Math.min(Math.max(cx - w / 2, 0), this.W - w) };
  }

  // Where dragged edges snap: the photo's thirds and the edges of the subjects (opts.subjects(): boxes)
  _snapTargets() {
    const xs = [this.W / 3, 2 * this.W / 3], ys = [this.H / 3, 2 * this.H / 3];
    for (const s of (this.opts.subjects ? this.opts.subjects() : []) || []) {
      xs.push(s.x, s.x + s.w);
      ys.push(s.y, s.y + s.h);
    }
    return { xs, ys };
  }

  // A moved box: its left or right edge (top or bottom) within SNAP_PX of a target lands on it, each axis apart
  _snapMove(b) {
    const t = this._snapTargets(), lim = SNAP_PX * this.unit();
    this.guides = [];
    for (const [axis, size, targets, max] of [["x", "w", t.xs, this.W], ["y", "h", t.ys, this.H]]) {
      let best = null;
      for (const v of targets) {
        for (const off of [0, b[size]]) { // the near edge, then the far one
          const d = Math.abs(v - (b[axis] + off));
          const to = v - off;
          if (d <= lim && to >= 0 && to + b[size] <= max + 1e-9 && (!best || d < best[0])) best = [d, to, v];
        }
      }
      if (best) { b[axis] = best[1]; this.guides.push({ [axis]: best[2] }); }
    }
  }

  _smallest(p) { // the smallest crop under p (of equal ones the later, drawn on top), or -1
    const inside = (b) => p.x >= b.x && p.x <= b.x + b.w && p.y >= b.y && p.y <= b.y + b.h;
    let best = -1;
    this.boxes.forEach((b, i) => {
      if (inside(b) && (best < 0 || b.w * b.h <= this.boxes[best].w * this.boxes[best].h * (1 + 1e-9))) best = i;
    });
    return best;
  }

  _hit(p) { // the crop a press at p drags: the selected one if under p, else the smallest there
    const sel = this.boxes[this.selected];
    if (sel && p.x >= sel.x && p.x <= sel.x + sel.w && p.y >= sel.y && p.y <= sel.y + sel.h) return this.selected;
    return this._smallest(p);
  }

  _capture(e) { try { this.svg.setPointerCapture(e.pointerId); } catch (_) { /* a pointer already gone */ } }

  // A second finger on the photo while a crop is held or selected: a pinch resizes that crop about its centre
  // (ratio locked); whatever the first finger had moved is put back.
  _pinchStart(e) {
    const idx = this.drag ? this.drag.idx : this.selected;
    const b = this.boxes[idx];
    if (!b) return false;
    if (this.drag && this.drag.start) Object.assign(b, this.drag.start);
    const [a, c] = [...this.pointers.values()];
    this.drag = { kind: "pinch", idx, start: { ...b }, d0: Math.max(1e-6, Math.hypot(a.x - c.x, a.y - c.y)) };
    this._capture(e);
    this.render();
    return true;
  }

  _down(e) {
    if (e.button !== undefined && e.button !== 0) return;
    const p = this._pt(e);
    const t = e.target;
    if (this.opts.locked) { if (this.opts.onEmpty) this.opts.onEmpty(p.x, p.y); return; }
    if (e.pointerType === "touch") { // fingers are counted (a mouse or pen is one pointer)
      this.pointers.set(e.pointerId, p);
      if (this.pointers.size === 2 && this._pinchStart(e)) { e.preventDefault(); return; }
      if (this.pointers.size > 1) { e.preventDefault(); return; } // a third finger, or nothing to pinch
    }
    let idx = -1;
    // a handle's wide target yields to another crop under the pointer, unless the press is on the handle itself
    const onHandle = (hd) => {
      const b = this.boxes[this.selected], [fx, fy] = HANDLES[hd], r = (this._hs || 0) / 2;
      return Math.abs(p.x - (b.x + b.w * fx)) <= r && Math.abs(p.y - (b.y + b.h * fy)) <= r;
    };
    // (on a page that draws boxes, the empty photo beside a handle is for drawing, except on a touch screen)
    const drawHere = () => this.opts.draw && !(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
    const other = () => { const j = this._smallest(p); return (j >= 0 && j !== this.selected) || (j < 0 && drawHere()); };
    if (t.dataset.handle && this.selected >= 0 && (onHandle(t.dataset.handle) || !other())) {
      this.drag = { kind: "resize", idx: this.selected, handle: t.dataset.handle, start: { ...this.boxes[this.selected] } };
    } else {
      idx = t.dataset.role === "tag" ? Number(t.dataset.index) : this._hit(p);
      if (idx >= 0) {
        if (idx !== this.selected) this.select(idx);
        const b = this.boxes[idx];
        // a tap (no drag) takes the smallest crop there, so a crop inside the selected one can be had
        const tap = t.dataset.role === "tag" ? idx : this._smallest(p);
        this.drag = { kind: "move", idx, dx: p.x - b.x, dy: p.y - b.y, start: { ...b }, tap };
      } else if (this.opts.draw) {
        const ratio = this.opts.drawRatio();
        const b = this._sized(Math.min(p.x, this.W - 8), Math.min(p.y, this.H - 8), 1, ratio);
        this.boxes.push(b);
        this.select(this.boxes.length - 1);
        this.drag = { kind: "resize", idx: this.selected, handle: "se", fresh: true, start: { ...b } };
      } else {
        this.select(-1);
        if (this.opts.onEmpty) this.opts.onEmpty(p.x, p.y);
      }
    }
    if (this.drag) this.drag.pointer = e.pointerId;
    if (this.drag) this._capture(e);
    this.render();
    e.preventDefault();
  }

  _move(e) {
    if (this.pointers.has(e.pointerId)) this.pointers.set(e.pointerId, this._pt(e));
    if (!this.drag) return;
    const p = this._pt(e);
    const d = this.drag;
    const b = this.boxes[d.idx];
    if (d.kind !== "pinch" && d.pointer !== undefined && e.pointerId !== d.pointer) return; // another finger
    if (d.kind === "pinch") {
      if (this.pointers.size < 2) return;
      const [a, c] = [...this.pointers.values()];
      const s0 = d.start, r = ratioValue(s0.ratio);
      const w = Math.max(this._minW(), Math.min(s0.w * Math.hypot(a.x - c.x, a.y - c.y) / d.d0, this.W, this.H * r));
      Object.assign(b, { w, h: w / r, x: s0.x + s0.w / 2 - w / 2, y: s0.y + s0.h / 2 - w / r / 2 });
      this._clampMove(b);
    } else if (d.kind === "move") {
      b.x = p.x - d.dx; b.y = p.y - d.dy;
      this._clampMove(b);
      this.guides = [];
      if (this.opts.snap && !e.altKey) this._snapMove(b);
    } else {
      this.guides = [];
      Object.assign(b, this._resized(d.start, d.handle, p, this.opts.snap && !e.altKey));
    }
    d.moved = true;
    this.render();
    this._changed(false);
  }

  _up(e) {
    if (e) this.pointers.delete(e.pointerId);
    if (!this.drag) return;
    const d = this.drag;
    if (d.kind === "pinch") { // the first finger lifted ends the pinch; the other does nothing until it lifts
      this.drag = null;
      this.guides = [];
      this.render();
      if (d.moved) this._changed(true);
      return;
    }
    if (d.pointer !== undefined && e && e.pointerId !== d.pointer) return;
    this.drag = null;
    this.guides = [];
    if (d.fresh && !d.moved) { // a click without a drag: a box of a third of the photo
      const b = this.boxes[d.idx];
      Object.assign(b, this._sized(b.x, b.y, this.W / 3, b.ratio));
      this._clampMove(b);
    }
    this.render();
    if (d.moved || d.fresh) this._changed(true);
    else if (d.kind === "move" && d.tap >= 0 && d.tap !== d.idx) this.select(d.tap);
  }

  // Keyboard edits of the selected crop; true when the key was used.
  nudge(dx, dy, grid) { // by dx, dy screen pixels (whole source px); with grid [gx, gy], by at least a grid step
    const b = this.boxes[this.selected];
    if (!b) return false;
    const step = Math.max(1, Math.round(this.unit()));
    const [gx, gy] = grid || [1, 1];
    b.x += dx * Math.max(step, gx); b.y += dy * Math.max(step, gy);
    this._clampMove(b);
    this.render();
    this._changed(true);
    return true;
  }

  scaleSelected(factor) { // about the centre, ratio locked, kept in the photo
    const b = this.boxes[this.selected];
    if (!b) return false;
    const r = ratioValue(b.ratio);
    const cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    const w = Math.max(this._minW(), Math.min(b.w * factor, this.W, this.H * r));
    Object.assign(b, { w, h: w / r, x: cx - w / 2, y: cy - w / r / 2 });
    this._clampMove(b);
    this.render();
    this._changed(true);
    return true;
  }

  setRatio(i, ratio) { // another ratio for crop i: about its centre, its area kept where the photo allows
    const b = this.boxes[i];
    if (!b || b.ratio === ratio) return false;
    const r = ratioValue(ratio), cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    const w = Math.max(this._minW(), Math.min(Math.sqrt(b.w * b.h * r), this.W, this.H * r));
    Object.assign(b, { ratio, w, h: w / r, x: cx - w / 2, y: cy - w / r / 2 });
    this._clampMove(b);
    this.render();
    this._changed(true);
    return true;
  }

  deleteSelected() {
    if (this.selected < 0) return false;
    this.boxes.splice(this.selected, 1);
    this.selected = -1;
    this.render();
    this._changed(true);
    if (this.opts.onSelect) this.opts.onSelect(-1);
    return true;
  }

  // Arrow keys (Shift: x10), + and - (resize), Delete, Escape.  Returns true when handled.
  keydown(e) {
    if (this.opts.locked || e.ctrlKey || e.metaKey || e.altKey) return false;
    const n = e.shiftKey ? 10 : 1;
    const moves = { ArrowLeft: [-n, 0], ArrowRight: [n, 0], ArrowUp: [0, -n], ArrowDown: [0, n] };
    if (moves[e.key]) return this.nudge(...moves[e.key]);
    if (e.key === "+" || e.key === "=") return this.scaleSelected(1.03);
    if (e.key === "-" || e.key === "_") return this.scaleSelected(1 / 1.03);
    if (e.key === "Delete" || e.key === "Backspace") return this.deleteSelected();
    if (e.key === "Escape" && this.selected >= 0) { this.select(-1); return true; }
    return false;
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

function thumbnail(img, box, W, height) {
  // A canvas of `box` (source px) cut from the displayed copy `img` of a W-wide photo, `height` CSS px
  // tall, drawn at the screen's pixel density (sharp on 2x screens).
  const c = document.createElement("canvas");
  const s = img.naturalWidth / W;
  const dpr = Math.min(window.devicePixelRatio || 1, 3);
  const cssW = Math.max(1, Math.round(height * box.w / box.h));
  c.width = Math.round(cssW * dpr);
  c.height = Math.round(height * dpr);
  c.style.width = `${cssW}px`;
  c.style.height = `${height}px`;
  const ctx = c.getContext("2d");
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(img, box.x * s, box.y * s, box.w * s, box.h * s, 0, 0, c.width, c.height);
  return c;
}

// Undo/redo of one photo's state (its boxes; on the carousel page its boxes and settings): every finished
// edit records the new state.  `copy` deep-copies a state (default: a list of boxes).
class History {
  constructor(state, limit, copy) {
    this.copy = copy || clone;
    this.now = this.copy(state || []); this.past = []; this.future = []; this.limit = limit || 200;
  }
  record(state) { // after an edit: `state` is the new state
    const next = this.copy(state);
    if (JSON.stringify(next) === JSON.stringify(this.now)) return false;
    this.past.push(this.now);
    if (this.past.length > this.limit) this.past.shift();
    this.now = next;
    this.future = [];
    return true;
  }
  undo() { if (!this.past.length) return null; this.future.push(this.now); this.now = this.past.pop(); return this.copy(this.now); }
  redo() { if (!this.future.length) return null; this.past.push(this.now); this.now = this.future.pop(); return this.copy(this.now); }
}

function clone(boxes) { return (boxes || []).map((b) => ({ ...b })); }

class ApiError extends Error {
  constructor(message, status, field) { super(message); this.status = status; this.field = field || ""; }
}

async function api(method, url, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const r = await fetch(url, init);
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`, field = "";
    try {
      const j = await r.json();
      field = j.field || "";
      msg = typeof j.detail === "string" ? j.detail
        : (j.detail || []).map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
    } catch (_) { /* not JSON */ }
    throw new ApiError(msg, r.status, field);
  }
  return r;
}
