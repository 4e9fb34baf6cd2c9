"""Bad input raises a Python exception and never crashes the interpreter."""

import pytest

import neardup


@pytest.mark.parametrize("documents", [None, "a single string", b"bytes", 42])
def test_documents_must_be_an_iterable_of_texts(documents):
    with pytest.raises(TypeError):
        neardup.fingerprint(documents)


@pytest.mark.parametrize("item", [None, 3.5, ["list"], ("id",), ("id", None), ("a", "b", "c")])
def test_each_document_must_be_text(item):
    with pytest.raises(TypeError) as info:
        neardup.fingerprint(["fine", item])
    assert "document 1" in str(info.value)


def test_bytes_must_be_utf8_and_str_must_be_encodable():
    with pytest.raises(UnicodeDecodeError):
        neardup.fingerprint([b"caf\xe9"])
    with pytest.raises(ValueError):
        neardup.simhash(b"\xff\xfe")
    with pytest.raises(UnicodeEncodeError):
        neardup.simhash("lone surrogate \ud800")


def test_other_bad_arguments():
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.fingerprint(["x"], simhash=False, minhash=False)
    with pytest.raises(ValueError):
        neardup.fingerprint(["x"], threads=-1)
    with pytest.raises(TypeError):
        neardup.fingerprint(["x"], recipe="default")
    with pytest.raises(TypeError):
        neardup.simhash(None)


def test_exception_hierarchy():
    assert issubclass(neardup.InvalidArgumentError, neardup.Error)
    assert issubclass(neardup.InvalidArgumentError, ValueError)
    assert issubclass(neardup.StorageError, neardup.Error)
    assert issubclass(neardup.StorageError, OSError)
