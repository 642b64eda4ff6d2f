// The carousel page's strip: drag to reorder the cards (the mouse anywhere on a card, a finger on its grip ⠿).

import { clone } from "./history.js";
import { $, cur, state } from "./state.js";
import { edit, editor } from "./edits.js";
import { renderStrip } from "./strip.js";

// -- drag to reorder ---------------------------------------------------------------------------------
// While a card is dragged the strip shows every card small (so a phone's one-at-a-time strip holds them
// all), the card under the pointer is marked where the dragged one will go, and a drop is one undo step.
let reorder = null;

// How the cards lie: "column" when no two share a row (a desktop's narrow strip), else "row" (they wrap in rows)
function stripFlow() {
  const tops = [...document.querySelectorAll("#strip .card")].map((c) => Math.round(c.getBoundingClientRect().top));
  return new Set(tops).size === tops.length && tops.length > 1 ? "column" : "row";
}

function reorderSlot(pt, dragged) { // how many of the other cards come before the pointer, in reading order
  const column = stripFlow() === "column";
  let slot = 0;
  for (const c of document.querySelectorAll("#strip .card")) {
    if (c === dragged) continue;
    const r = c.getBoundingClientRect();
    if (column ? pt.y > r.top + r.height / 2 : pt.y > r.bottom || (pt.y >= r.top && pt.x > r.left + r.width / 2)) slot += 1;
  }
  return slot;
}

function markSlot(slot) {
  $("strip").dataset.flow = stripFlow(); // the bar that marks the place: beside a card in a row, above or below in a column
  const others = [...document.querySelectorAll("#strip .card")].filter((c) => c !== reorder.card);
  others.forEach((c, k) => {
    c.classList.toggle("drop-before", k === slot);
    c.classList.toggle("drop-after", slot === others.length && k === others.length - 1);
  });
}

function stripPointerDown(e) {
  const card = e.target.closest && e.target.closest("#strip .card");
  const grip = e.target.closest && e.target.closest(".grip");
  if (!card || state.mode !== "carousel" || (e.button !== undefined && e.button !== 0)) return;
  if (!grip && (e.pointerType !== "mouse" || e.target.closest("button, select"))) return;
  reorder = { card, from: Number(card.dataset.index), id: e.pointerId, x0: e.clientX, y0: e.clientY, on: false };
  try { (grip || card).setPointerCapture(e.pointerId); } catch (_) { /* the pointer is gone */ }
  if (grip) e.preventDefault();
}

function stripPointerMove(e) {
  if (!reorder || e.pointerId !== reorder.id) return;
  if (!reorder.on) {
    if (Math.hypot(e.clientX - reorder.x0, e.clientY - reorder.y0) < 6) return;
    reorder.on = true;
    $("strip").classList.add("reordering");
    reorder.card.classList.add("dragging");
  }
  markSlot(reorderSlot({ x: e.clientX, y: e.clientY }, reorder.card));
  e.preventDefault();
}

function stripPointerUp(e) {
  if (!reorder || e.pointerId !== reorder.id) return;
  const rd = reorder;
  reorder = null;
  if (!rd.on) return; // a click: the card's own handler selects it
  const slot = e.type === "pointercancel" ? rd.from : reorderSlot({ x: e.clientX, y: e.clientY }, rd.card);
  $("strip").classList.remove("reordering");
  for (const c of document.querySelectorAll("#strip .card")) c.classList.remove("dragging", "drop-before", "drop-after");
  // the click that ends a mouse drag is not a click on the card
  const eat = (ev) => { ev.stopPropagation(); ev.preventDefault(); };
  window.addEventListener("click", eat, true); // (a click, if any, comes in this same task)
  setTimeout(() => window.removeEventListener("click", eat, true), 0);
  const p = cur();
  if (!p || !p.boxes || slot === rd.from) { renderStrip(true); return; }
  const boxes = clone(p.boxes);
  const [moved] = boxes.splice(rd.from, 1);
  boxes.splice(slot, 0, moved);
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest("#strip");
  if (focused) document.activeElement.blur(); // (the strip would give the focus back to the card at the old place)
  editor.selected = slot;
  edit(boxes);
  const card = document.querySelector(`#strip .card[data-index="${slot}"]`);
  if (focused && card) card.focus({ preventScroll: true });
}

export function installReorder() {
  const strip = $("strip");
  strip.addEventListener("pointerdown", stripPointerDown);
  strip.addEventListener("pointermove", stripPointerMove);
  strip.addEventListener("pointerup", stripPointerUp);
  strip.addEventListener("pointercancel", stripPointerUp);
}
