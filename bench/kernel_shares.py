#!/usr/bin/python3
"""Kernel-normalised before/after of one whole command, on a loaded machine.

Runs `BINARY ARGS...` under `perf record -F 10000` for each binary in turn
(stdout to /dev/null), RUNS rounds, each round starting one binary later
than the one before (rotated: over N rounds each of N binaries runs in
each place once; for two, every other round is reversed). Each run's
samples are grouped into the stages of bench/perf_stages.py (the table
bench/pipeline_stages.py uses; first match wins). Each stage's samples
are divided by those of the UNIT stages, which are code that the binaries
share unchanged, and the mean and standard deviation over the runs are
printed per binary, with each binary's mean over the first one's and its
median over the first one's median (`med`: one preempted run moves it
less). `the rest` is the samples that match no stage; `total` is all
samples per unit sample: the run's CPU in units of the unchanged code.
When other work preempts the runs, their CPU times move by 10-30 %, but
these ratios move by only a few percent (docs/BENCHMARKS.md, "Session 16,
scan and hash", has an A/A check).

A stage counts only the samples of the symbols its pattern matches, so a
kernel inlined into a caller of another stage in one build moves its
samples there. The script warns, and exits with status 1 after the table,
when a stage has no samples in any run of one binary but at least 0.5 % of
the samples of another.

Pick UNIT so that it holds no code that the change touches, e.g.
--unit scan,json,normalise (the default) for a change to XXH3 or the
shingles, or --unit xxh3,shingles,json for a change to the scanner. Short
names: see perf_stages.SHORT_NAMES; a stage's full name works too.

  bench/kernel_shares.py [--unit A,B,...] [--freq F] RUNS BINARY [BINARY...] -- ARGS...
  e.g. bench/kernel_shares.py 10 /work/main/wt/base16/neardup build/release/neardup -- \\
         fingerprint --simhash --quiet --threads 1 /tmp/neardup_pipeline_bench/big.jsonl
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile

from perf_stages import REST, SHORT_NAMES, STAGES, record, stage_of, symbol_shares

SHORT_OF = {stage: short for short, stage in SHORT_NAMES.items()}
# A stage with no samples in one binary and at least this share (percent of
# all samples) in another is reported as a likely inlining or renaming.
MISSING_STAGE_PERCENT = 0.5


def parse_args():
    argv = sys.argv[1:]
    if '--' not in argv:
        sys.exit(__doc__ + '\nerror: no "--" before the arguments of the command')
    split = argv.index('--')
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--unit', default='scan,json,normalise',
                        help='comma-separated stages of unchanged code')
    parser.add_argument('--freq', type=int, default=10000, help='perf record -F')
    parser.add_argument('runs', type=int)
    parser.add_argument('binaries', nargs='+')
    args = parser.parse_args(argv[:split])
    args.command_args = argv[split + 1:]
    if args.runs < 1:
        parser.error('RUNS must be at least 1')
    names = [stage for stage, _ in STAGES]
    args.unit_stages = []
    for u in args.unit.split(','):
        stage = SHORT_NAMES.get(u, u)
        if stage not in names:
            parser.error(f'unknown unit stage {u!r}; short names: ' + ', '.join(SHORT_NAMES))
        args.unit_stages.append(stage)
    return args


def run_once(binary, args, freq, data):
    """{stage: percent of all samples} of one run of BINARY ARGS."""
    try:
        record([binary] + args, freq, data, stderr=subprocess.PIPE)
        shares = collections.Counter()
        for name, percent in symbol_shares(data):
            shares[stage_of(name)] += percent
        return shares
    except (OSError, subprocess.CalledProcessError) as e:
        stderr = getattr(e, 'stderr', None)
        if isinstance(stderr, bytes):
            stderr = stderr.decode(errors='replace')
        sys.exit(f'{e}\n{stderr or ""}'.rstrip())


def main():
    args = parse_args()
    unit = args.unit_stages
    # Keyed by position, so that an A/A run of one binary twice keeps two rows.
    labels = [f'#{i + 1} {b}' for i, b in enumerate(args.binaries)]
    ratios = {label: collections.defaultdict(list) for label in labels}
    percents = {label: collections.defaultdict(list) for label in labels}
    rows = [stage for stage, _ in STAGES] + [REST]
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, 'perf.data')
        for r in range(args.runs):
            # Each round starts one binary later: the binary run second in
            # a pair scored lower in an A/A check (docs/BENCHMARKS.md,
            # "Session 16, scan and hash"), and rotating puts every binary
            # in every place equally often (reversing alone would leave
            # the middle one of three always in the middle).
            pairs = list(zip(labels, args.binaries))
            start = r % len(pairs)
            order = pairs[start:] + pairs[:start]
            for label, binary in order:
                shares = run_once(binary, args.command_args, args.freq, data)
                base = sum(shares[u] for u in unit)
                if base == 0:
                    sys.exit(f'{label}: no samples in the unit stages')
                for stage in rows:
                    ratios[label][stage].append(shares[stage] / base)
                    percents[label][stage].append(shares[stage])
                ratios[label]['total'].append(100.0 / base)

    def name(stage):
        return SHORT_OF.get(stage, stage)

    print(f'# per sample of {"+".join(name(u) for u in unit)}, mean (sd) of {args.runs} runs '
          '(the order reversed every other round); med: ratio of the medians')
    print('| stage | ' + ' | '.join(labels) +
          ''.join(f' | #{i + 1}/#1 | med' for i in range(1, len(labels))) + ' |')
    print('|---' * (1 + 3 * len(labels) - 2) + '|')
    for stage in [s for s in rows if s not in unit] + ['total']:
        means = [statistics.mean(ratios[label][stage]) for label in labels]
        if max(means) < 0.0005:  # 0.000 in every column
            continue
        cells = [f'{m:.3f} ({statistics.pstdev(ratios[label][stage]):.3f})'
                 for m, label in zip(means, labels)]
        medians = [statistics.median(ratios[label][stage]) for label in labels]
        for m, med in zip(means[1:], medians[1:]):
            cells.append(f'{m / means[0]:.3f}' if means[0] else '-')
            cells.append(f'{med / medians[0]:.3f}' if medians[0] else '-')
        print(f'| {name(stage)} | ' + ' | '.join(cells) + ' |')

    missing = []
    for stage in rows:
        for label in labels:
            if any(percents[label][stage]):
                continue
            others = [o for o in labels
                      if statistics.mean(percents[o][stage]) >= MISSING_STAGE_PERCENT]
            if others:
                missing.append(f'warning: stage "{name(stage)}" has no samples in {label} but '
                               f'{statistics.mean(percents[others[0]][stage]):.1f} % in '
                               f'{others[0]}: inlined into another stage, or renamed?')
    if missing:
        print('\n'.join(missing), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
