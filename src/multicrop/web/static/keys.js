// The carousel page's keyboard: undo and redo anywhere outside a text field; in the carousel the editor's keys
// (and O: the other orientation), in the seamless panorama the band's (arrows, + and -).

import { turnedRatio } from "./geometry.js";
import { allowedRatios, cur, state } from "./state.js";
import { editor, redo, undo } from "./edits.js";

export function installKeys() {
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = (t.tagName === "INPUT" && !["checkbox", "radio", "button"].includes(t.type)) || t.tagName === "TEXTAREA"
      || t.tagName === "SELECT";
    const key = e.key.toLowerCase();
    if ((e.ctrlKey || e.metaKey) && !e.altKey && (key === "z" || key === "y")) {
      if (typing) return;
      if (key === "y" || e.shiftKey) redo(); else undo();
      e.preventDefault();
      return;
    }
    if (typing) return;
    if (state.mode === "seamless") { // the band: arrows move it, + and - resize it (nothing deletes it)
      const p = cur(), grid = p && p.seam && p.seam.block; // on a JPEG's block grid an arrow moves it a block
      const n = e.shiftKey ? 10 : 1, moves = { ArrowLeft: [-n, 0], ArrowRight: [n, 0], ArrowUp: [0, -n], ArrowDown: [0, n] };
      if (moves[e.key] && grid && !e.altKey && !e.ctrlKey && !e.metaKey) {
        if (editor.nudge(...moves[e.key], grid)) e.preventDefault();
      } else if ((moves[e.key] || ["+", "=", "-", "_"].includes(e.key)) && editor.keydown(e)) e.preventDefault();
      return;
    }
    if (state.mode !== "carousel") return;
    if (t.tagName === "BUTTON" && (e.key === "Enter" || e.key === " ")) return;
    if (key === "o" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const b = editor.boxes[editor.selected];
      if (b && editor.setRatio(editor.selected, turnedRatio(b.ratio, allowedRatios()))) e.preventDefault();
      return;
    }
    if (editor.keydown(e)) e.preventDefault();
  });
}
