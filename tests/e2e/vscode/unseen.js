// What is new since I last looked (issue 23 item 10), a self-contained block of the VS Code
// suite, run by drive.js after the live block (openAs at its default, `view`). A real Claude
// Code session (corpus cb2e607c, 2.0.37) is written into the workspace line by line as it was
// recorded:
// * lines 1–9 (the agent exploring): the Transcripts tree marks the new session `● new`;
//   opening its view (its end on screen) makes it seen: the mark goes;
// * the user opens a new untitled editor over the view; line 10 (the agent asks with AskUserQuestion) arrives:
//   the tree shows `⏸ waiting for you: question` with the pause icon and `● new`, the view
//   container a badge, Open Session… the same marks with the question as its detail;
// * lines 11–90 (the question answered, turn 1 finished, turn 2 begun): the wait ends;
//   back in the view, a `── new since you last looked ──` lens sits above the first line that
//   changed; Transcript: Jump to New Output goes there, Jump to Newest Turn to `## Turn 2`.
//
//   await require('./unseen.js')(page, helpers)
// helpers: { WS, ROOT, log, check, nbsp, palette, activeEditor, shot }
'use strict';
const fs = require('fs');
const path = require('path');

module.exports = async function unseen(page, h) {
  const { WS, ROOT, check, nbsp, palette, activeEditor, shot, log } = h;
  const src = path.join(ROOT, '../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl');
  const lines = fs.readFileSync(src, 'utf8').split('\n').map((l) => l + '\n');
  const file = path.join(WS, 'asks-session.jsonl');
  const part = (from, to) => lines.slice(from - 1, to).join(''); // 1-based, inclusive
  fs.writeFileSync(file, part(1, 9));

  const tree = '.pane:has(.pane-header:has-text("Transcripts")) .monaco-list-row';
  const TITLE = 'How can I make this possible to install as a library';
  const row = () => page.locator(tree, { hasText: TITLE }).first();
  const rowText = async () => nbsp(await row().innerText().catch(() => '')).replace(/\s+/g, ' ');
  const waitRow = async (pred, ms = 20000) => {
    for (let i = 0; i < ms / 200; i++) {
      if (pred(await rowText())) return true;
      await page.waitForTimeout(200);
    }
    return false;
  };
  await palette(page, 'Focus on Transcripts View');
  check('unseen: a session written since the list was first shown is marked new', await waitRow((t) => t.includes('● new')), await rowText());
  check('unseen: its title is highlighted (seen in a narrow side bar too)', (await row().locator('.label-name .highlight').count()) > 0, await rowText());
  await shot(page, 'u1-new-session-marked.png');

  await row().click();
  const tab = page.locator('.editor-group-container.active .tab', { hasText: 'How can I make this possible' }).first();
  await tab.waitFor({ timeout: 20000 }).catch(() => {});
  const viewText = async () => nbsp(await activeEditor(page).locator('.view-lines').first().innerText().catch(() => ''));
  for (let i = 0; i < 100 && !(await viewText()).includes('… working'); i++) await page.waitForTimeout(200);
  check('unseen: the session opens as its view', (await viewText()).includes('… working'), (await viewText()).slice(0, 300));
  check('unseen: opening its view (the end on screen) makes it seen', await waitRow((t) => t.length > 0 && !t.includes('● new')), await rowText());

  // The user reads something else; the agent asks its question.
  await palette(page, 'File: New Untitled Text File');
  // (the new editor must have replaced the session's view on screen before the agent writes)
  await page.locator('.editor-group-container.active .tab.active', { hasText: 'Untitled' }).first().waitFor({ timeout: 20000 }).catch(() => {});
  await page.waitForTimeout(500);
  fs.appendFileSync(file, part(10, 10));
  const waited = await waitRow((t) => t.includes('⏸ waiting for you: question') && t.includes('● new'));
  check('unseen: the tree shows the session waiting for a question, with new output', waited, await rowText());
  check('unseen: the waiting session has the pause icon', (await row().locator('.codicon-debug-pause').count()) > 0, await rowText());
  const badge = nbsp(await page.locator('.activitybar .action-item:has(.codicon-comment-discussion) .badge').first().innerText().catch(() => ''));
  log('activity bar badge of the Transcripts container', JSON.stringify(badge));
  check('unseen: the Transcripts view shows a badge counting the waiting sessions', /^\d+$/.test(badge.trim()) && Number(badge) >= 1, badge);
  await shot(page, 'u2-tree-waiting-and-new.png');

  await palette(page, 'Transcript: Open Session…');
  const input = page.locator('.quick-input-widget input');
  await input.fill('install as a library');
  const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: TITLE }).first();
  await pick.waitFor({ timeout: 15000 }).catch(() => {});
  await page.waitForTimeout(500);
  const pickText = nbsp(await pick.innerText().catch(() => '')).replace(/\s+/g, ' ');
  log('quick pick row', JSON.stringify(pickText));
  check('unseen: Open Session… marks it waiting and new, with the question as detail',
    pickText.includes('⏸ waiting for you: question') && pickText.includes('● new') &&
      pickText.includes('I need to understand your preferred installation approach'), pickText);
  await shot(page, 'u3-open-session-waiting.png');
  await page.keyboard.press('Escape');

  // The question is answered and the agent goes on (turn 1 finishes, turn 2 begins).
  fs.appendFileSync(file, part(11, 90));
  check('unseen: the answer ends the wait in the tree', await waitRow((t) => !t.includes('waiting for you') && t.includes('● new')), await rowText());
  await row().click();
  await tab.waitFor({ timeout: 20000 }).catch(() => {});
  let lens = '';
  for (let i = 0; i < 100; i++) {
    const lenses = (await activeEditor(page).locator('.codelens-decoration').allInnerTexts().catch(() => [])).map(nbsp);
    lens = lenses.find((t) => t.includes('new since you last looked')) || '';
    if (lens) break;
    await page.waitForTimeout(200);
  }
  check('unseen: the view shows the marker where the unseen output starts', lens.includes('── new since you last looked ──'), lens);
  await shot(page, 'u4-view-new-output-marker.png');

  const cursorLine = async () => {
    const s = nbsp(await page.locator('.statusbar-item', { hasText: /Ln \d+/ }).first().innerText().catch(() => ''));
    return Number((s.match(/Ln (\d+)/) || [])[1]);
  };
  // The marker's line: the first line of the view that changed, turn 1's answer where
  // `… working` was (the lens sits just above it).
  await palette(page, 'Transcript: Jump to Newest Turn');
  await page.waitForTimeout(500);
  const newest = await cursorLine();
  const newestText = nbsp(await activeEditor(page).locator('.view-line', { hasText: '## Turn 2' }).first().innerText().catch(() => ''));
  log('Jump to Newest Turn: line', newest, JSON.stringify(newestText));
  check('unseen: Jump to Newest Turn goes to the `## Turn 2` heading', newest > 1 && newestText.startsWith('## Turn 2'), `line ${newest}`);
  await palette(page, 'Transcript: Jump to New Output');
  await page.waitForTimeout(500);
  const marked = await cursorLine();
  log('Jump to New Output: line', marked);
  check('unseen: Jump to New Output goes to the first unseen line, above the newest turn', marked > 1 && marked < newest, `line ${marked}, newest turn ${newest}`);
  await shot(page, 'u5-jumped-to-new-output.png');
  check('unseen: looking at the view to its end makes it seen again', await waitRow((t) => t.length > 0 && !t.includes('● new')), await rowText());
  await page.keyboard.press('Control+W');
};
