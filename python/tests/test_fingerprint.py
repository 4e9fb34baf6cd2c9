"""Recipes, simhash() and fingerprint(): shapes, equality with the CLI,
pickling, threads and the GIL."""

import pickle
import threading
import time

import numpy as np
import pytest

import neardup
from conftest import run_cli


def test_presets_and_ids():
    names = neardup.Recipe.presets()
    assert "default" in names and "paper" in names and "short" in names
    ids = {neardup.Recipe.preset(n).id for n in names}
    assert len(ids) == len(names)  # different recipes, different ids
    default = neardup.Recipe.preset()
    assert default.name == "default"
    assert len(default.id) == 16 and int(default.id, 16) >= 0
    assert default.simhash_bits == 64 and default.num_hashes == 128 and default.hash == "xxh3"


def test_recipe_json_round_trip_and_pickle():
    paper = neardup.Recipe.preset("paper")
    again = neardup.Recipe.from_json(paper.to_json())
    assert again == paper and again.id == paper.id
    restored = pickle.loads(pickle.dumps(paper))
    assert restored == paper and restored.name == "paper" and restored.id == paper.id
    assert neardup.Recipe.preset("default") != paper


def test_recipe_errors_carry_the_library_message():
    with pytest.raises(neardup.InvalidArgumentError) as info:
        neardup.Recipe.preset("nope")
    assert "nope" in str(info.value) and info.value.code == "invalid_argument"
    assert isinstance(info.value, ValueError) and isinstance(info.value, neardup.Error)
    with pytest.raises(ValueError):
        neardup.Recipe.from_json('{"no_such_key": 1}')


def test_simhash_of_str_and_bytes_agree_and_differ_by_text():
    text = "The quick brown fox jumps over the lazy dog near the river bank"
    a = neardup.simhash(text)
    assert a == neardup.simhash(text.encode("utf-8"))
    assert 0 <= a < 2**64
    assert a != neardup.simhash(text + " and then it slept")
    # Near-duplicate texts are near in Hamming distance; unrelated ones are not.
    near = neardup.simhash(text.replace("lazy", "sleepy"))
    assert neardup.num_differing_bits(a, near) < 24


def test_simhash_128_high_word_is_the_64_bit_simhash():
    default = neardup.Recipe.preset()
    wide_json = default.to_json().replace('"bits":64', '"bits":128')
    assert wide_json != default.to_json()
    wide = neardup.Recipe.from_json(wide_json)
    text = "one two three four five six seven eight nine ten"
    value = neardup.simhash(text, recipe=wide)
    assert value >> 64 == neardup.simhash(text, recipe=default)
    fps = neardup.fingerprint([text], minhash=False, recipe=wide)
    assert fps.simhash.shape == (1, 2)
    assert (int(fps.simhash[0, 0]) << 64) | int(fps.simhash[0, 1]) == value


def test_fingerprint_shapes_and_agreement_with_simhash(planted_corpus):
    texts = [t for _, t in planted_corpus]
    fps = neardup.fingerprint(texts, simhash=True, minhash=True, kminhash=True, chunks=True)
    n = len(texts)
    assert len(fps) == n and fps.ids is None
    assert fps.simhash.dtype == np.uint64 and fps.simhash.shape == (n,)
    assert fps.minhash.dtype == np.uint64 and fps.minhash.shape == (n, 128)
    assert fps.kminhash.shape == (n, 128) and not fps.kminhash_empty.any()
    assert fps.recipe_id == neardup.Recipe.preset().id
    for i in (0, 17, n - 1):
        assert int(fps.simhash[i]) == neardup.simhash(texts[i])
        size = int(fps.minhash_sizes[i])
        row = fps.minhash[i, :size]
        assert np.all(row[1:] > row[:-1])  # strictly ascending bottom-k
        chunk = fps.chunks(i)
        assert chunk.dtype == np.uint32 and np.all(chunk[1:] > chunk[:-1])


def test_fingerprint_inputs_pairs_generators_and_threads(planted_corpus):
    texts = [t for _, t in planted_corpus]
    base = neardup.fingerprint(texts)
    from_pairs = neardup.fingerprint(planted_corpus)
    assert from_pairs.ids == [i for i, _ in planted_corpus]
    from_generator = neardup.fingerprint(t for t in texts)
    one_thread = neardup.fingerprint(texts, threads=1)
    for other in (from_pairs, from_generator, one_thread):
        assert np.array_equal(base.simhash, other.simhash)
        assert np.array_equal(base.minhash, other.minhash)
    empty = neardup.fingerprint([])
    assert len(empty) == 0 and empty.minhash.shape == (0, 128)


def test_fingerprints_equal_the_cli(cli, jsonl_file, planted_corpus):
    rows = run_cli(cli, ["fingerprint", "--simhash", "--minhash", "--chunks", str(jsonl_file)])
    fps = neardup.fingerprint(planted_corpus, chunks=True)
    assert [r["id"] for r in rows] == fps.ids
    for i, row in enumerate(rows):
        assert row["recipe"] == fps.recipe_id
        assert int(row["simhash"], 16) == int(fps.simhash[i])
        size = int(fps.minhash_sizes[i])
        assert [int(v, 16) for v in row["minhash"]] == fps.minhash[i, :size].tolist()
        assert row["chunks"] == fps.chunks(i).tolist()
        assert row["tokens"] == int(fps.num_tokens[i])


def test_fingerprints_pickle(planted_corpus):
    fps = neardup.fingerprint(planted_corpus[:5])
    again = pickle.loads(pickle.dumps(fps))
    assert again.ids == fps.ids and np.array_equal(again.minhash, fps.minhash)


def test_gil_is_released_while_fingerprinting():
    # A large batch takes a noticeable time; while a worker thread computes
    # it, this thread must keep running Python code. With the GIL held the
    # main thread would stall for the whole computation.
    # About 50 MB (2,000 distinct texts, each 12 times), so that the call
    # lasts long enough (0.3-1 s) for scheduling gaps on a loaded machine to
    # be small beside it.
    texts = [" ".join(f"w{(i * 7919 + j) % 5003}" for j in range(400)) for i in range(2000)] * 12
    started = time.perf_counter()
    neardup.fingerprint(texts, threads=1)
    alone = time.perf_counter() - started
    ticks = []
    done = threading.Event()

    def work():
        neardup.fingerprint(texts, threads=1)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    gaps = np.diff(ticks) if len(ticks) > 1 else np.array([alone])
    # Released: the main thread ticks throughout (gaps of a few ms, more on
    # a loaded machine). Held: one gap as long as the computation.
    assert len(ticks) >= 5 and gaps.max() < max(0.5 * alone, 0.05), (len(ticks), gaps.max(), alone)


def test_two_threads_fingerprint_concurrently():
    # Thread A fingerprints one large batch; thread B meanwhile fingerprints
    # small batches in a loop. B's calls can only complete inside A's call
    # if A's call does not hold the GIL while it computes.
    big = [" ".join(f"w{(i * 31 + j) % 997}" for j in range(300)) for i in range(2000)] * 10
    small = big[:20]
    span = {}
    finished_b = []
    stop = threading.Event()

    def thread_a():
        span["start"] = time.perf_counter()
        neardup.fingerprint(big, threads=1)
        span["end"] = time.perf_counter()
        stop.set()

    def thread_b():
        while not stop.is_set():
            neardup.fingerprint(small, threads=1)
            finished_b.append(time.perf_counter())

    b = threading.Thread(target=thread_b)
    a = threading.Thread(target=thread_a)
    b.start()
    a.start()
    a.join()
    b.join()
    inside = [t for t in finished_b if span["start"] < t < span["end"]]
    assert len(inside) >= 3, (len(inside), span["end"] - span["start"])


def test_flat_batches_across_the_batch_boundary_equal_one_document_calls():
    # fingerprint() fills its arrays from the library's flat FingerprintBatch
    # 4096 documents at a time: rows, sizes and chunk offsets past the first
    # batch must equal what a call on that document alone gives, and every
    # SimHash the per-document simhash().
    import random

    rng = random.Random(11)
    words = ["alpha", "beta", "gamma", "delta", "caf\u00e9", "na\u00efve", "\u6771\u4eac", "x"]
    texts = [
        " ".join(rng.choice(words) for _ in range(rng.randrange(0, 30))) for _ in range(4200)
    ]
    default = neardup.Recipe.preset()
    wide = neardup.Recipe.from_json(default.to_json().replace('"bits":64', '"bits":128'))
    for recipe in (default, wide):
        fps = neardup.fingerprint(
            texts, simhash=True, minhash=True, kminhash=True, chunks=True, recipe=recipe
        )
        assert fps.chunk_offsets[-1] == len(fps.chunk_values)
        for i in (0, 4095, 4096, 4097, 4199) + tuple(rng.randrange(4200) for _ in range(20)):
            one = neardup.fingerprint(
                [texts[i]], simhash=True, minhash=True, kminhash=True, chunks=True, recipe=recipe
            )
            assert np.array_equal(fps.minhash[i], one.minhash[0])
            assert fps.minhash_sizes[i] == one.minhash_sizes[0]
            assert np.array_equal(fps.kminhash[i], one.kminhash[0])
            assert fps.kminhash_empty[i] == one.kminhash_empty[0]
            assert np.array_equal(fps.chunks(i), one.chunks(0))
            assert fps.num_tokens[i] == one.num_tokens[0]
            value = neardup.simhash(texts[i], recipe=recipe)
            if recipe.simhash_bits == 128:
                assert (int(fps.simhash[i, 0]) << 64) | int(fps.simhash[i, 1]) == value
            else:
                assert int(fps.simhash[i]) == value
