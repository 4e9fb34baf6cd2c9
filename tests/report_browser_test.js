// The HTML report in a real browser (issue 17): builds a report with the CLI
// from a small corpus holding a planted shared passage (with multi-byte
// characters) and hostile texts, opens it in headless Chromium driven over
// the DevTools protocol (--remote-debugging-pipe, Node's standard library
// only), and checks what a person would see: the numbers equal the JSON
// lines, the plots and tables render, no hostile text ran, the pair view
// highlights the planted passage on both sides at its offsets and links
// them, the word comparison marks the changed words, search filters rows,
// sorting sorts, and nothing was logged as an error; then the same
// collection served live by `neardup serve` at /ui/ shows the same, and a
// stream's page there shows its near-duplicate answers with their
// passages. Saves screenshots in
// the work directory (under the build tree, never committed).
//
// usage: node report_browser_test.js NEARDUP_BINARY WORK_DIR
// Exit 0: passed; 1: failed; 77: skipped (no Chromium).
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const [neardup, workDir] = process.argv.slice(2);
const SKIP = 77;
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(chromium)) {
  console.log(`SKIP: ${chromium} not found (scripts/install_deps.sh installs Debian's chromium)`);
  process.exit(SKIP);
}

fs.rmSync(workDir, { recursive: true, force: true });
fs.mkdirSync(workDir, { recursive: true });

// --- the corpus ------------------------------------------------------------
// The planted passage: ends on a word, preceded by different words in both
// documents, so the passage is exactly these words.
const planted = 'the über naïve café committee agreed that every harbour wall built before ' +
    'nineteen fifty must be inspected twice a year by two independent engineers ' +
    'who report directly to the regional water board and publish their findings';
const hostileId = "<script>document.title='PWNED'</script>";
// Two hostile documents that share a benign sentence; the markup of each is
// its own, so it lies outside the highlighted passage (plain text nodes)
// as well as in the tables.
const benign = 'and the rest of a long sentence that makes this document long enough ' +
    'to be a near duplicate of its twin in every way that the shingles can tell';
const hostileText = '"onload="document.title=\'PWNED\'" </script><script>document.body.dataset.pwned=2</script> ' +
    benign + ' <!-- <b>bold</b>';
const hostileTwin = '<img src=x onerror="document.body.dataset.pwned=1"> ' + benign +
    ' <svg onload="document.title=\'PWNED\'"></svg>';
const docs = [
  { id: 'essay-original', text: 'Ünïcödé 日本 opening words differ here: ' + planted + ' final alpha words' },
  { id: 'essay-copy', text: 'Another start\n' + '\n'.repeat(120) + planted + ' closing beta words' },
  { id: hostileId, text: hostileText },
  { id: 'hostile-twin', text: hostileTwin },
  { id: 'unrelated', text: 'a document about something else entirely with its own words' },
];
const corpus = path.join(workDir, 'corpus.jsonl');
fs.writeFileSync(corpus, docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
const pairsFile = path.join(workDir, 'pairs.jsonl');
const clustersFile = path.join(workDir, 'clusters.jsonl');
const report = path.join(workDir, 'report.html');
const run = (args) => execFileSync(neardup, args, { stdio: ['ignore', 'pipe', 'pipe'] });
run(['pairs', '--threshold', '0.3', '-q', corpus, '-o', pairsFile]);
run(['clusters', '--threshold', '0.3', '-q', corpus, '-o', clustersFile]);
run(['report', '--pairs', pairsFile, '--clusters', clustersFile, '--keep', 'longest', '-q',
     '--page-size', '2', corpus, '-o', report]);
const lines = (file) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
const pairs = lines(pairsFile);
const clusters = lines(clustersFile);

// --- the browser -----------------------------------------------------------
let server = null;  // `neardup serve`, step 9
const userDataDir = fs.mkdtempSync(path.join(workDir, 'chromium-profile-'));
const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-extensions', '--mute-audio',
  '--disable-dev-shm-usage',
  `--user-data-dir=${userDataDir}`, '--remote-debugging-pipe', '--window-size=1200,900', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let browserLog = '';
browser.stderr.on('data', (d) => { browserLog += d; });
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];

let nextId = 1;
const waiting = new Map();
const listeners = [];
let buffered = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  let end;
  while ((end = buffered.indexOf(0)) >= 0) {
    const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
    buffered = buffered.subarray(end + 1);
    if (message.id !== undefined && waiting.has(message.id)) {
      const { resolve, reject } = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    } else {
      listeners.forEach((listener) => listener(message));
    }
  }
});
function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
function waitFor(predicate, what, ms = 15000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    listeners.push((message) => {
      if (predicate(message)) { clearTimeout(timer); resolve(message); }
    });
  });
}

const failures = [];
function check(condition, what, detail = '') {
  if (!condition) failures.push(what + (detail === '' ? '' : `: ${JSON.stringify(detail)}`));
}

async function main() {
  const targets = await send('Target.getTargets');
  const page = targets.targetInfos.find((t) => t.type === 'page');
  const { sessionId } = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
  const errors = [];
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === 'Runtime.exceptionThrown') errors.push(m.params.exceptionDetails.text);
    if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error') errors.push(JSON.stringify(m.params.args));
    if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') errors.push(m.params.entry.text);
  });
  await send('Page.enable', {}, sessionId);
  await send('Runtime.enable', {}, sessionId);
  await send('Log.enable', {}, sessionId);
  const loaded = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the page load');
  await send('Page.navigate', { url: 'file://' + report }, sessionId);
  await loaded;
  const evaluate = async (expression) => {
    const result = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (result.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(result.exceptionDetails)}`);
    return result.result.value;
  };
  const screenshot = async (name) => {
    const shot = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId);
    fs.writeFileSync(path.join(workDir, name), Buffer.from(shot.data, 'base64'));
  };

  // 1. It rendered, and the numbers are the JSON lines'.
  check(await evaluate('document.body.dataset.ready') === '1', 'the script ran to its end');
  const summary = await evaluate(`Object.fromEntries([...document.querySelectorAll('#summary dd')]
      .map((dd) => [dd.dataset.key, dd.textContent]))`);
  check(summary.pairs === String(pairs.length), 'summary pairs = pairs.jsonl lines', [summary.pairs, pairs.length]);
  check(summary.clusters === String(clusters.length), 'summary clusters = clusters.jsonl lines', summary.clusters);
  check(summary.documents === String(docs.length), 'summary documents', summary.documents);
  // Bytes removed under --keep longest: every member but the longest of each cluster.
  const bytes = (id) => Buffer.byteLength(docs.find((d) => d.id === id).text);
  const removed = clusters.reduce((sum, c) => {
    const lengths = c.ids.map(bytes);
    return sum + lengths.reduce((a, b) => a + b, 0) - Math.max(...lengths);
  }, 0);
  check(summary.bytes_removed === String(removed), 'summary bytes removed', [summary.bytes_removed, removed]);
  const plotTotal = await evaluate(`[...document.querySelectorAll('#plot-similarity rect.bar title')]
      .reduce((sum, t) => sum + Number(t.textContent.split(': ')[1]), 0)`);
  check(plotTotal === pairs.length, 'the similarity histogram counts every pair', plotTotal);
  check(await evaluate(`document.querySelectorAll('#plot-clusters rect.bar').length`) >= 1, 'cluster size plot drawn');
  const rows = await evaluate(`document.querySelectorAll('#tab-pairs tbody tr').length`);
  check(rows === Math.min(2, pairs.length), 'the pairs table shows one page of rows', rows);
  const pageInfo = await evaluate(`document.querySelector('#tab-pairs .info').textContent`);
  check(pageInfo.endsWith(`of ${pairs.length}`), 'the pager counts every pair', pageInfo);

  // 2. The hostile texts are text: nothing ran, nothing became markup.
  check(await evaluate('document.title') !== 'PWNED', 'no hostile script set the title');
  check(await evaluate('document.body.dataset.pwned') === undefined, 'no hostile handler ran');
  check(await evaluate(`document.querySelectorAll('img').length`) === 0, 'no hostile element was created');
  check(await evaluate(`document.querySelectorAll('script').length`) === 2, 'only the report\'s own scripts');
  const hostileShown = await evaluate(`(async () => {
      const search = document.querySelector('#tab-pairs input.search');
      search.value = ${JSON.stringify(hostileId.slice(0, 12))};
      search.dispatchEvent(new Event('input'));
      const row = document.querySelector('#tab-pairs tbody tr');
      const ids = [...row.querySelectorAll('td.id')].map((td) => td.textContent);
      row.click();
      const a = document.getElementById('side-a').textContent, b = document.getElementById('side-b').textContent;
      return { ids, a, b };
    })()`);
  check(hostileShown.ids.includes(hostileId), 'the hostile id is shown as text', hostileShown.ids);
  check([hostileShown.a, hostileShown.b].sort().join('|') === [hostileText, hostileTwin].sort().join('|'),
        'the hostile texts are shown as text', hostileShown);
  check(await evaluate(`document.querySelectorAll('#pair-view b, #pair-view svg, #pair-view img').length`) === 0,
        'no hostile markup in the pair view');
  await new Promise((resolve) => setTimeout(resolve, 300));  // time for an error event to fire
  check(await evaluate('document.body.dataset.pwned') === undefined && await evaluate('document.title') !== 'PWNED',
        'showing the hostile pair ran nothing');

  // 3. Search filters rows.
  const essayPairs = pairs.filter((p) => (p.a + '\n' + p.b).toLowerCase().includes('essay')).length;
  const filtered = await evaluate(`(() => {
      const search = document.querySelector('#tab-pairs input.search');
      search.value = 'ESSAY';
      search.dispatchEvent(new Event('input'));
      return [document.querySelectorAll('#tab-pairs tbody tr').length,
              document.querySelector('#tab-pairs .info').textContent];
    })()`);
  check(essayPairs === 1 && filtered[0] === 1, 'search keeps the essay pair only', [essayPairs, filtered]);
  check(filtered[1].includes(`filtered from ${pairs.length}`), 'the pager says rows were filtered', filtered[1]);

  // 4. The pair view highlights the planted passage on both sides, at its offsets.
  const view = await evaluate(`(() => {
      document.querySelector('#tab-pairs tbody tr').click();
      const side = (id) => {
        const pane = document.getElementById(id);
        let offset = 0;
        const marks = [];
        for (const node of pane.childNodes) {
          if (node.nodeName === 'MARK') marks.push({ p: node.dataset.p, text: node.textContent, offset });
          offset += node.textContent.length;
        }
        return { text: pane.textContent, marks };
      };
      return { a: side('side-a'), b: side('side-b') };
    })()`);
  const markA = view.a.marks.find((m) => m.text === planted);
  check(markA !== undefined, 'side A highlights exactly the planted passage', view.a.marks);
  if (markA) {
    check(markA.offset === docs[0].text.indexOf(planted), 'side A passage at its UTF-16 offset',
          [markA.offset, docs[0].text.indexOf(planted)]);
    const markB = view.b.marks.find((m) => m.p === markA.p);
    check(markB !== undefined && markB.text === planted, 'side B highlights the same passage', view.b.marks);
    if (markB) {
      check(markB.offset === docs[1].text.indexOf(planted), 'side B passage at its UTF-16 offset',
            [markB.offset, docs[1].text.indexOf(planted)]);
    }
    const colours = await evaluate(`[...document.querySelectorAll('mark[data-p="${markA.p}"]')]
        .map((m) => getComputedStyle(m).backgroundColor)`);
    check(colours.length === 2 && colours[0] === colours[1], 'both sides in the same colour', colours);
    // Clicking A's passage scrolls B to it.
    const scrolled = await evaluate(`(() => {
        const b = document.getElementById('side-b');
        b.scrollTop = 0;
        document.querySelector('#side-a mark[data-p="${markA.p}"]').click();
        const mark = b.querySelector('mark[data-p="${markA.p}"]');
        return { top: b.scrollTop, flash: mark.classList.contains('flash'), scrollable: b.scrollHeight > b.clientHeight };
      })()`);
    check(scrolled.scrollable && scrolled.top > 0 && scrolled.flash, 'clicking side A scrolls side B to the passage', scrolled);
  }
  await screenshot('report-pair-view.png');

  // 5. The word comparison marks the words that differ.
  const diff = await evaluate(`(() => {
      [...document.querySelectorAll('#pair-view .modes button')][1].click();
      const pane = document.getElementById('word-diff');
      return { visible: !pane.classList.contains('hidden'),
               del: [...pane.querySelectorAll('del')].map((e) => e.textContent.trim()),
               ins: [...pane.querySelectorAll('ins')].map((e) => e.textContent.trim()),
               stats: pane.querySelector('.diff-stats').textContent };
    })()`);
  check(diff.visible, 'the word comparison is shown');
  check(diff.del.join(' ').includes('final alpha') && diff.del.join(' ').includes('日本'),
        'removed words are struck out', diff.del);
  check(diff.ins.join(' ').includes('closing beta'), 'added words are marked', diff.ins);
  // In both: the planted passage and the last word.
  check(diff.stats.startsWith(`${planted.split(' ').length + 1} words in both`), 'the word counts', diff.stats);
  await screenshot('report-word-diff.png');

  // 6. Sorting: the similarity column, descending on the first click.
  const sorted = await evaluate(`(() => {
      const search = document.querySelector('#tab-pairs input.search');
      search.value = '';
      search.dispatchEvent(new Event('input'));
      [...document.querySelectorAll('#tab-pairs th')].find((th) => th.textContent === 'similarity').click();
      return [...document.querySelectorAll('#tab-pairs tbody tr')].map((tr) => Number(tr.children[3].textContent));
    })()`);
  const best = Math.max(...pairs.map((p) => p.similarity));
  check(Math.abs(sorted[0] - best) < 1e-4, 'sorting puts the most similar pair first', [sorted, best]);

  // 7. The cluster view names the kept member and the rule.
  const cluster = await evaluate(`(() => {
      document.querySelector('nav#tabs button[data-tab="clusters"]').click();
      document.querySelector('#tab-clusters tbody tr').click();
      return document.querySelector('#cluster-view').textContent;
    })()`);
  check(cluster.includes('Kept: ') && cluster.includes('--keep longest'), 'the cluster view says what was kept and why', cluster);

  // 8. A collection's report: the pairs `similar` lists, containment
  // columns, the best-containment plot, and the same planted passage.
  const archive = path.join(workDir, 'archive');
  run(['index', 'create', archive]);
  run(['index', 'add', '-q', archive, corpus]);
  const similar = execFileSync(neardup, ['similar', '-q', archive, '--top', '5', '--min', '0.1'])
      .toString().split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const unordered = new Set(similar.map((r) => [r.a, r.b].sort().join('\n')));
  const collectionReport = path.join(workDir, 'collection.html');
  run(['report', '-q', '--collection', archive, '--top', '5', '--min', '0.1', '-o', collectionReport]);
  const reloaded = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the second page');
  await send('Page.navigate', { url: 'file://' + collectionReport + '#pair=1' }, sessionId);
  await reloaded;
  const shown = await evaluate(`({
      ready: document.body.dataset.ready,
      pairs: document.querySelector('#summary dd[data-key="pairs"]').textContent,
      columns: [...document.querySelectorAll('#tab-pairs th')].map((th) => th.textContent),
      best: document.querySelectorAll('#plot-best rect.bar').length,
      marks: [...document.querySelectorAll('#side-a mark, #side-b mark')].map((m) => m.textContent) })`);
  check(shown.ready === '1', 'the collection report ran');
  check(shown.pairs === String(unordered.size), 'collection pairs = the unordered pairs of similar', [shown.pairs, unordered.size]);
  check(shown.columns.includes('A in B') && shown.columns.includes('B in A'), 'containment columns', shown.columns);
  check(shown.best === 20, 'the best-containment plot', shown.best);
  check(shown.marks.filter((t) => t === planted).length === 2, 'the collection pair view highlights the planted passage on both sides', shown.marks);
  await screenshot('report-collection.png');

  // 9. The same collection served live by `neardup serve` at /ui/: the
  // index links to it, and its page shows the same pairs and passage.
  let hasServe = true;  // a build without cpp-httplib has no `serve`
  try { execFileSync(neardup, ['serve', '--help'], { stdio: 'ignore' }); } catch (e) { hasServe = false; }
  if (!hasServe) {
    console.log('note: this neardup has no serve command; /ui/ not checked');
    check(errors.length === 0, 'no console errors or exceptions', errors);
    return;
  }
  const dataDir = path.join(workDir, 'serve-data');
  server = spawn(neardup, ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir,
                           '--collection', 'archive=' + archive], { stdio: ['ignore', 'ignore', 'pipe'] });
  let serverLog = '';
  const port = await new Promise((resolve, reject) => {
    server.stderr.on('data', (chunk) => {
      serverLog += chunk;
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(serverLog);
      if (match) resolve(match[1]);
    });
    server.once('exit', () => reject(new Error('neardup serve exited: ' + serverLog)));
  });
  const base = `http://127.0.0.1:${port}`;
  const indexLoaded = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the /ui/ index');
  await send('Page.navigate', { url: base + '/ui/' }, sessionId);
  await indexLoaded;
  const links = await evaluate(`[...document.querySelectorAll('a')].map((a) => a.getAttribute('href'))`);
  check(links.includes('/ui/collections/archive'), 'the /ui/ index links to the served collection', links);
  const liveLoaded = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the live report');
  await send('Page.navigate', { url: base + '/ui/collections/archive?top=5&min=0.1#pair=1' }, sessionId);
  await liveLoaded;
  const live = await evaluate(`({
      ready: document.body.dataset.ready,
      pairs: document.querySelector('#summary dd[data-key="pairs"]').textContent,
      marks: [...document.querySelectorAll('#side-a mark, #side-b mark')].map((m) => m.textContent) })`);
  check(live.ready === '1', 'the live report ran (served with its CSP header)');
  check(live.pairs === String(unordered.size), 'live pairs = the unordered pairs of similar', [live.pairs, unordered.size]);
  check(live.marks.filter((t) => t === planted).length === 2, 'the live pair view highlights the planted passage on both sides', live.marks);
  await screenshot('report-live.png');

  // 10. A stream that keeps texts, at /ui/streams/NAME: the pairs are the
  // JSON list's, clicking one shows both texts with the passages of the
  // passages route highlighted on both sides, a <script> text runs nothing,
  // and the search form asks the server for the matching answers only.
  const api = async (method, route, body, type = 'application/json') => {
    const response = await fetch(base + route, { method, body, headers: { 'Content-Type': type } });
    const text = await response.text();
    check(response.ok, `${method} ${route} succeeds`, text);
    return text;
  };
  await api('PUT', '/v1/streams/wire', JSON.stringify({ threshold: 0.3, keep_texts: true }));
  const streamDocs = [
    { id: 'wire-original', text: 'Ünïcödé 日本 first report: ' + planted + ' more on the wire', time: 100 },
    { id: 'wire-copy', text: '<script>document.body.dataset.pwned=3</script> ' + planted + ' (updated)', time: 110 },
    { id: 'other-story', text: benign + ' and a tail of its own', time: 120 },
    { id: 'other-story-copy', text: 'Repost: ' + benign, time: 130 },
  ];
  await api('POST', '/v1/streams/wire/documents', streamDocs.map((d) => JSON.stringify(d)).join('\n'),
            'application/x-ndjson');
  const listed = JSON.parse(await api('GET', '/v1/streams/wire/near_duplicates'));
  check(listed.answers.map((a) => a.id).join() === 'other-story-copy,wire-copy',
        'the stream lists its two near-duplicates, newest first', listed);
  const entry = JSON.parse(await api('GET', '/v1/streams/wire/documents/wire-copy?passages=true'));
  const slice = (text, range) => Buffer.from(text, 'utf8').subarray(range[0], range[1]).toString('utf8');
  const expectedPassages = entry.passages.map((p) => [slice(entry.of_text, p.match), slice(entry.text, p.query)]);
  check(expectedPassages.length === 1 && expectedPassages[0][0] === planted && expectedPassages[0][1] === planted,
        'the passages route gives the planted passage in both texts', entry.passages);
  const streamLoaded = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the stream page');
  await send('Page.navigate', { url: base + '/ui/streams/wire' }, sessionId);
  await streamLoaded;
  const streamPage = await evaluate(`(() => {
      const rows = [...document.querySelectorAll('#tab-pairs tbody tr')];
      const ids = rows.map((tr) => [...tr.querySelectorAll('td.id')].map((td) => td.textContent));
      const row = rows.find((tr) => tr.querySelectorAll('td.id')[1].textContent === 'wire-copy');
      row.click();
      const marks = (id) => [...document.querySelectorAll('#' + id + ' mark')].map((m) => [m.dataset.p, m.textContent]);
      return { ready: document.body.dataset.ready, ids,
               pairs: document.querySelector('#summary dd[data-key="pairs"]').textContent,
               a: marks('side-a'), b: marks('side-b'),
               bText: document.getElementById('side-b').textContent,
               scripts: document.querySelectorAll('script').length };
    })()`);
  check(streamPage.ready === '1', 'the stream page ran (served with its CSP header)');
  check(streamPage.pairs === String(listed.answers.length), 'stream page pairs = the listed answers', streamPage);
  check(JSON.stringify(streamPage.ids) === JSON.stringify(listed.answers.map((a) => [a.of, a.id])),
        'the stream page rows are the listed answers (A = kept, B = near-duplicate)', streamPage.ids);
  check(JSON.stringify(streamPage.a.map((m) => m[1])) === JSON.stringify(expectedPassages.map((p) => p[0])) &&
        JSON.stringify(streamPage.b.map((m) => m[1])) === JSON.stringify(expectedPassages.map((p) => p[1])) &&
        streamPage.a.length > 0 && streamPage.a[0][0] === streamPage.b[0][0],
        'the stream pair view highlights the route\'s passages on both sides', streamPage);
  check(streamPage.bText === streamDocs[1].text, 'the <script> text is shown as text', streamPage.bText);
  await new Promise((resolve) => setTimeout(resolve, 300));
  check(await evaluate('document.body.dataset.pwned') === undefined && streamPage.scripts === 2,
        'the stream page ran no hostile script');
  await screenshot('report-stream.png');
  const searched = waitFor((m) => m.sessionId === sessionId && m.method === 'Page.loadEventFired', 'the searched stream page');
  await evaluate(`(() => {
      const form = document.getElementById('live-search');
      form.querySelector('input[name="q"]').value = 'OTHER';
      form.submit();
    })()`);
  await searched;
  const found = await evaluate(`({ url: location.href,
      ids: [...document.querySelectorAll('#tab-pairs tbody tr td.id')].map((td) => td.textContent) })`);
  check(found.url.includes('q=OTHER') && found.ids.join() === 'other-story,other-story-copy',
        'the search form finds the one matching answer', found);

  check(errors.length === 0, 'no console errors or exceptions', errors);
}

// Ends the browser (politely, then not), removes its profile, exits.
function finish(code) {
  if (server) server.kill('SIGTERM');
  const exited = new Promise((resolve) => {
    if (browser.exitCode !== null || browser.signalCode !== null) resolve();
    else browser.once('exit', resolve);
  });
  send('Browser.close').catch(() => {});
  const kill = setTimeout(() => browser.kill('SIGKILL'), 3000);
  exited.then(() => {
    clearTimeout(kill);
    fs.rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5 });
    process.exit(code);
  });
}

const deadline = setTimeout(() => { console.log('FAIL: timed out'); browser.kill('SIGKILL'); process.exit(1); }, 90000);
main().then(() => {
  clearTimeout(deadline);
  failures.forEach((f) => console.log('FAIL: ' + f));
  if (failures.length === 0) {
    console.log(`report_browser_test: all checks passed (${pairs.length} pairs; screenshots in ${workDir})`);
  }
  finish(failures.length ? 1 : 0);
}).catch((error) => {
  clearTimeout(deadline);
  console.log('FAIL: ' + error.stack);
  console.log(browserLog.slice(-2000));
  finish(1);
});
