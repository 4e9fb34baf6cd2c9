"""The stages of a `neardup` profile, shared by pipeline_stages.py and kernel_shares.py.

`record` runs a command under `perf record`; `symbol_shares` reads the
report as (symbol, percent of all samples) pairs, kernel symbols marked
"[k] " and oneTBB's "libtbb: "; `stage_of` names the first stage of STAGES
whose pattern a symbol matches, or "the rest". Both scripts split a profile
by this one table, so their stages agree.
"""
import re
import subprocess

# (short name or None, stage, symbol regex), first match wins; [k] marks
# kernel symbols. The short names are kernel_shares.py's --unit names.
_TABLE = [
    ('xxh3', 'token hash (XXH3 / sdbm / FNV, stopwords)',
     r'Xxh3|Sdbm|Fnv|TokenHasher|Stopword'),
    ('scan', 'tokenise (block scanner, segmentation)', r'TokenScanner|Segment|ScanTokens'),
    ('shingles', 'shingles (Mix64 + windows)', r'Horner|Mix64Many|ShingleBatch|ShingleHasher'),
    ('normalise', 'normalise', r'Normaliz|AppendAscii|FoldAvx|utf8proc'),
    ('bottomk', 'bottom-k (filter, sort, unique)',
     r'BottomK|BucketSort|BucketNumbers|InsertionSort|FilterInRange|PrefixSums|Unique|MergeUnique|ScatterByBucket'),
    ('kvalue', 'k-value MinHash', r'KValue'),
    ('simhash', 'SimHash counts', r'CountBits|SimHashAccumulator'),
    ('driver', 'fingerprinter driver (AddFeaturesBatched, ComputeBatch)',
     r'CpuFingerprinter|ComputeInto|FingerprintBatch'),
    ('json', 'JSON scan (flat scan + unescape, simdjson)',
     r'ScanAndUnescape|FlatRecord|ScanString|simdjson|JsonlRecord|Unescape|ParseJsonlBlock|'
     r'IsJsonNumber|AssignLineIds'),
    ('memchr', 'line split (memchr: first read of the bytes)', r'memchr|memrchr'),
    # AppendId (deleted in session 16) stays for the binaries before it
    # (kernel_shares.py compares against them, e.g. base16).
    ('output', 'output (ids, hex digits, JSON lines)',
     r'WriteDigits|AppendFingerprint|AppendHex|AppendId|OutputFile|FormatFingerprint|'
     r'AppendJson|Hex|AppendHead|WriteHeadTail|VerbatimJsonPrefix'),
    (None, 'LSH candidates (pairs, clusters, dedup)', r'FillBand|GroupBand|Lsh|Candidate'),
    (None, 'LSH parameter search (libm)', r'expm1|ieee754|log1p|__exp|__pow|__log'),
    (None, 'dedup kept records', r'IsWholeLine|KeptRecords|CopyKept'),
    (None, 'start-up (dynamic loader, tables)',
     r'do_lookup|_dl_|check_match|dl_main|strcmp|BuildContextFreeTable|CpuSupports|'
     r'_init|Table|AddEntries|FillIdentityBitmaps'),
    ('kernel', 'kernel: page faults, mapping, unmapping, scheduling', r'^\[k\]'),
    ('copies', 'copies and fills (memmove, memset)', r'memmove|memcpy|memset'),
    ('alloc', 'allocation', r'malloc|free|operator new|operator delete|_int_'),
    # The library's own code; a parallel_for body inlined into the binary's
    # tbb::start_for<...> is work of the caller's stage and stays in "the rest".
    (None, 'oneTBB (scheduler)', r'^libtbb: '),
]

# (stage, symbol regex), in _TABLE's order.
STAGES = [(stage, pattern) for _, stage, pattern in _TABLE]
# Short name -> stage.
SHORT_NAMES = {short: stage for short, stage, _ in _TABLE if short is not None}

REST = 'the rest'


def record(command, freq, data, stdout=subprocess.DEVNULL, stderr=None):
    """`perf record -q -F FREQ -o DATA -- COMMAND`; raises CalledProcessError on failure."""
    subprocess.run(['perf', 'record', '-q', '-F', str(freq), '-o', data, '--'] + command,
                   stdout=stdout, stderr=stderr, check=True)


def symbol_shares(data):
    """[(symbol, percent of all samples)] of DATA's report, in the report's order."""
    report = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort',
                             'dso,symbol', '--stdio', '-g', 'none'],
                            capture_output=True, text=True, check=True).stdout
    shares = []
    for line in report.splitlines():
        m = re.match(r'\s*([\d.]+)%\s+(\S+)\s+(\[.\])\s+(.*\S)', line)
        if not m:
            continue
        name = ('[k] ' if m.group(3) == '[k]' else '') + m.group(4)
        if m.group(2).startswith('libtbb'):
            name = 'libtbb: ' + name
        shares.append((name, float(m.group(1))))
    return shares


def stage_of(name):
    """The first stage whose pattern NAME matches, else REST."""
    for stage, pattern in STAGES:
        if re.search(pattern, name):
            return stage
    return REST
