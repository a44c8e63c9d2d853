// Reading a session (issue 11), a self-contained block of the VS Code suite, run by drive.js at
// the end: the verbose view opened by its command, a finished real session's last answer in the
// view (file-age rule), the status bar's exact figures (transcript/stats), and the final answer's
// colour against the agent's comments in the default dark and light themes, and Show diff on
// a real session's file edits.
//
//   await require('./reading.js')(page, helpers)
// helpers: { WS, DEMO, FINISHED, log, check, eq, nbsp, palette, quickOpen, gotoLine, activeEditor, flatText, shot }
'use strict';

module.exports = async function reading(page, h) {
  const { DEMO, FINISHED, check, eq, nbsp, palette, quickOpen, gotoLine, activeEditor, shot, log } = h;
  const flatText = h.flatText;
  const waitText = async (needle, ms = 20000) => {
    for (let i = 0; i < ms / 200; i++) {
      if ((await flatText()).includes(needle)) return true;
      await page.waitForTimeout(200);
    }
    return false;
  };

  // 1. The verbose view by its command (VS Code sends its query as `?verbose%3D1`).
  await page.locator('.editor-group-container.active .tab', { hasText: DEMO }).first().click(); // the raw demo
  await palette(page, 'Transcript: Open Transcript View (Verbose)');
  const verbose = await waitText('▸ Worked · 2 tool calls');
  check('verbose view by its command shows the work runs', verbose, (await flatText()).slice(0, 300));
  await shot(page, 'r1-verbose-view.png');
  // Issue 23 item 4: Fold All leaves each turn's heading and its prompt in sight (the prompt
  // was inside the fold), the answers folded away.
  await activeEditor(page).locator('.view-lines').first().click();
  // (Fold All folds the ranges the editor has: wait for their chevrons, late on a busy machine)
  await activeEditor(page).locator('.margin-view-overlays .codicon-folding-expanded').first().waitFor({ timeout: 15000 }).catch(() => {});
  await palette(page, 'Fold All');
  let folded = '';
  for (let i = 0; i < 25; i++) {
    folded = await flatText();
    if (!folded.includes('Fixed. Two problems')) break;
    await page.waitForTimeout(200);
  }
  check('Fold All in the view: each turn shows its prompt, the answer folded',
    folded.includes('> GET /accounts?currency=usd returns a 500') && folded.includes('> Good. Next: store the normalised code') &&
      folded.includes('> Postgres only.') && !folded.includes('Fixed. Two problems'), folded.slice(0, 600));
  await shot(page, 'r1b-fold-all-prompts.png');
  await palette(page, 'Unfold All');
  // The turn hints wrap between figures, never inside one (`turn 1/` ⏎ `10`): the visual lines
  // of the view, joined with ⏎.
  const visual = await activeEditor(page).evaluate((ed) =>
    [...ed.querySelectorAll('.view-lines .view-line')]
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
      .map((l) => l.textContent.replace(/\u00a0/g, ' '))
      .join('⏎'));
  const split = visual.match(/(turn \d+\/|turn|\d+)⏎ *(\d+|comments?|tool calls?|tok\/s|am|pm)\b/g);
  check('view: no turn hint wraps inside a figure', !split, split);

  // 5. Colour of the final answer against the agent's comments (narration), sampled from the
  // rendered spans, in the default dark theme and in the default light theme.
  const colours = async () => {
    // Focus the editor (after a theme pick focus is back in it already).
    await activeEditor(page).locator('.view-lines').first().click({ position: { x: 300, y: 300 }, force: true, timeout: 3000 }).catch(() => {});
    const sample = async (line, needle, what = 'color') => {
      await h.gotoLine(page, line);
      return activeEditor(page).evaluate((ed, [needle, what]) => {
        for (const span of ed.querySelectorAll('.view-lines .view-line span span')) {
          if (span.textContent.replace(/\u00a0/g, ' ').includes(needle)) return getComputedStyle(span)[what];
        }
        return null;
      }, [needle, what]).catch(() => null);
    };
    // Verbose view lines (1-based): 17 narration of turn 1, 61 its final answer.
    const narration = await sample(17, "I'll look at how the handler parses");
    const answer = await sample(61, 'Fixed. Two problems combined');
    // The first edit's diff (lines 40, 41: `-        match s {`, `+        match s.to_ascii_…`)
    // against text without a token (the Read's path on line 22).
    const removed = await sample(40, '-        match s {');
    const added = await sample(41, '+        match s.to_ascii_uppercase');
    const plain = await sample(22, 'src/model/currency.rs');
    const answerWeight = await sample(61, 'Fixed. Two problems combined', 'fontWeight');
    // Issue 23 item 6: the answer is markdown, no more one bold run: its `code` and **strong**.
    const answerCode = await sample(63, 'Currency::from_str');
    const strongWeight = await sample(64, '400 Bad Request', 'fontWeight');
    return { narration, answer, removed, added, plain, answerWeight, answerCode, strongWeight };
  };
  // Added and removed lines coloured, unlike plain text, each other and the final answer (issue
  // 11: added lines had the answer's exact colour in both 2026 themes).
  const diffColoured = (c) => !!(c.added && c.removed && c.plain && c.added !== c.removed && c.added !== c.plain && c.removed !== c.plain && c.added !== c.answer);
  await page.waitForTimeout(1000); // semantic tokens
  const themeKind = () => page.evaluate(() => (document.querySelector('.monaco-workbench')?.classList.contains('vs-dark') ? 'dark' : 'light'));
  /** Picks a colour theme through Preferences: Color Theme (Ctrl+K Ctrl+T). */
  const pickTheme = async (name) => {
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+T');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(name);
    await page.locator('.quick-input-list .monaco-list-row .label-name', { hasText: new RegExp(`^${name}$`) }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
    await page.waitForTimeout(1500);
  };
  const first = await themeKind(); // the default theme of this VS Code (Light 2026 or Dark 2026)
  const other = first === 'dark' ? 'Light 2026' : 'Dark 2026';
  let c = await colours();
  log(`${first} theme colours`, JSON.stringify(c));
  check(`default ${first} theme: the final answer is coloured unlike the comments`, c.answer && c.narration && c.answer !== c.narration, c);
  const markdownRead = (c) => Number(c.answerWeight) < 600 && Number(c.strongWeight) >= 600 && !!c.answerCode && c.answerCode !== c.answer;
  check(`default ${first} theme: the final answer reads as markdown (text not bold, **strong** bold, \`code\` coloured)`, markdownRead(c), c);
  check(`default ${first} theme: added and removed diff lines are coloured`, diffColoured(c), c);
  await shot(page, `r2-answer-colour-${first}.png`);
  await pickTheme(other);
  const second = await themeKind();
  c = await colours();
  log(`${second} theme colours`, JSON.stringify(c));
  check(`${other}: the final answer is coloured unlike the comments`, second !== first && c.answer && c.narration && c.answer !== c.narration, c);
  check(`${other}: the final answer reads as markdown (text not bold, **strong** bold, \`code\` coloured)`, markdownRead(c), c);
  check(`${other}: added and removed diff lines are coloured`, diffColoured(c), c);
  await shot(page, `r3-answer-colour-${second}.png`);
  await pickTheme(first === 'dark' ? 'Dark 2026' : 'Light 2026');

  // 4. The status bar: the exact totals of the demo (transcript/stats: 10 turns after the
  // live append, 6,701 + 40 output tokens).
  await page.locator('.editor-group-container.active .tab', { hasText: DEMO }).first().click();
  const status = page.locator('.statusbar-item', { hasText: 'turns' }).first();
  await status.waitFor({ timeout: 15000 });
  let st = '';
  for (let i = 0; i < 50 && !st.includes('out'); i++) {
    st = nbsp(await status.innerText()).trim();
    await page.waitForTimeout(200);
  }
  eq('status bar: the exact figures of transcript/stats', st, '10 turns · 6.7k out');

  // 2. A finished real session (its copy's modification time is ten minutes back): the view
  // shows its last turn's answer, not `… working`.
  await quickOpen(page, FINISHED);
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Open Transcript View');
  await activeEditor(page).locator('.view-lines:has-text("## Turn 1")').first().waitFor({ timeout: 30000 });
  // Focus the view (the centre of its text: the view may open scrolled, its text area then as
  // low as one line) and go to its end.
  await activeEditor(page).locator('.view-lines').first().click();
  await page.keyboard.press('Control+End');
  const shown = await waitText('split works best', 10000);
  const tail = await flatText();
  check('a finished session shows its last answer in the view', shown && tail.includes('**Answer**\nThe `dev-docs/` vs `work/` split works best') && !tail.includes('… working'), tail.slice(-300));
  // Its output counts are streaming placeholders: the status bar gives a lower bound.
  eq('status bar of a session with placeholder output counts', nbsp(await page.locator('.statusbar-item', { hasText: 'turns' }).first().innerText()).trim(), '7 turns · ≥88 out');
  await shot(page, 'r4-finished-session-last-answer.png');

  // 3. Show diff: a real session with one Write and four Edits. The raw file shows a
  // `Show diff` lens on each edit; in the verbose view the lens of the second edit (+3 −4)
  // opens VS Code's diff editor on the two sides the server serves.
  await quickOpen(page, 'edits-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  const diffLens = page.locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Show diff' });
  let rawLens = false;
  for (let i = 0; i < 100 && !rawLens; i++) {
    rawLens = (await diffLens.count()) > 0;
    if (!rawLens) await page.waitForTimeout(200);
  }
  check('Show diff lens on the raw file', rawLens, nbsp((await diffLens.allInnerTexts()).join(' | ')));
  await palette(page, 'Transcript: Open Transcript View (Verbose)');
  await activeEditor(page).locator('.view-lines:has-text("## Turn 1")').first().waitFor({ timeout: 30000 });
  // The second edit's tool line (line 197 of the verbose view, as `render --verbose` prints it).
  await activeEditor(page).locator('.view-lines').first().click();
  await gotoLine(page, 197);
  const lens = page.locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Show diff · +3 −4' }).first();
  for (let i = 0; i < 50 && !(await lens.count()); i++) await page.waitForTimeout(200);
  check('Show diff lens in the verbose view', (await lens.count()) > 0, nbsp((await diffLens.allInnerTexts()).join(' | ')));
  await lens.click();
  const diffEditor = page.locator('.editor-group-container.active .monaco-diff-editor').first();
  const opened = await diffEditor.waitFor({ timeout: 15000 }).then(() => true, () => false);
  const sideText = (which) =>
    diffEditor.evaluate((d, which) => {
      const ed = d.querySelector(`.editor.${which} .view-lines`);
      return ed ? ed.textContent.replace(/\u00a0/g, ' ') : null;
    }, which);
  let before = null;
  let after = null;
  for (let i = 0; opened && i < 50; i++) {
    before = await sideText('original');
    after = await sideText('modified');
    if (before && after && before.includes('native answer') && after.includes('checkpoint')) break;
    await page.waitForTimeout(200);
  }
  check('the lens opens a diff editor with both sides', opened && !!before && !!after && before.includes("It is Claude Code's native answer to the") &&
    !before.includes('checkpoint — structured time') && after.includes('checkpoint — structured time to survey'), { before: before && before.slice(0, 160), after: after && after.slice(0, 160) });
  const tab = nbsp(await page.locator('.editor-group-container.active .tab.active').first().innerText().catch(() => ''));
  check('the diff editor is titled by the file and the tool', tab.includes('research-plan-mode.md · Edit (before ↔ after)'), tab);
  await shot(page, 'r5-show-diff.png');
};
