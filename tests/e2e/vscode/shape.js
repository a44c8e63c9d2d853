// The default shape of a view and what reads well in it (issue 23 items 5, 6, 8), a
// self-contained block of the VS Code suite: with `transcript-ls.viewMode` at its default
// (`reading`) a real session's view opens verbose with its work runs folded and its comments in
// sight; a raw transcript gets the language `transcript-jsonl` and wraps, a plain JSON Lines file
// stays `jsonl` unwrapped; the answers' markdown is coloured (fenced code) and
// "Transcript: Open Preview" shows the view in the Markdown preview. Real corpus files.
//
//   await require('./shape.js')(page, helpers)
// helpers: { WS, SETTINGS, BASE_SETTINGS, log, check, eq, nbsp, gotoLine, activeEditor, flatText, paletteExact, setUserSettings, shot }
'use strict';
const fs = require('fs');
const path = require('path');

module.exports = async function shape(page, h) {
  const nbsp = h.nbsp;
  const { WS, BASE_SETTINGS, check, activeEditor, shot, log } = h;
  // A JSON Lines file that is no transcript (written first: Quick Open finds it later).
  const plain = path.join(WS, 'plain-data.jsonl');
  fs.writeFileSync(plain, [1, 2, 3].map((i) => JSON.stringify({ id: i, text: 'word '.repeat(80) })).join('\n') + '\n');
  const palette = h.paletteExact;
  const flatText = h.flatText;
  const waitFor = async (pred, ms = 20000) => {
    for (let i = 0; i < ms / 200; i++) {
      if (await pred()) return true;
      await page.waitForTimeout(200);
    }
    return false;
  };
  const langStatus = async () => nbsp(await page.locator('#status\\.editor\\.mode').first().innerText().catch(() => '')).trim();
  const setUserSettings = (obj) => h.setUserSettings(page, obj);
  /** Quick Open, pressing Enter only once the focused row is the file (a stale list of recent
   * files picked another one). */
  const quickOpen = async (page, name) => {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).first().waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
  };

  // Item 5: the default shape. The suite runs with viewMode `quiet` and raw transcripts
  // unwrapped for its older checks (written for those); the user settings lose both here (the
  // extension's defaults apply) and get them back at the end.
  const settings = { ...BASE_SETTINGS };
  delete settings['transcript-ls.viewMode'];
  delete settings['[transcript-jsonl]'];
  await palette(page, 'View: Close All Editors');
  await page.waitForTimeout(500);
  await setUserSettings(settings);
  await page.waitForTimeout(1000);
  await shot(page, 's0a-closed.png');
  await quickOpen(page, 'finished-session.jsonl');
  await page.waitForTimeout(1000);
  await shot(page, 's0b-raw-finished.png');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Open Transcript View');
  const folded = await waitFor(async () => {
    const t = await flatText();
    return t.includes('▸ Worked · 2 tool calls') && !t.includes('⚙ Bash  ls -la');
  });
  const text = await flatText();
  check('reading shape by default: the verbose view, its first work run folded to one line',
    folded && text.includes('Let me take a look at what') && text.includes('▸ Worked · 2 tool calls') && !text.includes('⚙ Bash  ls -la'),
    text.slice(0, 700));
  check("reading shape: the tab is the session's (no '(verbose)')",
    !(await page.locator('.editor-group-container.active .tab.active').first().innerText()).includes('(verbose)'));
  await shot(page, 's1-reading-shape.png');
  // The quiet view is one toggle away.
  await palette(page, 'Transcript: Open Transcript View');
  const quiet = await waitFor(async () => {
    const t = await flatText();
    return t.includes('## Turn 1') && !t.includes('▸ Worked');
  });
  check('reading shape: Open Transcript View in it opens the quiet view', quiet, (await flatText()).slice(0, 300));

  // Item 6: the answers' markdown in the view: fenced code coloured unlike the answer's text.
  await quickOpen(page, 'changes-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  // Item 8: the raw transcript is `transcript-jsonl` and wraps (its first line, ~1,000
  // characters, takes several screen lines).
  const rawLang = await waitFor(async () => (await langStatus()).includes('Transcript'), 10000);
  check('raw transcript: language Transcript (JSON Lines)', rawLang, await langStatus());
  const wrapped = () =>
    activeEditor(page).evaluate((ed) => {
      const rows = [...ed.querySelectorAll('.view-lines .view-line')].map((l) => l.getBoundingClientRect().top);
      const nums = ed.querySelectorAll('.margin-view-overlays .line-numbers').length;
      return { rows: rows.length, numbers: nums };
    });
  let w = { rows: 0, numbers: 0 };
  await waitFor(async () => {
    w = await wrapped();
    return w.rows > w.numbers;
  }, 5000);
  check('raw transcript: long JSON lines wrap (more screen rows than line numbers)', w.rows > w.numbers, w);
  await shot(page, 's2-raw-transcript-wrapped.png');
  // A JSON Lines file that is no transcript keeps VS Code's defaults.
  await quickOpen(page, 'plain-data.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("word word")').first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(1500);
  w = await wrapped();
  const plainLang = await langStatus();
  check('plain JSON Lines file: stays JSON Lines, not wrapped', plainLang === 'JSON Lines' && w.rows === w.numbers, { plainLang, w });
  await shot(page, 's3-plain-jsonl.png');

  await quickOpen(page, 'changes-session.jsonl');
  await palette(page, 'Transcript: Open Transcript View');
  await activeEditor(page).locator('.view-lines:has-text("## Turn 1")').first().waitFor({ timeout: 30000 });
  await activeEditor(page).locator('.view-lines').first().click();
  // Go to the answer with the fences (line 359 of the view in the reading shape: ```json).
  await h.gotoLine(page, 362);
  await page.waitForTimeout(1500);
  const colourOf = (needle) =>
    activeEditor(page).evaluate((ed, needle) => {
      for (const span of ed.querySelectorAll('.view-lines .view-line span span')) {
        if (span.textContent.replace(/\u00a0/g, ' ').includes(needle)) return getComputedStyle(span).color;
      }
      return null;
    }, needle);
  const fenced = await colourOf('"scripts"');
  const prose = await colourOf('Here are a few options');
  check('view: the fenced ```json of an answer is coloured as JSON, unlike its prose', !!fenced && !!prose && fenced !== prose, { fenced, prose });
  await shot(page, 's4-answer-markdown.png');

  // Transcript: Open Preview: the view in the Markdown preview, the answers' markdown rendered.
  await palette(page, 'Transcript: Open Preview');
  let strong = null;
  await waitFor(async () => {
    for (const f of page.frames()) {
      strong = await f
        .evaluate(() => [...document.querySelectorAll('strong')].map((s) => s.textContent).find((t) => t.includes('Option 1: Vite')) ?? null)
        .catch(() => null);
      if (strong) return true;
    }
    return false;
  }, 20000);
  check('Open Preview: the view in the Markdown preview, **Option 1: Vite** rendered bold', strong === 'Option 1: Vite', strong);
  await shot(page, 's5-markdown-preview.png');
  log('preview tab', await page.locator('.editor-group-container .tab.active').last().innerText().catch(() => ''));
  await palette(page, 'View: Close All Editors');
  await page.waitForTimeout(500);
  await setUserSettings(BASE_SETTINGS);
  // (the same settings, without the bracket the settings editor may have closed on its own
  // after the text: the next block reads the file)
  fs.writeFileSync(h.SETTINGS, JSON.stringify(BASE_SETTINGS, null, 2));
  // No settings editor left open (modal or in a group) for the next block.
  const settingsEditor = page.locator('.monaco-editor:has(.view-lines:has-text("transcript.roots"))');
  for (let i = 0; i < 5 && (await settingsEditor.count()) > 0; i++) {
    await settingsEditor.last().locator('.view-line').first().click({ timeout: 3000 }).catch(() => {});
    await page.keyboard.press('Control+W');
    await page.waitForTimeout(700);
  }
  await palette(page, 'View: Close All Editors');
  await page.waitForTimeout(500);
};
