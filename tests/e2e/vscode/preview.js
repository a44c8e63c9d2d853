// The Markdown preview of a view (issue 23 item 6, the gaps left by session 15), a
// self-contained block of the VS Code suite, run by drive.js after shape.js:
// * a real Claude Code session whose prompt holds a screenshot (corpus 0d3a8e6f, a 785 KB PNG):
//   "Transcript: Open Preview" shows the image (a `data:` image, decoded by the browser);
// * a real session whose tool results hold screenshots (corpus moredip images-in-tool-results),
//   its verbose view's preview shows them too;
// * the verbose view of a real session (03eb5929): each activity line is a line of its own in
//   the preview (not one paragraph) and the indented text of a thought is no code block;
// * the view a user reads as text holds no base64 (the placeholder line);
// * issue 23 item 5: with the view mode `reading`, a live session's view folds the work run
//   that arrives after the view opened (the real session 03eb5929 written line by line: its
//   prompt and thought first, its two tool calls and answer later), while the thought the
//   user unfolded by hand stays open.
//
//   await require('./preview.js')(page, helpers)
// helpers: { WS, ROOT, SETTINGS, BASE_SETTINGS, log, check, nbsp, palette, quickOpen, activeEditor, flatText, paletteExact, setUserSettings, shot }
'use strict';
const fs = require('fs');
const path = require('path');

module.exports = async function preview(page, h) {
  const { check, palette, quickOpen, activeEditor, flatText, paletteExact, shot, log } = h;
  const waitFor = async (pred, ms = 20000) => {
    for (let i = 0; i < ms / 250; i++) {
      const v = await pred();
      if (v) return v;
      await page.waitForTimeout(250);
    }
    return null;
  };
  /** Evaluates `fn` in each frame until one returns a truthy value (the preview is a webview:
   * frames inside frames). */
  const inPreview = (fn, arg) =>
    waitFor(async () => {
      for (const f of page.frames()) {
        const v = await f.evaluate(fn, arg).catch(() => null);
        if (v) return v;
      }
      return null;
    });
  const closeAll = async () => {
    await palette(page, 'View: Close All Editors');
    await page.waitForTimeout(500);
  };

  // The view mode `reading` (the extension's default; the suite runs `quiet`) for the whole
  // block, set in the settings editor. The sessions of parts 4 and 5 are written now (Quick
  // Open finds a file written just before late).
  const { WS, ROOT, SETTINGS, BASE_SETTINGS } = h;
  const reading = { ...BASE_SETTINGS };
  delete reading['transcript-ls.viewMode'];
  await h.setUserSettings(page, reading);
  const asks = path.join(ROOT, '../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl');
  const aLines = fs.readFileSync(asks, 'utf8').split('\n').map((l) => l + '\n');
  const rfile = path.join(WS, 'restart-session.jsonl');
  fs.writeFileSync(rfile, aLines.slice(0, 9).join(''));
  const src = path.join(ROOT, '../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl');
  const recs = fs.readFileSync(src, 'utf8').split('\n').map((l) => l + '\n');
  const file = path.join(WS, 'growing-session.jsonl');
  fs.writeFileSync(file, recs.slice(0, 6).join('')); // the prompt, a thought, a comment

  // 1. A prompt's image.
  await closeAll();
  await quickOpen(page, 'image-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await paletteExact(page, 'Transcript: Open Transcript View');
  await activeEditor(page).locator('.view-lines:has-text("## Turn 1")').first().waitFor({ timeout: 30000 });
  // (the image is in a later turn: Find brings its line on screen)
  await activeEditor(page).locator('.view-lines').first().click();
  await page.keyboard.press('Control+F');
  await page.keyboard.insertText('[image/png');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  const placeholder = await waitFor(async () => ((await flatText()).match(/> \[image\/png · [^\]]+\]/) || [])[0]);
  check('preview: the view shows the prompt image as a placeholder line, no base64', !!placeholder && !(await flatText()).includes('iVBORw0KGgo'), placeholder);
  await palette(page, 'Transcript: Open Preview');
  const shown = await inPreview(() => {
    const got = [...document.querySelectorAll('img')]
      .filter((i) => i.src.startsWith('data:image/') && i.complete && i.naturalWidth > 0)
      .map((i) => ({ alt: i.alt, w: i.naturalWidth, h: i.naturalHeight, bytes: i.src.length, el: i }));
    got[0]?.el.scrollIntoView(); // (for the screenshot)
    return got.length ? got.map(({ el, ...rest }) => rest) : null;
  });
  log('prompt images in the preview', JSON.stringify(shown));
  check("preview: the prompt's screenshot is shown (a decoded PNG)", !!shown && shown[0].w > 100 && shown[0].alt.startsWith('image/png'), shown);
  await page.waitForTimeout(1000);
  await shot(page, 'p1-preview-prompt-image.png');

  // 2. Tool results' images, in the verbose view's preview.
  await closeAll();
  await quickOpen(page, 'tool-images-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Open Transcript View (Verbose)');
  await waitFor(async () => (await flatText()).includes('▸ Worked'));
  await palette(page, 'Transcript: Open Preview');
  const results = await inPreview(() => {
    const got = [...document.querySelectorAll('img')].filter((i) => i.src.startsWith('data:image/') && i.complete && i.naturalWidth > 0);
    got[0]?.scrollIntoView(); // (for the screenshot)
    return got.length ? got.map((i) => `${i.naturalWidth}x${i.naturalHeight}`) : null;
  });
  check("preview: a tool result's screenshot is shown", !!results && results.length >= 1, results);
  await page.waitForTimeout(1000);
  await shot(page, 'p2-preview-tool-result-image.png');

  // 3. Activity lines one per line, a thought's text no code block (03eb5929, verbose).
  await closeAll();
  await quickOpen(page, 'finished-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Open Transcript View (Verbose)');
  await waitFor(async () => (await flatText()).includes('▸ Worked'));
  await palette(page, 'Transcript: Open Preview');
  const lines = await inPreview(() => {
    const el = [...document.querySelectorAll('p, li')].find((p) => p.textContent.includes('Worked · 2 tool calls'));
    if (!el) return null;
    const pre = [...document.querySelectorAll('pre, code')].filter((c) => c.textContent.includes('during a Claude Code session')).length;
    return { text: el.innerText, pre };
  });
  log('the work run in the preview', JSON.stringify(lines));
  const rows = lines ? lines.text.split('\n').map((l) => l.trim()) : [];
  check('preview: `▸ Worked · 2 tool calls` and its tool calls are lines of their own',
    rows.some((l) => l === '▸ Worked · 2 tool calls') && rows.some((l) => l.startsWith('⚙ Bash') && l.includes('ls -la')) && rows.some((l) => l.startsWith('⚙ Read')), rows.slice(0, 8));
  check("preview: a thought's indented text is not a code block", !!lines && lines.pre === 0, lines && lines.pre);
  await page.waitForTimeout(500);
  await shot(page, 'p3-preview-activity-lines.png');
  await closeAll();

  // 4. Item 5: a live reading view folds the work runs that arrive later.
  await quickOpen(page, 'growing-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await paletteExact(page, 'Transcript: Open Transcript View');
  const first = await waitFor(async () => {
    const t = await flatText();
    return t.includes('▸ Thought') && !t.includes('💭') ? t : null;
  });
  check('live reading view: opens verbose with its thought folded', !!first, (await flatText()).slice(0, 400));
  // The user opens the thought by hand.
  await activeEditor(page).locator('.view-line', { hasText: '▸ Thought' }).first().click();
  await palette(page, 'Unfold');
  const opened = await waitFor(async () => ((await flatText()).includes('💭') ? true : null), 5000);
  log('thought unfolded by hand', !!opened);
  fs.appendFileSync(file, recs.slice(6, 17).join('')); // two tool calls, their results, the answer
  const grown = await waitFor(async () => {
    const t = await flatText();
    return t.includes('▸ Worked · 2 tool calls') && t.includes('Got it.') ? t : null;
  });
  let folded = null;
  if (grown) {
    folded = await waitFor(async () => {
      const t = await flatText();
      return !t.includes('⚙ Bash') ? t : null;
    }, 6000);
  }
  const now = await flatText();
  check('live reading view: the work run that arrived later is folded to `▸ Worked · 2 tool calls`',
    !!grown && !!folded, now.slice(0, 900));
  check('live reading view: the thought the user opened stays open', now.includes('💭'), now.slice(0, 400));
  await shot(page, 'p4-live-reading-folds-new-run.png');
  await closeAll();

  // 5. Issue 23 item 10: the marker comes back after a restart. The real session cb2e607c's
  // first 9 lines are seen to the end in their view; the window reloads (the extension host
  // restarts, what it kept in globalState stays); the agent goes on (lines 10–90); the view
  // opened again shows `── new since you last looked ──`.
  await quickOpen(page, 'restart-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await paletteExact(page, 'Transcript: Open Transcript View');
  await waitFor(async () => ((await flatText()).includes('## Turn 1') ? true : null));
  await activeEditor(page).locator('.view-lines').first().click();
  await page.keyboard.press('Control+End'); // (its end on screen: seen, and kept)
  await page.waitForTimeout(2500);
  await closeAll();
  await palette(page, 'Developer: Reload Window');
  await page.waitForTimeout(3000);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
  await page.locator('.explorer-folders-view').first().waitFor({ timeout: 60000 });
  log('window reloaded');
  fs.appendFileSync(rfile, aLines.slice(9, 90).join(''));
  await page.waitForTimeout(1000);
  await quickOpen(page, 'restart-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 60000 });
  await paletteExact(page, 'Transcript: Open Transcript View');
  await activeEditor(page).locator('.view-lines:has-text("## Turn 1")').first().waitFor({ timeout: 30000 });
  await page.waitForTimeout(1500);
  await palette(page, 'Transcript: Jump to New Output'); // (the lens is drawn on screen only)
  let lens = '';
  for (let i = 0; i < 75 && !lens; i++) {
    const lenses = (await activeEditor(page).locator('.codelens-decoration').allInnerTexts().catch(() => [])).map(h.nbsp);
    lens = lenses.find((t) => t.includes('new since you last looked')) || '';
    if (!lens) await page.waitForTimeout(200);
  }
  check('after a restart: the view shows the marker where the unseen output starts', lens.includes('── new since you last looked ──'), lens);
  await shot(page, 'p5-marker-after-restart.png');
  await closeAll();
  await h.setUserSettings(page, BASE_SETTINGS);
  // (the same settings, without the bracket the settings editor may have closed on its own)
  fs.writeFileSync(SETTINGS, JSON.stringify(BASE_SETTINGS, null, 2));
  await closeAll();
  // The two live sessions go: they are copies of sessions later blocks find by title
  // (unseen.js: cb2e607c).
  fs.unlinkSync(rfile);
  fs.unlinkSync(file);
};
