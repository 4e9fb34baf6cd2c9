#!/usr/bin/python3
"""Recall of `neardup pairs` per language on translated manual pages (issue 20).

For every page of cache/corpora/manpages_i18n.jsonl (scripts/make_i18n_corpus.sh)
with at least --min-units natural units, and for a seeded sample of English
pages rendered here, writes the page and a copy with 1 in 100 of its units
replaced (at least one): a white-space word by another word of the same page
where the language writes spaces; one Han or kana character by another of the
page in Japanese and Chinese. Then runs `neardup pairs --threshold 0.8` with
each preset and reports, per language, how many of the (page, copy) pairs it
found. Seeded (--seed): the same corpus gives the same table.

  scripts/make_i18n_corpus.sh
  /usr/bin/python3 bench/accuracy/i18n_recall.py [--neardup build/release/neardup]
"""
import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile

CJK = re.compile('[\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff]')


def language(page_id):
    lang = page_id.split('/')[0]
    return 'zh' if lang.startswith('zh') else lang


def units(lang, text):
    """(start, end) of each natural unit: CJK characters, else white-space words."""
    pattern = CJK if lang in ('ja', 'zh') else re.compile(r'\S+')
    return [m.span() for m in pattern.finditer(text)]


def edited_copy(lang, text, rng):
    spans = units(lang, text)
    vocabulary = sorted({text[a:b] for a, b in spans})
    changes = max(1, round(len(spans) / 100))
    chosen = sorted(rng.sample(range(len(spans)), changes))
    out = []
    last = 0
    for i in chosen:
        a, b = spans[i]
        old = text[a:b]
        new = old
        while new == old and len(vocabulary) > 1:
            new = rng.choice(vocabulary)
        out.append(text[last:a])
        out.append(new)
        last = b
    out.append(text[last:])
    return ''.join(out)


def english_pages(count, rng):
    """`count` English man(1) pages, rendered as make_i18n_corpus.sh does."""
    pages = sorted(p for p in os.listdir('/usr/share/man/man1') if p.endswith('.gz'))
    pages = rng.sample(pages, min(count, len(pages)))
    out = []
    for page in sorted(pages):
        env = dict(os.environ, MANWIDTH='80', LANG='C.UTF-8')
        try:
            man = subprocess.run(['man', '-l', '/usr/share/man/man1/' + page], env=env,
                                 capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
            text = subprocess.run(['col', '-b'], input=man.stdout, capture_output=True).stdout
        except subprocess.TimeoutExpired:
            continue
        text = text.decode('utf-8', 'replace')
        if text.strip():
            out.append({'id': 'en/man1/' + page, 'text': text})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--corpus', default='cache/corpora/manpages_i18n.jsonl')
    parser.add_argument('--neardup', default='build/release/neardup')
    parser.add_argument('--presets', default='default,default-v1')
    parser.add_argument('--min-units', type=int, default=200)
    parser.add_argument('--english-pages', type=int, default=100)
    parser.add_argument('--seed', type=int, default=20)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with open(args.corpus, encoding='utf-8') as f:
        pages = [json.loads(line) for line in f]
    pages += english_pages(args.english_pages, rng)
    documents = []
    per_language = collections.Counter()
    seen = set()
    for page in pages:
        lang = language(page['id'])
        text = page['text']
        if text in seen or len(units(lang, text)) < args.min_units:
            continue
        seen.add(text)
        n = per_language[lang]
        per_language[lang] += 1
        documents.append({'id': f'{lang}:{n}:src', 'text': text})
        documents.append({'id': f'{lang}:{n}:copy', 'text': edited_copy(lang, text, rng)})

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'corpus.jsonl')
        with open(path, 'w', encoding='utf-8') as f:
            for doc in documents:
                f.write(json.dumps(doc, ensure_ascii=False) + '\n')
        found = {}
        for preset in args.presets.split(','):
            result = subprocess.run([args.neardup, 'pairs', '--threshold', '0.8', '--preset',
                                     preset, path], capture_output=True, text=True, check=True)
            hits = collections.Counter()
            for line in result.stdout.splitlines():
                pair = json.loads(line)
                a, b = pair['a'].rsplit(':', 1), pair['b'].rsplit(':', 1)
                if a[0] == b[0] and {a[1], b[1]} == {'src', 'copy'}:
                    hits[a[0].split(':')[0]] += 1
            found[preset] = hits

    presets = args.presets.split(',')
    print('| language | pages | ' + ' | '.join(f'`{p}` found (recall)' for p in presets) + ' |')
    print('|---|---|' + '---|' * len(presets))
    for lang in sorted(per_language):
        cells = [f'{found[p][lang]} ({found[p][lang] / per_language[lang]:.3f})' for p in presets]
        print(f'| {lang} | {per_language[lang]} | ' + ' | '.join(cells) + ' |')
    print(f'seed {args.seed}, min units {args.min_units}, {len(documents)} documents',
          file=sys.stderr)


if __name__ == '__main__':
    main()
