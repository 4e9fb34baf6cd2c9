#!/usr/bin/env python3
"""Writes a seeded JSONL corpus with planted near-duplicates, for timing
`neardup pairs`, `clusters` and `dedup` end to end (docs/BENCHMARKS.md,
"Near-duplicate stages after fingerprinting").

Documents are words drawn from a Zipf-like vocabulary (or, with --words-from,
from the word frequencies of a real JSONL corpus such as
cache/corpora/brown.jsonl). A fraction --dup-fraction of the documents sit in
planted clusters: one base text and copies of it, each with a share --edit of
its words replaced at random (two copies then differ by about twice that, so
edit 0.01 keeps word 5-shingle Jaccard near 0.8 within a cluster). Cluster
sizes are uniform in [2, --max-cluster]. The same arguments always give the
same bytes (Python's random with --seed; no other source of randomness).

Two presets stand for the issue's corpora (issue 13):
  many-pairs: 16,000 documents of ~12.5 KB (200 MB), half in clusters of 2
              to 100: about 250,000 planted pairs;
  few-dups:   64,000 documents of ~4 KB (256 MB), 1% in clusters of 2-4.

  /usr/bin/python3 bench/make_neardup_corpus.py --preset many-pairs -o cache/many_pairs.jsonl
  /usr/bin/python3 bench/make_neardup_corpus.py --preset few-dups -o cache/few_dups.jsonl
Prints the number of documents, bytes and planted clusters on stderr.
"""
import argparse
import itertools
import json
import random
import re
import sys

PRESETS = {
    "many-pairs": dict(docs=16000, doc_words=1600, dup_fraction=0.5, max_cluster=100, edit=0.01),
    "few-dups": dict(docs=64000, doc_words=530, dup_fraction=0.01, max_cluster=4, edit=0.01),
    "small": dict(docs=400, doc_words=200, dup_fraction=0.3, max_cluster=6, edit=0.02),
}


def synthetic_vocabulary(rng, size):
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(2, 10))))
    words = sorted(words)
    rng.shuffle(words)
    # Zipf-like weights: the i-th word is drawn in proportion to 1 / (i + 10).
    weights = [1.0 / (i + 10) for i in range(size)]
    return words, weights


def real_vocabulary(path):
    counts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = json.loads(line).get("text", "")
            for word in re.findall(r"[A-Za-z']+", text):
                counts[word] = counts.get(word, 0) + 1
    words = sorted(counts)
    return words, [counts[w] for w in words]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS))
    parser.add_argument("--docs", type=int)
    parser.add_argument("--doc-words", type=int, help="mean words per document")
    parser.add_argument("--dup-fraction", type=float)
    parser.add_argument("--max-cluster", type=int)
    parser.add_argument("--edit", type=float, help="share of words replaced per copy")
    parser.add_argument("--words-from", help="JSONL corpus whose word frequencies to draw from")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    settings = dict(PRESETS.get(args.preset, PRESETS["small"]))
    for key in settings:
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)

    rng = random.Random(args.seed)
    if args.words_from:
        words, weights = real_vocabulary(args.words_from)
    else:
        words, weights = synthetic_vocabulary(rng, 50000)
    cumulative = list(itertools.accumulate(weights))

    def text_of(count):
        return rng.choices(words, cum_weights=cumulative, k=count)

    docs = settings["docs"]
    mean_words = settings["doc_words"]
    # Planted clusters first (as positions), then shuffled into the corpus.
    target = int(docs * settings["dup_fraction"])
    sizes = []
    while sum(sizes) < target:
        sizes.append(rng.randint(2, max(2, settings["max_cluster"])))
    if sizes:
        sizes[-1] -= sum(sizes) - target
        if sizes[-1] < 2:
            sizes.pop()
    positions = list(range(docs))
    rng.shuffle(positions)
    cluster_of = {}
    next_position = 0
    for cluster, size in enumerate(sizes):
        for _ in range(size):
            cluster_of[positions[next_position]] = cluster
            next_position += 1

    bases = {}
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    total = 0
    for doc in range(docs):
        length = rng.randint(mean_words // 2, mean_words * 3 // 2)
        cluster = cluster_of.get(doc)
        if cluster is None:
            tokens = text_of(length)
        else:
            if cluster not in bases:
                bases[cluster] = text_of(length)
            tokens = list(bases[cluster])
            edits = int(len(tokens) * settings["edit"])
            replacements = text_of(edits)
            for position, word in zip(rng.sample(range(len(tokens)), edits), replacements):
                tokens[position] = word
        line = json.dumps({"id": f"d{doc}", "text": " ".join(tokens)}) + "\n"
        total += len(line)
        out.write(line)
    if out is not sys.stdout:
        out.close()
    planted_pairs = sum(s * (s - 1) // 2 for s in sizes)
    print(f"make_neardup_corpus: {docs} documents, {total} bytes, {len(sizes)} planted clusters "
          f"({planted_pairs} pairs within them)", file=sys.stderr)


if __name__ == "__main__":
    main()
