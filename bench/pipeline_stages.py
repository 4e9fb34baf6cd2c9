#!/usr/bin/python3
"""Cycles per input byte of each stage of one whole `neardup` command.

Runs the command under `perf record` RUNS times (stdout to /dev/null), and
without it as often for the CPU time,
groups the samples' symbols into the pipeline's stages (the table below:
first match wins) and prints, for each stage, its share of the samples and
its cycles per input byte: share x the command's CPU time (user + sys, the
best of the runs without perf) x GHZ / the input's bytes. The VM this was written on has no
cycle counter, so the clock is the nominal one (GHZ, default 2.1); 1 GB/s
is then 2.1 cycles per byte. Stages as in docs/FINGERPRINT_SPEED.md,
"`neardup fingerprint` end to end: what bounds one thread".

  bench/pipeline_stages.py [--runs N] [--ghz G] [--freq F] BYTES BINARY ARGS...
  e.g. bench/pipeline_stages.py 256647303 build/release/neardup \\
         fingerprint --minhash --quiet --threads 1 /tmp/neardup_pipeline_bench/big.jsonl
"""
import argparse
import collections
import os
import re
import resource
import subprocess
import sys
import tempfile

# (stage, symbol regex), first match wins; [k] marks kernel symbols.
STAGES = [
    ('token hash (XXH3 / sdbm / FNV, stopwords)',
     r'Xxh3|Sdbm|Fnv|TokenHasher|Stopword'),
    ('tokenise (block scanner, segmentation)', r'TokenScanner|Segment|ScanTokens'),
    ('shingles (Mix64 + windows)', r'Horner|Mix64Many|ShingleBatch|ShingleHasher'),
    ('normalise', r'Normaliz|AppendAscii|FoldAvx|utf8proc'),
    ('bottom-k (filter, sort, unique)',
     r'BottomK|BucketSort|BucketNumbers|InsertionSort|FilterInRange|PrefixSums|Unique|MergeUnique|ScatterByBucket'),
    ('k-value MinHash', r'KValue'),
    ('SimHash counts', r'CountBits|SimHashAccumulator'),
    ('fingerprinter driver (AddFeaturesBatched, ComputeBatch)',
     r'CpuFingerprinter|ComputeInto|FingerprintBatch'),
    ('JSON scan (flat scan + unescape, simdjson)',
     r'ScanAndUnescape|FlatRecord|ScanString|simdjson|JsonlRecord|Unescape|ParseJsonlBlock|'
     r'IsJsonNumber|AssignLineIds'),
    ('line split (memchr: first read of the bytes)', r'memchr|memrchr'),
    ('output (ids, hex digits, JSON lines)',
     r'WriteDigits|AppendFingerprint|AppendHex|AppendId|OutputFile|FormatFingerprint|'
     r'AppendJson|Hex|AppendHead|WriteHeadTail|VerbatimJsonPrefix'),
    ('LSH candidates (pairs, clusters, dedup)', r'FillBand|GroupBand|Lsh|Candidate'),
    ('LSH parameter search (libm)', r'expm1|ieee754|log1p|__exp|__pow|__log'),
    ('dedup kept records', r'IsWholeLine|KeptRecords|CopyKept'),
    ('start-up (dynamic loader, tables)',
     r'do_lookup|_dl_|check_match|dl_main|strcmp|BuildContextFreeTable|CpuSupports|'
     r'_init|Table|AddEntries|FillIdentityBitmaps'),
    ('kernel: page faults, mapping, unmapping, scheduling', r'^\[k\]'),
    ('copies and fills (memmove, memset)', r'memmove|memcpy|memset'),
    ('allocation', r'malloc|free|operator new|operator delete|_int_'),
    # The library's own code; a parallel_for body inlined into the binary's
    # tbb::start_for<...> is work of the caller's stage and stays in "the rest".
    ('oneTBB (scheduler)', r'^libtbb: '),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=2)
    parser.add_argument('--ghz', type=float, default=2.1)
    parser.add_argument('--freq', type=int, default=5000, help='perf record -F')
    parser.add_argument('bytes', type=int)
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if not args.command:
        sys.exit('no command')
    shares = collections.defaultdict(float)
    symbols = collections.defaultdict(float)
    best_cpu = None
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, 'perf.data')
        for _ in range(args.runs):
            # The CPU time from a run without perf (its sampling costs a few
            # per cent); the shares from one with it.
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            with open(os.devnull, 'wb') as null:
                subprocess.run(args.command, stdout=null, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
            with open(os.devnull, 'wb') as null:
                subprocess.run(['perf', 'record', '-q', '-F', str(args.freq), '-o', data, '--'] +
                               args.command, stdout=null, check=True)
            report = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort',
                                     'dso,symbol', '--stdio', '-g', 'none'],
                                    capture_output=True, text=True, check=True).stdout
            for line in report.splitlines():
                m = re.match(r'\s*([\d.]+)%\s+(\S+)\s+(\[.\])\s+(.*\S)', line)
                if not m:
                    continue
                share = float(m.group(1)) / args.runs
                name = ('[k] ' if m.group(3) == '[k]' else '') + m.group(4)
                if m.group(2).startswith('libtbb'):
                    name = 'libtbb: ' + name
                symbols[name] += share
                for stage, pattern in STAGES + [('the rest', r'.')]:
                    if re.search(pattern, name):
                        shares[stage] += share
                        break
    cycles = best_cpu * args.ghz * 1e9 / args.bytes
    print(f'# {" ".join(args.command)}')
    print(f'# best CPU {best_cpu:.3f} s of {args.runs} runs (without perf), {args.bytes / 1e6:.1f} MB, '
          f'{args.bytes / 1e6 / best_cpu:.0f} MB/s of CPU; {cycles:.2f} c/B at {args.ghz} GHz')
    print('| stage | share | c/B |')
    print('|---|---|---|')
    for stage, _ in STAGES + [('the rest', '')]:
        if shares[stage] > 0:
            print(f'| {stage} | {shares[stage]:.1f} % | {shares[stage] / 100 * cycles:.2f} |')
    print('\nlargest symbols of "the rest":')
    rest = [(s, n) for n, s in symbols.items()
            if not any(re.search(p, n) for _, p in STAGES)]
    for share, name in sorted(rest, reverse=True)[:8]:
        print(f'  {share:5.2f} %  {name[:100]}')


if __name__ == '__main__':
    main()
