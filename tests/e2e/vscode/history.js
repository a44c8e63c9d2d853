// From a source file to the sessions that wrote it (issue 22 items 3, 4), a self-contained
// block of the VS Code suite, run by drive.js after changes.js: fixtures/history copied into the
// workspace (run.sh writes its absolute paths), indexed with the workspace root. "Agent History
// of This File" on src/app.py lists the three turns that changed it, newest first; picking
// Claude Code's turn 2 opens its view at the turn and its diff of app.py beside; "Toggle Agent
// Blame" decorates the blocks agents wrote (not line 11, which a person changed since).
//
//   await require('./history.js')(page, helpers)
// helpers: { log, check, eq, nbsp, palette, quickOpen, activeEditor, shot }
'use strict';

module.exports = async function history(page, h) {
  const { check, eq, nbsp, palette, quickOpen, activeEditor, shot, log } = h;
  const active = '.editor-group-container.active';
  await quickOpen(page, 'app.py');
  await activeEditor(page).locator('.view-lines:has-text("def parse")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Agent History of This File');
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().waitFor({ timeout: 15000 });
  for (let i = 0; i < 25 && (await rows.count()) < 3; i++) await page.waitForTimeout(200);
  const texts = (await rows.allInnerTexts()).map((t) => nbsp(t).replace(/\s+/g, ' ').trim());
  log('history rows', JSON.stringify(texts));
  eq('Agent History: three turns changed app.py', texts.length, 3);
  check('Agent History: newest first (Codex, then Claude Code turn 2, turn 1)',
    /^Add a count helper ?codex · turn 1 · M \+4 −0/.test(texts[0] ?? '') && /^Skip empty fields ?claude-code · turn 2 · M \+1 −1/.test(texts[1] ?? '') &&
      /^Write a CSV line parser in src\/app\.py ?claude-code · turn 1 · A \+11 −0/.test(texts[2] ?? ''), texts);
  await shot(page, 'h1-agent-history-quick-pick.png');
  await rows.nth(1).click();
  const diffEditor = page.locator('.monaco-diff-editor:visible').first();
  const opened = await diffEditor.waitFor({ timeout: 15000 }).then(() => true, () => false);
  let after = '';
  for (let i = 0; opened && i < 50 && !after.includes('if p.strip()'); i++) {
    after = await diffEditor.evaluate((d) => d.textContent.replace(/\u00a0/g, ' '));
    if (!after.includes('if p.strip()')) await page.waitForTimeout(200);
  }
  check('Agent History: the pick opens the turn\'s diff of app.py', opened && after.includes('if p.strip()'), after.slice(0, 300));
  const tabs = nbsp((await page.locator('.tab').allInnerTexts()).join(' | '));
  check('Agent History: the diff is titled by the file and the turn', tabs.includes('src/app.py · turn 2 (claude-code)'), tabs);
  check('Agent History: the session\'s view is open', tabs.includes('Write a CSV line parser'), tabs);
  await shot(page, 'h2-agent-history-turn-and-diff.png');

  // Agent blame on app.py, opened from the explorer (Quick Open would offer the diff's side).
  await palette(page, 'View: Close Editor'); // the diff (its group closes with it)
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'app.py' }).first().click();
  await activeEditor(page).locator('.view-lines:has-text("import sys")').first().waitFor({ timeout: 30000 });
  await palette(page, 'Transcript: Toggle Agent Blame');
  /** The after-text decorations of the active editor by 1-based line (rendered as ::after). */
  const blame = () =>
    activeEditor(page).evaluate((ed) => {
      const out = {};
      const lines = [...ed.querySelectorAll('.view-lines .view-line')].sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
      lines.forEach((l, i) => {
        for (const s of l.querySelectorAll('span')) {
          const c = getComputedStyle(s, '::after').content;
          if (c && c !== 'none' && c !== 'normal' && c !== '""') out[i + 1] = JSON.parse(c).replace(/\u00a0/g, ' ');
        }
      });
      return out;
    });
  let marks = {};
  for (let i = 0; i < 50 && Object.keys(marks).length < 10; i++) {
    marks = await blame();
    if (Object.keys(marks).length < 10) await page.waitForTimeout(200);
  }
  log('blame', JSON.stringify(marks));
  const T1 = '✎ claude-code  "Write a CSV line parser in src/app.py"  turn 1  2020-05-01 10:00  +11 −0';
  eq('Agent Blame: decorations by line (line 11, changed by a person, has none)', marks, {
    1: T1, 2: '┆', 3: '┆', 4: '┆', 5: '┆',
    6: '✎ claude-code  "Write a CSV line parser in src/app.py"  turn 2  2020-05-01 10:22  +1 −1',
    7: T1, 8: '┆', 9: '┆', 10: '┆',
    12: '✎ codex  "Add a count helper"  turn 1  2020-05-02 09:00  +4 −0', 13: '┆', 14: '┆', 15: '┆',
  });
  check('Agent Blame: the status bar says it is on', (await page.locator('.statusbar-item', { hasText: 'agent blame' }).count()) > 0);
  await shot(page, 'h3-agent-blame.png');
  await palette(page, 'Transcript: Toggle Agent Blame');
  for (let i = 0; i < 25 && Object.keys(marks).length; i++) {
    marks = await blame();
    if (Object.keys(marks).length) await page.waitForTimeout(200);
  }
  eq('Agent Blame: toggled off, no decoration', marks, {});
};
