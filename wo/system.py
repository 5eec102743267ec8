"""The one shape every system's front end has: a :class:`Result` per decoded input item, and a
:class:`System` (load with defaults, decode one item, the fallback of a failed item, decode a
batch) that the shared batch spine (:mod:`wo.io.batch`) runs in worker processes through one
cached worker, :func:`wo.io.batch.system_worker`.

The seven systems and their classes:

=========  ==========================================  ===========================================
system     System subclass                             Result subclass
=========  ==========================================  ===========================================
dep        :class:`wo.dep.linearizer.Linearizer`       :class:`wo.dep.linearizer.Result`
ccg        :class:`wo.ccg.linearizer.Linearizer`       :class:`wo.ccg.linearizer.Result`
sr         :class:`wo.sr.realizer.Realizer`            :class:`wo.sr.realizer.SRResult`
idl        :class:`wo.idl.realize.IDLRealizer`         :class:`wo.idl.realize.Realization`
gyro       :class:`wo.gyro.realize.GyroRealizer`       :class:`wo.gyro.realize.GyroResult`
smt        :class:`wo.smt.translate.Translator`        :class:`wo.smt.translate.Translation`
lm         scoring only (``wo lm score``), no decoder
=========  ==========================================  ===========================================
"""
from __future__ import annotations

import os
from dataclasses import KW_ONLY, dataclass
from typing import Iterable, Iterator, List, Sequence


@dataclass
class Result:
    """One decoded input item, the fields every system's result has.

    tokens: list[str], the output words in output order (empty for an item that gave nothing);
    score: float, the system's score of the output (the scaled model score F(e)/|e| of the
    search systems, log10 p of the LM systems; 0.0 when the system has none); status: str, "ok"
    or how the search ended ("completed", "fallback", "timeout", "memory", "limit", ...), "error"
    for an item that could not be decoded (the batch spine counts it as failed); seconds: float,
    wall clock of the decode; pops: int, agenda pops of the search (0 for systems without one);
    message: str, what went wrong ("" when nothing did).  Only ``tokens`` is positional: each
    system's subclass adds its own positional fields after it (``Result(tokens, order, ...)``)
    and takes the common ones by keyword.
    """

    tokens: List[str]
    _: KW_ONLY
    score: float = 0.0
    status: str = "ok"
    seconds: float = 0.0
    pops: int = 0
    message: str = ""

    @property
    def failed(self) -> bool:
        """True for an item that could not be decoded (status "error")."""
        return self.status == "error"

    @property
    def text(self) -> str:
        """The output as one string: the tokens joined by single spaces (a subclass whose
        output is detokenized text, :class:`wo.smt.translate.Translation`, returns that)."""
        return " ".join(self.tokens)

    def base_record(self) -> dict:
        """The fields every system's JSON lines record has: tokens (list[str]), score (float;
        None when it is not finite, e.g. the NaN of an error, so the line stays valid JSON),
        status (str), seconds (float, rounded to microseconds), pops (int), message (str, ""
        when nothing went wrong).  Raises nothing."""
        return {"tokens": list(self.tokens), "score": json_number(self.score), "status": self.status,
                "seconds": round(self.seconds, 6), "pops": self.pops, "message": self.message}


def json_number(x: float):
    """``x`` as a JSON number: None for NaN and infinities (which JSON has no spelling for)."""
    import math

    return x if math.isfinite(x) else None


class System:
    """The front end of one system, as the batch spine drives it.

    A subclass sets ``name`` (the ``wo`` command group) and ``errors`` (the exception types a
    single item may raise that make it fail alone), and implements :meth:`load` (a model or LM
    file and options -> a ready system; the shipped model when the path is None),
    :meth:`decode_item` (one prepared item -> a :class:`Result`) and :meth:`fallback` (the result
    of an item that failed with a message, status "error").  :meth:`decode_batch` is what the
    worker calls; a system that decodes a batch at once (``smt``: one parser call) overrides it.
    """

    name = ""
    errors: tuple = (ValueError, MemoryError)

    @classmethod
    def load(cls, path, **options) -> "System":
        """A system decoding with the model (or LM) at ``path`` and ``options``.  Raises
        ModelError / LMError / FileNotFoundError / ValueError for bad files or options."""
        raise NotImplementedError(f"{cls.__name__}.load")

    def decode_item(self, item) -> Result:
        """Decode one prepared item (what the system's batch run hands its workers)."""
        raise NotImplementedError(f"{type(self).__name__}.decode_item")

    def fallback(self, item, message: str) -> Result:
        """The result of an item that failed with ``message`` (status "error")."""
        raise NotImplementedError(f"{type(self).__name__}.fallback")

    def __repr__(self) -> str:
        """``<Class FILE>``: the system's class and the model or LM file it decodes with."""
        src = getattr(self, "model", None) or getattr(self, "lm", None)
        path = getattr(src, "path", None)
        return f"<{type(self).__name__} {os.path.basename(path) if path else '(in memory)'}>"

    def check_item(self, item) -> None:
        """Raise TypeError unless ``item`` is what :meth:`decode_item` takes (the base class
        takes anything); :meth:`decode_batch` checks every item before decoding any."""

    def prepare(self, x):
        """One item of :meth:`pipe`'s input as :meth:`decode_item` takes it (the base class:
        unchanged; a system that takes friendlier input converts it here).  Raises TypeError for
        input the system cannot take."""
        return x

    def pipe(self, items: Iterable, batch_size: int = 32, n_process: int = 1) -> Iterator[Result]:
        """Stream the results of ``items`` (any iterable, a generator included, of what
        :meth:`prepare` takes), in input order, as they are decoded: a generator, like spaCy's
        ``nlp.pipe``.  Items are decoded ``batch_size`` at a time (:meth:`decode_batch`: a
        failing item gets its fallback record, status "error", and the others go on);
        n_process > 1 decodes batches in that many forked processes sharing this loaded system
        (``-1``: every core; results are the same as with one), reading ahead at most
        ``4 * n_process`` batches.  Raises TypeError for an item :meth:`prepare` refuses,
        ValueError for a batch_size or n_process that is not a positive int (or -1)."""
        import itertools

        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, not {batch_size!r}")
        if not isinstance(n_process, int) or isinstance(n_process, bool) or not (n_process >= 1 or n_process == -1):
            raise ValueError(f"n_process must be a positive int or -1 (every core), not {n_process!r}")
        if n_process == -1:
            n_process = os.cpu_count() or 1
        it = iter(items)

        def batches():
            while True:
                b = [self.prepare(x) for x in itertools.islice(it, batch_size)]
                if not b:
                    return
                yield b

        if n_process == 1:
            for b in batches():
                yield from self.decode_batch(b)
            return
        import multiprocessing

        global _PIPE_SYSTEM
        _PIPE_SYSTEM = self
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(n_process) as pool:
            window = 4 * n_process
            src = batches()
            while True:
                chunk = list(itertools.islice(src, window))
                if not chunk:
                    return
                for res in pool.imap(_pipe_worker, chunk):
                    yield from res

    def decode_batch(self, batch: Sequence) -> List[Result]:
        """One result per item of ``batch``, in order; an item raising one of ``errors`` gets
        :meth:`fallback` with the exception's text, the others are unaffected (an item of the
        wrong kind raises TypeError first: :meth:`check_item`).  Any other
        exception (a bug here or in a library the system calls, e.g. lemminflect's IndexError on
        an empty lemma) is kept to its item too: :meth:`fallback` with ``internal error
        (TYPE: text)``, so one sentence never loses the others; KeyboardInterrupt and
        SystemExit go through."""
        for item in batch:   # a wrong kind of item is the caller's error, not a sentence's
            self.check_item(item)
        out = []
        for item in batch:
            try:
                out.append(self.decode_item(item))
            except self.errors as exc:
                out.append(self.fallback(item, str(exc) or type(exc).__name__))
            except Exception as exc:   # noqa: BLE001 (kept to its sentence, reported with its type)
                out.append(self.fallback(item, internal_error(exc)))
        return out


_PIPE_SYSTEM = None   # the system :meth:`System.pipe` hands its forked workers


def _pipe_worker(batch: list) -> list:
    """A forked :meth:`System.pipe` worker: the inherited system's :meth:`System.decode_batch`."""
    return _PIPE_SYSTEM.decode_batch(batch)


def internal_error(exc: BaseException) -> str:
    """The per-sentence message of an unexpected exception: ``internal error (TYPE: text)``
    with the innermost frame's file and line when there is one (for a bug report)."""
    import traceback

    where = ""
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    if tb:
        fr = tb[-1]
        where = f" at {fr.filename.rsplit('site-packages/', 1)[-1].rsplit('/wo/', 1)[-1]}:{fr.lineno}"
    text = str(exc)
    return f"internal error ({type(exc).__name__}{': ' + text if text else ''}{where})"
