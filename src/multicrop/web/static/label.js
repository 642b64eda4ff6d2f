// Label mode: draw k fixed-ratio boxes per photo; every change is saved.
const $ = (id) => document.getElementById(id);
const st = { kTouched: false, items: [], ratios: [], index: 0, item: null, saving: Promise.resolve(), timer: null,
             history: new History([]) };

import { api } from "./api.js";
import { History } from "./history.js";
import { ratioValue } from "./geometry.js";
import { BoxEditor } from "./editor.js";

function message(text) {
  const d = document.createElement("div");
  d.className = "msg error";
  d.textContent = text;
  $("messages").appendChild(d);
  setTimeout(() => d.remove(), 8000);
}

const editor = new BoxEditor($("overlay"), {
  draw: true,
  drawRatio: () => $("ratio").value,
  onChange: (boxes, final) => { if (final) { st.history.record(boxes); describe(); save(); } undoButtons(); },
});

function metadata() {
  const f = $("meta");
  const k = f.k.value.trim();
  // k follows the number of boxes until the person types another number
  return { k: st.kTouched && k ? Number(k) : null, title: f.title.value, creator: f.creator.value,
           licence: f.licence.value, url: f.url.value };
}

function progress(p) {
  $("progress").textContent = `${p.labelled} / ${p.total} labelled`;
}

function renderItems() {
  const nav = $("items");
  nav.innerHTML = "";
  st.items.forEach((it, i) => {
    const d = document.createElement("button");
    d.type = "button";
    d.className = "item" + (it.labelled ? " done" : "") + (i === st.index ? " active" : "");
    d.textContent = it.name;
    d.title = it.file;
    d.setAttribute("aria-label", `${it.file}${it.labelled ? ", labelled" : ""}`);
    if (i === st.index) d.setAttribute("aria-current", "true");
    d.onclick = () => open(i);
    nav.appendChild(d);
  });
  const a = nav.querySelector(".active");
  if (a) a.scrollIntoView({ block: "nearest" });
}

function save() {
  if (!st.item) return;
  const name = st.item.name;
  const body = { boxes: editor.boxes.map((b) => ({ x: b.x, y: b.y, w: b.w, h: b.h, ratio: b.ratio })),
                 metadata: metadata() };
  $("saved").textContent = "saving…";
  st.saving = st.saving.then(async () => {
    try {
      const r = await (await api("PUT", `/api/label/items/${encodeURIComponent(name)}`, body)).json();
      const it = st.items.find((x) => x.name === name);
      if (it) it.labelled = r.labelled;
      progress(r.progress);
      renderItems();
      $("saved").textContent = `saved ${new Date().toLocaleTimeString()}`;
      if (st.item && st.item.name === name && !st.kTouched) $("meta").k.value = r.metadata.k || "";
    } catch (e) { $("saved").textContent = "not saved"; message(`${name}: ${e.message}`); }
  });
}

function undoButtons() { // off when there is nothing to undo or redo
  $("undo").disabled = !st.history.past.length;
  $("redo").disabled = !st.history.future.length;
}

function describe() {
  undoButtons();
  const it = st.item;
  const n = editor.boxes.length;
  $("status").textContent = `${it.file} · ${it.width}×${it.height} px · ${n} box${n === 1 ? "" : "es"}`;
}

async function open(i) {
  if (i < 0 || i >= st.items.length) return;
  await st.saving;
  st.index = i;
  const name = st.items[i].name;
  location.hash = encodeURIComponent(name);
  const item = await (await api("GET", `/api/label/items/${encodeURIComponent(name)}`)).json();
  st.item = item;
  editor.setSize(item.width, item.height);
  editor.selected = -1;
  editor.setBoxes(item.boxes);
  st.history = new History(item.boxes);
  $("photo").src = `/api/label/items/${encodeURIComponent(name)}/image`;
  const f = $("meta");
  f.k.value = item.metadata.k || "";
  st.kTouched = item.metadata.k != null && item.metadata.k !== item.boxes.length;
  for (const key of ["title", "creator", "licence", "url"]) f[key].value = item.metadata[key] || "";
  describe();
  $("saved").textContent = item.labelled ? "labelled" : "not labelled yet";
  renderItems();
}

async function suggest() {
  if (!st.item) return;
  const k = metadata().k || Math.max(editor.boxes.length, 2);
  $("status").textContent = `finding ${k} suggested crops…`;
  try {
    const r = await (await api("POST", `/api/label/items/${encodeURIComponent(st.item.name)}/suggest`, { k })).json();
    editor.setBoxes(r.boxes);
    st.history.record(r.boxes);
    undoButtons();
    $("status").textContent = `${r.boxes.length} suggested crops: adjust them, delete the wrong ones`;
    save();
  } catch (e) { $("status").textContent = ""; message(e.message); }
}

function toggleOrientation() {
  const sel = $("ratio");
  const now = ratioValue(sel.value);
  const other = st.ratios.find((r) => (ratioValue(r) < 1) !== (now < 1));
  if (other) sel.value = other;
  // the selected box turns too, kept about its centre and inside the photo
  const b = editor.boxes[editor.selected];
  if (b && other) {
    const r = ratioValue(other), cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    const area = b.w * b.h;
    let w = Math.sqrt(area * r);
    w = Math.min(w, editor.W, editor.H * r);
    const h = w / r;
    Object.assign(b, { ratio: other, w, h, x: Math.min(Math.max(cx - w / 2, 0), editor.W - w),
                       y: Math.min(Math.max(cy - h / 2, 0), editor.H - h) });
    editor.render();
    st.history.record(editor.boxes);
    undoButtons();
    save();
  }
}

function undoRedo(redo) {
  const b = redo ? st.history.redo() : st.history.undo();
  if (!b) return;
  editor.setBoxes(b, -1);
  describe();
  save();
}

async function init() {
  const r = await (await api("GET", "/api/label/items")).json();
  st.items = r.items;
  st.ratios = r.ratios;
  for (const ratio of r.ratios) $("ratio").add(new Option(ratio, ratio));
  if (r.skipped && r.skipped.length) { // photos the folder holds but that cannot have a label of their own
    $("skipped").textContent = "Not offered for labelling: " + r.skipped.map((x) => `${x.file} (${x.why})`).join("; ") + ".";
    $("skipped").classList.remove("hidden");
  }
  progress(r.progress);
  $("prev").onclick = () => open(st.index - 1);
  $("next").onclick = () => open(st.index + 1);
  $("suggest").onclick = suggest;
  $("delete").onclick = () => editor.deleteSelected();
  $("undo").onclick = () => undoRedo(false);
  $("redo").onclick = () => undoRedo(true);
  $("meta").k.oninput = () => { st.kTouched = true; };
  $("meta").oninput = () => { clearTimeout(st.timer); st.timer = setTimeout(save, 400); };
  document.addEventListener("keydown", (e) => {
    if (["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
    const k = e.key.toLowerCase();
    if ((e.ctrlKey || e.metaKey) && (k === "z" || k === "y")) { undoRedo(k === "y" || e.shiftKey); e.preventDefault(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    // with a box selected, the arrows move it (Shift: x10), + and - resize it, Esc lets it go
    if (editor.selected >= 0 && editor.keydown(e)) { e.preventDefault(); return; }
    if (e.target.tagName === "BUTTON" && (e.key === "Enter" || e.key === " ")) return;
    if (k === "n" || e.key === "ArrowRight") open(st.index + 1);
    else if (k === "p" || e.key === "ArrowLeft") open(st.index - 1);
    else if (k === "o") toggleOrientation();
    else if (e.key === "Delete" || e.key === "Backspace") { if (editor.deleteSelected()) e.preventDefault(); }
    else return;
    e.preventDefault();
  });
  const wanted = decodeURIComponent(location.hash.slice(1));
  const at = st.items.findIndex((it) => it.name === wanted);
  const firstTodo = st.items.findIndex((it) => !it.labelled);
  await open(at >= 0 ? at : Math.max(firstTodo, 0));
}

init().catch((e) => message(e.message));
