// The carousel page's strip: a card per crop (or slide) with its thumbnail, rendered by the server from the
// full-resolution photo at the screen's pixel ratio.  Drag to reorder the cards: reorder.js.

import { clone } from "./history.js";
import { turnedRatio } from "./geometry.js";
import { $, allowedRatios, cur, plural, state, widthValue } from "./state.js";
import { renderTabs } from "./photos.js";
import { edit, editor } from "./edits.js";
import { bestIndex, fewerThanAsked, schedulePreview, scheduleScores, scoresKey, scoreTable } from "./panels.js";

// -- the strip ----------------------------------------------------------------------------------
function outSize(b) {
  const w = Math.round(b.w), h = Math.round(b.h);
  const pw = widthValue();
  if (!pw) return `${w}×${h}`;
  if (w < pw) return `${w}×${h} (under ${pw} px: kept full size)`;
  const exact = state.settings.platform_sizes[b.ratio];
  return `${pw}×${exact ? Math.round(pw * exact[1] / exact[0]) : Math.round(h * pw / w)}`;
}

function thumbHeight(boxes) {
  const phone = window.matchMedia("(max-width: 700px)").matches;
  if (state.mode === "seamless" && boxes && boxes.length && !phone) { // every slide side by side in the strip's width
    const room = Math.max(120, $("strip").clientWidth - 6);
    const aspect = boxes.reduce((a, b) => a + b.w / b.h, 0);
    return Math.max(40, Math.min(220, Math.floor(room / aspect)));
  }
  // a phone: one card at a time, low enough that the photo and the card share the screen
  if (phone) return Math.max(120, Math.min(420, Math.round(window.innerWidth * 0.9), Math.round(window.innerHeight * 0.27)));
  return 150;
}

function cardButton(txt, label, fn, disabled) {
  const bt = document.createElement("button");
  bt.type = "button";
  bt.textContent = txt;
  bt.title = label;
  bt.setAttribute("aria-label", label);
  bt.disabled = !!disabled;
  bt.onclick = (e) => { e.stopPropagation(); fn(); };
  return bt;
}

export function renderStrip(keepFocus) {
  const p = cur();
  const strip = $("strip");
  const active = document.activeElement;
  const focusedCard = keepFocus !== false && active && active.closest ? active.closest("#strip .card") : null;
  const focusIndex = focusedCard ? Number(focusedCard.dataset.index) : -1;
  const focusRole = focusedCard && active !== focusedCard ? active.dataset.role : null;
  strip.innerHTML = "";
  const seamless = state.mode === "seamless";
  strip.classList.toggle("seamless", seamless);
  const boxes = seamless ? (p && p.seam ? p.seam.boxes.map((b) => ({ ...b, ratio: p.seam.ratio })) : null) : p && p.boxes;
  if (!p || !boxes) { $("count").textContent = ""; $("pager").textContent = ""; $("preview").classList.add("hidden"); return; }
  $("count").textContent = seamless ? `· ${plural(boxes.length, "slide")} of ${boxes[0] ? `${boxes[0].ratio}, ${outSize(boxes[0])}` : ""}, edge to edge`
    : `· ${plural(boxes.length, "crop")} in swipe order` + (fewerThanAsked(p) ? ` (${p.settings.k} asked)` : "");
  const img = $("photo");
  const best = !seamless && $("showScores").checked && p.scores && p.scoresKey === scoresKey(p) ? bestIndex(p.scores) : -1;
  const ratios = allowedRatios();
  const n = boxes.length;
  boxes.forEach((b, i) => {
    const card = document.createElement("div");
    card.className = "card" + (i === editor.selected && !seamless ? " selected" : "") + (i === best ? " best" : "");
    card.dataset.index = i;
    card.setAttribute("role", "listitem");
    card.tabIndex = 0;
    card.setAttribute("aria-label", `${seamless ? "Slide" : "Crop"} ${i + 1} of ${n}: ${b.ratio}, ${outSize(b)}`
      + (i === best ? ", best judge score" : ""));
    const pw = widthValue();
    if (pw && b.w < pw / 2) {
      card.classList.add("warn");
      card.title = `only ${Math.round(b.w)} px wide: it would look soft at ${pw} px`;
    }
    if (img.complete && img.naturalWidth) card.appendChild(stripThumb(p, img, b, thumbHeight(boxes)));
    if (i === best) {
      const badge = document.createElement("span");
      badge.className = "badge";
      badge.textContent = "★ best";
      card.appendChild(badge);
    }
    const meta = document.createElement("div");
    meta.className = "meta";
    const label = document.createElement("span");
    label.className = "what";
    // a slide's card is as wide as its picture, so that the slides touch as they will when swiped
    label.textContent = seamless ? `${i + 1}` : `${i + 1} · ${b.ratio} · ${outSize(b)}`;
    if (seamless) card.title = `slide ${i + 1}: ${b.ratio}, ${outSize(b)}`;
    meta.appendChild(label);
    if (!seamless) {
      const btns = document.createElement("span");
      btns.className = "card-buttons";
      const sel = document.createElement("select");
      sel.dataset.role = "ratio";
      sel.setAttribute("aria-label", `Ratio of crop ${i + 1}`);
      for (const r of [...new Set([...ratios, b.ratio, turnedRatio(b.ratio, ratios)])]) sel.add(new Option(r, r));
      sel.value = b.ratio;
      sel.onchange = () => { editor.select(i); editor.setRatio(i, sel.value); };
      sel.onclick = (e) => e.stopPropagation();
      btns.appendChild(sel);
      const move = (j) => { const bx = clone(p.boxes); [bx[i], bx[j]] = [bx[j], bx[i]]; editor.selected = j; edit(bx); };
      const left = cardButton("◀", `Move crop ${i + 1} earlier`, () => move(i - 1), i === 0);
      left.dataset.role = "earlier";
      const right = cardButton("▶", `Move crop ${i + 1} later`, () => move(i + 1), i === n - 1);
      right.dataset.role = "later";
      const del = cardButton("✕", `Delete crop ${i + 1}`, () => { const bx = clone(p.boxes); bx.splice(i, 1); editor.selected = -1; edit(bx); });
      del.dataset.role = "delete";
      const grip = document.createElement("span");
      grip.className = "grip";
      grip.textContent = "⠿";
      grip.title = "drag to reorder (or ◀ ▶)";
      grip.setAttribute("aria-hidden", "true");
      btns.append(grip, left, right, del);
      meta.appendChild(btns);
    }
    card.appendChild(meta);
    const table = !seamless && $("showScores").checked && p.scores && p.scoresKey === scoresKey(p) ? scoreTable(p.scores[i]) : null;
    if (table) card.appendChild(table);
    if (!seamless) {
      card.addEventListener("focus", () => { if (editor.selected !== i) editor.select(i); });
      card.addEventListener("click", () => editor.select(i));
    }
    strip.appendChild(card);
  });
  $("scoreNote").classList.toggle("hidden", !(!seamless && $("showScores").checked));
  if (focusIndex >= 0) {
    const card = strip.querySelector(`.card[data-index="${Math.min(focusIndex, n - 1)}"]`);
    const target = card && (focusRole ? card.querySelector(`[data-role="${focusRole}"]:not(:disabled)`) || card : card);
    if (target) target.focus({ preventScroll: true });
  }
  updatePager();
  renderTabs();
  schedulePreview();
  if (!seamless && $("showScores").checked) scheduleScores(p);
}

export function updatePager() {
  const strip = $("strip");
  const n = strip.children.length;
  if (!n || !window.matchMedia("(max-width: 700px)").matches) { $("pager").textContent = ""; return; }
  const i = Math.min(n - 1, Math.round(strip.scrollLeft / Math.max(1, strip.clientWidth)));
  $("pager").textContent = `${i + 1} / ${n} · swipe`;
}

export function markSelected(i) {
  for (const c of document.querySelectorAll("#strip .card")) {
    const on = Number(c.dataset.index) === i;
    c.classList.toggle("selected", on);
    c.setAttribute("aria-current", on ? "true" : "false");
    if (on && !c.contains(document.activeElement)) showInStrip(c);
  }
}

function showInStrip(card) { // scroll the strip (never the page, which would move the photo under the pointer)
  const strip = $("strip");
  const cr = card.getBoundingClientRect(), sr = strip.getBoundingClientRect();
  if (cr.left < sr.left) strip.scrollLeft -= sr.left - cr.left;
  else if (cr.right > sr.right) strip.scrollLeft += Math.min(cr.right - sr.right, cr.left - sr.left);
  if (cr.top < sr.top) strip.scrollTop -= sr.top - cr.top;
  else if (cr.bottom > sr.bottom) strip.scrollTop += Math.min(cr.bottom - sr.bottom, cr.top - sr.top);
}

// -- thumbnails ------------------------------------------------------------------------------------
// A card's canvas is drawn at once from the 1600 px display copy (so a drag repaints within a frame), then,
// when no crop is being dragged, from the server's render of that crop at the canvas's own pixel width.
const FULL_THUMBS = new Map(); // url -> Image, the latest 240 kept (the browser caches them as well)

function fullThumbUrl(p, box, width) {
  const q = new URLSearchParams({ x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.w),
                                  h: Math.round(box.h), width: Math.max(16, Math.min(8000, width)) });
  return `/api/photos/${p.id}/render?${q}`;
}

function stripThumb(p, img, box, height) {
  const c = thumbnail(img, box, p.width, height);
  if (editor.drag) return c; // while a crop moves, the display copy only
  const url = fullThumbUrl(p, box, c.width);
  c.dataset.src = url;
  let im = FULL_THUMBS.get(url);
  if (!im) {
    im = new Image();
    im.decoding = "async";
    im.src = url;
    FULL_THUMBS.set(url, im);
    if (FULL_THUMBS.size > 240) FULL_THUMBS.delete(FULL_THUMBS.keys().next().value);
  }
  const draw = () => {
    if (!im.naturalWidth) return;
    const ctx = c.getContext("2d");
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(im, 0, 0, c.width, c.height);
    c.dataset.full = String(im.naturalWidth);
  };
  if (im.complete && im.naturalWidth) draw();
  else im.addEventListener("load", draw, { once: true });
  return c;
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
