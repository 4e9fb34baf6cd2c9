#!/usr/bin/env python3
"""How many ranks a document's SimHash goes to under HammingShards.

A model of the key-prefix shards of src/index/hamming_shards.cc (the block
layout of src/index/hamming_layout.cc; keys are the table's leading blocks,
their top 32 bits when longer; shard = floor(key * N / 2^bits)), sampled over
random 64-bit SimHashes. It prints, per (num_blocks m, max_distance k, ranks
N): the tables t, the key widths, the mean and largest number of distinct
ranks a document is sent to, and the share of documents one rank receives;
then the 10^9-document rows of docs/DISTRIBUTED.md's model (16 B sent per
document and owner; a rank's entries 16 B each given + 16 B sorted copy +
16 B sort scratch at the sort, or 16 + 16 + 12 B a distinct SimHash plus
8 B a value of its slice of each table during the join).

    python3 bench/simhash_shard_model.py            # ~10 s
"""
import itertools
import random


def layout(m, k):
    sizes = [64 // m + (1 if b < 64 % m else 0) for b in range(m)]
    lo, top = [], 64
    for b in range(m):
        top -= sizes[b]
        lo.append(top)
    tables = [(ch, sum(sizes[b] for b in ch)) for ch in itertools.combinations(range(m), m - k)]
    return sizes, lo, tables


def owners(fp, n, lay):
    sizes, lo, tables = lay
    out = set()
    for chosen, prefix_bits in tables:
        v = 0
        for b in chosen:
            v = (v << sizes[b]) | ((fp >> lo[b]) & ((1 << sizes[b]) - 1))
        key_bits = min(prefix_bits, 32)
        out.add(((v >> (prefix_bits - key_bits)) * n) >> key_bits)
    return out


def sample(m, k, n, docs=20000, seed=1):
    lay = layout(m, k)
    rng = random.Random(seed)
    total = largest = rank0 = 0
    for _ in range(docs):
        s = owners(rng.getrandbits(64), n, lay)
        total += len(s)
        largest = max(largest, len(s))
        rank0 += 0 in s
    return lay, total / docs, largest, rank0 / docs


def main():
    print("m k N | tables key_bits | ranks/doc mean max | rank 0 receives")
    results = {}  # sample() is deterministic: the rows below reuse these
    for m, k, n in [(5, 3, 2), (4, 3, 64), (5, 3, 64), (6, 3, 2), (6, 3, 3), (6, 3, 20),
                    (6, 3, 64), (6, 3, 512), (6, 3, 1000)]:
        results[(m, k, n)] = sample(m, k, n)
        lay, mean, largest, r0 = results[(m, k, n)]
        bits = sorted({min(pb, 32) for _, pb in lay[2]})
        print(f"{m} {k} {n} | {len(lay[2])} {bits} | {mean:.2f} {largest} | {r0:.3f}")
    docs = 10**9
    print("\n10^9 documents, m = 6, k = 3 (20 tables):")
    for n in (64, 512):
        lay, mean, _, _ = results[(6, 3, n)]
        t = len(lay[2])
        sent = 16 * mean * docs
        entries = mean * docs / n
        at_sort = 48 * entries
        at_join = 44 * entries + 8 * t * docs / n
        print(f"N={n}: {mean:.2f} ranks a document, {sent / 1e9:.0f} GB sent in all, "
              f"{sent / n / 1e9:.2f} GB a node ({sent / n / 6.25e9:.2f} s at 6.25 GB/s); "
              f"{entries / 1e6:.1f}M entries a rank; peak {at_sort / 1e9:.2f} GB at the sort, "
              f"{at_join / 1e9:.2f} GB in the join (slices of all {t} tables at once)")


if __name__ == "__main__":
    main()
