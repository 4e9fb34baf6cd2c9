#!/usr/bin/python3
"""Writes 3,000 http_load-like texts as JSONL (stdout): the corpus of
fingerprint_bench's NEARDUP_BENCH_CORPUS=synthetic:http_load, for the benches
that read a file (stream_bench's BM_StreamAdd).

bench/server/http_load's texts: 4,096 phrases of 8 random words of
w0..w19999 (SplitMix64, seed 0x9b1a5e), about 45 random phrases (seed
0x5eed0000) per text of 3,000 bytes or more (its fresh texts only, without
the edited copies it sends as every fifth document). Same seeds and order as
bench/fingerprint_bench.cc's HttpLoadTexts. md5 of the output (session 14):
36ec398f07a37c326c320384d4e6dd04.

  bench/make_http_load_texts.py > /tmp/http3k.jsonl
"""
import json
import sys

MASK = (1 << 64) - 1


def split_mix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def main():
    rng = 0x9B1A5E
    phrases = []
    for _ in range(4096):
        words = []
        for _ in range(8):
            rng, value = split_mix64(rng)
            words.append("w%d " % (value % 20000))
        phrases.append("".join(words))
    pick = 0x5EED0000
    out = sys.stdout
    for doc in range(3000):
        text = ""
        while len(text) < 3000:
            pick, value = split_mix64(pick)
            text += phrases[value % len(phrases)]
        out.write(json.dumps({"id": "d%d" % doc, "text": text}) + "\n")


if __name__ == "__main__":
    main()
