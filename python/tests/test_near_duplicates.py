"""pairs(), clusters() and dedup() give the CLI's answers on the same input
(a differential test against the built `neardup` binary)."""

import pytest

import neardup
from conftest import run_cli


def cli_pairs(rows):
    return [(r["a"], r["b"], r["similarity"], r.get("distance")) for r in rows]


def as_printed(pairs):
    """The pairs with similarities as the CLI prints them (%.6g)."""
    return [(p.a, p.b, float(f"{p.similarity:.6g}"), p.distance) for p in pairs]


@pytest.mark.parametrize("args,kwargs", [
    (["--method", "minhash", "--threshold", "0.8"], dict(method="minhash", threshold=0.8)),
    (["--method", "minhash", "--threshold", "0.5", "--verify", "sketch"],
     dict(method="minhash", threshold=0.5, verify="sketch")),
    (["--method", "simhash", "--max-distance", "6"], dict(method="simhash", max_distance=6)),
])
def test_pairs_equal_the_cli(cli, jsonl_file, planted_corpus, args, kwargs):
    expected = cli_pairs(run_cli(cli, ["pairs", *args, str(jsonl_file)]))
    got = neardup.pairs(planted_corpus, **kwargs)
    assert len(got) > 5  # the planted edits are found
    assert as_printed(got) == expected


@pytest.mark.parametrize("rule", ["leader", "components"])
def test_clusters_equal_the_cli(cli, jsonl_file, planted_corpus, rule):
    rows = run_cli(cli, ["clusters", "--threshold", "0.7", "--rule", rule, str(jsonl_file)])
    got = neardup.clusters(planted_corpus, threshold=0.7, rule=rule)
    assert got == [r["ids"] for r in rows] and len(got) > 3


@pytest.mark.parametrize("keep", ["first", "longest", "shortest"])
def test_dedup_keeps_what_the_cli_keeps(cli, jsonl_file, planted_corpus, keep):
    rows = run_cli(cli, ["dedup", "--threshold", "0.7", "--keep", keep, str(jsonl_file)])
    got = neardup.dedup(planted_corpus, threshold=0.7, keep=keep)
    assert got == [r["id"] for r in rows]
    assert len(got) < len(planted_corpus)


def test_bare_texts_are_numbered():
    texts = ["a b c d e f g h i j", "a b c d e f g h i j", "k l m n o p q r s t"]
    assert [(p.a, p.b) for p in neardup.pairs(texts)] == [(0, 1)]
    assert neardup.clusters(texts) == [[0, 1]]
    assert neardup.dedup(texts) == [0, 2]


def test_bad_arguments_raise():
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.pairs(["x"], method="cosine")
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.pairs(["x"], threshold=1.5)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.clusters(["x"], rule="transitive")
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.dedup(["x"], keep="random")
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.pairs(["x"], verify="maybe")
