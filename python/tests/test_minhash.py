"""MinHash and MinHashLSH: estimates against exact Jaccard, the LSH against a
brute-force band scan, errors and pickling."""

import pickle
import random

import numpy as np
import pytest

import neardup


def make(items, num_perm=128, seed=1):
    m = neardup.MinHash(num_perm=num_perm, seed=seed)
    m.update_batch(items)
    return m


def test_jaccard_estimates_track_exact_jaccard():
    rng = random.Random(1)
    errors = []
    for _ in range(40):
        universe = [f"item{i}".encode() for i in range(rng.randint(200, 2000))]
        a = set(rng.sample(universe, len(universe) // 2))
        b = set(rng.sample(universe, len(universe) // 2))
        exact = len(a & b) / len(a | b)
        errors.append(make(a).jaccard(make(b)) - exact)
    # Standard error at k = 128 is at most 0.044; the mean error is near 0.
    assert abs(np.mean(errors)) < 0.02 and np.max(np.abs(errors)) < 0.2


def test_update_is_order_and_repeat_insensitive_and_str_is_utf8():
    items = [f"w{i}" for i in range(100)]
    a = make(items)
    b = make(list(reversed(items)) + items[:10])
    assert a == b and np.array_equal(a.digest(), b.digest())
    c = make([s.encode("utf-8") for s in items])
    assert a == c and a.jaccard(c) == 1.0
    assert a.digest().dtype == np.uint64 and a.digest().shape == (128,)


def test_merge_is_the_union_and_copy_is_independent():
    a = make([f"a{i}" for i in range(50)])
    b = make([f"b{i}" for i in range(50)])
    union = make([f"a{i}" for i in range(50)] + [f"b{i}" for i in range(50)])
    merged = a.copy()
    merged.merge(b)
    assert merged == union and merged != a


def test_empty_and_pickle():
    empty = neardup.MinHash()
    assert empty.is_empty() and empty.jaccard(neardup.MinHash()) == 0.0
    assert np.all(empty.digest() == np.uint64(2**64 - 1))
    m = make([b"x", b"y", b"z"], num_perm=64, seed=9)
    again = pickle.loads(pickle.dumps(m))
    assert again == m and again.num_perm == 64 and again.seed == 9


def test_minhash_errors():
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.MinHash(num_perm=0)
    with pytest.raises(neardup.InvalidArgumentError) as info:
        make([b"a"], num_perm=64).jaccard(make([b"a"], num_perm=128))
    assert "different sizes" in str(info.value)
    with pytest.raises(neardup.InvalidArgumentError):
        make([b"a"], seed=1).jaccard(make([b"a"], seed=2))
    with pytest.raises(TypeError):
        neardup.MinHash().update(None)
    with pytest.raises(TypeError):
        neardup.MinHash().update(5)
    with pytest.raises(TypeError):
        neardup.MinHash().update_batch("not a list")


def bands(digest, b, r):
    return [tuple(digest[i * r:(i + 1) * r]) for i in range(b)]


def test_lsh_query_matches_a_brute_force_band_scan():
    rng = random.Random(5)
    base = [[f"t{rng.randrange(10**6)}" for _ in range(80)] for _ in range(40)]
    sets = []
    for words in base:
        sets.append(words)
        for rate in (0.05, 0.2, 0.5):
            sets.append([w if rng.random() > rate else f"x{rng.randrange(10**6)}" for w in words])
    sketches = [make(s) for s in sets]
    lsh = neardup.MinHashLSH(threshold=0.7, num_perm=128)
    assert 1 <= lsh.b and lsh.b * lsh.r <= 128
    keys = [("doc", i) for i in range(len(sets))]  # any hashable key
    for key, m in zip(keys, sketches):
        lsh.insert(key, m)
    assert len(lsh) == len(keys) and keys[3] in lsh and ("doc", -1) not in lsh
    stored_bands = [bands(m.digest().tolist(), lsh.b, lsh.r) for m in sketches]
    for q in sketches[:60]:
        qb = bands(q.digest().tolist(), lsh.b, lsh.r)
        expected = [keys[i] for i, sb in enumerate(stored_bands)
                    if any(x == y for x, y in zip(qb, sb))]
        assert lsh.query(q) == expected
        assert lsh.query(q.digest()) == expected  # a raw digest works too
    for key in keys[::2]:
        lsh.remove(key)
    assert lsh.keys() == keys[1::2]
    assert all(k in keys[1::2] for k in lsh.query(sketches[1]))


def test_lsh_errors():
    lsh = neardup.MinHashLSH(threshold=0.5, num_perm=64)
    m = make([b"a", b"b"], num_perm=64)
    lsh.insert("k", m)
    with pytest.raises(neardup.InvalidArgumentError):
        lsh.insert("k", m)  # duplicate key
    with pytest.raises(ValueError) as info:
        lsh.query(make([b"a"], num_perm=128))  # wrong sketch length
    assert "num_hashes (64)" in str(info.value)
    with pytest.raises(ValueError):
        lsh.query(np.zeros(10, dtype=np.uint64))
    with pytest.raises(TypeError):
        lsh.query(np.zeros(64, dtype=np.float64))
    with pytest.raises(ValueError):
        lsh.remove("missing")
    with pytest.raises(TypeError):
        lsh.insert(["unhashable"], m)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.MinHashLSH(threshold=1.5)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.MinHashLSH(num_perm=16, params=(8, 4))
    assert lsh.keys() == ["k"]
