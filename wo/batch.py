"""File-in/file-out linearization that never loses work.

Every input sentence gets exactly one output record, in input order.  A sentence with a
problem is reported as ``file:line: message`` on stderr and in its JSON status, and its
record follows ``on_error``: ``fallback`` (the words in input order, status "error"),
``skip`` (an empty record) or ``fail`` (stop before writing anything).  Output is written to a
temporary file renamed into place; on Ctrl-C the records finished so far are kept (a valid
prefix of the output) and :class:`Interrupted` is raised.
"""
from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from .data import permutation, remap_heads, reveal
from .io import AtomicWriter, Item, format_result, read_items, validate
from .linearizer import Result, linearize_many
from .model import Model

ON_ERROR = ("fallback", "skip", "fail")


class Interrupted(Exception):
    """Ctrl-C during a run; ``done`` records were written."""

    def __init__(self, done: int):
        super().__init__(f"interrupted after {done} sentences")
        self.done = done


class FailFast(Exception):
    """``on_error='fail'`` and a sentence failed; nothing was written."""


@dataclass
class Summary:
    """What a run did: sentences (int), failed (int), status counts, seconds (wall clock),
    input format used, and the error messages (``file:line: message``)."""

    sentences: int = 0
    failed: int = 0
    status: Dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    input_format: str = ""
    errors: List[str] = field(default_factory=list)

    @property
    def sentences_per_second(self) -> float:
        """Sentences per second of wall clock over the whole run (0 if not timed)."""
        return self.sentences / self.seconds if self.seconds > 0 else 0.0


_MODELS: Dict[tuple, Model] = {}


def _model(path: str) -> Model:
    import os

    key = (os.path.abspath(path), os.path.getmtime(path), os.path.getsize(path))
    if key not in _MODELS:
        _MODELS.clear()
        _MODELS[key] = Model.load(path)
    return _MODELS[key]


def shuffle_item(item: Item, seed: int, index: int) -> Item:
    """Shuffle an item's tokens with the fixed-seed permutation of :func:`wo.data.scramble`."""
    perm = permutation(len(item.forms), seed, index)
    heads = remap_heads(item.heads, perm)
    return Item([item.forms[p] for p in perm], [item.pos[p] for p in perm], heads, item.sent_id,
                item.line, item.error, [item.units[p] for p in perm] if item.units else None)


def select_given(item: Item, given: str, reveal_pos: float, reveal_heads: float, seed: int, index: int):
    """The trusted (pos, heads) of an item under ``--given`` and ``--reveal-*`` (Table 7)."""
    return reveal(item.pos, item.heads, given, reveal_pos, reveal_heads,
                  random.Random(seed * 7_000_003 + index + 1))


def run(model_path: str, input_path: str, output_path: str, *, input_format: str = "auto",
        output_format: str = "text", given: str = "none", reveal_pos: float = 1.0,
        reveal_heads: float = 1.0, seed: int = 1, jobs: int = 1, on_error: str = "fallback",
        max_length: int = 200, backend: str = "loky", scheduler: Optional[str] = None,
        progress: Optional[Callable[[int], None]] = None,
        report: Callable[[str], None] = lambda m: print(f"wo: {m}", file=sys.stderr),
        **decode_opts) -> Summary:
    """Linearize every sentence of ``input_path`` into ``output_path``; see the module docstring.

    Raises FileNotFoundError / ModelError for a missing input or a bad model, FailFast under
    ``on_error='fail'``, Interrupted on Ctrl-C.  Returns a :class:`Summary`.
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}")
    t0 = time.perf_counter()
    model = _model(model_path)
    items, fmt = read_items(input_path, input_format)
    summ = Summary(sentences=len(items), input_format=fmt)
    known = model.tagdict.all_tags() if given in ("pos", "full") else None
    todo, errors = [], {}
    for i, it in enumerate(items):
        msg = it.error or validate(it, max_length, known)
        if msg is not None:
            errors[i] = msg
            summ.errors.append(f"{input_path}:{it.line}: {msg}")
            report(f"{input_path}:{it.line}: {msg}")
            continue
        sh = shuffle_item(it, seed, i)
        pos, heads = select_given(sh, given, reveal_pos, reveal_heads, seed, i)
        todo.append((i, sh, (sh.forms, pos, heads)))
    if errors and on_error == "fail":
        raise FailFast(f"{len(errors)} sentence(s) failed; nothing written (--on-error fail)")
    writer = AtomicWriter(output_path)
    done = 0
    results: Dict[int, Result] = {}
    shuffled = {i: sh for i, sh, _ in todo}

    def emit_ready():
        nonlocal done
        while done < len(items) and (done in results or done in errors):
            i = done
            if i in errors:
                res = Result.input_order(items[i].forms, items[i].pos, errors[i])
                summ.failed += 1
                rec = "" if on_error == "skip" else format_result(items[i], res, output_format)
                if on_error == "skip" and output_format == "jsonl":
                    rec = format_result(items[i], res, "jsonl")
            else:
                res = results.pop(i)
                if res.status == "error":
                    summ.failed += 1
                    summ.errors.append(f"{input_path}:{items[i].line}: {res.message}")
                    report(f"{input_path}:{items[i].line}: {res.message}")
                rec = format_result(shuffled[i], res, output_format)
            summ.status[res.status] = summ.status.get(res.status, 0) + 1
            writer.write(rec)
            done += 1
            if progress and i not in errors:
                pass

    try:
        emit_ready()
        idx = [i for i, _, _ in todo]
        pos_in = 0

        def on_batch(batch_results):
            nonlocal pos_in
            for r in batch_results:
                results[idx[pos_in]] = r
                pos_in += 1
            emit_ready()
            if progress:
                progress(len(batch_results))

        linearize_many(model_path, [x for _, _, x in todo], jobs=jobs, on_batch=on_batch,
                       backend=backend, scheduler=scheduler, **decode_opts)
        emit_ready()
        writer.commit()
    except KeyboardInterrupt:
        writer.commit()
        raise Interrupted(done) from None
    except BaseException:
        writer.abort()
        raise
    summ.seconds = time.perf_counter() - t0
    return summ
