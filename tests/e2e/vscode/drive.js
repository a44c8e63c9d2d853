// Drives a real VS Code workbench (code-server) in Debian's Chromium with playwright-core and
// checks what a user sees of the transcript-ls extension on the demo session
// (fixtures/demo/README.md gives the expected values). Prints one line per check and
// `vscode: N passed, M failed`; exit status 1 when a check failed.
//
//   node drive.js --url http://127.0.0.1:PORT/?folder=WS --ws WS --art ARTIFACT_DIR
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const URL = arg('url');
const WS = arg('ws');
const ART = arg('art');
const DEMO = '3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl';

const t0 = Date.now();
const log = (...a) => console.log(`${String(Date.now() - t0).padStart(7)}ms`, ...a);
let passed = 0;
const failed = [];
function check(name, ok, detail) {
  if (ok) passed++;
  else failed.push(name);
  log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail === undefined ? '' : ': ' + (typeof detail === 'string' ? detail : JSON.stringify(detail))}`);
  return ok;
}
const eq = (name, got, want) =>
  check(name, JSON.stringify(got) === JSON.stringify(want), JSON.stringify(got) === JSON.stringify(want) ? got : `got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
const nbsp = (s) => s.replace(/\u00a0/g, ' ');

/** Runs a command through the palette (F1), waiting for the matching row before Enter. */
async function palette(page, label) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill('>' + label);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
}

/** Opens a workspace file through Quick Open. */
async function quickOpen(page, name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
}

/** Moves the cursor with Go to Line/Column (1-based line and column). */
async function gotoLine(page, line, col) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(col ? `${line}:${col}` : `${line}`);
  await page.keyboard.press('Enter');
  await page.waitForTimeout(200);
}

const activeEditor = (page) => page.locator('.editor-group-container.active .monaco-editor').first();

/** The rendered text of the visible lines of the active editor, keyed by line number. */
async function visibleLines(page) {
  return activeEditor(page).evaluate((ed) => {
    const out = {};
    const top = (el) => el.getBoundingClientRect().top;
    const nums = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].map((n) => [top(n), n.textContent.trim()]);
    for (const l of ed.querySelectorAll('.view-lines .view-line')) {
      const t = top(l);
      const hit = nums.find(([nt]) => Math.abs(nt - t) < 3);
      if (hit && hit[1]) out[hit[1]] = l.textContent.replace(/\u00a0/g, ' ');
    }
    return out;
  });
}

/** Text of the token inspector for the cursor position. */
async function inspectToken(page) {
  await palette(page, 'Developer: Inspect Editor Tokens and Scopes');
  const widget = page.locator('.token-inspect-widget');
  await widget.waitFor({ timeout: 15000 });
  await page.waitForFunction(() => {
    const w = document.querySelector('.token-inspect-widget');
    return w && !w.innerText.includes('Loading');
  }, null, { timeout: 15000 });
  return nbsp(await widget.innerText()).replace(/\s+/g, ' ');
}

async function shot(page, name) {
  const p = path.join(ART, name);
  await page.screenshot({ path: p });
  log(`screenshot ${p}`);
}

async function main(page) {
  const demo = fs.readFileSync(path.join(WS, DEMO), 'utf8').split('\n');

  await page.goto(URL);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  await page.locator('.explorer-folders-view').first().waitFor({ timeout: 60000 });
  log('workbench loaded');

  // 1. Open the demo transcript.
  await quickOpen(page, DEMO);
  await activeEditor(page).locator('.view-lines:has-text("permission-mode")').waitFor({ timeout: 30000 });
  log('editor shows the demo transcript');

  // 2. Code lenses on the gates (lines 23, 30, 33 are on screen): the eight-phase stepper.
  await page.locator('.codelens-decoration').first().waitFor({ timeout: 60000 });
  await page.waitForTimeout(500);
  const lenses = (await page.locator('.codelens-decoration').allInnerTexts()).map(nbsp);
  log('code lenses', JSON.stringify(lenses));
  check('code lens: gate stepper with the plan verdict', lenses.some((t) => /Plan|📋/.test(t) && /APPROVED/.test(t)), lenses[0]);
  check('code lens: three gates on the first screen', lenses.filter((t) => t.includes('━') || t.includes('┄')).length >= 3, lenses.length);

  // 3. Inlay hint at the end of the turn 1 prompt line (line 4), figures from the README.
  await page.waitForFunction(() => document.querySelector('.editor-group-container.active .view-lines')?.textContent.replace(/\u00a0/g, ' ').includes('turn 1/9'), null, { timeout: 30000 });
  let lines = await visibleLines(page);
  const hint4 = (lines['4'] || '').slice(demo[3].length).trim();
  log('line 4 after the JSON:', JSON.stringify(hint4));
  check('inlay hint: turn 1 figures', /turn 1\/9/.test(hint4) && /2 comments/.test(hint4) && /5 tool calls/.test(hint4) && /≈\s?48 tok\/s/.test(hint4) && /11:48 am/.test(hint4), hint4);

  // 4. Status bar: the turn count of the active transcript.
  const status = page.locator('.statusbar-item', { hasText: 'turns' }).first();
  await status.waitFor({ timeout: 15000 });
  check('status bar: 9 turns', nbsp(await status.innerText()).includes('9 turns'), nbsp(await status.innerText()));

  // 5. Outline (document symbols): turns, collapsed to the top level.
  await palette(page, 'Explorer: Focus on Outline View');
  const rows = page.locator('.outline-pane .monaco-list-row');
  await rows.first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(500);
  const outline = (await rows.allInnerTexts()).map((t) => nbsp(t).replace(/\s+/g, ' ').trim());
  log('outline', JSON.stringify(outline));
  check('outline: turn 1 title', outline.some((t) => t.startsWith('Turn 1: GET /accounts?currency=usd returns a 500')), outline[0]);
  check('outline: turn 3 title', outline.some((t) => t.startsWith('Turn 3: Postgres only. The SQLite target is just for the old demo.')), outline[2]);
  check('outline: 9 turns listed', outline.filter((t) => /^Turn [1-9]\b/.test(t)).length === 9, outline.length);
  await shot(page, '1-raw-lenses-hints-outline.png');

  // 6. Folding a work run: turn 1's Grep/Read run is lines 7–10 (README "Runs").
  await activeEditor(page).click({ position: { x: 200, y: 10 } });
  await gotoLine(page, 7);
  await page.keyboard.press('Control+Shift+BracketLeft'); // editor.fold: the innermost range at the cursor
  await page.waitForTimeout(400);
  lines = await visibleLines(page);
  const shown = Object.keys(lines).map(Number).sort((a, b) => a - b);
  log('visible line numbers after folding at line 7:', shown.slice(0, 20).join(','));
  check('folding: work run 7–10 folds to its first line', shown.includes(7) && !shown.includes(8) && !shown.includes(10) && shown.includes(11), shown.slice(0, 12).join(','));
  await shot(page, '2-raw-work-run-folded.png');
  await page.keyboard.press('Control+Shift+BracketRight'); // unfold

  // 7. Semantic token at turn 1's final answer (line 19, inside the text string).
  const col = demo[18].indexOf('"text":"Fixed.') + 10 + 1;
  await gotoLine(page, 19, col);
  const insp = await inspectToken(page);
  log('inspector at 19:' + col, insp.slice(0, 300));
  check('semantic token at the final answer: finalAnswer', /semantic token type\s*finalAnswer/.test(insp), insp.match(/semantic token type \S+/)?.[0]);
  await shot(page, '3-raw-final-answer-token.png');
  await page.keyboard.press('Escape');

  // 8. The rendered view, from the explorer's context menu on the file.
  const item = page.locator('.explorer-folders-view .monaco-list-row', { hasText: DEMO }).first();
  await item.click({ button: 'right' });
  await page.locator('.context-view .action-label', { hasText: 'Open Transcript View' }).first().click();
  const viewEditor = page.locator('.editor-group-container.active .monaco-editor .view-lines:has-text("## Turn 1")');
  await viewEditor.first().waitFor({ timeout: 30000 });
  const tab = nbsp(await page.locator('.editor-group-container.active .tab.active').first().innerText());
  check('view tab opened', tab.includes(DEMO), tab);
  const lang = nbsp(await page.locator('.statusbar-item[id="status.editor.mode"]').first().innerText());
  check('view language: Transcript View', lang.includes('Transcript View'), lang);
  await page.waitForTimeout(800);
  const vtext = nbsp(await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText());
  check('view text: turn 1 heading and its prompt', vtext.includes('## Turn 1') && vtext.includes('GET /accounts?currency=usd'), vtext.slice(0, 200));
  check('view: inlay hint on the turn heading', /turn 1\/9/.test(vtext), vtext.match(/turn 1\/9[^\n]*/)?.[0]);
  await shot(page, '4-view-tab.png');
}

(async () => {
  fs.mkdirSync(ART, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => log('pageerror', String(e).slice(0, 200)));
  try {
    await main(page);
  } catch (e) {
    failed.push('exception');
    log('ERROR', (e && e.stack) || e);
    try {
      await shot(page, 'error.png');
    } catch {}
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  log(`vscode: ${passed} passed, ${failed.length} failed`);
  if (failed.length) log('failed: ' + failed.join('; '));
  process.exit(failed.length ? 1 : 0);
})();
