import random
import struct

import mmh3
import numpy as np

from wo._fast._hash import hash_bytes, hash_words
from wo._fast._search import feature_hash


def test_bytes_hash_equals_mmh3_on_random_strings():
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFG0123456789 .,;-éüßあ漢字"
    for _ in range(20000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        b = s.encode("utf-8")
        seed = rng.randint(0, 2**32 - 1)
        assert hash_bytes(b, seed) == mmh3.hash(b, seed, signed=False)


def test_word_hash_equals_mmh3_of_packed_key():
    rng = np.random.default_rng(3)
    for k in range(1, 8):
        keys = rng.integers(0, 2**32, size=(500, k), dtype=np.uint64).astype(np.uint32)
        fh = feature_hash(keys, 32)
        for row, h in zip(keys, fh):
            ref = mmh3.hash(struct.pack("<%dI" % k, *row.tolist()), 0, signed=False)
            assert hash_words(np.ascontiguousarray(row)) == ref
            assert int(h) == ref
        masked = feature_hash(keys, 18)
        assert np.all(masked == (fh & ((1 << 18) - 1)))


def _mix64_reference(words, seed=0):
    """mix64 written out in Python (wo._fast._hash.mix64_words)."""
    M = (1 << 64) - 1
    h = ((seed + len(words)) * 0x9E3779B97F4A7C15) & M
    i = 0
    while i < len(words):
        block = words[i] | (words[i + 1] << 32 if i + 1 < len(words) else 0)
        h = ((h ^ block) * 0xBF58476D1CE4E5B9) & M
        h ^= h >> 29
        i += 2
    h = (h * 0xFF51AFD7ED558CCD) & M
    h ^= h >> 32
    return h & 0xFFFFFFFF


def test_mix64_feature_hash_equals_its_definition_and_spreads_like_murmur3():
    rng = np.random.default_rng(5)
    for k in range(1, 8):
        keys = rng.integers(0, 2**32, size=(300, k), dtype=np.uint64).astype(np.uint32)
        fh = feature_hash(keys, 32, mix64=True)
        for row, h in zip(keys, fh):
            assert int(h) == _mix64_reference([int(x) for x in row])
    # template-like keys (small template ids, few distinct atoms): as few collisions in a
    # 2^22 table as MurmurHash3 gives (expected ~ m^2 / 2^23 for m keys)
    atoms = rng.integers(0, 2**32, size=3000, dtype=np.uint64).astype(np.uint32)
    keys = np.stack([rng.integers(1, 60, size=200_000).astype(np.uint32),
                     atoms[rng.integers(0, 3000, size=200_000)], atoms[rng.integers(0, 3000, size=200_000)],
                     rng.integers(0, 10, size=200_000).astype(np.uint32)], axis=1)
    keys = np.unique(keys, axis=0)
    m = len(keys)
    coll = lambda h: m - len(np.unique(h))
    c_mix, c_mur = coll(feature_hash(keys, 22, mix64=True)), coll(feature_hash(keys, 22))
    expected = m * m / 2 ** 23
    assert abs(c_mix - expected) < 0.1 * expected and abs(c_mur - expected) < 0.1 * expected
