"""The number rules wo checks its settings by, shared by the command line and the files it
loads: an option such as ``--budget-factor`` (:mod:`wo.cli.common` builds its argparse types
from :data:`RULES`) and the same setting in a model header or a ``decode.json`` file
(:func:`wo.model.check_decode`) are refused by one rule, with one wording ("must be a positive
number").  Only the standard library is imported here: the command line loads this module
before any decoder.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, NamedTuple


class Rule(NamedTuple):
    """A number rule: ``cast`` (int or float: the type of the value), ``ok`` (the range check
    of a cast value) and ``what`` (the text after "must be")."""

    cast: Callable[[Any], Any]
    ok: Callable[[Any], bool]
    what: str


RULES: Dict[str, Rule] = {
    "positive_int": Rule(int, lambda v: v > 0, "a positive integer"),
    "nonneg_int": Rule(int, lambda v: v >= 0, "0 or more"),
    "positive_float": Rule(float, lambda v: 0 < v < math.inf, "a positive number"),
    "nonneg_float": Rule(float, lambda v: 0 <= v < math.inf, "0 or more"),
    "finite_float": Rule(float, lambda v: abs(v) < math.inf, "a finite number"),
    "share": Rule(float, lambda v: 0 < v <= 1, "in (0, 1]"),
    # weight tables of 2^b float32: 2^30 is 4 GiB of weights (and more for training's accumulators)
    "hash_bits": Rule(int, lambda v: 8 <= v <= 30, "between 8 and 30 (a table of 2^b weights)"),
    # what a model file may hold: the training options' range, and one more bit for an SR local
    # orderer's joined left-to-right and right-to-left tables (wo.sr.train)
    "model_hash_bits": Rule(int, lambda v: 1 <= v <= 31, "an integer 1..31 (a table of 2^b weights)"),
    "crc32": Rule(int, lambda v: 0 <= v < 1 << 32, "a CRC-32 (an integer 0..2^32-1)"),
    "gyro_r": Rule(int, lambda v: v >= 2, "an integer of 2 or more (the first pruned row)"),
}


def check_value(value: Any, rule: str):
    """A number read from a JSON file (a model header, a ``decode.json``) checked by the rule
    named ``rule`` (a key of :data:`RULES`) and returned as its type: an integer rule takes an
    int (or a float with an integral value, 64.0), a float rule an int or a float; neither
    takes a bool, a string, NaN or an infinity (JSON's 1e400), and the value must be in the
    rule's range.  Raises ValueError "must be WHAT, not VALUE" (the caller names the file and
    the key); KeyError for an unknown rule."""
    r = RULES[rule]
    bad = ValueError(f"must be {r.what}, not {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad
    if isinstance(value, float) and not math.isfinite(value):
        raise bad
    if r.cast is int:
        if isinstance(value, float) and not value.is_integer():
            raise bad
        value = int(value)
    else:
        try:
            value = float(value)
        except OverflowError:   # an integer beyond any float (10**400 written out)
            raise bad from None
    if not r.ok(value):
        raise bad
    return value
