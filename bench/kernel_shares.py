#!/usr/bin/python3
"""Kernel-normalised before/after of one whole command, on a loaded machine.

Runs `BINARY ARGS...` under `perf record -F 10000` for each binary in turn,
RUNS rounds (stdout to /dev/null), and groups each run's samples into the
stages below (first match wins). Each stage's samples are divided by those of
the UNIT stages, which are code that the binaries share unchanged, and the
mean and standard deviation over the runs are printed per binary. `total` is
all samples per unit sample: the run's CPU in units of the unchanged code.
When other work preempts the runs, their CPU times move by 10-30 %, but
these ratios move by only a few percent. Session 16 (docs/BENCHMARKS.md,
"Session 16, scan and hash") got 0.410 vs 0.409 from two builds of the same
code.

Pick UNIT so that it holds no code that the change touches, e.g.
--unit scan,json,normalise for a change to XXH3 or the shingles, or
--unit xxh3,shingles,json for a change to the scanner.

  bench/kernel_shares.py [--unit A,B,...] RUNS BINARY [BINARY...] -- ARGS...
  e.g. bench/kernel_shares.py 10 /work/main/wt/base16/neardup build/release/neardup -- \\
         fingerprint --simhash --quiet --threads 1 /tmp/neardup_pipeline_bench/big.jsonl
"""
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

# (stage, symbol regex), first match wins.
STAGES = [
    ('xxh3', r'Xxh3'),
    ('scan', r'TokenScanner::Next'),
    ('shingles', r'HornerAvx512|Mix64ManyAvx512'),
    ('json', r'ScanAndUnescape'),
    ('normalise', r'AppendAsciiAvx512|NormalizeBlocks'),
    ('bottomk', r'BottomK|BucketSort|InsertionSort|FilterInRange|MergeUnique'),
    ('simhash', r'CountBits|SimHashAccumulator'),
]


def shares(binary, args, data):
    subprocess.run(['perf', 'record', '-q', '-F', '10000', '-o', data, '--', binary] + args,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    report = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort', 'symbol',
                             '--percent-limit', '0.01', '--stdio'],
                            capture_output=True, text=True, check=True).stdout
    out = collections.Counter()
    for line in report.splitlines():
        m = re.match(r'\s+([\d.]+)%\s+\[.\]\s+(.*)', line)
        if not m:
            continue
        for stage, regex in STAGES:
            if re.search(regex, m.group(2)):
                out[stage] += float(m.group(1))
                break
    return out


def main():
    argv = sys.argv[1:]
    unit = ['scan', 'json', 'normalise']
    if argv[:1] == ['--unit']:
        unit = argv[1].split(',')
        argv = argv[2:]
    if len(argv) < 4 or '--' not in argv:
        sys.exit(__doc__)
    names = [stage for stage, _ in STAGES]
    if any(u not in names for u in unit):
        sys.exit('unknown unit stage; stages: ' + ', '.join(names))
    runs = int(argv[0])
    split = argv.index('--')
    binaries, args = argv[1:split], argv[split + 1:]
    results = {b: collections.defaultdict(list) for b in binaries}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, 'perf.data')
        for _ in range(runs):
            for binary in binaries:
                s = shares(binary, args, data)
                base = sum(s[u] for u in unit)
                if base == 0:
                    sys.exit('no samples in the unit stages ' + ','.join(unit))
                for stage in names:
                    results[binary][stage].append(s[stage] / base)
                results[binary]['total'].append(100.0 / base)
    print('per sample of ' + '+'.join(unit) + f', mean (sd) of {runs} runs')
    for binary in binaries:
        cells = [f'{k} {statistics.mean(v):.3f} ({statistics.pstdev(v):.3f})'
                 for k, v in results[binary].items() if k not in unit]
        print(f'{binary}: ' + ', '.join(cells))


if __name__ == '__main__':
    main()
