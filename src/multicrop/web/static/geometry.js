// The box editor's mechanics, shared by the carousel and label pages: where a box may go.  Boxes are
// {x, y, w, h, ratio: "2:3"} in source pixels; the SVG's viewBox is the photo's source size, so no coordinate
// is ever converted by hand.  Ratio-locked sizing and resizing kept in the photo, snapping of dragged edges to
// the photo's thirds and the subjects' edges, and which crop a press lands on.  Drawing: drawing.js; pointer
// and keyboard editing: editor.js.

export const HANDLES = { nw: [0, 0], n: [0.5, 0], ne: [1, 0], e: [1, 0.5], se: [1, 1], s: [0.5, 1], sw: [0, 1], w: [0, 0.5] };
const SNAP_PX = 6; // a dragged edge this close (CSS px) to the photo's thirds or a subject's edge lands on it (Alt: never)

export function ratioValue(r) {
  const [a, b] = String(r).split(":").map(Number);
  return a / b;
}

// The ratio of the other orientation: from `allowed` when it has one, else the inverse (2:3 -> 3:2).
export function turnedRatio(ratio, allowed) {
  const v = ratioValue(ratio);
  if (Math.abs(v - 1) < 1e-9) return ratio;
  const other = (allowed || []).find((r) => (ratioValue(r) < 1) !== (v < 1) && Math.abs(ratioValue(r) - 1) > 1e-9);
  if (other) return other;
  const [a, b] = String(ratio).split(":");
  return `${b}:${a}`;
}

export class BoxGeometry {
  // svg: the <svg> over the photo; opts: the editor's options (here: subjects(), the boxes dragged edges snap to)
  constructor(svg, opts) {
    this.svg = svg;
    this.opts = opts || {};
    this.W = 1; this.H = 1;
    this.boxes = [];
    this.selected = -1;
    this.guides = []; // the snap targets the dragged crop's edges lie on: [{x} | {y}], drawn while dragging
  }

  setSize(W, H) {
    this.W = W; this.H = H;
    this.svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    this.svg.setAttribute("preserveAspectRatio", "none");
  }

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
}
