"""Shared fixtures: the built CLI for differential tests, and a seeded corpus
of texts with planted near-duplicates."""

import json
import os
import random
import shutil
import subprocess

import pytest


def cli_path():
    path = os.environ.get("NEARDUP_CLI")
    if path and os.path.exists(path):
        return path
    return shutil.which("neardup")


@pytest.fixture(scope="session")
def cli():
    path = cli_path()
    if path is None:
        pytest.skip("the neardup CLI is not built (set NEARDUP_CLI)")
    return path


def run_cli(cli, args, stdin_path=None):
    """Runs the CLI and returns its stdout lines as parsed JSON objects."""
    result = subprocess.run([cli, *args, "--quiet"], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines() if line]


WORDS = ("harbor council market storm bridge river school budget mayor road tax "
         "police fire train station park water power health court vote plan city "
         "state grant bond wall flood home build repair report cost year spring "
         "summer winter data study").split()


def random_text(rng, length):
    return " ".join(rng.choice(WORDS) for _ in range(length))


def edit(rng, text, rate):
    words = text.split()
    for i in range(len(words)):
        if rng.random() < rate:
            words[i] = rng.choice(WORDS)
    return " ".join(words)


@pytest.fixture(scope="session")
def planted_corpus():
    """(id, text) pairs: 60 originals and 60 light edits of some of them."""
    rng = random.Random(7)
    docs = []
    originals = [random_text(rng, 120) for _ in range(60)]
    for i, text in enumerate(originals):
        docs.append((f"doc-{i}", text))
    for i in range(60):
        base = originals[rng.randrange(len(originals))]
        docs.append((f"edit-{i}", edit(rng, base, rng.choice([0.0, 0.01, 0.03, 0.08]))))
    rng.shuffle(docs)
    return docs


@pytest.fixture()
def jsonl_file(tmp_path, planted_corpus):
    path = tmp_path / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in planted_corpus:
            f.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    return path
