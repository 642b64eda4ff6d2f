"""Framing rules for people from their MediaPipe pose keypoints: portrait lines and the way they face."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..geometry import Box

if TYPE_CHECKING:
    from .subjects import Subject

__all__ = ["portrait_lines", "group_portraits", "facing", "face_seen"]

#: MediaPipe pose keypoints used for the framing rules.
_NOSE, _L_SHOULDER, _R_SHOULDER, _L_HIP, _R_HIP, _L_KNEE, _R_KNEE = 0, 11, 12, 23, 24, 25, 26
_L_EAR, _R_EAR = 7, 8


def _visible(kp: np.ndarray | None, *idx: int, min_vis: float = 0.3) -> bool:
    return kp is not None and all(kp[i, 2] >= min_vis for i in idx)


def portrait_lines(person: Subject) -> tuple[tuple[float, float], ...]:
    """Rows (analysis pixels) where a portrait may cut this person: chest, waist, thighs.

    From the pose keypoints where the shoulders and hips are seen, else from
    the proportions of a standing figure in its box (shoulders at 0.18 of the
    height, hips at 0.52, knees at 0.73).  Each span avoids the face and neck
    (above the chest band), the elbows and hips (between chest and waist bands,
    below the waist band) and the knees and feet (below the thigh band).

    Returns
    -------
    tuple of (top, bottom)
        Allowed rows for the crop's bottom edge, top to bottom.
    """
    kp, b = person.keypoints, person.box
    if _visible(kp, _L_SHOULDER, _R_SHOULDER, _L_HIP, _R_HIP):
        sh = float((kp[_L_SHOULDER, 1] + kp[_R_SHOULDER, 1]) / 2)
        hip = float((kp[_L_HIP, 1] + kp[_R_HIP, 1]) / 2)
        knee = float((kp[_L_KNEE, 1] + kp[_R_KNEE, 1]) / 2) if _visible(kp, _L_KNEE, _R_KNEE) else None
    else:
        if b.h < 1.6 * b.w:  # not a standing figure: its proportions say nothing
            return ()
        sh, hip, knee = b.y + 0.18 * b.h, b.y + 0.52 * b.h, b.y + 0.73 * b.h
    torso = hip - sh
    if torso <= 0:
        return ()
    lines = [(sh + 0.3 * torso, sh + 0.6 * torso), (sh + 0.78 * torso, sh + 0.92 * torso)]
    if knee is not None and knee > hip:
        lines.append((hip + 0.3 * (knee - hip), hip + 0.75 * (knee - hip)))
    return tuple(lines)


def facing(person: Subject) -> float:
    """Direction a person faces along x: -1 left, +1 right, 0 toward the camera or unknown.

    The nose's offset from the midpoint of the ears (or shoulders) over their
    spacing: more than a quarter of it is a turned head.
    """
    kp = person.keypoints
    for a, b in ((_L_EAR, _R_EAR), (_L_SHOULDER, _R_SHOULDER)):
        if _visible(kp, _NOSE, a, b):
            mid = (kp[a, 0] + kp[b, 0]) / 2
            span = max(abs(kp[a, 0] - kp[b, 0]), 0.05 * person.box.w, 1.0)
            off = (kp[_NOSE, 0] - mid) / span
            if abs(off) > 0.25:
                return float(np.sign(off))
            return 0.0
    return 0.0


def face_seen(person: Subject) -> bool:
    """Whether the pose sees this person's face: the nose keypoint visible inside their box.

    A portrait is made only of a face the camera shows: a person whose head is
    outside the photo (a torso at the frame's edge) or whose pose was not found
    gets no upper-body zoom.
    """
    kp, b = person.keypoints, person.box
    if not _visible(kp, _NOSE):
        return False
    x, y = float(kp[_NOSE, 0]), float(kp[_NOSE, 1])
    return b.x <= x <= b.x2 and b.y <= y <= b.y2


def group_portraits(group: Subject) -> list[Box]:
    """A group of people's portraits: boxes from the members' tops to a row where every
    member reaching below it may be cut (one of their :func:`portrait_lines`, their face seen), the
    others held whole; the deepest such row and the highest (none for a group with any other member)."""
    members = group.members
    if len(members) < 2 or any(m.kind != "person" for m in members):
        return []
    spans = {id(m): portrait_lines(m) if face_seen(m) else () for m in members}
    rows = sorted({(lo + hi) / 2 for s in spans.values() for lo, hi in s}
                  | {(max(a[0], b[0]) + min(a[1], b[1])) / 2 for s in spans.values() for t in spans.values()
                     if s is not t for a in s for b in t if max(a[0], b[0]) <= min(a[1], b[1])}
                  | {m.box.y2 for m in members})  # just below a member held whole

    def fits(y: float) -> bool:
        return all(m.box.y2 <= y or any(lo <= y <= hi for lo, hi in spans[id(m)]) for m in members)

    good = [y for y in rows if fits(y) and any(m.box.y2 > y for m in members)]
    x1, y1 = min(m.box.x for m in members), min(m.box.y for m in members)
    x2 = max(m.box.x2 for m in members)
    return [Box.from_corners(x1, y1, x2, y) for y in dict.fromkeys(good[::-1][:1] + good[:1]) if y > y1]
