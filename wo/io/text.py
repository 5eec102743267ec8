"""Text files in and out: UTF-8, transparent ``.xz``/``.gz``, ``-`` for standard input/output,
user-facing errors that name the file and line, and outputs written atomically."""
from __future__ import annotations

import contextlib
import errno
import gzip
import io
import lzma
import os
import stat
import sys
import tempfile
import zlib
from typing import Iterator, List, Optional, Sequence, Tuple

STDIO = "-"
_STDIN_CACHE: Optional[bytes] = None
_STREAM_CACHE: dict = {}   # path -> bytes of inputs that can be read only once (FIFOs, /dev/stdin, <(...))
BOM = b"\xef\xbb\xbf"
XZ_MAGIC = b"\xfd7zXZ\x00"
GZ_MAGIC = b"\x1f\x8b"
# what a decompressor raises on a stream cut short, corrupt, or not in its format at all
_COMPRESSION_ERRORS = (EOFError, lzma.LZMAError, gzip.BadGzipFile, zlib.error)


class InputError(ValueError):
    """A user-facing input problem; ``str()`` is ``file:line: message``."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{display_name(path)}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


class CompressedInputError(InputError):
    """A compressed input that cannot be read to its end: cut short (a half-downloaded or
    half-copied file), corrupt, or not in the format its name (``.xz``, ``.gz``) says.
    ``str()`` is ``file: message`` (the damage is in the compressed bytes, not on a line);
    ``line`` is 0.  An InputError (and so a ValueError): the command line reports it in one
    line, exit 2."""

    def __init__(self, path: str, message: str):
        ValueError.__init__(self, f"{display_name(path)}: {message}")
        self.path, self.line, self.message = path, 0, message

    def __reduce__(self):   # picklable (a worker process may raise it)
        return type(self), (self.path, self.message)


def compression_kind(path: str) -> Optional[str]:
    """``"xz"`` or ``"gz"`` for a name ending in ``.xz`` or ``.gz``, else None.  Raises nothing."""
    p = str(path)
    return "xz" if p.endswith(".xz") else "gz" if p.endswith(".gz") else None


def compression_error(path: str, kind: str, exc: BaseException) -> CompressedInputError:
    """The user-facing error for the decompressor's exception ``exc`` (EOFError, LZMAError,
    BadGzipFile, zlib.error) on the ``kind`` (``"xz"`` or ``"gz"``) input ``path``: "not
    xz-compressed" when a regular file does not start with the format's magic bytes (plain
    text named ``.xz``), else "truncated or corrupt xz stream (...)".  Returns the exception
    (the caller raises it); raises nothing."""
    name = "xz" if kind == "xz" else "gzip"
    magic = XZ_MAGIC if kind == "xz" else GZ_MAGIC
    head = magic
    if not is_stream(path):      # a stream was decompressed because it starts with the magic bytes
        try:
            with open(path, "rb") as fh:
                head = fh.read(6)
        except OSError:
            pass
    if head[:len(magic)] != magic:
        return CompressedInputError(path, f"not {name}-compressed data, though its name ends in .{kind} "
                                          f"(it starts with {head[:4]!r}; rename it or compress it)")
    if isinstance(exc, EOFError) or "ended before the end-of-stream marker" in str(exc):   # lzma.decompress
        why = "the compressed data ends before its end-of-stream marker: a download or copy cut short?"
    else:
        why = str(exc) or type(exc).__name__
    return CompressedInputError(path, f"truncated or corrupt {name} stream ({why})")


def normalise_newlines(data: bytes) -> bytes:
    """``data`` with ``\r\n`` and a lone ``\r`` (old Mac line ends) turned into ``\n``, as
    Python's universal newlines read text.  Returns ``data`` itself when it holds no ``\r``.
    Raises nothing."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def display_name(path: str, stream: str = "stdin") -> str:
    """How a path is named in messages (``<stdin>``, or ``<stdout>`` for an output, for ``-``)."""
    return f"<{stream}>" if str(path) == STDIO else str(path)


def exists(path: str) -> bool:
    """True for ``-`` (standard input), in-memory inputs (:func:`input_source`) and existing files."""
    return str(path) == STDIO or path in _MEMORY or os.path.exists(path)


_MEMORY: dict = {}   # "<name>" -> bytes of an input given as an open file or as text (input_source)


def in_memory(name: str) -> bool:
    """True for the name of an input :func:`input_source` holds in memory (only this process
    can read it: worker processes cannot)."""
    return name in _MEMORY


@contextlib.contextmanager
def input_source(x, what: str = "input"):
    """What a reader reads, as the name the reading layer takes: a path (str or os.PathLike;
    ``-`` standard input) as it is; an open file (text or binary, anything with ``read()``), the
    text itself (a str with a line break) or bytes, read into memory and served under a name
    such as ``<text>`` or ``<StringIO>`` (error messages name it; decompressed when the bytes
    start with xz's or gzip's magic) until the block ends.  Raises TypeError for anything else."""
    if isinstance(x, os.PathLike):
        yield os.fspath(x)
        return
    if isinstance(x, str) and "\n" not in x and "\r" not in x:
        yield x
        return
    if isinstance(x, str):
        data, name = x.encode("utf-8"), "text"
    elif isinstance(x, (bytes, bytearray, memoryview)):
        data, name = bytes(x), "bytes"
    elif hasattr(x, "read"):
        raw = x.read()
        data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
        name = os.path.basename(str(getattr(x, "name", "") or "")) or type(x).__name__
    else:
        raise TypeError(f"{what}: a path, an open file or text, not {type(x).__name__}")
    key, k = f"<{name}>", 1
    while key in _MEMORY:
        k += 1
        key = f"<{name}#{k}>"
    _MEMORY[key] = normalise_newlines(_decompress_sniffed(data, key))
    try:
        yield key
    finally:
        _MEMORY.pop(key, None)


def is_stream(path: str) -> bool:
    """True for inputs that can be read only once: ``-``, named pipes, character devices
    (``/dev/stdin``) and process substitutions (``<(...)``), i.e. anything but a regular file."""
    if str(path) == STDIO or path in _MEMORY:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _decompress_sniffed(data: bytes, path: str) -> bytes:
    """The bytes of a stream (no name to go by), decompressed when they start with xz's or
    gzip's magic bytes.  Raises CompressedInputError for a cut or corrupt stream."""
    kind = "xz" if data[:6] == XZ_MAGIC else "gz" if data[:2] == GZ_MAGIC else None
    if kind is None:
        return data
    try:
        return lzma.decompress(data) if kind == "xz" else gzip.decompress(data)
    except _COMPRESSION_ERRORS as exc:
        raise compression_error(path, kind, exc) from None


def read_bytes(path: str) -> bytes:
    """All bytes of ``path``, ``.xz`` and ``.gz`` decompressed, line ends normalised to ``\n``
    (``\r\n`` and a lone ``\r``: :func:`normalise_newlines`).  ``-`` and other inputs that
    can be read only once (:func:`is_stream`) are read once and the same bytes served to later
    calls (format detection reads the input twice); they are decompressed when they start with
    xz's or gzip's magic bytes.

    Raises FileNotFoundError for a missing file, CompressedInputError (naming ``path``) for a
    compressed input cut short, corrupt, or not in the format its name says, OSError."""
    global _STDIN_CACHE
    if path in _MEMORY:
        return _MEMORY[path]
    if str(path) == STDIO:
        if _STDIN_CACHE is None:
            _STDIN_CACHE = normalise_newlines(_decompress_sniffed(sys.stdin.buffer.read(), path))
        return _STDIN_CACHE
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such file", path)
    if is_stream(path):
        if path not in _STREAM_CACHE:
            with open(path, "rb") as fh:
                data = fh.read()
            _STREAM_CACHE[path] = normalise_newlines(_decompress_sniffed(data, path))
        return _STREAM_CACHE[path]
    kind = compression_kind(path)
    if kind is None:
        with open(path, "rb") as fh:
            return normalise_newlines(fh.read())
    try:
        with (lzma.open if kind == "xz" else gzip.open)(path, "rb") as fh:
            return normalise_newlines(fh.read())
    except _COMPRESSION_ERRORS as exc:
        raise compression_error(path, kind, exc) from None


def iter_raw_lines(path: str) -> Iterator[bytes]:
    """The lines of ``path`` as bytes, undecoded, without their line end, read lazily from a
    regular file (``.xz``/``.gz`` decompressed as they are read; ``-`` and other streams from
    the bytes :func:`read_bytes` keeps): ``\n``, ``\r\n`` and a lone ``\r`` end a line; no
    empty line after a final line end; a BOM is left to the caller.  Stopping early reads no
    further.

    Raises FileNotFoundError, CompressedInputError (naming ``path``) when the reading meets a
    cut, corrupt or mislabelled compressed stream, OSError."""
    if is_stream(path):
        lines = read_bytes(path).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        yield from lines
        return
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such file", path)
    kind = compression_kind(path)
    opener = lzma.open if kind == "xz" else gzip.open if kind == "gz" else open
    with opener(path, "rb") as fh:
        # latin-1 maps every byte to one character and back: universal newlines on raw bytes
        text = io.TextIOWrapper(fh, encoding="latin-1", newline=None)
        try:
            for line in text:
                yield (line[:-1] if line.endswith("\n") else line).encode("latin-1")
        except _COMPRESSION_ERRORS as exc:
            raise compression_error(path, kind, exc) from None


def raw_lines(path: str) -> List[bytes]:
    """The lines of a file (``-`` = stdin; .gz/.xz read transparently) as bytes, undecoded, so
    that a line that is not UTF-8 can fail alone: a leading BOM dropped, no trailing empty line
    after the last newline; ``\r\n`` and a lone ``\r`` end a line as ``\n`` does
    (:func:`read_bytes`).  Raises FileNotFoundError, CompressedInputError, OSError."""
    data = read_bytes(path)
    if data.startswith(BOM):
        data = data[len(BOM):]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def decode_utf8(data: bytes, path: str) -> str:
    """The bytes ``data`` read from ``path`` as text, a leading byte order mark dropped.

    Raises InputError naming ``path`` and the line of the first invalid byte
    (``file:line: invalid UTF-8 (...)``)."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise InputError(path, line, f"invalid UTF-8 ({exc.reason} at column {exc.start - start + 1})") from None


class _NamedText:
    """A text file object whose decoding errors become InputError naming the file and line
    (a decoder reads ahead, so the line is found again in the file's bytes), and whose
    decompression errors become CompressedInputError naming the file; iterates, reads and
    closes like the file it wraps."""

    def __init__(self, fh, path: str):
        self.fh, self.path = fh, path

    def _damaged(self, exc: BaseException) -> Exception:
        return compression_error(self.path, compression_kind(self.path) or "xz", exc)

    def _named(self, exc: UnicodeDecodeError) -> Exception:
        try:
            decode_utf8(read_bytes(self.path), self.path)
        except InputError as named:
            return named
        return InputError(self.path, 0, f"invalid UTF-8 ({exc.reason})")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.fh.close()
        return False

    def __iter__(self):
        return self

    def __next__(self) -> str:
        try:
            return next(self.fh)
        except UnicodeDecodeError as exc:
            raise self._named(exc) from None
        except _COMPRESSION_ERRORS as exc:
            raise self._damaged(exc) from None

    def read(self, *args) -> str:
        """As the file's ``read``.  Raises InputError, CompressedInputError."""
        try:
            return self.fh.read(*args)
        except UnicodeDecodeError as exc:
            raise self._named(exc) from None
        except _COMPRESSION_ERRORS as exc:
            raise self._damaged(exc) from None

    def readline(self, *args) -> str:
        """As the file's ``readline``.  Raises InputError, CompressedInputError."""
        try:
            return self.fh.readline(*args)
        except UnicodeDecodeError as exc:
            raise self._named(exc) from None
        except _COMPRESSION_ERRORS as exc:
            raise self._damaged(exc) from None

    def close(self) -> None:
        """Close the file."""
        self.fh.close()


def open_text(path: str):
    """Open a UTF-8 text file for reading (``.xz``/``.gz`` decompressed, ``-`` = standard input).

    A leading byte order mark is dropped; ``\r\n`` and ``\r`` line ends read as ``\n`` (also
    from pipes and standard input).  Returns a text file object (context manager, iterable, with
    ``read`` and ``readline``).  Raises FileNotFoundError; while reading, InputError
    (``file:line: invalid UTF-8``) on invalid UTF-8 and CompressedInputError (``file:
    truncated or corrupt xz stream (...)``, ``file: not xz-compressed data ...``) on a
    compressed input cut short, corrupt, or not in the format its name says.
    """
    if is_stream(path):
        return io.StringIO(decode_utf8(read_bytes(path), path), newline=None)
    kind = compression_kind(path)
    if kind == "xz":
        fh = lzma.open(path, "rt", encoding="utf-8-sig")
    elif kind == "gz":
        fh = gzip.open(path, "rt", encoding="utf-8-sig")
    else:
        fh = open(path, "rt", encoding="utf-8-sig")
    return _NamedText(fh, path)


def read_blocks(path: str) -> Iterator[Tuple[int, List[Tuple[int, Optional[str]]]]]:
    """Blank-line separated blocks: yields (first line number, [(line number, text or None if the
    line is not valid UTF-8), ...]); line numbers are 1-based; ``\n``, ``\r\n`` and a lone
    ``\r`` end a line (:func:`read_bytes`).  Raises FileNotFoundError, CompressedInputError."""
    data = read_bytes(path)
    if data.startswith(BOM):   # a UTF-8 byte order mark is not part of the first line
        data = data[len(BOM):]
    cur: List[Tuple[int, Optional[str]]] = []
    start = 1
    for no, raw in enumerate(data.split(b"\n"), 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            txt: Optional[str] = raw.decode("utf-8")
        except UnicodeDecodeError:
            txt = None
        if txt is not None and not txt.strip():
            if cur:
                yield start, cur
            cur = []
            start = no + 1
            continue
        if not cur:
            start = no
        cur.append((no, txt))
    if cur:
        yield start, cur


def moses_tokens(tokens: Sequence[str], xpos: Optional[Sequence[str]] = None, lang: str = "en") -> List[str]:
    """``tokens`` (n str) prepared for sacremoses' Moses detokenizer, which keeps two things of
    UD's tokenization apart that the text writes together: every hyphen tagged ``HYPH`` in
    ``xpos`` (n str, or None) between two tokens becomes ``@-@``, Moses' mark of an intra-word
    hyphen (*15 - year* -> *15-year*: UD English tags such a hyphen HYPH, and 87 of EWT dev's 91
    are glued); for English, the negation clitic *n't* joins the word before it (*do n't* ->
    *don't*, *ca n't* -> *can't*: Moses knows the apostrophe clitics *'s*, *'re*, but splits
    negation as *don 't*).  Returns a new list (maybe shorter).  Raises nothing."""
    toks = list(tokens)
    if xpos is not None and len(xpos) == len(toks):
        toks = ["@-@" if x == "HYPH" and t == "-" and 0 < j < len(toks) - 1 else t
                for j, (t, x) in enumerate(zip(toks, xpos))]
    if lang == "en":
        out: List[str] = []
        for t in toks:
            if out and t.lower() in ("n't", "n’t") and out[-1][-1:].isalpha():
                out[-1] += t
            else:
                out.append(t)
        toks = out
    return toks


def detokenize(tokens: Sequence[str], xpos: Optional[Sequence[str]] = None) -> str:
    """Detokenized English text (sacremoses' Moses detokenizer, after :func:`moses_tokens`);
    xpos: the tokens' PTB tags (HYPH hyphens are glued), or None."""
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang="en").detokenize(moses_tokens(tokens, xpos))


def space_after(text: str, tokens: Sequence[str]) -> Optional[List[bool]]:
    """UD's ``SpaceAfter=No`` of a CoNLL-U sentence whose ``# text`` is ``text``: per token
    (n str), True when ``text`` has no space after it (False for the last token); None when
    ``text`` does not spell the tokens in order with only single spaces between (a
    detokenizer that rewrote a token: the caller then writes the tokens space-joined).
    Raises nothing."""
    out, pos = [], 0
    for t in tokens:
        if not text.startswith(t, pos):
            return None
        pos += len(t)
        out.append(pos < len(text) and text[pos] != " ")
        while pos < len(text) and text[pos] == " ":
            pos += 1
    if pos != len(text):
        return None
    if out:
        out[-1] = False
    return out


def check_input_path(path: Optional[str]) -> None:
    """Raise now what reading ``path`` later would raise for the path itself (a CLI checks the
    training command's input files before reading the first of them): FileNotFoundError for a
    missing file, IsADirectoryError for a directory.  ``-``, ``none`` and None pass.  Raises
    nothing else."""
    if path is None or str(path) == "none":
        return
    if not exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not an input file", str(path))


def check_output_path(path: Optional[str]) -> None:
    """Raise now what writing ``path`` at the end of a long run would raise for the path itself
    (a CLI checks its output files before training or decoding): IsADirectoryError for a
    directory, NotADirectoryError when a component of its directory is a file,
    PermissionError when the nearest existing directory above it (the writers create the
    missing ones below it, or refuse them with their own error) cannot take a new file (one is
    made there and removed).  ``-``, None,
    named pipes and devices pass.  Raises nothing else."""
    if path is None or is_stream(path):
        return   # standard output, a named pipe, a device: written in place
    p = os.path.realpath(path)
    if os.path.isdir(p):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not an output file", str(path))
    d = os.path.dirname(p)
    while not os.path.exists(d):
        d = os.path.dirname(d)
    if not os.path.isdir(d):
        raise NotADirectoryError(errno.ENOTDIR, f"{d} is a file, not a directory", str(path))
    try:   # a file made and removed: os.access says yes to root on a read-only or virtual file system
        fd, probe = tempfile.mkstemp(dir=d, prefix=".wo-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise PermissionError(exc.errno or errno.EACCES, f"cannot write in {d} ({exc.strerror})", str(path)) from None


class AtomicWriter:
    """Write records to a temporary file in the target directory, renamed into place on commit.

    A path ending in ``.xz`` is written xz-compressed.  ``-``, a named pipe and a device are
    written as the records come (a pipe cannot be replaced atomically; ``abort`` then only stops
    writing); a symbolic link's target is written (the link stays).  A file written over keeps
    its permissions.  inputs: the run's input paths; an output that is one of them (also
    through a symbolic or hard link) is refused before anything is created.  Every OSError
    while writing names ``path`` as given, never the temporary file, and the temporary file is
    removed on every failure (:meth:`abort`; on SIGTERM :func:`wo.io.outputs.remove_temps`).
    Raises :class:`wo.io.outputs.SameFileError` (a ValueError) for an output that is an input,
    OSError when the directory does not exist or is not writable, IsADirectoryError when
    ``path`` is a directory (here, before any work is done for it, not at the rename).
    """

    def __init__(self, path: str, inputs=()):
        from .outputs import check_distinct, named_error, track_temp

        self.path = path
        self.shown = str(path)       # as the user gave it: what error messages name
        self.raw = None
        self.tmp = None
        if str(path) == STDIO:
            self.fh = sys.stdout
            return
        check_distinct([path], inputs)
        if os.path.islink(path):   # write the link's target; the link stays
            self.path = path = os.path.realpath(path)
        if is_stream(path):
            # a named pipe, a device, a socket: written directly (renaming over it would replace it)
            try:
                self.raw = open(path, "wb")
            except OSError as exc:
                raise named_error(exc, self.shown) from None
            self.fh = (lzma.open(self.raw, "wt", encoding="utf-8") if str(path).endswith(".xz")
                       else io.TextIOWrapper(self.raw, encoding="utf-8"))
            self.direct = True
            return
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not an output file", self.shown)
        d = os.path.dirname(os.path.abspath(path)) or "."
        if not os.path.isdir(d):
            raise OSError(f"{self.shown}: the directory {d} does not exist")
        try:
            fd, self.tmp = tempfile.mkstemp(dir=d, prefix=".wo-out-")
        except OSError as exc:
            raise named_error(exc, self.shown) from None
        track_temp(self.tmp)
        if str(path).endswith(".xz"):
            self.raw = os.fdopen(fd, "wb")
            self.fh = lzma.open(self.raw, "wt", encoding="utf-8")
        else:
            self.fh = os.fdopen(fd, "w", encoding="utf-8")

    direct = False   # written in place (a pipe or a device), not through a temporary file

    def _named(self, exc: OSError) -> OSError:
        from .outputs import named_error

        if isinstance(exc, BrokenPipeError) and self.raw is None and self.tmp is None:
            return exc                  # standard output gone: the command line's own message
        return named_error(exc, self.shown, self.tmp)

    def _close(self) -> None:
        if self.tmp is None:
            if self.direct:
                self.fh.close()
                if self.raw is not None and not self.raw.closed:
                    self.raw.close()
            else:
                self.fh.flush()
            return
        self.fh.close()
        if self.raw is not None:
            self.raw.close()

    def write(self, record: str) -> None:
        """Append one record and a newline.  Raises OSError naming the output (a full disk)."""
        try:
            self.fh.write(record + "\n")
        except OSError as exc:
            raise self._named(exc) from None

    def flush(self) -> None:
        """Push the records written so far to the file (the temporary file until commit; an
        ``.xz`` output keeps its compressor's buffer).  Raises OSError naming the output
        (BrokenPipeError for a closed pipe)."""
        try:
            self.fh.flush()
        except OSError as exc:
            raise self._named(exc) from None

    def commit(self) -> None:
        """Close and rename the temporary file into place, with the permissions of the file it
        replaces (a new file: the umask's).  Raises OSError naming the output on failure (the
        temporary file is removed then)."""
        try:
            self._close()
            if self.tmp is None:
                return
            from .binfile import publish

            publish(self.tmp, self.path)
        except OSError as exc:
            self.abort()
            raise self._named(exc) from None
        from .outputs import untrack_temp

        untrack_temp(self.tmp)

    def abort(self) -> None:
        """Close and delete the temporary file; the target is left untouched.  Raises nothing
        for the temporary file (a full disk cannot stop its removal)."""
        from .outputs import untrack_temp

        try:
            self._close()
        except (OSError, ValueError):
            pass
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            untrack_temp(self.tmp)
