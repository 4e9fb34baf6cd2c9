"""neardup.Corpus, num_differing_bits and find_all against a brute-force scan
written here, on random and planted data."""

import random

import numpy as np
import pytest

import neardup


def popcount(x):
    return bin(x).count("1")


def brute_all(stored, query, bits):
    """Every stored hash within `bits` of query, nearest first, then by value."""
    hits = [(popcount(h ^ query), h) for h in set(stored) if popcount(h ^ query) <= bits]
    return [h for _, h in sorted(hits)]


def flip(rng, value, count):
    for bit in rng.sample(range(64), count):
        value ^= 1 << bit
    return value


def planted(seed, n, bits):
    """Random hashes plus, for a third of them, copies at distance 0..bits+1."""
    rng = random.Random(seed)
    base = [rng.getrandbits(64) for _ in range(n)]
    near = [flip(rng, h, rng.randint(0, bits + 1)) for h in base[: n // 3]]
    return rng, base + near


@pytest.mark.parametrize("blocks,bits", [(6, 3), (4, 2), (8, 3), (5, 0)])
def test_find_all_and_find_first_match_brute_force(blocks, bits):
    rng, stored = planted(blocks * 10 + bits, 600, bits)
    corpus = neardup.Corpus(blocks, bits)
    assert corpus.insert_bulk(np.array(stored, dtype=np.uint64)) == len(set(stored))
    assert len(corpus) == len(set(stored))
    queries = [flip(rng, rng.choice(stored), rng.randint(0, bits + 2)) for _ in range(300)]
    queries += [rng.getrandbits(64) for _ in range(100)]
    expected = [brute_all(stored, q, bits) for q in queries]
    assert corpus.find_all_bulk(queries) == expected
    assert corpus.find_all_bulk(np.array(queries, dtype=np.uint64)) == expected
    assert corpus.find_all_bulk(np.array(queries, dtype=np.ulonglong)) == expected
    assert corpus.find_all_bulk(np.array(queries, dtype=np.uint64)[::-1])[::-1] == expected
    for q, want in zip(queries[:50], expected):
        assert corpus.find_all(q) == want
    offsets, hashes, distances = corpus.find_all_bulk(queries, as_arrays=True)
    assert [hashes[offsets[i]:offsets[i + 1]].tolist() for i in range(len(queries))] == expected
    assert all(popcount(int(h) ^ q) == d for i, q in enumerate(queries)
               for h, d in zip(hashes[offsets[i]:offsets[i + 1]],
                               distances[offsets[i]:offsets[i + 1]]))
    firsts = corpus.find_first_bulk(queries)
    found, first_hashes = corpus.find_first_bulk(queries, as_arrays=True)
    assert [int(h) if f else None for f, h in zip(found, first_hashes)] == firsts
    assert firsts == [want[0] if want else None for want in expected]
    assert corpus.find_first(queries[0]) == firsts[0]


def test_insert_remove_and_contains_follow_a_set():
    rng, stored = planted(3, 400, 3)
    corpus = neardup.Corpus(6, 3)
    model = set()
    for h in stored[:200]:
        assert corpus.insert(h) == (h not in model)
        model.add(h)
    assert corpus.insert_bulk(stored[200:]) == len(set(stored[200:]) - model)
    model.update(stored[200:])
    removed = rng.sample(sorted(model), 150)
    assert corpus.remove(removed[0]) is True
    assert corpus.remove(removed[0]) is False
    assert corpus.remove_bulk(removed[1:] + [removed[0]]) == len(removed) - 1
    model.difference_update(removed)
    assert len(corpus) == len(model)
    assert all(h not in corpus for h in removed) and all(h in corpus for h in model)
    queries = [flip(rng, h, rng.randint(0, 4)) for h in stored[:200]]
    assert corpus.find_all_bulk(queries) == [brute_all(model, q, 3) for q in queries]


def test_module_find_all_is_every_near_pair():
    rng, stored = planted(11, 500, 3)
    distinct = sorted(set(stored))
    expected = sorted((a, b) for i, a in enumerate(distinct) for b in distinct[i + 1:]
                      if popcount(a ^ b) <= 3)
    assert neardup.find_all(stored, 6, 3) == expected
    corpus = neardup.Corpus(6, 3)
    corpus.insert_bulk(stored)
    assert corpus.pairs() == expected


def test_num_differing_bits():
    assert neardup.num_differing_bits(0xDEADBEEF, 0xDEADBEAD) == 2
    assert neardup.num_differing_bits(0, 2**64 - 1) == 64
    assert neardup.num_differing_bits(np.uint64(5), 4) == 1


def test_bad_input_raises():
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Corpus(3, 3)  # diff_bits must be below num_blocks
    corpus = neardup.Corpus(6, 3)
    with pytest.raises(TypeError):
        corpus.insert_bulk(np.array([1.0, 2.0]))  # wrong dtype
    with pytest.raises(TypeError):
        corpus.insert_bulk(np.array([1, 2], dtype=np.int64))
    with pytest.raises(TypeError):
        corpus.insert_bulk(np.array([1, 2], dtype=">u8"))  # not native byte order
    with pytest.raises(TypeError):
        corpus.insert(None)
    with pytest.raises(OverflowError):
        corpus.insert(-1)
    with pytest.raises(OverflowError):
        corpus.insert(2**64)
    with pytest.raises(TypeError):
        corpus.find_all_bulk(None)
    with pytest.raises(ValueError):
        corpus.insert_bulk(np.zeros((2, 2), dtype=np.uint64))
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.find_all([1, 2], 4, 4)
    assert len(corpus) == 0
