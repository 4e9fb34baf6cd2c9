#!/usr/bin/python3
"""Before/after of one corpus-wide command, stage by stage.

Runs `BASE ARGS... --profile` and `NEW ARGS... --profile` alternately RUNS
times each (stdout to /dev/null), and prints for each binary the minimum over
the runs of every stage's wall / process-CPU / main-thread-CPU seconds (the
`--profile` line of `pairs`, `clusters` and `dedup`), the peak RSS, and a
projection of the wall time on an idle machine with the run's thread count
n: the sum over the stages of max(main-thread CPU, CPU / n, serial-filter
CPU) (the fourth figure, printed since session 11; 0 for older binaries). On a loaded
machine the wall times mean little; CPU times and the projection are what
can be compared.

BEFORE_EACH (environment, optional): a shell command run before every run,
outside its timing. A command that writes `-o FILE` should set it to
`rm -f FILE`, so that no run pays for freeing the previous run's file (the
other build's): on this VM's journal-less ext4 mounted `discard` the rename
over a 255 MB file waits 0.10-0.13 s for its blocks' discard.

  bench/ab_profile.py RUNS BASE_BINARY NEW_BINARY ARGS...
  e.g. bench/ab_profile.py 5 /tmp/neardup-base build/release/neardup \\
         dedup --threshold 0.8 --quiet --threads 2 cache/neardup_corpora/few_dups.jsonl
"""
import collections
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    runs = int(sys.argv[1])
    binaries = {'base': sys.argv[2], 'new': sys.argv[3]}
    args = sys.argv[4:] + ['--profile']
    best = {name: collections.OrderedDict() for name in binaries}
    rss = {}
    threads = 1
    for _ in range(runs):
        for name, binary in binaries.items():
            if os.environ.get('BEFORE_EACH'):
                subprocess.run(['bash', '-c', os.environ['BEFORE_EACH']], check=True)
            run = subprocess.run([binary] + args, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, check=True)
            line = [l for l in run.stderr.splitlines() if 'profile' in l][-1]
            threads = int(re.search(r'\((\d+) threads', line).group(1))
            rss[name] = re.search(r'peak RSS ([\d.]+ MB, \d+ bytes/document)', line).group(1)
            stages = best[name]
            for stage, wall, cpu, main_cpu, serial_cpu in re.findall(
                    r'(\w+) ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))?', line):
                value = (float(wall), float(cpu), float(main_cpu), float(serial_cpu or 0))
                old = stages.get(stage, value)
                stages[stage] = tuple(min(a, b) for a, b in zip(old, value))
    for name in binaries:
        stages = best[name]
        projection = sum(max(main_cpu, cpu / threads, serial_cpu)
                         for stage, (_, cpu, main_cpu, serial_cpu) in stages.items()
                         if stage != 'total')
        print('%s: %s | projection %.3f s | peak RSS %s' % (
            name, ' '.join('%s %.3f/%.3f/%.3f/%.3f' % (stage, *value)
                           for stage, value in stages.items()),
            projection, rss[name]))


if __name__ == '__main__':
    main()
