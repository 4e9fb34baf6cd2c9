#!/usr/bin/python3
"""Cycles per input byte of each stage of one whole `neardup` command.

Runs the command under `perf record` RUNS times (stdout to /dev/null), and
without it as often for the CPU time,
groups the samples' symbols into the pipeline's stages (perf_stages.py's
table: first match wins) and prints, for each stage, its share of the samples and
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
import resource
import subprocess
import sys
import tempfile

from perf_stages import REST, STAGES, record, stage_of, symbol_shares


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
            record(args.command, args.freq, data)
            for name, percent in symbol_shares(data):
                share = percent / args.runs
                symbols[name] += share
                shares[stage_of(name)] += share
    cycles = best_cpu * args.ghz * 1e9 / args.bytes
    print(f'# {" ".join(args.command)}')
    print(f'# best CPU {best_cpu:.3f} s of {args.runs} runs (without perf), {args.bytes / 1e6:.1f} MB, '
          f'{args.bytes / 1e6 / best_cpu:.0f} MB/s of CPU; {cycles:.2f} c/B at {args.ghz} GHz')
    print('| stage | share | c/B |')
    print('|---|---|---|')
    for stage in [stage for stage, _ in STAGES] + [REST]:
        if shares[stage] > 0:
            print(f'| {stage} | {shares[stage]:.1f} % | {shares[stage] / 100 * cycles:.2f} |')
    print('\nlargest symbols of "the rest":')
    rest = [(s, n) for n, s in symbols.items() if stage_of(n) == REST]
    for share, name in sorted(rest, reverse=True)[:8]:
        print(f'  {share:5.2f} %  {name[:100]}')


if __name__ == '__main__':
    main()
