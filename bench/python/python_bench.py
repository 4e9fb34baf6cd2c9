#!/usr/bin/env python3
"""Python-level throughput of the neardup package (docs/BENCHMARKS.md).

  PYTHONPATH=build/release/python /usr/bin/python3 bench/python/python_bench.py \
      --cli build/release/neardup [--docs 100000] [--hashes 1000000]

1. fingerprint() on a list of documents (simhash + bottom-k MinHash, one
   thread) in MB/s, beside the CLI's one-thread figure on the same texts
   written as JSONL (`neardup fingerprint --simhash --minhash --threads 1`,
   output to /dev/null), measured in the same run.
2. Corpus(6, 3) insert_bulk and find_all_bulk of 1M random hashes (numpy),
   the simhash package's benchmark.
3. MinHashLSH(threshold=0.8, num_perm=128) insert and query per second, with
   the MinHash objects built beforehand (as datasketch's figures are).
Each timing is the best of --repeat runs.
"""

import argparse
import json
import os
import random
import subprocess
import tempfile
import time

import numpy as np

import neardup


def best_of(repeat, fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def make_texts(n, seed):
    """English-like articles of 100-300 words drawn from a 5000-word vocabulary
    with a Zipf-like law, about 1.5 KB each."""
    rng = random.Random(seed)
    vocab = [f"{rng.choice('bcdfghjklmnprstvw')}{rng.choice('aeiou')}"
             f"{rng.choice('bcdfghjklmnprstvw')}{rng.choice('aeiou') * (i % 3)}{i % 97}"
             for i in range(5000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    texts = []
    for _ in range(n):
        words = rng.choices(vocab, weights=weights, k=rng.randint(100, 300))
        texts.append(" ".join(words))
    return texts


def bench_fingerprint(args):
    texts = make_texts(args.docs, 1)
    total = sum(len(t.encode("utf-8")) for t in texts)
    neardup.fingerprint(texts[:1000], threads=1)  # warm up
    python_s = best_of(args.repeat, lambda: neardup.fingerprint(texts, threads=1))
    print(f"fingerprint(): {args.docs} docs, {total / 1e6:.1f} MB, one thread: "
          f"{python_s:.3f} s = {total / python_s / 1e6:.0f} MB/s")
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for i, t in enumerate(texts):
                    f.write(json.dumps({"id": str(i), "text": t}) + "\n")
            cmd = [args.cli, "fingerprint", "--simhash", "--minhash", "--threads", "1",
                   "--quiet", "-o", "/dev/null", path]
            cli_s = best_of(args.repeat, lambda: subprocess.run(cmd, check=True))
        print(f"CLI fingerprint --threads 1 on the same texts (JSONL): {cli_s:.3f} s = "
              f"{total / cli_s / 1e6:.0f} MB/s; Python / CLI time = {python_s / cli_s:.2f}")
    simhash_s = best_of(args.repeat,
                        lambda: neardup.fingerprint(texts, minhash=False, threads=1))
    print(f"fingerprint(minhash=False) (SimHash only), one thread: {total / simhash_s / 1e6:.0f} "
          "MB/s")
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for i, t in enumerate(texts):
                    f.write(json.dumps({"id": str(i), "text": t}) + "\n")
            cmd = [args.cli, "fingerprint", "--simhash", "--threads", "1", "--quiet", "-o",
                   "/dev/null", path]
            cli_s = best_of(args.repeat, lambda: subprocess.run(cmd, check=True))
        print(f"CLI fingerprint --simhash --threads 1: {total / cli_s / 1e6:.0f} MB/s; "
              f"Python / CLI time = {simhash_s / cli_s:.2f}")
    threads_s = best_of(args.repeat, lambda: neardup.fingerprint(texts, threads=0))
    print(f"fingerprint(): all cores: {total / threads_s / 1e6:.0f} MB/s")


def bench_corpus(args):
    rng = np.random.default_rng(2)
    hashes = rng.integers(0, 2**64, size=args.hashes, dtype=np.uint64)
    queries = rng.integers(0, 2**64, size=args.hashes, dtype=np.uint64)

    def insert():
        corpus = neardup.Corpus(6, 3)
        corpus.insert_bulk(hashes)
        return corpus

    insert_s = best_of(args.repeat, insert)
    corpus = insert()
    find_s = best_of(args.repeat, lambda: corpus.find_all_bulk(queries))
    find_arrays_s = best_of(args.repeat, lambda: corpus.find_all_bulk(queries, as_arrays=True))
    first_s = best_of(args.repeat, lambda: corpus.find_first_bulk(queries))
    first_arrays_s = best_of(args.repeat,
                             lambda: corpus.find_first_bulk(queries, as_arrays=True))
    remove_s = best_of(1, lambda: corpus.remove_bulk(hashes))
    print(f"Corpus(6, 3), {args.hashes} random hashes: insert_bulk {insert_s:.3f} s, "
          f"find_all_bulk {find_s:.3f} s (as_arrays {find_arrays_s:.3f} s), "
          f"find_first_bulk {first_s:.3f} s (as_arrays {first_arrays_s:.3f} s), "
          f"remove_bulk {remove_s:.3f} s")


def bench_lsh(args):
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(20000)]
    sketches = []
    for _ in range(args.lsh_docs):
        m = neardup.MinHash(num_perm=128)
        m.update_batch(rng.sample(vocab, 200))
        sketches.append(m)
    keys = list(range(len(sketches)))

    def insert():
        lsh = neardup.MinHashLSH(threshold=0.8, num_perm=128)
        for k, m in zip(keys, sketches):
            lsh.insert(k, m)
        return lsh

    insert_s = best_of(args.repeat, insert)
    lsh = insert()
    query_s = best_of(args.repeat, lambda: [lsh.query(m) for m in sketches])
    digests = [m.digest() for m in sketches]
    query_digest_s = best_of(args.repeat, lambda: [lsh.query(d) for d in digests])
    n = len(sketches)
    print(f"MinHashLSH(0.8, 128), {n} sketches: insert {n / insert_s:,.0f}/s, "
          f"query (MinHash) {n / query_s:,.0f}/s, query (digest array) "
          f"{n / query_digest_s:,.0f}/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", help="the neardup binary, for the one-thread comparison")
    parser.add_argument("--docs", type=int, default=100000)
    parser.add_argument("--hashes", type=int, default=1000000)
    parser.add_argument("--lsh-docs", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["fingerprint", "corpus", "lsh"])
    args = parser.parse_args()
    if args.only in (None, "fingerprint"):
        bench_fingerprint(args)
    if args.only in (None, "corpus"):
        bench_corpus(args)
    if args.only in (None, "lsh"):
        bench_lsh(args)


if __name__ == "__main__":
    main()
