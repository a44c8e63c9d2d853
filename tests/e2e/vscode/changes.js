// What the agent changed (issue 22 item 2), a self-contained block of the VS Code suite, run by
// drive.js after reading.js: a real corpus session (JSSoundRecorder, Claude Code) whose turn 4
// created package.json and .gitignore and edited CLAUDE.md. The raw file's change lens
// `✎ 3 files changed · +35 −5` opens VS Code's multi-file diff editor titled by the turn, one
// entry per file with its two sides served by the server; the palette's "Show Changes of This
// Session" opens the session's eleven files.
//
//   await require('./changes.js')(page, helpers)
// helpers: { log, check, eq, nbsp, palette, quickOpen, gotoLine, activeEditor, shot }
'use strict';

module.exports = async function changes(page, h) {
  const { check, eq, nbsp, palette, quickOpen, gotoLine, activeEditor, shot, log } = h;
  const active = '.editor-group-container.active';
  /** The multi-file diff editor's file headers (their labels) and its tab's title. */
  const multiDiff = async (first) => {
    const ed = page.locator(`${active} .multiDiffEditor:visible`).first();
    const opened = await ed.waitFor({ timeout: 15000 }).then(() => true, () => false);
    let files = [];
    // (it shows "Loading..." until every side is served: 22 for the session's eleven files)
    for (let i = 0; opened && i < 150; i++) {
      files = await ed.evaluate((d) =>
        [...d.querySelectorAll('.header .monaco-icon-label .label-name')]
          .map((e) => e.textContent.replace(/\u00a0/g, ' ').trim())
          .filter((s, k, all) => s && all.indexOf(s) === k));
      if (files.length && files[0] === first) break;
      await page.waitForTimeout(200);
    }
    const tab = nbsp(await page.locator(`${active} .tab.active`).first().innerText().catch(() => ''));
    return { opened, files, tab };
  };

  await quickOpen(page, 'changes-session.jsonl');
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  const changeLenses = async () => nbsp((await page.locator(`${active} .codelens-decoration`, { hasText: '✎' }).allInnerTexts()).join(' | '));
  // Turn 2 (raw lines 47–58): its one Edit was rejected.
  await activeEditor(page).locator('.view-lines').first().click();
  await gotoLine(page, 47);
  const rejected = page.locator(`${active} .codelens-decoration`, { hasText: '✎ no file changed · 1 edit not applied' }).first();
  for (let i = 0; i < 100 && !(await rejected.count()); i++) await page.waitForTimeout(200);
  check('a turn whose only edit was rejected: its lens says so', (await rejected.count()) > 0, await changeLenses());
  // Turn 4 (raw lines 64–98).
  await gotoLine(page, 64);
  const lens = page.locator(`${active} .codelens-decoration a`, { hasText: '✎ 3 files changed · +35 −5' }).first();
  for (let i = 0; i < 100 && !(await lens.isVisible().catch(() => false)); i++) await page.waitForTimeout(200);
  check('change lens on turn 4 of the raw file', await lens.isVisible().catch(() => false), await changeLenses());
  await lens.click();
  const turn = await multiDiff('package.json');
  log('multi-file diff', JSON.stringify(turn));
  check('the change lens opens the multi-file diff editor', turn.opened, turn);
  eq('the multi-file diff lists the turn\'s three files', [...turn.files].sort(), ['.gitignore', 'CLAUDE.md', 'package.json']);
  check('the multi-file diff is titled by the turn', turn.tab.startsWith('Turn 4: ok, fine, let') && turn.tab.includes('✎ 3 files changed'), turn.tab);
  // CLAUDE.md's entry shows the edit's hunks: the new Vite instructions on the right.
  const text = await page.locator(`${active} .multiDiffEditor`).first().innerText().catch(() => '');
  check('the diff shows the created package.json on the right', nbsp(text).includes('"name"'), nbsp(text).slice(0, 400));
  await shot(page, 'c1-turn-changes-multi-diff.png');

  // The session's change set from the palette, with the raw file active.
  await page.locator(`${active} .tab`, { hasText: 'changes-session' }).first().click();
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Show Changes of This Session');
  const session = await multiDiff('CLAUDE.md');
  log('session multi-file diff', JSON.stringify(session));
  check('Show Changes of This Session: titled by the session', session.tab.startsWith('Session') && session.tab.includes('11 files changed'), session.tab);
  // The editor renders the entries in view only: the first two of the eleven.
  check('Show Changes of This Session: eleven files, CLAUDE.md first', session.tab.endsWith('(11 files)') && session.files[0] === 'CLAUDE.md', session);
  await shot(page, 'c2-session-changes-multi-diff.png');
  // Back to a text editor for the blocks that follow (the palette opens from there).
  await page.locator(`${active} .tab`, { hasText: 'changes-session.jsonl' }).first().click();
  await activeEditor(page).locator('.view-lines:has-text("sessionId")').first().waitFor({ timeout: 30000 });
};
