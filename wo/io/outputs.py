"""What every output of wo shares, beside the writer itself (:class:`wo.io.text.AtomicWriter`,
:func:`wo.io.binfile.write_sections`, :func:`wo.lm.files.write_arpa`):

* an output is never an input: :func:`check_distinct` compares resolved real paths and
  ``os.path.samefile`` (symbolic and hard links count) and raises :class:`SameFileError`;
* the temporary files being written are registered (:func:`track_temp`), so that a SIGTERM
  (:func:`sigterm_as_exit`) removes every one of them (:func:`remove_temps`) and ends the loky
  worker processes (:func:`end_workers`);
* a file written over keeps its permissions (:func:`target_mode`);
* an OSError raised while writing a temporary file is told with the user's path
  (:func:`named_error`), never the temporary name.
"""
from __future__ import annotations

import errno
import os
import stat
from typing import Iterable, Optional, Set, Tuple

EXIT_TERMINATED = 143            # 128 + SIGTERM, what a shell reports for a process ended by it


class SameFileError(ValueError):
    """An output names a file that is also an input (or another output) of the same run: writing
    it would destroy the input.  ``str()`` is the one-line message; ``output`` and ``other`` are
    the paths as the user gave them."""

    def __init__(self, output: str, other: str, what: str = "input"):
        if what == "output":
            msg = f"{output} and {other} are the same output file; give each output its own path"
        elif str(output) == str(other):
            msg = f"{output} is both an input and the output; write the output to another file"
        else:
            msg = f"output {output} is the same file as the input {other}; write the output to another file"
        super().__init__(msg)
        self.output, self.other, self.what = output, other, what

    def __reduce__(self):
        return (SameFileError, (self.output, self.other, self.what))


class Terminated(BaseException):
    """SIGTERM arrived (see :func:`sigterm_as_exit`): raised in the main thread so that every
    ``finally`` and ``except BaseException`` on the way removes its temporary files.  A
    BaseException, like KeyboardInterrupt: ``except Exception`` does not stop it."""


def _regular(path) -> bool:
    """True for a path naming an existing file that is not a pipe, device or socket."""
    if path is None or str(path) in ("-", "none", ""):
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def same_file(a, b) -> bool:
    """True when paths ``a`` and ``b`` name the same regular file: the same resolved real path
    (symbolic links followed) or, both existing, the same inode (hard links).  ``-``, None,
    pipes and devices are never the same file as anything (standard input and output, a
    terminal).  Raises nothing."""
    if a is None or b is None or str(a) in ("-", "none", "") or str(b) in ("-", "none", ""):
        return False
    try:
        if _regular(a) and _regular(b):
            return os.path.samefile(a, b)
        if os.path.exists(a) or os.path.exists(b):
            return False                  # one of them is a stream or a directory, or only one exists
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def check_distinct(outputs: Iterable, inputs: Iterable = ()) -> None:
    """Refuse outputs that are inputs, or two outputs that are one file, before any work.

    outputs, inputs: paths (str or path-like; None and ``-`` are skipped; an input counts only
    when it is an existing regular file, so option values that are not files never clash).  Raises
    :class:`SameFileError` (a ValueError) naming the paths as given for the first clash.
    """
    outs = [o for o in outputs if o is not None and str(o) != "-"]
    ins = [i for i in inputs if i is not None and str(i) != "-"]
    for k, o in enumerate(outs):
        for i in ins:
            if _regular(i) and same_file(o, i):     # an input that is not a file cannot be overwritten
                raise SameFileError(str(o), str(i), "input")
        for o2 in outs[k + 1:]:
            if same_file(o, o2):
                raise SameFileError(str(o), str(o2), "output")


# ---------------------------------------------------------------- temporary files
_TEMPS: Set[str] = set()


def track_temp(path: str) -> None:
    """Register a temporary file being written (removed by :func:`remove_temps` on SIGTERM)."""
    _TEMPS.add(os.path.abspath(path))


def untrack_temp(path: str) -> None:
    """Forget a temporary file: it was renamed into place or removed."""
    _TEMPS.discard(os.path.abspath(path))


def remove_temps() -> int:
    """Remove every registered temporary file still on disk; returns how many.  Raises nothing."""
    n = 0
    for p in list(_TEMPS):
        try:
            os.unlink(p)
            n += 1
        except OSError:
            pass
        _TEMPS.discard(p)
    return n


def target_mode(path: str) -> Optional[int]:
    """The permission bits of the file ``path`` that a new file will replace (symbolic links
    followed), or None when there is none (a new file gets the umask's).  Raises nothing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def named_error(exc: OSError, path: str, tmp: Optional[str] = None) -> OSError:
    """``exc`` told with the user's ``path``: an OSError without a file name, or naming the
    temporary file ``tmp``, becomes the same errno and message naming ``path`` (a full disk:
    ``out.txt: No space left on device``).  Other errors are returned as they are."""
    name = exc.filename
    if name is None or (tmp is not None and os.path.abspath(str(name)) == os.path.abspath(tmp)):
        if exc.errno:
            return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path))   # its subclass by errno
        return OSError(errno.EIO, str(exc) or "write error", str(path))
    return exc


# ---------------------------------------------------------------- worker processes and SIGTERM
def end_workers() -> None:
    """End the loky worker processes joblib keeps for reuse (their memory, the models they have
    mapped), now: the run is over or stopped.  Raises nothing."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:
        return
    ex = getattr(reusable_executor, "_executor", None)
    if ex is None:
        return
    try:
        ex.shutdown(wait=True, kill_workers=True)
    except Exception:     # a broken pool: its processes are gone already
        pass


def sigterm_as_exit() -> Tuple[bool, object]:
    """Install a SIGTERM handler that raises :class:`Terminated` in the main thread (the
    command line's entry point turns it into a clean exit: temporary files removed, workers
    ended, one line, exit 143).  Returns (installed, the previous handler) for
    :func:`restore_sigterm`; nothing is installed outside the main thread.  Raises nothing."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return False, None

    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # once: the clean-up is not cut short by a second one
        raise Terminated()

    try:
        return True, signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):
        return False, None


def restore_sigterm(state: Tuple[bool, object]) -> None:
    """Put back the SIGTERM handler :func:`sigterm_as_exit` replaced.  Raises nothing."""
    import signal

    installed, old = state
    if installed:
        try:
            signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)
        except (ValueError, OSError, TypeError):
            pass
