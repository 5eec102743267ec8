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
