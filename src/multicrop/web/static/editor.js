// Box editor shared by the carousel and label pages.
//
// The selected crop is drawn last (on top) and owns the eight handles; a press on
// the photo goes to the selected crop when it lies under the pointer, otherwise to
// the smallest crop there (so a crop lying inside another can always be taken).
// Every crop's number tag is drawn above all crops and selects it.
//
// The box mechanics (sizing, snapping, hit-testing) are geometry.js's, the drawing drawing.js's; this module
// holds the editing: pointer (mouse, pen, touch and pinch) and keyboard.

import { HANDLES, ratioValue } from "./geometry.js";
import { BoxDrawing } from "./drawing.js";

export class BoxEditor extends BoxDrawing {
  // svg: the <svg> over the photo; opts: {onChange(boxes, final), onSelect(i), draw: bool, drawRatio(): "2:3",
  // locked: bool (boxes shown, not edited), onEmpty(x, y) (a click on no box), snap: bool (dragged edges snap to
  // the thirds and to subjects(): [{x, y, w, h}], Alt held: not)}
  constructor(svg, opts) {
    super(svg, opts);
    this.drag = null;
    this.pointers = new Map(); // pointer id -> its point (source px): two of them on a crop make a pinch
    svg.addEventListener("pointerdown", (e) => this._down(e));
    svg.addEventListener("pointermove", (e) => this._move(e));
    svg.addEventListener("pointerup", (e) => this._up(e));
    svg.addEventListener("pointercancel", (e) => this._up(e));
    // redraw at the new scale whenever the photo's size on screen changes (tab switch, resize, rotation)
    if (window.ResizeObserver) new ResizeObserver(() => this.render()).observe(svg);
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
}
