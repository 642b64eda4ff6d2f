"""A panel: several judge families (backend + model + options) and the protocol.

A panel is a small TOML file::

    temperature = 0.3            # every prompt (the paper's single temperature)
    holistic_repetitions = 5     # e.g. 25 for a finer holistic mean
    dimension_repetitions = 3

    [[families]]
    name = "qwen-vl"
    backend = "openai-compatible"
    model = "Qwen/Qwen2.5-VL-7B-Instruct"
    options = { base_url = "http://localhost:8000/v1", api_key_env = "" }

    [prices]                     # USD per million tokens, by model string
    "gpt-4o-mini" = { input = 0.15, output = 0.60 }

Examples
--------
>>> p = default_panel()
>>> [f.name for f in p.families], p.temperature, p.holistic_repetitions, p.dimension_repetitions
(['measured'], 0.3, 5, 3)
>>> parse_panel({"families": [{"name": "a", "backend": "measured", "model": "m"}], "temprature": 1})
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: panel: unknown key(s) 'temprature'; allowed: dimension_repetitions, families, holistic_repetitions, prices, temperature
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputFileError, InvalidParameterError
from ..io import read_text_bounded, shown
from ..hashing import canonical_json
from ..serialize import Serializable
from .backends import JUDGE_BACKENDS, JudgeBackend, validate_options

__all__ = ["Family", "Panel", "parse_panel", "load_panel", "default_panel", "check_distinct_families",
           "check_repetitions", "MAX_REPETITIONS", "DEFAULT_TEMPERATURE", "DEFAULT_HOLISTIC_REPETITIONS", "DEFAULT_DIMENSION_REPETITIONS"]

#: Defaults of the paper's protocol (arXiv:2609.27110, §4).
DEFAULT_TEMPERATURE = 0.3
DEFAULT_HOLISTIC_REPETITIONS = 5
#: The most repetitions of one prompt a panel may ask (``holistic_repetitions``, ``dimension_repetitions``):
#: the protocol asks 3 to 25, and a larger number only multiplies the calls (and their cost).
MAX_REPETITIONS = 100
DEFAULT_DIMENSION_REPETITIONS = 3


@dataclass(frozen=True)
class Family(Serializable):
    """One judge family: ``name`` (the ``family`` column), backend, model, options."""

    name: str
    backend: str
    model: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)

    def identity(self) -> dict[str, Any]:
        """The backend part of this family's call keys (validates options; needs no credentials)."""
        cls = JUDGE_BACKENDS.get(self.backend)
        opts = validate_options(cls.Options, self.options, owner=f"family {self.name!r}: backend {self.backend!r}")
        return cls.identity(self.model, opts)

    def create(self) -> JudgeBackend:
        """Instantiate the backend (validates options, reads credentials)."""
        return JUDGE_BACKENDS.create(self.backend, model=self.model, **self.options)


@dataclass(frozen=True)
class Panel(Serializable):
    """Families and protocol settings of a judging run.

    ``to_dict()`` gives the panel document without ``[prices]`` (already in
    the families' options), which :func:`parse_panel` reads back.
    """

    families: tuple[Family, ...]
    temperature: float = DEFAULT_TEMPERATURE
    holistic_repetitions: int = DEFAULT_HOLISTIC_REPETITIONS
    dimension_repetitions: int = DEFAULT_DIMENSION_REPETITIONS


_TOP = {"families", "temperature", "holistic_repetitions", "dimension_repetitions", "prices"}
_FAMILY = {"name", "backend", "model", "options"}


def _unknown(where: str, got: set, allowed: set) -> None:
    extra = sorted(set(got) - allowed)
    if extra:
        raise InvalidParameterError(
            f"{where}: unknown key(s) {', '.join(map(repr, extra))}; allowed: {', '.join(sorted(allowed))}"
        )


def parse_panel(doc: dict[str, Any], *, source: str = "panel") -> Panel:
    """Validate a parsed panel document.

    Raises
    ------
    InvalidParameterError
        Unknown keys, missing fields, bad values, duplicate family names, or
        a ``[prices]`` entry for a model no family uses (a typo would
        otherwise price every call at 0).
    UnknownNameError
        An unknown backend.
    """
    _unknown(source, set(doc), _TOP)
    fams = doc.get("families")
    if not isinstance(fams, list) or not fams:
        raise InvalidParameterError(f"{source}: needs at least one [[families]] entry")
    prices = doc.get("prices", {})
    if not isinstance(prices, dict):
        raise InvalidParameterError(f"{source}: [prices] must be a table of model = {{input, output}}")
    families = [_parse_family(f, where=f"{source}: families[{i}]", prices=prices, source=source)
                for i, f in enumerate(fams)]
    _check_families(families, prices, source=source)
    return Panel(tuple(families), _parse_temperature(doc, source), **_parse_repetitions(doc, source))


def _parse_family(f: Any, *, where: str, prices: dict[str, Any], source: str) -> Family:
    """One ``[[families]]`` entry, with its model's ``[prices]`` as options where the backend takes them."""
    if not isinstance(f, dict):
        raise InvalidParameterError(f"{where} must be a table")
    _unknown(where, set(f), _FAMILY)
    for k in ("name", "backend", "model"):
        if not isinstance(f.get(k), str) or not f[k]:
            raise InvalidParameterError(f"{where}: {k!r} must be a non-empty string, got {f.get(k)!r}")
    if not isinstance(f.get("options", {}), dict):
        raise InvalidParameterError(f"{where}: options must be a table, got {f['options']!r}")
    options = dict(f.get("options", {}))
    if f["backend"] not in JUDGE_BACKENDS:
        raise InvalidParameterError(f"{where}: unknown judge backend {f['backend']!r}; available: "
                                    f"{', '.join(JUDGE_BACKENDS.names())}")
    cls = JUDGE_BACKENDS.get(f["backend"])
    price = prices.get(f["model"])
    opt_names = {x.name for x in dataclasses.fields(cls.Options)}
    if price is not None and {"price_input_per_mtok", "price_output_per_mtok"} <= opt_names:
        if not isinstance(price, dict) or set(price) - {"input", "output"}:
            raise InvalidParameterError(f"{source}: prices.{f['model']!r} must be {{input = .., output = ..}}")
        for key in ("input", "output"):
            v = price.get(key, 0.0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InvalidParameterError(f"{source}: prices.{f['model']!r}.{key} must be a finite number >= 0 "
                                            f"(USD per million tokens), got {v!r}")
            options.setdefault(f"price_{key}_per_mtok", float(v))
    return Family(f["name"], f["backend"], f["model"], options)


def _check_families(families: list[Family], prices: dict[str, Any], *, source: str) -> None:
    """Every price names a family's model; names are unique; no two families make the same calls."""
    unpriced = sorted(set(prices) - {f.model for f in families})
    if unpriced:
        raise InvalidParameterError(
            f"{source}: [prices] names model(s) {', '.join(map(repr, unpriced))} that no family uses; "
            f"models of the families: {', '.join(sorted({repr(f.model) for f in families}))}"
        )
    names = [f.name for f in families]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidParameterError(f"{source}: duplicate family name(s) {', '.join(dup)}")
    check_distinct_families({f.name: f.identity() for f in families}, source=source)


def _parse_temperature(doc: dict[str, Any], source: str) -> float:
    temperature = doc.get("temperature", DEFAULT_TEMPERATURE)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        raise InvalidParameterError(f"{source}: temperature must be a number in [0, 2], got {temperature!r}")
    return float(temperature)


def _parse_repetitions(doc: dict[str, Any], source: str) -> dict[str, int]:
    reps = {}
    for k, default in (("holistic_repetitions", DEFAULT_HOLISTIC_REPETITIONS),
                       ("dimension_repetitions", DEFAULT_DIMENSION_REPETITIONS)):
        v = doc.get(k, default)
        reps[k] = check_repetitions(v, name=f"{source}: {k}")
    if not any(reps.values()):
        raise InvalidParameterError(f"{source}: holistic_repetitions and dimension_repetitions are both 0, so no "
                                    "call would be made; set at least one of them >= 1")
    return reps


def check_repetitions(value: int, *, name: str) -> int:
    """``value`` if it is an integer in ``[0, MAX_REPETITIONS]``; else an error naming ``name``.

    Examples
    --------
    >>> check_repetitions(25, name="--holistic-repetitions")
    25
    >>> check_repetitions(10**6, name="--holistic-repetitions")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: --holistic-repetitions must be an integer in [0, 100], got 1000000
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPETITIONS:
        raise InvalidParameterError(f"{name} must be an integer in [0, {MAX_REPETITIONS}], got {value!r}")
    return value


def check_distinct_families(identities: dict[str, dict], *, source: str = "panel") -> None:
    """Raise if two families (name -> backend identity) would make identical calls.

    The family name is deliberately not part of a call key (renaming a family
    reuses its calls), so two families with the same identity would share
    keys and one would silently get the other's scores.
    """
    seen: dict[str, str] = {}
    for name, ident in identities.items():
        cj = canonical_json(ident)
        if cj in seen:
            raise InvalidParameterError(
                f"{source}: families {seen[cj]!r} and {name!r} are the same judge (backend {ident['backend']!r}, model "
                f"{ident['model']!r}, options {canonical_json(ident['options'])}) and would share every call; "
                f"remove one, or make them differ (e.g. another base_url or model)"
            )
        seen[cj] = name


def load_panel(path: str | Path) -> Panel:
    """Read and validate a panel TOML file."""
    path = Path(path)
    try:
        if not path.exists():
            raise FileNotFoundError(path)
        doc = tomllib.loads(read_text_bounded(path, what="panel file"))  # regular files only, size-bounded
    except FileNotFoundError:
        raise InvalidParameterError(f"panel file {shown(path)} does not exist") from None
    except InputFileError as exc:
        raise InvalidParameterError(str(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(f"panel file {shown(path)}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise InvalidParameterError(f"panel file {shown(path)}: not a panel (arrays or tables nested too deep)") from None
    return parse_panel(doc, source=str(path))


def default_panel() -> Panel:
    """The offline panel: the ``measured`` judge alone (used when no panel is given)."""
    return Panel((Family("measured", "measured", "measured-v1", {}),))
