"""Call keys: the key template writes canonical JSON byte for byte, and keys stay what stores hold."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.hashing import canonical_json, hash_text
from multicrop.judges.keys import CALL_KEY_OPEN_FIELDS, KeyTemplate
from multicrop.judges.panel import Family, Panel, default_panel
from multicrop.judges.runner import plan_calls
from multicrop.judges.types import ImageRef

_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                          st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
_json_values = st.recursive(_json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)


@given(fixed=st.dictionaries(st.text(max_size=8), _json_values, max_size=8),
       open_values=st.dictionaries(st.text(max_size=8), _json_values, min_size=0, max_size=3))
def test_rendered_template_is_canonical_json_of_the_whole_mapping(fixed, open_values):
    fixed = {k: v for k, v in fixed.items() if k not in open_values}
    names = sorted(open_values)
    t = KeyTemplate.build(fixed, open_fields=names)
    assert t.open_fields == tuple(names) and len(t.pieces) == len(names) + 1
    text = t.render(*(canonical_json(open_values[n]) for n in names))
    assert text == canonical_json({**fixed, **open_values})


def test_template_arguments_are_checked():
    with pytest.raises(InvalidParameterError, match="sorted"):
        KeyTemplate.build({}, open_fields=("repetition", "image_sha256"))
    with pytest.raises(InvalidParameterError, match="also have fixed values"):
        KeyTemplate.build({"repetition": 1}, open_fields=CALL_KEY_OPEN_FIELDS)
    with pytest.raises(InvalidParameterError, match="expected 2 values"):
        KeyTemplate.build({}, open_fields=CALL_KEY_OPEN_FIELDS).render('"x"')


# Keys recorded by the planner before the key template replaced its
# sentinel splice (multicrop 0.1.0): stores written then must resume.
_GOLDEN = [
    (0, "sha256:c428b1d9c3c83ca262e247d92a75c714d240962180c1c01dc8a3336607af3e0f"),
    (7, "sha256:9c3d620637c9e511945a0def2a3e53617f37e07223aebe1fb521e9630aff72c9"),
    (19, "sha256:5f781b2b75ef163aae4c541cffa3e1bd5c6bf6b3a09aaa935f939b73adf5e218"),
]


def test_keys_of_the_packaged_protocol_are_unchanged(monkeypatch):
    # The measured judge's own version moves with its measures (and so its
    # keys, on purpose); the golden keys pin the key machinery at version 1.
    from multicrop.judges.backends.measured import MeasuredBackend

    monkeypatch.setattr(MeasuredBackend, "version", "1")
    # ... and the key layout of a backend that reads its prompt and is sampled
    # (measured is neither now: its own keys are pinned in test_runner)
    monkeypatch.setattr(MeasuredBackend, "reads_prompt", True)
    monkeypatch.setattr(MeasuredBackend, "deterministic", False)
    img = ImageRef(np.zeros((8, 8, 3), np.uint8), label="z")
    panel = default_panel()
    plan = plan_calls([img], panel, {f.name: f.create() for f in panel.families})
    assert [(i, plan[i].key) for i, _ in _GOLDEN] == _GOLDEN
    assert plan[7].key_json == (
        '{"backend":"measured","backend_version":"1","dimension":"technical_quality",'
        f'"image_sha256":"{img.sha256}","model":"measured-v1","options":{{"max_side":1024}},"repetition":2,'
        f'"rubric_sha256":"{plan[7].rubric_sha256}","temperature":0.3,"template":"dimension@1"}}'
    )
    vlm = Panel((Family("o", "openai-compatible", "gpt-4o",
                        {"api_key_env": "", "base_url": "https://openrouter.ai/api/v1/"}),),
                temperature=1, holistic_repetitions=1, dimension_repetitions=0)
    (call,) = plan_calls([img], vlm, {f.name: f.create() for f in vlm.families})
    assert call.key == "sha256:98991f5ef1cf2d475e63618fb0820348753a24035a211a85d76785e3869ca458"
    assert call.key == hash_text(call.key_json) and '"temperature":1,' in call.key_json
