"""neardup.Collection: add, query with passages, similar, remove, errors."""

import pytest

import neardup
from conftest import WORDS

import random


def text(seed, length):
    rng = random.Random(seed)
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(length))


@pytest.fixture()
def collection(tmp_path):
    path = str(tmp_path / "archive")
    neardup.Collection.create(path)
    return neardup.Collection(path, writable=True)


def test_add_query_similar_remove(collection):
    thesis = text(1, 400)
    other = text(2, 400)
    result = collection.add([("thesis", thesis), ("other", other)])
    assert result["added"] == 2 and len(collection) == 2
    assert "thesis" in collection and "missing" not in collection
    assert collection.ids() == ["thesis", "other"]
    # A new text that copies the second half of the thesis.
    copied = thesis[len(thesis) // 2:]
    matches = collection.query(copied + " " + text(3, 200), passages=1)
    assert [m["id"] for m in matches] == ["thesis"]
    best = matches[0]
    # About half of the query is in the thesis, and half of the thesis in it.
    assert 0.4 < best["a_in_b"] < 0.6 and 0.4 < best["b_in_a"] < 0.6
    assert best["passages"], "the copied part is reported as a passage"
    query_begin, query_end, match_begin, match_end = best["passages"][0]
    assert query_end > query_begin and match_begin >= len(thesis) // 2 - 20
    # An unchanged re-add writes nothing; a modification is counted.
    assert collection.add([("thesis", thesis)])["unchanged"] == 1
    assert collection.add([("copy", copied)])["added"] == 1
    rows = collection.similar(top=10, min_similarity=0.1)
    assert ("copy", "thesis") in [(a, b) for a, b, _, _ in rows] or \
        ("thesis", "copy") in [(a, b) for a, b, _, _ in rows]
    assert collection.remove(["thesis"])["removed"] == 1
    assert [m["id"] for m in collection.query(copied)] == ["copy"]
    collection.compact()
    collection.verify()


def test_collection_errors(tmp_path, collection):
    with pytest.raises(neardup.StorageError) as info:
        neardup.Collection(str(tmp_path / "nowhere"))
    assert info.value.code == "not_found"
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Collection.create(collection.path)  # exists and is not empty
    with pytest.raises(neardup.StorageError):
        collection.remove(["never added"])
    with pytest.raises(TypeError):
        collection.add(["a text without an id"])
    with pytest.raises(TypeError):
        collection.remove("thesis")
    collection.add([("a", text(4, 50))])
    reader = neardup.Collection(collection.path)
    assert len(reader) == 1
    with pytest.raises(neardup.InvalidArgumentError):
        reader.add([("b", "read-only")])  # failed_precondition
