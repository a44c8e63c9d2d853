// Following a live session (issue 23 item 9), a self-contained block of the VS Code suite, run
// by drive.js after the sessions block (openAs at its default, `view`): a session written into
// the workspace root while its turn waits on a tool call shows the green live dot in the
// Transcripts tree; when the turn finishes on disk the view shows the answer and the tree drops
// the dot at once (it kept it: the tree only polled every 10 s); a `system/turn_duration`
// written after the answer gives the turn the agent's own figure (28s from the timestamps, then
// the recorded 24s: FORMATS.md names it the turn's duration); a title the
// session gets live (`custom-title`) becomes the view tab's title (it kept the old one); while
// the turn works, the quiet view shows the agent's latest comment after `… working` (item 5).
//
//   await require('./live.js')(page, helpers)
// helpers: { WS, log, check, eq, nbsp, palette, activeEditor, shot }
'use strict';
const fs = require('fs');
const path = require('path');

module.exports = async function live(page, h) {
  const { WS, check, nbsp, palette, activeEditor, shot, log } = h;
  const file = path.join(WS, 'live-session.jsonl');
  const sid = '6d1e0b7a-2c4f-4e1b-9a3d-5f7c8e9a0b1c';
  const base = { isSidechain: false, userType: 'external', cwd: '/home/user/live', sessionId: sid, version: '2.1.114' };
  const usage = { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 20 };
  const rec = (o) => JSON.stringify({ ...base, ...o }) + '\n';
  const prompt = 'Run the nightly job locally and tell me why it hangs';
  fs.writeFileSync(file,
    rec({ parentUuid: null, type: 'user', message: { role: 'user', content: prompt }, uuid: 'lv-01', timestamp: '2026-05-14T09:00:00.000Z' }) +
    rec({ parentUuid: 'lv-01', type: 'assistant', requestId: 'req_lv_01', uuid: 'lv-02', timestamp: '2026-05-14T09:00:02.000Z',
      message: { model: 'claude-sonnet-4-5-20250929', id: 'msg_lv_01', type: 'message', role: 'assistant', stop_reason: 'tool_use', usage,
        content: [{ type: 'text', text: 'Running the nightly target to see where it stops.' },
          { type: 'tool_use', id: 'toolu_lv_01', name: 'Bash', input: { command: 'make nightly' } }] } }));

  const tree = '.pane:has(.pane-header:has-text("Transcripts")) .monaco-list-row';
  const row = () => page.locator(tree, { hasText: 'Run the nightly job locally' }).first();
  const dot = async () => (await row().locator('.codicon-circle-filled').count().catch(() => 0)) > 0;
  await palette(page, 'Focus on Transcripts View');
  let lit = false;
  for (let i = 0; i < 100 && !lit; i++) {
    lit = await dot();
    if (!lit) await page.waitForTimeout(200);
  }
  check('live: the tree shows the session written now with the live dot', lit, nbsp(await row().innerText().catch(() => 'no row')));
  await row().click();
  const tabTitled = (t) => page.locator('.editor-group-container.active .tab', { hasText: t }).first();
  await tabTitled('Run the nightly job locally').waitFor({ timeout: 20000 }).catch(() => {});
  const viewText = async () => nbsp(await activeEditor(page).locator('.view-lines').first().innerText().catch(() => ''));
  const waitView = async (needle, ms = 20000) => {
    for (let i = 0; i < ms / 200; i++) {
      if ((await viewText()).includes(needle)) return true;
      await page.waitForTimeout(200);
    }
    return false;
  };
  check('live: the view of the live session shows the turn working', await waitView('… working'), (await viewText()).slice(0, 400));
  // Issue 23 item 5: with the agent's latest comment, not only `… working`.
  check('live: the working turn shows the agent\'s latest comment', (await viewText()).includes('… working · Running the nightly target to see where it stops.'),
    (await viewText()).slice(0, 400));
  await shot(page, 'l1-live-session-working.png');

  // The turn finishes on disk: its result, then the answer (end_turn) 28 s after the prompt.
  fs.appendFileSync(file,
    rec({ parentUuid: 'lv-02', type: 'user', uuid: 'lv-03', timestamp: '2026-05-14T09:00:20.000Z',
      message: { role: 'user', content: [{ tool_use_id: 'toolu_lv_01', type: 'tool_result', content: 'waiting for lock /tmp/nightly.lock', is_error: false }] } }) +
    rec({ parentUuid: 'lv-03', type: 'assistant', requestId: 'req_lv_02', uuid: 'lv-04', timestamp: '2026-05-14T09:00:28.000Z',
      message: { model: 'claude-sonnet-4-5-20250929', id: 'msg_lv_02', type: 'message', role: 'assistant', stop_reason: 'end_turn', usage,
        content: [{ type: 'text', text: 'It hangs on a stale lock file left by the cache step.' }] } }));
  const answered = await waitView('It hangs on a stale lock file');
  const shownAt = Date.now();
  check('live: the view shows the finished turn', answered && !(await viewText()).includes('… working'), (await viewText()).slice(0, 400));
  // The tree agrees with the view at once (it polls every 10 s: the dot stayed meanwhile).
  let off = false;
  for (let i = 0; i < 15 && !off; i++) {
    off = !(await dot());
    if (!off) await page.waitForTimeout(200);
  }
  check('live: the tree drops the live dot as the view shows the turn finished', off, `${Date.now() - shownAt} ms after the view: ${nbsp(await row().innerText().catch(() => ''))}`);
  await shot(page, 'l2-live-session-finished.png');
  const hintOf = (t) => (t.match(/turn 1\/1 ·[^]{0,120}/) || [''])[0].replace(/\s+/g, ' ');
  const waitHint = async () => {
    for (let i = 0; i < 50; i++) {
      const hint = hintOf(await viewText());
      if (/ \d+s /.test(hint)) return hint;
      await page.waitForTimeout(200);
    }
    return hintOf(await viewText());
  };
  const before = await waitHint();
  check('live: the finished turn lasted 28s', before.includes(' 28s '), before);

  // Later: Claude Code's turn_duration (24 s, its own measure) and a title given to the session.
  fs.appendFileSync(file,
    rec({ parentUuid: 'lv-04', type: 'system', subtype: 'turn_duration', durationMs: 24000, messageCount: 4, uuid: 'lv-05', timestamp: '2026-05-14T09:00:28.600Z', isMeta: false }) +
    rec({ type: 'custom-title', customTitle: 'Nightly job hangs on a stale lock' }));
  const retitled = await tabTitled('Nightly job hangs on a stale lock').waitFor({ timeout: 20000 }).then(() => true, () => false);
  const tabs = (await page.locator('.editor-group-container.active .tab').allInnerTexts()).map((t) => nbsp(t).replace(/\s+/g, ' ').trim());
  check('live: the view tab takes the title the session got live', retitled && !tabs.some((t) => t.startsWith('Run the nightly job locally')), tabs);
  await page.waitForTimeout(1000);
  const after = await waitHint();
  log('turn hint before / after the turn_duration record', JSON.stringify([before, after]));
  check('live: a turn_duration written after the answer gives the recorded 24s', after.includes(' 24s ') && !after.includes('28s'), after);
  await shot(page, 'l3-live-session-retitled.png');
  await page.keyboard.press('Control+W');
};
