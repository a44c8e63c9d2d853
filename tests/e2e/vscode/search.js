// Full-text search across sessions (issue 26), a self-contained block of the VS Code suite, run
// by drive.js after history.js: "Transcript: Search All Sessions…" over the workspace's
// sessions; the items follow the typing (a first word, then a second one narrowing it), a
// pick opens the hit's session view at its turn with the match selected.
//
//   await require('./search.js')(page, helpers)
// helpers: { log, check, eq, nbsp, palette, activeEditor, shot }
'use strict';

module.exports = async function search(page, h) {
  const { check, nbsp, palette, activeEditor, shot, log } = h;
  const rowsText = async () =>
    (await page.locator('.quick-input-list .monaco-list-row').allInnerTexts()).map((t) => nbsp(t).replace(/\s+/g, ' ').trim());
  await palette(page, 'Transcript: Search All Sessions…');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  // The command palette's own input is visible until the search pick replaces it: keys typed
  // before that went to the palette (a fresh run lost the first 'a' and searched 'scii').
  await page.locator('.quick-input-title', { hasText: 'Search All Sessions' }).first().waitFor({ timeout: 15000 });
  // Typed as a person types: the items follow.
  await input.pressSequentially('ascii', { delay: 40 });
  if ((await input.inputValue()) !== 'ascii') {
    log('search input lost keys', await input.inputValue());
    await input.fill('ascii');
  }
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.first().waitFor({ timeout: 15000 });
  let first = [];
  for (let i = 0; i < 50; i++) {
    first = await rowsText();
    if (first.some((t) => /‹ascii/i.test(t))) break;
    await page.waitForTimeout(200);
  }
  log('search rows (ascii)', JSON.stringify(first.slice(0, 6)));
  check('Search: items while typing, the word marked', first.length > 0 && first.slice(0, 3).every((t) => /‹ascii/i.test(t)), first.slice(0, 3));
  await input.pressSequentially(' upperc', { delay: 40 });
  if ((await input.inputValue()) !== 'ascii upperc') await input.fill('ascii upperc');
  let narrowed = [];
  for (let i = 0; i < 50; i++) {
    narrowed = await rowsText();
    // (the two words in a row are marked as one phrase: the items of the new query)
    if (narrowed.length && narrowed.slice(0, 3).every((t) => /‹ascii_upperc/i.test(t))) break;
    await page.waitForTimeout(200);
  }
  log('search rows (ascii upperc)', JSON.stringify(narrowed.slice(0, 6)));
  check('Search: the second word narrows the items (a prefix while typed)', narrowed.length > 0 && narrowed.length <= first.length &&
    narrowed.slice(0, 3).every((t) => /‹ascii_upperc/i.test(t)), narrowed.slice(0, 3));
  const title = nbsp(await page.locator('.quick-input-title').first().innerText());
  check('Search: the title counts the hits', /^Search All Sessions \(\d+\)$/.test(title), title);
  await shot(page, 's1-search-quick-pick.png');
  // The first hit: an answer of the newest session holding the words (big-session.jsonl, the
  // demo repeated, recorded last: newer sessions first on ties).
  const m = /^answer · turn (\d+)/.exec(narrowed[0] ?? '');
  check('Search: the first hit is an answer (prompts and answers first)', m !== null, narrowed[0]);
  const turn = m ? m[1] : '?';
  await rows.nth(0).click();
  await page.locator('.editor-group-container.active .tab.active', { hasText: 'GET ∕accounts' }).first().waitFor({ timeout: 30000 });
  let status = '';
  for (let i = 0; i < 100 && !/\(\d+ selected\)/.test(status); i++) {
    status = nbsp(await page.locator('.statusbar-item[id="status.editor.selection"]').first().innerText().catch(() => ''));
    if (!/\(\d+ selected\)/.test(status)) await page.waitForTimeout(200);
  }
  check('Search: the match is selected in the view (ascii_uppercase: 15 characters)', status.includes('(15 selected)'), status);
  const visible = nbsp(await activeEditor(page).locator('.view-lines').first().innerText());
  check(`Search: the view is at the hit's turn (## Turn ${turn} and the match in sight)`, visible.includes(`## Turn ${turn}`) && visible.includes('to_ascii_uppercase'), visible.slice(0, 600));
  await shot(page, 's2-search-landed-on-turn.png');
  await page.keyboard.press('Control+W');
};
