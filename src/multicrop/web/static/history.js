// Undo/redo history and the deep copy of a list of boxes, shared by the carousel and label pages.

// Undo/redo of one photo's state (its boxes; on the carousel page its boxes and settings): every finished
// edit records the new state.  `copy` deep-copies a state (default: a list of boxes).
export class History {
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

export function clone(boxes) { return (boxes || []).map((b) => ({ ...b })); }
