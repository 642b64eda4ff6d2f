"""The 80 COCO thing classes: names, COCO category ids and coarse kinds.

COCO numbers its categories 1-90 with gaps (12, 26, 29, 30, 45, 66, 68, 69,
71, 83 were dropped before release); detectors trained on COCO number the 80
kept classes 0-79 in id order.  :data:`CATEGORY_IDS` maps the detector's
index to the category id of COCO's JSON, :func:`kind_of` folds a category id
into one of the coarse kinds of :class:`~multicrop.detectors.types.Detection`.

Examples
--------
>>> CATEGORY_IDS[0], NAMES[0], kind_of(1)
(1, 'person', 'person')
>>> CATEGORY_IDS[79], NAMES[79]
(90, 'toothbrush')
>>> kind_of(18), kind_of(3), kind_of(62)
('animal', 'vehicle', 'object')
"""

from __future__ import annotations

__all__ = ["NAMES", "CATEGORY_IDS", "kind_of", "PERSON_IDS", "ANIMAL_IDS", "VEHICLE_IDS", "STREET_IDS"]

_CLASSES = (
    (1, "person"), (2, "bicycle"), (3, "car"), (4, "motorcycle"), (5, "airplane"), (6, "bus"), (7, "train"),
    (8, "truck"), (9, "boat"), (10, "traffic light"), (11, "fire hydrant"), (13, "stop sign"),
    (14, "parking meter"), (15, "bench"), (16, "bird"), (17, "cat"), (18, "dog"), (19, "horse"), (20, "sheep"),
    (21, "cow"), (22, "elephant"), (23, "bear"), (24, "zebra"), (25, "giraffe"), (27, "backpack"),
    (28, "umbrella"), (31, "handbag"), (32, "tie"), (33, "suitcase"), (34, "frisbee"), (35, "skis"),
    (36, "snowboard"), (37, "sports ball"), (38, "kite"), (39, "baseball bat"), (40, "baseball glove"),
    (41, "skateboard"), (42, "surfboard"), (43, "tennis racket"), (44, "bottle"), (46, "wine glass"),
    (47, "cup"), (48, "fork"), (49, "knife"), (50, "spoon"), (51, "bowl"), (52, "banana"), (53, "apple"),
    (54, "sandwich"), (55, "orange"), (56, "broccoli"), (57, "carrot"), (58, "hot dog"), (59, "pizza"),
    (60, "donut"), (61, "cake"), (62, "chair"), (63, "couch"), (64, "potted plant"), (65, "bed"),
    (67, "dining table"), (70, "toilet"), (72, "tv"), (73, "laptop"), (74, "mouse"), (75, "remote"),
    (76, "keyboard"), (77, "cell phone"), (78, "microwave"), (79, "oven"), (80, "toaster"), (81, "sink"),
    (82, "refrigerator"), (84, "book"), (85, "clock"), (86, "vase"), (87, "scissors"), (88, "teddy bear"),
    (89, "hair drier"), (90, "toothbrush"),
)

#: COCO category id of each of the 80 detector class indices.
CATEGORY_IDS: tuple[int, ...] = tuple(c for c, _ in _CLASSES)
#: Class name of each of the 80 detector class indices (COCO's spelling).
NAMES: tuple[str, ...] = tuple(n for _, n in _CLASSES)
#: COCO ids, the one table of them: people; vehicles (bicycle ... boat); street objects (traffic
#: light, fire hydrant, stop sign, parking meter, bench); animals (bird ... giraffe).  Tuples, in id order.
PERSON_IDS: tuple[int, ...] = (1,)
VEHICLE_IDS: tuple[int, ...] = tuple(range(2, 10))
STREET_IDS: tuple[int, ...] = (10, 11, 13, 14, 15)
ANIMAL_IDS: tuple[int, ...] = tuple(range(16, 26))


def kind_of(category_id: int) -> str:
    """Coarse kind of a COCO category id: person, animal, vehicle or object."""
    if category_id == 1:
        return "person"
    if category_id in ANIMAL_IDS:
        return "animal"
    if category_id in VEHICLE_IDS:
        return "vehicle"
    return "object"
