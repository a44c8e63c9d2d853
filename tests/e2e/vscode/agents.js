// The registry's newer agents from their default roots (issue 21), a self-contained block of the
// VS Code suite, run by drive.js after the sessions block: run.sh put one recorded session of
// Gemini CLI, Antigravity CLI, Kiro CLI and Mistral Vibe in each agent's default folder under
// the run's HOME. With `transcript.roots` removed from the user settings (and the workspace
// folder left out), "Open Session…" lists the four; each opens as its view (the tab titled by
// its prompt, the header naming the agent, turn 1's answer) with its outline. The settings are
// put back at the end.
//
//   await require('./agents.js')(page, helpers)
// helpers: { BASE_SETTINGS, log, check, eq, nbsp, palette, activeEditor, shot }
'use strict';

const SESSIONS = [
  { agent: 'Gemini CLI', prompt: "Run the shell command 'echo hello' using the run_shell_command tool" },
  { agent: 'Antigravity CLI', prompt: 'Run the shell command `echo hello` using your run_command tool' },
  { agent: 'Kiro CLI', prompt: "Run the shell command 'echo hello' using your shell tool" },
  { agent: 'Mistral Vibe', prompt: "Run bash 'echo hello' using the bash tool" },
];

/** Replaces the user settings through VS Code's own JSON editor, as a user would. */
async function writeSettings(page, h, settings, marker) {
  await h.palette(page, 'Preferences: Open User Settings (JSON)');
  const editor = page.locator(`.monaco-editor:has(.view-lines:has-text("${marker}"))`).last();
  await editor.waitFor({ timeout: 15000 });
  await editor.locator('.view-line').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(JSON.stringify(settings, null, 2));
  await page.keyboard.press('Control+S');
  await page.waitForTimeout(1000);
  await page.keyboard.press('Control+W');
  await page.waitForTimeout(500);
}

module.exports = async function agents(page, h) {
  const { check, eq, nbsp, palette, activeEditor, shot, log } = h;
  const rowsOf = (sel) => page.locator(sel).allInnerTexts().then((t) => t.map((x) => nbsp(x).replace(/\s+/g, ' ').trim()));
  // The settings as the sessions block left them (the file VS Code saved may carry a bracket
  // its editor closed on its own after the text, so it is not read back).
  const before = { ...h.BASE_SETTINGS };
  delete before['transcript-ls.openAs'];
  const settings = { ...before, 'transcript.workspaceFolders': false };
  delete settings['transcript.roots'];
  await writeSettings(page, h, settings, 'transcript.roots');

  const input = page.locator('.quick-input-widget input');
  const rows = '.quick-input-list .monaco-list-row';
  let listed = [];
  for (let i = 0; i < 30; i++) {
    await palette(page, 'Transcript: Open Session…');
    // (the command palette's rows may still show for a moment)
    for (let j = 0; j < 25; j++) {
      listed = await rowsOf(rows);
      if (listed.length > 0 && !listed.some((r) => r.startsWith('Transcript: '))) break;
      await page.waitForTimeout(200);
    }
    if (listed.length === 4 && SESSIONS.every((s) => listed.some((r) => r.startsWith(s.prompt)))) break;
    await page.keyboard.press('Escape');
    await page.waitForTimeout(500);
  }
  log('agents: Open Session… rows', JSON.stringify(listed));
  eq('agents: Open Session… lists the four default-root sessions', listed.length, 4);
  await shot(page, 'a1-agents-open-session.png');
  await page.keyboard.press('Escape');

  for (const s of SESSIONS) {
    await palette(page, 'Transcript: Open Session…');
    await page.locator(rows).first().waitFor({ timeout: 15000 });
    await input.fill(s.prompt);
    await page.waitForTimeout(500);
    const first = (await rowsOf(rows))[0] ?? '';
    check(`agents: ${s.agent}: its prompt picks it first`, first.startsWith(s.prompt), first);
    await page.keyboard.press('Enter');
    // The tab shows the title's first characters: the prompt's last words tell the four apart
    // only in the text, so the tab is checked by its start and the text by the whole prompt.
    const tab = page.locator('.editor-group-container.active .tab.active', { hasText: s.prompt.slice(0, 20) }).first();
    const opened = await tab.waitFor({ timeout: 15000 }).then(() => true, () => false);
    let text = '';
    for (let i = 0; opened && i < 50 && !text.includes('## Turn 1'); i++) {
      text = nbsp(await activeEditor(page).locator('.view-lines').first().innerText().catch(() => ''));
      if (!text.includes('## Turn 1')) await page.waitForTimeout(200);
    }
    check(`agents: ${s.agent}: opens as its view, titled by its prompt`, opened,
      nbsp(await page.locator('.editor-group-container.active .tab.active').first().innerText().catch(() => '')));
    check(`agents: ${s.agent}: the header names the agent, turn 1 answers 'done'`,
      text.includes(s.agent) && text.includes('## Turn 1') && text.includes(`> ${s.prompt}`) && /\*\*Answer\*\*\s+done/.test(text), text.slice(0, 400));
    await palette(page, 'Explorer: Focus on Outline View');
    const names = page.locator('.outline-pane .monaco-list-row .label-name');
    await names.first().waitFor({ timeout: 10000 }).catch(() => {});
    const outline = (await names.allInnerTexts()).map((x) => nbsp(x).trim());
    check(`agents: ${s.agent}: the outline starts at turn 1`, (outline[0] ?? '').startsWith('Turn 1: '), outline);
    await shot(page, `a2-agents-${s.agent.toLowerCase().replace(/ /g, '-')}.png`);
    await page.keyboard.press('Control+W');
  }

  await writeSettings(page, h, before, 'transcript.workspaceFolders');
};
