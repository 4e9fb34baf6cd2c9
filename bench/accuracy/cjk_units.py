#!/usr/bin/python3
"""Characters or overlapping bigrams for Han and kana? (issue 20)

For the Japanese and Chinese pages of cache/corpora/manpages_i18n.jsonl, the
exact Jaccard of 5-shingle sets between each page and copies with 1, 2, 5 and
10 in 100 Han/kana characters replaced (seeded), with the text cut two ways:
  characters: what recipe version 2 does (each Han/Hiragana character a
              token, Katakana runs whole, other words as the word tokenizer);
  bigrams:    Lucene's CJK analyzer (overlapping bigrams of each run of Han
              and kana, a lone character as itself).
Also, as a precision proxy, the highest Jaccard between two different pages.
A simplified model of the tokenizer (Python regular expressions, no NFKC),
the same for both ways; it measures the choice, not the C++ code.

  /usr/bin/python3 bench/accuracy/cjk_units.py
"""
import json
import random
import re
import statistics
import sys

HAN_KANA = '\u3041-\u309f\u3400-\u4dbf\u4e00-\u9fff'
TOKEN = re.compile(r'[\u30a0-\u30ff]+|[' + HAN_KANA + r']|\w+')
RUN = re.compile(r'[' + HAN_KANA + r']+|[\u30a0-\u30ff]+|\w+')
CJK = re.compile('[' + HAN_KANA + ']')


def characters(text):
    return TOKEN.findall(text.lower())


def bigrams(text):
    out = []
    for run in RUN.findall(text.lower()):
        if CJK.match(run) and len(run) > 1:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
        else:
            out.append(run)
    return out


def shingles(tokens, width=5):
    if len(tokens) < width:
        return {tuple(tokens)}
    return {tuple(tokens[i:i + width]) for i in range(len(tokens) - width + 1)}


def jaccard(a, b):
    return len(a & b) / len(a | b) if a or b else 1.0


def edit(text, rate, rng):
    spans = [m.start() for m in CJK.finditer(text)]
    letters = sorted({text[i] for i in spans})
    chars = list(text)
    for i in rng.sample(spans, max(1, round(len(spans) * rate))):
        chars[i] = rng.choice(letters)
    return ''.join(chars)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'cache/corpora/manpages_i18n.jsonl'
    rng = random.Random(20)
    pages = []
    for line in open(path, encoding='utf-8'):
        page = json.loads(line)
        if page['id'].split('/')[0] in ('ja', 'zh_CN', 'zh_TW') and \
                len(CJK.findall(page['text'])) >= 200:
            pages.append(page['text'])
    print(f'{len(pages)} Japanese and Chinese pages with >= 200 Han/kana characters')
    print('| cut | edit rate | mean Jaccard | Jaccard >= 0.8 |')
    print('|---|---|---|---|')
    for name, cut in (('characters', characters), ('bigrams', bigrams)):
        sets = [shingles(cut(p)) for p in pages]
        for rate in (0.01, 0.02, 0.05, 0.10):
            js = [jaccard(s, shingles(cut(edit(p, rate, rng)))) for p, s in zip(pages, sets)]
            above = sum(j >= 0.8 for j in js)
            print(f'| {name} | {rate:.0%} | {statistics.mean(js):.3f} | {above}/{len(js)} |')
        worst = max(jaccard(sets[i], sets[j]) for i in range(len(sets))
                    for j in range(i + 1, len(sets)) if pages[i] != pages[j])
        print(f'| {name} | unrelated pages: highest Jaccard | {worst:.3f} | |')


if __name__ == '__main__':
    main()
