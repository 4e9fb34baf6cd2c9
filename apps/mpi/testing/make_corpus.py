#!/usr/bin/env python3
"""Writes the seeded test corpus of neardup-mpi's tests into DIR.

Planted near-duplicates (edited copies of earlier documents, also across
files), records without an id (their id is "<file>:<line>"), blank lines,
a malformed line (a skipped record), CRLF line ends, a directory of text
files (read whole by one rank), an empty file, and a file of a few very long
lines (so that some ranks get no document at all).

Usage: make_corpus.py DIR [SEED [DOCUMENTS]]
DOCUMENTS (default 1200) sizes big.jsonl; the benchmark of docs/DISTRIBUTED.md
uses 200000.
"""
import json
import os
import random
import sys


def main():
    out = sys.argv[1]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 15)
    num_documents = int(sys.argv[3]) if len(sys.argv) > 3 else 1200
    os.makedirs(os.path.join(out, "texts"), exist_ok=True)
    vocabulary = ["w%d" % i for i in range(2500)]
    docs = []

    def new_text():
        return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(40, 160)))

    def edited(text, rate):
        words = text.split(" ")
        return " ".join(rng.choice(vocabulary) if rng.random() < rate else w for w in words)

    def record(i, text):
        kind = i % 11
        if kind == 3:
            return json.dumps({"text": text})  # no id: "<file>:<line>"
        if kind == 7:
            return json.dumps({"id": 100000 + i, "text": text})  # a numeric id
        return json.dumps({"id": "doc-%d" % i, "text": text, "meta": {"n": i}})

    with open(os.path.join(out, "big.jsonl"), "w", newline="") as big:
        for i in range(num_documents):
            if i % 5 == 4 and docs:
                text = edited(docs[rng.randrange(len(docs))], rng.choice([0.0, 0.02, 0.05, 0.1, 0.3]))
            elif i % 97 == 50:
                text = "the the the"  # no features after the stopword filter
            else:
                text = new_text()
            docs.append(text)
            end = "\r\n" if i % 13 == 0 else "\n"
            big.write(record(i, text) + end)
            if i % 173 == 0:
                big.write("\n")  # blank lines are ignored
            if i == 600:
                big.write("{not json\n")  # skipped, reported
    with open(os.path.join(out, "small.jsonl"), "w") as small:
        for i in range(40):
            text = edited(rng.choice(docs), 0.03) if i % 2 else new_text()
            small.write(json.dumps({"id": "small-%d" % i, "text": text}) + "\n")
        # A clique of exact copies, larger than neardup-mpi's shared-group
        # size (16): expanded by all ranks, a share of its rows each.
        text = new_text()
        for i in range(24):
            small.write(json.dumps({"id": "copy-%d" % i, "text": text}) + "\n")
    open(os.path.join(out, "empty.jsonl"), "w").close()
    for i in range(8):
        text = edited(docs[i * 3], 0.04) if i % 3 == 0 else new_text()
        with open(os.path.join(out, "texts", "t%d.txt" % i), "w") as f:
            f.write(text)
    # Few, long lines: with 4 ranks some ranks' byte ranges start and end
    # inside one line and so hold no document.
    with open(os.path.join(out, "long.jsonl"), "w") as long_lines:
        base = " ".join(rng.choice(vocabulary) for _ in range(12000))
        long_lines.write(json.dumps({"id": "long-0", "text": base}) + "\n")
        long_lines.write(json.dumps({"id": "long-1", "text": edited(base, 0.005)}) + "\n")
        long_lines.write(json.dumps({"id": "short", "text": new_text()}) + "\n")


if __name__ == "__main__":
    main()
