# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The trie LM: KenLM's ``trie`` data structure (Heafield 2011, "KenLM: Faster and smaller
language model queries", section 4.1) with optional quantization by binning (section 4.1 and
Whittaker & Raj 2001, "Quantization-based language model compression").

The trie is a reverse trie: the node of (w_1 .. w_n) is a child of the node of (w_2 .. w_n), so
a query for w starts at the unigram of w and extends the n-gram one context word at a time,
most recent first -- the words an :class:`LMState` holds, in its order.  Order n >= 2 is an
array of bit-packed records sorted by (parent, w_1); a record holds w_1 (the new context word),
the probability, the backoff and the index of its first child in order n + 1 (the children of
record j are the records ptr[j] .. ptr[j + 1] - 1), each field of the minimal width.  The
unigrams are float32[V, 2] as in the probing format (unquantized, as KenLM keeps them) plus a
packed array of V + 1 pointers into order 2.  Children are found by galloping search on w_1
(ids are by descending frequency, so the context words of running text come early in a list).

Probabilities and backoffs are log10, either float32 bit patterns (exact, 32-bit fields) or
q-bit codes into per-order tables of bin centres.  No Python objects, no allocation, no GIL
on the query path.
"""
import numpy as np
cimport numpy as cnp
from libc.string cimport memcpy
from libc.math cimport signbit

from ._typedefs cimport uint64_t, uint32_t, int32_t, int64_t, uint8_t
from ._lm cimport NgramModel, LMState, LM_MAX_ORDER

cnp.import_array()

cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef inline uint64_t read_bits(const uint8_t* base, uint64_t bit, uint64_t mask) noexcept nogil:
    """The field of at most 57 bits at bit offset ``bit`` (little-endian, as KenLM's ReadInt57)."""
    cdef uint64_t v
    memcpy(&v, base + (bit >> 3), 8)
    return (v >> (bit & 7)) & mask


cdef inline uint32_t high_bits(const TrieOrder* t, uint64_t j) noexcept nogil:
    """Compressed pointers (KenLM's ArrayBhiksha): the high bits of record j's pointer, the last
    value v whose first record offsets[v] is <= j (binary search between the hints of j's
    block of records)."""
    cdef uint32_t lo = t.hint[j >> t.hshift], hi = t.hint[(j >> t.hshift) + 1], mid
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if t.offsets[mid] <= j:
            lo = mid
        else:
            hi = mid - 1
    return lo


cdef inline uint64_t pointer(const TrieOrder* t, uint64_t j) noexcept nogil:
    """The pointer of record j into the next order: the record's field, with compressed
    pointers the high bits (:func:`high_bits`) above it."""
    cdef uint64_t low = read_bits(t.base, j * t.bits + t.rshift, t.rmask)
    if t.offsets == NULL:
        return low
    return (<uint64_t>high_bits(t, j) << t.lbits) | low


cdef inline void pointer_pair(const TrieOrder* t, uint64_t j, uint64_t* lo, uint64_t* hi) noexcept nogil:
    """The pointers of records j and j + 1 (the extensions of record j are lo .. hi - 1): as
    :func:`pointer`, with one search of the offsets for both."""
    cdef uint64_t bit = j * t.bits + t.rshift
    cdef uint32_t a
    lo[0] = read_bits(t.base, bit, t.rmask)
    hi[0] = read_bits(t.base, bit + t.bits, t.rmask)
    if t.offsets == NULL:
        return
    a = high_bits(t, j)
    lo[0] |= <uint64_t>a << t.lbits
    while t.offsets[a + 1] <= j + 1:    # record j + 1 starts a later high-bits value
        a += 1
    hi[0] |= <uint64_t>a << t.lbits


cdef inline float as_float(uint32_t u) noexcept nogil:
    cdef float f
    memcpy(&f, &u, 4)
    return f


def pack_records(list fields, const int32_t[::1] widths):
    """Bit-pack columns into records: fields is a list of uint64[m] arrays (one per field, all
    of length m), widths int32[k] their bit widths (each 0..57; a value must fit its width).

    Returns uint8[ceil(m * sum(widths) / 8) + 8] (8 zero bytes of padding so every field can
    be read with one unaligned 8-byte load).  Raises ValueError for a width outside 0..57, a
    column of another length or a value that does not fit.
    """
    cdef int k = len(fields), f
    cdef Py_ssize_t m = fields[0].shape[0] if k else 0, i
    cdef uint64_t R = 0, bit, v, cur, mask
    for f in range(k):
        if not 0 <= widths[f] <= 57:
            raise ValueError("field width must be 0..57")
        if fields[f].shape[0] != m:
            raise ValueError("fields of different lengths")
        R += <uint64_t>widths[f]
    out = np.zeros((m * R + 7) // 8 + 8, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef const uint64_t[::1] col
    cdef uint64_t off = 0
    for f in range(k):
        col = fields[f]
        if widths[f] == 0:
            continue
        mask = (<uint64_t>1 << widths[f]) - 1
        for i in range(m):
            v = col[i]
            if v & ~mask:
                raise ValueError(f"value {v} does not fit in {widths[f]} bits")
            bit = <uint64_t>i * R + off
            memcpy(&cur, &o[bit >> 3], 8)
            cur |= v << (bit & 7)
            memcpy(&o[bit >> 3], &cur, 8)
        off += <uint64_t>widths[f]
    return out


def unpack_field(const uint8_t[::1] packed, uint64_t m, int record_bits, int offset, int width):
    """Testing and validation aid: field (offset, width) of m records of ``record_bits`` bits
    as uint64[m].  Raises ValueError when the packed array is too short."""
    if width < 0 or width > 57 or (m * record_bits + 7) // 8 + 8 > <uint64_t>packed.shape[0]:
        raise ValueError("packed array too short or bad width")
    out = np.zeros(m, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef uint64_t i, mask = (<uint64_t>1 << width) - 1
    if width == 0 or m == 0:
        return out
    with nogil:
        for i in range(m):
            o[i] = read_bits(&packed[0], i * <uint64_t>record_bits + <uint64_t>offset, mask)
    return out


cdef class TrieModel(NgramModel):
    """Query side of a trie LM over memory (memory-mapped sections of a ``.wolm`` trie file).

    Parameters: uni float32[V, 2] (log10 prob, log10 backoff) by word id; uptr uint8 packed
    pointers of the V + 1 unigrams into order 2 (``ubits`` bits each); orders: list, for n =
    2..N, of dicts {"records": uint8 packed array, "count": m, "wbits", "pbits", "bbits",
    "rbits": field widths (bbits = rbits = 0 in the highest order), "pcent", "bcent": float32
    bin centres (None when the values are float32 bit patterns), "hbits", "offsets": the high
    bits of compressed pointers and their uint32[2^hbits + 1] offsets (0 and None: none;
    :func:`wo.lm.trie.bhiksha_split`)}; bos, eos, unk ids.
    Source: KenLM's TrieSearch and its State (Heafield 2011, section 4.1).  Raises ValueError
    for an order outside 1..6, or arrays that do not fit the counts (a damaged file).
    """

    def __init__(self, uni, uptr, int ubits, list orders, int bos=1, int eos=2, int unk=0, int quant_bits=0):
        cdef const float[:, ::1] u = uni
        cdef const uint8_t[::1] up = uptr
        cdef const uint8_t[::1] rec
        cdef const float[::1] pc
        cdef const float[::1] bc
        cdef const uint32_t[::1] off
        cdef const uint32_t[::1] hv
        cdef int n
        cdef uint64_t need
        cdef TrieOrder* t
        self.order = len(orders) + 1
        if not 1 <= self.order <= LM_MAX_ORDER:
            raise ValueError(f"order must be 1..{LM_MAX_ORDER}")
        self.V = u.shape[0]
        self.uni = &u[0, 0]
        self._refs = [uni, uptr]
        for n in range(LM_MAX_ORDER + 1):
            self.table[n] = NULL
            self.tcap[n] = 0
            self.tri[n].base = NULL
            self.tri[n].count = 0
            self.tri[n].offsets = NULL
            self.tri[n].hint = NULL
            self.tri[n].lbits = 0
        self.bos, self.eos, self.unk = bos, eos, unk
        self.vtab = NULL
        self.vcap = 0
        self.quant_bits = quant_bits
        if not 1 <= ubits <= 57 or up.shape[0] < (<uint64_t>(self.V + 1) * ubits + 7) // 8 + 8:
            raise ValueError("unigram pointer array does not fit the vocabulary")
        self.uptr = &up[0]
        self.ubits = ubits
        self.umask = (<uint64_t>1 << ubits) - 1
        for n in range(2, self.order + 1):
            d = orders[n - 2]
            rec = d["records"]
            self._refs.append(d["records"])
            t = &self.tri[n]
            t.count = <uint64_t>d["count"]
            wb, pb, bb, rb = int(d["wbits"]), int(d["pbits"]), int(d["bbits"]), int(d["rbits"])
            if not all(0 <= x <= 57 for x in (wb, pb, bb, rb)) or wb == 0 or pb == 0:
                raise ValueError(f"bad field widths in order {n}")
            if n < self.order and (bb == 0 or rb == 0):
                raise ValueError(f"order {n} has no backoff or pointer field")
            t.bits = wb + pb + bb + rb
            need = ((t.count + 1) * t.bits + 7) // 8 + 8
            if <uint64_t>rec.shape[0] < need:
                raise ValueError(f"order {n}: {rec.shape[0]} bytes of records, {need} needed")
            t.base = &rec[0]
            t.wmask = (<uint64_t>1 << wb) - 1
            t.pshift, t.pmask = wb, (<uint64_t>1 << pb) - 1
            t.bshift, t.bmask = wb + pb, (<uint64_t>1 << bb) - 1
            t.rshift, t.rmask = wb + pb + bb, (<uint64_t>1 << rb) - 1
            t.pcent = NULL
            t.bcent = NULL
            if d.get("pcent") is not None:
                pc = d["pcent"]
                if pc.shape[0] < (1 << pb):
                    raise ValueError(f"order {n}: too few probability bins")
                t.pcent = &pc[0]
                self._refs.append(d["pcent"])
            elif pb != 32:
                raise ValueError(f"order {n}: unquantized probabilities need 32 bits")
            if n < self.order:
                if d.get("bcent") is not None:
                    bc = d["bcent"]
                    if bc.shape[0] < (1 << bb):
                        raise ValueError(f"order {n}: too few backoff bins")
                    t.bcent = &bc[0]
                    self._refs.append(d["bcent"])
                elif bb != 32:
                    raise ValueError(f"order {n}: unquantized backoffs need 32 bits")
                hb = int(d.get("hbits") or 0)
                if hb:
                    offsets = np.asarray(d["offsets"], dtype=np.uint32)
                    if not 1 <= hb <= 32 or rb + hb > 57 or offsets.shape[0] != (1 << hb) + 1 \
                            or offsets[0] != 0 or offsets[-1] != t.count + 1 or (np.diff(offsets.astype(np.int64)) < 0).any():
                        raise ValueError(f"order {n}: bad pointer offsets")
                    # the high-bits value of every 2^hshift-th record (about one block per value),
                    # and the last value
                    t.hshift = max(0, int(t.count + 1).bit_length() - 1 - hb)
                    hints = np.append(np.searchsorted(offsets, np.arange(0, t.count + 1, 1 << t.hshift,
                                                                         dtype=np.uint64), side="right") - 1,
                                      [(1 << hb) - 1, (1 << hb) - 1]).astype(np.uint32)
                    off = offsets
                    hv = hints
                    t.offsets = &off[0]
                    t.hint = &hv[0]
                    t.lbits = rb
                    self._refs += [offsets, hints]
        self._check()

    def _check(self):
        """Pointers nondecreasing and in range, word ids < V: a damaged file is refused here
        instead of sending a query out of its arrays.  Raises ValueError naming the order."""
        cdef uint64_t i, prev = 0, p, nxt, w
        cdef int n
        cdef TrieOrder* t
        cdef bint bad = False
        nxt = self.tri[2].count if self.order >= 2 else 0
        with nogil:
            for i in range(<uint64_t>self.V + 1):
                p = read_bits(self.uptr, i * self.ubits, self.umask)
                if p < prev or p > nxt or (i == 0 and p != 0):
                    bad = True
                    break
                prev = p
            if not bad and self.order >= 2 and prev != nxt:
                bad = True
        if bad:
            raise ValueError("unigram pointers out of order or out of range")
        for n in range(2, self.order + 1):
            t = &self.tri[n]
            nxt = self.tri[n + 1].count if n < self.order else 0
            prev = 0
            with nogil:
                for i in range(t.count + 1):
                    if i < t.count:
                        w = read_bits(t.base, i * t.bits, t.wmask)
                        if w >= <uint64_t>self.V:
                            bad = True
                            break
                    if n < self.order:
                        p = pointer(t, i)
                        if p < prev or p > nxt or (i == 0 and p != 0) or (i == t.count and p != nxt):
                            bad = True
                            break
                        prev = p
            if bad:
                raise ValueError(f"order {n}: word ids or pointers out of range")

    cdef int64_t _find(self, const TrieOrder* t, uint64_t lo, uint64_t hi, uint64_t w) noexcept nogil:
        """Index of the record with word w among records lo .. hi - 1 (sorted by word), or -1.

        Galloping (exponential) search from lo, then binary search: word ids are given by
        descending frequency, so the context words of running text sit near the start of a
        list of extensions and are found in a few probes of the same cache lines."""
        cdef uint64_t mid, x, step = 1, b = lo
        # gallop: find the first probe lo + 2^k - 1 whose word is >= w
        while b < hi:
            x = read_bits(t.base, b * t.bits, t.wmask)
            if x == w:
                return <int64_t>b
            if x > w:
                hi = b
                break
            lo = b + 1
            b = lo + step
            step <<= 1
        while hi - lo > 4:
            mid = lo + ((hi - lo) >> 1)
            x = read_bits(t.base, mid * t.bits, t.wmask)
            if x < w:
                lo = mid + 1
            elif x > w:
                hi = mid
            else:
                return <int64_t>mid
        while lo < hi:
            x = read_bits(t.base, lo * t.bits, t.wmask)
            if x == w:
                return <int64_t>lo
            if x > w:
                return -1
            lo += 1
        return -1

    cdef float score(self, const LMState* s, int32_t w, LMState* out) noexcept nogil:
        """log10 p(w | state) with backoff, as NgramModel.score (same state), by walking the trie."""
        cdef float prob
        cdef int i, n, matched = 0, nctx = s.len
        cdef uint64_t lo, hi, bit, code
        cdef int64_t j
        cdef const TrieOrder* t
        if w < 0 or w >= self.V:
            w = self.unk
        prob = self.uni[2 * w]
        out.words[0] = w
        out.backoff[0] = self.uni[2 * w + 1]
        cdef bint ext = self.order > 1 and not (out.backoff[0] == 0.0 and signbit(out.backoff[0]))   # as NgramModel.score
        cdef float bo
        out.len = 1 if ext else 0
        if nctx > self.order - 1:
            nctx = self.order - 1
        if nctx > 0:
            lo = read_bits(self.uptr, <uint64_t>w * self.ubits, self.umask)
            hi = read_bits(self.uptr, <uint64_t>(w + 1) * self.ubits, self.umask)
        for i in range(nctx):
            n = i + 2
            t = &self.tri[n]
            j = self._find(t, lo, hi, <uint64_t>s.words[i])
            if j < 0:
                break
            bit = <uint64_t>j * t.bits
            code = read_bits(t.base, bit + t.pshift, t.pmask)
            prob = t.pcent[code] if t.pcent != NULL else as_float(<uint32_t>code)
            matched = i + 1
            if n < self.order:
                if ext and i + 1 < self.order - 1:
                    code = read_bits(t.base, bit + t.bshift, t.bmask)
                    bo = t.bcent[code] if t.bcent != NULL else as_float(<uint32_t>code)
                    if bo == 0.0 and signbit(bo):   # -0.0: no extension
                        ext = False
                    else:
                        out.words[i + 1] = s.words[i]
                        out.backoff[i + 1] = bo
                        out.len = i + 2
                pointer_pair(t, <uint64_t>j, &lo, &hi)
                if lo < hi:
                    __builtin_prefetch(self.tri[n + 1].base + ((lo * self.tri[n + 1].bits) >> 3))
        for i in range(matched, nctx):
            prob += s.backoff[i]
        return prob

    cdef void prefetch(self, const LMState* s, int32_t w) noexcept nogil:
        """Prefetch what score(s, w) reads first (the unigram and its pointers into order 2)."""
        if w < 0 or w >= self.V:
            w = self.unk
        __builtin_prefetch(&self.uni[2 * w])
        __builtin_prefetch(self.uptr + ((<uint64_t>w * self.ubits) >> 3))

    @property
    def lm_format(self):
        """``"trie"`` (exact float32 values) or ``"trie-q<bits>"``, with ``"-a"`` for compressed pointers."""
        cdef int n
        arr = any(self.tri[n].offsets != NULL for n in range(2, self.order))
        return ("trie" if self.quant_bits == 0 else f"trie-q{self.quant_bits}") + ("-a" if arr else "")
