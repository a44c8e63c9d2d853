-- Headless Neovim 0.11 end-to-end suite: the transcript plugin (editors/nvim) against the real
-- release server on the demo session (fixtures/demo, expected values from its README), one
-- corpus transcript (../shared/corpus) and a live append to a temporary copy of the demo.
--
-- Run by tests/e2e/nvim/run.sh:
--   nvim --headless --clean -n --cmd 'set rtp^=editors/nvim' -c 'luafile tests/e2e/nvim/test.lua'
-- Environment: E2E_ROOT (repository root), TRANSCRIPT_LS (server binary), E2E_TMP (scratch dir).
local ROOT = assert(os.getenv('E2E_ROOT'), 'E2E_ROOT')
local SERVER = assert(os.getenv('TRANSCRIPT_LS'), 'TRANSCRIPT_LS')
local TMP = assert(os.getenv('E2E_TMP'), 'E2E_TMP')
local H = dofile(ROOT .. '/tests/e2e/nvim/harness.lua')
local T = require('transcript')

local DEMO = ROOT .. '/fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl'
local SUBAGENT = ROOT .. '/fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63/subagents/agent-a6e2b9f04c71d3a58.jsonl'
local CORPUS = ROOT
  .. '/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl'

local IRRLICHT = ROOT .. '/../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents'
local PI = IRRLICHT .. '/pi/regressions/01-example-session/recordings/2026-04-06-16-22-10_irrlichd-unknown/transcript.jsonl'
local COPILOT = IRRLICHT
  .. '/copilot/scenarios/2-8_autonomous-loop-iteration-limit/recordings/2026-08-05-09-54-17_irrlichd-0.5.9+24afe21/transcript.jsonl'

-- Finish times in the fixtures' README are UTC. The checks below read the raw file, so they
-- open transcripts raw; the `sessions` scenario checks the default, open = 'view'.
-- A plain install has no doc/tags (it is not in the repository): setup() must generate them.
os.remove(ROOT .. '/editors/nvim/doc/tags')
T.setup({ cmd = { SERVER }, timeZone = 'UTC', open = 'raw', view_mode = 'quiet' })

--- Opens `path` in the current window and waits for the client and its first folds.
local function open(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local client
  H.wait('client attach (' .. vim.fn.fnamemodify(path, ':t') .. ')', 10000, function()
    client = T.get_client(buf)
    return client ~= nil and client.initialized
  end)
  return buf, client
end

local function turn_names(symbols)
  local out = {}
  for _, s in ipairs(symbols) do
    out[#out + 1] = s.name
  end
  return out
end

local function child_names(symbol)
  return vim.tbl_map(function(c)
    return c.name
  end, symbol.children or {})
end

--- 0-based byte column just inside the JSON string that starts with `needle` on line `lnum`.
local function col_in(buf, lnum, needle)
  local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
  local s = assert(line:find(needle, 1, true), needle .. ' not on line ' .. lnum)
  return s - 1 + #needle
end

-- The nine turn hints of the demo (README "Expected values per turn"; durations in the
-- server's wording, finish times UTC with minutes truncated).
local DEMO_TURN_HINTS = {
  [3] = 'turn 1/9 · 2 comments · 5 tool calls · 39s · ≈48 tok/s · 11:48 am',
  [20] = 'turn 2/9 · 2 comments · 3 tool calls · 26s · ≈40 tok/s · 11:49 am',
  [34] = 'turn 3/9 · 1 comment · 4 tool calls · 21s · ≈53 tok/s · 11:51 am',
  [47] = 'turn 4/9 ⏰ wake-up · 1 tool call · 11s · ≈42 tok/s · 11:52 am',
  [53] = 'turn 5/9 · 1 comment · 4 tool calls · 39s · ≈44 tok/s · 11:54 am',
  [69] = 'turn 6/9 · 2 comments · 2 tool calls · 13s · ≈40 tok/s · 11:58 am',
  [78] = 'turn 7/9 · 2 tool calls · 12s · ≈37 tok/s · 12:00 pm',
  [87] = 'turn 8/9 · 1 comment · 1 tool call · 10s · ≈33 tok/s · 12:01 pm · no reply',
  [92] = 'turn 9/9 · 1 comment · 2 tool calls · 28s · ≈42 tok/s · 12:02 pm',
}

-- The raw file's turn hints, at the start of each turn's opening line (issue 7).
local RAW_TURN_HINTS = {
  [3] = '▸ Turn 1/9 · GET /accounts?currency=usd returns a 500, but currency=USD works. Can you find …',
  [20] = '▸ Turn 2/9 · Good. Next: store the normalised code in a new `currency` column on `accounts`,…',
  [34] = '▸ Turn 3/9 · Postgres only. The SQLite target is just for the old demo.',
  [47] = '▸ Turn 4/9 · ⏰ background task finished',
  [53] = '▸ Turn 5/9 · Update those two tests to the new behaviour.',
  [69] = '▸ Turn 6/9 · Add a CHANGELOG entry for the currency fix and the new column.',
  [78] = '▸ Turn 7/9 · Can we drop the SQLite demo config now?',
  [87] = '▸ Turn 8/9 · Remove the demo entirely.',
  [92] = '▸ Turn 9/9 · Sorry, keep the demo for now. Instead, get a reviewer agent to look over the wh…',
}

--- The raw turn hint on 0-based line `line`: its label, column and the figures its tooltip
--- starts with (`turn 1/9 · 2 comments · …`).
local function raw_turn_hint(buf, line)
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local ih = h.inlay_hint
    local label = type(ih.label) == 'table' and table.concat(vim.tbl_map(function(p)
      return p.value
    end, ih.label)) or ih.label
    if ih.position.line == line and label:match('^▸ Turn ') then
      local tip = type(ih.tooltip) == 'table' and ih.tooltip.value or ih.tooltip or ''
      return { label = label, col = ih.position.character, figures = (tip:match('^`([^`]*)`') or '') }
    end
  end
end

local DEMO_TITLES = {
  'Before the first prompt',
  'Turn 1: GET /accounts?currency=usd returns a 500, but currency=USD works. Can you find …',
  'Turn 2: Good. Next: store the normalised code in a new `currency` column on `accounts`,…',
  'Turn 3: Postgres only. The SQLite target is just for the old demo.',
  'Turn 4: ⏰ background task finished',
  'Turn 5: Update those two tests to the new behaviour.',
  'Turn 6: Add a CHANGELOG entry for the currency fix and the new column.',
  'Turn 7: Can we drop the SQLite demo config now?',
  'Turn 8: Remove the demo entirely.',
  'Turn 9: Sorry, keep the demo for now. Instead, get a reviewer agent to look over the wh…',
}

-- Gate lenses (README "Gates": lines 23, 30, 33, 52, 66) and the sub-agent lens (line 97),
-- 0-based lines.
local DEMO_LENSES = {
  { 3, '✎ 2 files changed · +3 −2' },
  { 12, 'Show diff · +1 −1' },
  { 14, 'Show diff · +2 −1' },
  { 22, '⟦🔍 Plan⟧ ┄ ⚔️ ┄ 🚦 ┄ 🔨 ┄ 💎 ┄ 📝 ┄ 🔬 ┄ 🚀 — ✔ APPROVED' },
  { 29, '🔍 ━ ⚔️ ━ ⟦🚦 Standards Check⟧ ┄ 🔨 ┄ 💎 ┄ 📝 ┄ 🔬 ┄ 🚀 — ✔ PASS' },
  { 32, '🔍 ━ ⚔️ ━ 🚦 ━ ⟦🔨 Build⟧ ┄ 💎 ┄ 📝 ┄ 🔬 ┄ 🚀 — ⚠ NEEDS-INPUT · needs you: which database should the migration target?' },
  { 34, '✎ 3 files changed · +6 −2' },
  { 36, 'Show diff · +4 −0' },
  { 37, 'Show diff · +1 −0' },
  { 40, 'Show diff · +1 −2' },
  { 51, '🔍 ━ ⚔️ ━ 🚦 ━ 🔨 ━ 💎 ━ 📝 ━ 🔬 ━ ⟦🚀 Merge⟧ — ⛔ NOT-READY · blocked: 2 tests failing in tests/api.rs' },
  { 53, '✎ 1 file changed · +4 −4' },
  { 59, 'Show diff · +2 −2' },
  { 61, 'Show diff · +2 −2' },
  { 65, '🔍 ━ ⚔️ ━ 🚦 ━ 🔨 ━ 💎 ━ 📝 ━ 🔬 ━ ⟦🚀 Merge⟧ — 🏷 READY-TO-MERGE · branch tagged' },
  { 69, '✎ 1 file changed · +6 −0' },
  { 73, 'Show diff · +6 −0' },
  { 96, 'Open sub-agent: Review currency branch (a6e2b9f04c71d3a58, 4 responses, 13s)' },
}

--- The raw demo transcript: folds, outline, hints, lenses, tokens, highlights, navigation.
local function demo_raw()
  local buf, client = open(DEMO)
  H.eq('demo: filetype', vim.bo[buf].filetype, 'jsonl')
  if not H.check('demo: client attached', client ~= nil and client.initialized) then
    return
  end
  H.eq('demo: position encoding negotiated', client.offset_encoding, 'utf-8')

  -- Folding (foldexpr = vim.lsp.foldexpr()). Turn 1 spans lines 4–20, its activity 5–18 (up to
  -- the final answer on 19), its work runs 7–11 and 13–18 (DESIGN §4: maximal runs of tool
  -- calls, results and thinking; the thought on line 11 joins the run before it); the preamble
  -- is lines 1–3.
  H.wait('folds', 5000, function()
    return vim.fn.foldlevel(7) > 0
  end)
  H.eq('demo: fold levels, lines 1–20', H.foldlevels(1, 20), { 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 2, 3, 3, 3, 3, 3, 3, 1, 1 })
  -- The plugin's default foldlevel 1: each turn shows its prompt, the activity folded to one
  -- line, and the final answer.
  H.eq('demo: foldlevel set on attach', vim.wo.foldlevel, 1)
  H.eq('demo: activity closed at foldlevel 1 (lines 5–18)', { vim.fn.foldclosed(5), vim.fn.foldclosedend(5), vim.fn.foldclosed(19) }, { 5, 18, -1 })
  H.eq('demo: foldtext is the collapsedText', vim.fn.foldtextresult(5), '2 comments · 5 tool calls')
  vim.cmd('normal! zM')
  H.eq('demo: zM closes turn 1 as one fold (4–20)', { vim.fn.foldclosed(7), vim.fn.foldclosedend(7) }, { 4, 20 })
  H.eq('demo: closed turn shows its label',
    vim.fn.foldtextresult(4),
    'Turn 1: GET /accounts?currency=usd returns a 500, but currency=USD works. Can you find … · 2 comments · 5 tool calls')
  vim.wo.foldlevel = 2 -- the work-run reading (seed 003): prose visible, runs folded
  H.eq('demo: foldlevel 2 closes the work runs 7–11 and 13–18',
    { vim.fn.foldclosed(7), vim.fn.foldclosedend(7), vim.fn.foldclosed(12), vim.fn.foldclosed(13), vim.fn.foldclosedend(13), vim.fn.foldclosed(19) },
    { 7, 11, -1, 13, 18, -1 })
  H.eq('demo: work run label', vim.fn.foldtextresult(7), 'Worked · 2 tool calls')
  vim.cmd('normal! zR')

  -- Outline.
  local symbols = H.symbols(buf, client)
  H.eq('demo: outline, top level', turn_names(symbols), DEMO_TITLES)
  H.eq('demo: outline, turn 1 children', child_names(symbols[2]), { 'Thought',
    'Worked · Grep Currency::from_str|parse::<Currency>, Read model/currency.rs', 'Worked · Edit ×2, Bash cargo test currency', 'Changes', 'Final answer' })
  H.eq('demo: outline, turn 2 children (gates, steering)', child_names(symbols[3]), {
    'Thought',
    '🔍 Plan: APPROVED',
    'Worked · Glob migrations/*.sql, Read config/database.toml',
    '↪ queued: keep the old currency_code column until the backfill is verified',
    '🚦 Standards Check: PASS',
    'Worked · Grep sqlite',
    'Final answer',
    '🔨 Build: NEEDS-INPUT',
  })
  H.eq('demo: outline, turn 9 children (sub-agent)', child_names(symbols[10]),
    { 'Worked · Bash git diff --stat main...HEAD', 'Worked · Agent Review currency branch', 'Sub-agent: Review currency branch', 'Final answer' })

  -- Inlay hints: one per turn at the start of its opening line, one per model response (30
  -- steps) at the end of its last row.
  local hints = {}
  H.wait('inlay hints', 5000, function()
    hints = H.hints(buf)
    return hints[3] ~= nil
  end)
  local turn_hints, usage = {}, 0
  for line, label in pairs(hints) do
    if label:match('^▸ Turn ') then
      turn_hints[line] = label
    end
  end
  -- (a line may hold an answer hint and a usage hint: counted hint by hint)
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local label = h.inlay_hint.label
    label = type(label) == 'table' and table.concat(vim.tbl_map(function(p) return p.value end, label)) or label
    if label:match('^in %d') then
      usage = usage + 1
    end
  end
  H.eq('demo: turn hints', turn_hints, RAW_TURN_HINTS)
  H.eq('demo: turn 1 hint at column 0, figures in its tooltip', raw_turn_hint(buf, 3),
    { label = RAW_TURN_HINTS[3], col = 0, figures = DEMO_TURN_HINTS[3] })
  H.eq('demo: one usage hint per model response', usage, 30)
  H.eq('demo: usage hint of the first response (line 9)', hints[8], 'in 6 · cache write 9.9k · cache read 14.2k · out 412')
  -- Issue 23 item 8: every hint of the raw file opens its line, where the eye is (usage hints
  -- sat at the end of ~1,300-column JSON lines); the final answer's first words open its line.
  local cols = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    cols[h.inlay_hint.position.character] = (cols[h.inlay_hint.position.character] or 0) + 1
  end
  H.eq('demo: every raw hint at column 0 (turn, answer and usage hints)', vim.tbl_keys(cols), { 0 })
  H.eq('demo: turn 1\'s answer hint opens line 19, before its usage', hints[18],
    '✔ Answer · Fixed. Two problems combined into the 500: | in 3 · cache write 1.4k · cache read 28.1k · out 243')

  -- Code lenses.
  local lenses = {}
  H.wait('code lenses', 5000, function()
    lenses = H.lenses(buf)
    return #lenses >= 14
  end)
  H.eq('demo: code lenses', lenses, DEMO_LENSES)

  -- Semantic tokens and their highlight groups.
  H.wait('semantic tokens', 5000, function()
    return H.token_at(buf, 18, col_in(buf, 19, '"text":"Fixed.')) ~= ''
  end)
  H.eq('demo: token at the final answer (line 19)', H.token_at(buf, 18, col_in(buf, 19, '"text":"Fixed.')), 'finalAnswer')
  H.eq('demo: token at the prompt (line 4)', H.token_at(buf, 3, col_in(buf, 4, '"content":"GET')), 'prompt')
  H.eq('demo: token at a comment (line 6)', H.token_at(buf, 5, col_in(buf, 6, '"text":"')), 'narration')
  H.eq('demo: token at the gate (line 23, byte 485)', H.token_at(buf, 22, 485), 'gate')
  H.eq('demo: token at the rejected tool result (line 91)', H.token_at(buf, 90, col_in(buf, 91, '"content":"')), 'toolError')
  H.eq('demo: tokens at the final marker and after it (line 77, bytes 230 / 250)', { H.token_at(buf, 76, 230), H.token_at(buf, 76, 250) }, { 'meta', 'finalAnswer' })
  vim.api.nvim_win_set_cursor(0, { 19, 0 })
  vim.cmd('redraw!')
  local groups = {}
  for _, s in ipairs(vim.inspect_pos(buf, 18, col_in(buf, 19, '"text":"Fixed.')).semantic_tokens) do
    groups[#groups + 1] = s.opts.hl_group
  end
  H.eq('demo: highlight group at the final answer', groups, { '@lsp.type.finalAnswer.jsonl' })
  local invisible = {}
  for _, name in ipairs({ 'prompt', 'finalAnswer', 'narration', 'thinking', 'toolName', 'toolError', 'gate', 'meta', 'diffAdded', 'diffRemoved' }) do
    local hl = vim.api.nvim_get_hl(0, { name = '@lsp.type.' .. name, link = false })
    if not (hl.fg or hl.bg or hl.bold or hl.italic or hl.underline) then
      invisible[#invisible + 1] = name
    end
  end
  for _, name in ipairs({ 'incomplete', 'inFlight', 'sidechain' }) do
    local hl = vim.api.nvim_get_hl(0, { name = '@lsp.mod.' .. name, link = false })
    if not (hl.fg or hl.italic or hl.underdashed or hl.underdotted) then
      invisible[#invisible + 1] = name
    end
  end
  H.eq('demo: every token type and modifier has a visible highlight', invisible, {})
  -- An added diff line is drawn unlike the final answer (issue 11: `Added` had the answer's
  -- green in the default scheme).
  local function drawn(name)
    local hl = vim.api.nvim_get_hl(0, { name = '@lsp.type.' .. name, link = false })
    return { fg = hl.fg, bg = hl.bg, bold = hl.bold or false }
  end
  H.eq('demo: an added diff line is drawn unlike the final answer', vim.deep_equal(drawn('diffAdded'), drawn('finalAnswer')), false)

  -- Diagnostics: the blocked gate (README: line 52).
  H.wait('diagnostics', 3000, function()
    return #vim.diagnostic.get(buf) > 0
  end)
  H.eq('demo: diagnostics', vim.tbl_map(function(d)
    return { d.lnum, d.code }
  end, vim.diagnostic.get(buf)), { { 51, 'blocked-gate' } })

  -- Navigation commands (async: wait for the cursor).
  local function jump(cmd, from, want)
    vim.api.nvim_win_set_cursor(0, { from, 0 })
    vim.cmd(cmd)
    H.wait(cmd, 3000, function()
      return vim.api.nvim_win_get_cursor(0)[1] == want
    end)
    return vim.api.nvim_win_get_cursor(0)[1]
  end
  H.eq(':TranscriptNextTurn from line 1, 4 and 93', { jump('TranscriptNextTurn', 1, 4), jump('TranscriptNextTurn', 4, 21), jump('TranscriptNextTurn', 70, 79) }, { 4, 21, 79 })
  H.eq(':TranscriptPrevTurn from line 21 and 70', { jump('TranscriptPrevTurn', 21, 4), jump('TranscriptPrevTurn', 70, 54) }, { 4, 54 })
  H.eq(':TranscriptNextGate from line 21, 23, 33, 52', { jump('TranscriptNextGate', 21, 23), jump('TranscriptNextGate', 23, 30), jump('TranscriptNextGate', 33, 52), jump('TranscriptNextGate', 52, 66) }, { 23, 30, 52, 66 })

  -- A gate lens runs transcript.nextGate with reveal: the server moves the cursor.
  vim.api.nvim_win_set_cursor(0, { 23, 0 })
  vim.lsp.codelens.run()
  H.wait('gate lens jump', 3000, function()
    return vim.api.nvim_win_get_cursor(0)[1] == 30
  end)
  H.eq('demo: gate lens on line 23 goes to the next gate', vim.api.nvim_win_get_cursor(0)[1], 30)

  -- The sub-agent lens (line 97) opens the sub-agent's view (transcript.openView, revealed by
  -- the server with window/showDocument).
  vim.api.nvim_win_set_cursor(0, { 97, 0 })
  vim.lsp.codelens.run()
  local sub_view = 'transcript://' .. SUBAGENT
  H.wait('sub-agent view', 5000, function()
    return vim.api.nvim_buf_get_name(0) == sub_view and vim.api.nvim_buf_line_count(0) > 3
  end)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  H.eq('demo: the sub-agent lens opens its view', { vim.api.nvim_buf_get_name(0), vim.bo.filetype, #vim.tbl_filter(function(l)
    return l:match('^## Turn ')
  end, lines) }, { sub_view, 'transcript', 1 })
  vim.cmd.buffer(buf)

  -- Sub-agents through vim.ui.select (replaced to pick the sub-agent).
  local offered
  local orig_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(function(it)
      return opts.format_item(it)
    end, items)
    on_choice(items[2], 2)
  end
  vim.cmd('TranscriptSubagents')
  H.wait('sub-agent buffer', 5000, function()
    return vim.api.nvim_buf_get_name(0) == SUBAGENT
  end)
  vim.ui.select = orig_select
  H.eq(':TranscriptSubagents lists the session', offered, {
    'main: 3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl',
    'sub-agent: agent-a6e2b9f04c71d3a58.jsonl (a6e2b9f04c71d3a58, general-purpose, Review currency branch)',
  })
  local sbuf, sclient = vim.api.nvim_get_current_buf(), nil
  H.wait('sub-agent attach', 5000, function()
    sclient = T.get_client(sbuf)
    return sclient ~= nil
  end)
  if H.check(':TranscriptSubagents opens the sub-agent transcript (attached)', sclient ~= nil and vim.api.nvim_buf_get_name(sbuf) == SUBAGENT, vim.api.nvim_buf_get_name(sbuf)) then
    local s = H.symbols(sbuf, sclient)
    H.eq('sub-agent: one turn', #vim.tbl_filter(function(x)
      return x.name:match('^Turn ')
    end, s), 1)
  end
  H.check('one server for all transcripts', #vim.lsp.get_clients({ name = 'transcript' }) == 1, #vim.lsp.get_clients({ name = 'transcript' }))
  vim.cmd.buffer(buf)
end

--- The rendered view of the demo: content, read-only, attached, features, verbose toggle.
local function demo_view()
  vim.cmd.edit(vim.fn.fnameescape(DEMO))
  vim.cmd('TranscriptView')
  local vbuf = vim.api.nvim_get_current_buf()
  H.eq('view: buffer name', vim.api.nvim_buf_get_name(vbuf), 'transcript://' .. DEMO)
  H.eq('view: options', { vim.bo[vbuf].buftype, vim.bo[vbuf].modifiable, vim.bo[vbuf].readonly, vim.bo[vbuf].filetype },
    { 'nofile', false, true, 'transcript' })
  local lines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  H.eq('view: line count', #lines, 110)
  H.eq('view: turn 1 heading, prompt and answer (lines 4–9)', vim.list_slice(lines, 4, 9), {
    '## Turn 1',
    '',
    '> GET /accounts?currency=usd returns a 500, but currency=USD works. Can you find out why and fix it?',
    '',
    '**Answer**',
    'Fixed. Two problems combined into the 500:',
  })
  local headings = vim.tbl_filter(function(l)
    return l:match('^## Turn ')
  end, lines)
  H.eq('view: nine turn headings', #headings, 9)
  -- gO (issue 23 item 7): the outline in the location list, each row named by the session's
  -- title instead of the ~100-column transcript:// URI; long lines wrap (item 8).
  H.eq('view: wrap, linebreak, breakindent', { vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent }, { true, true, true })
  local TITLE = 'GET /accounts?currency=usd returns a 50…'
  vim.api.nvim_feedkeys('gO', 'x', false)
  local loc
  H.wait('view: gO fills the location list', 5000, function()
    loc = vim.fn.getloclist(vim.fn.win_getid(vim.fn.winnr('#')), { items = 0 }).items
    if #loc == 0 then
      loc = vim.fn.getloclist(0, { items = 0 }).items
    end
    return #loc > 0
  end)
  H.eq('view: gO rows are named by the title', { #loc > 9, loc[1] and loc[1].module }, { true, TITLE })
  if vim.bo.buftype == 'quickfix' then
    vim.cmd('lclose')
  end
  vim.api.nvim_set_current_buf(vbuf)
  H.eq('view: compaction divider', lines[65], '── Compaction 1 (auto, 43k tokens) ──')
  H.eq('view: interrupted turn 8', { lines[95], lines[97] }, { '⏹ interrupted by the user', '(no reply — 1 comment · 1 tool call)' })
  H.eq('view: replyless turn 8', lines[97], '(no reply — 1 comment · 1 tool call)')
  H.check('view: the final marker is never shown', not table.concat(lines, '\n'):find('OMNISCIO_FINAL', 1, true))
  local client = T.get_client(vbuf)
  H.check('view: client attached', client ~= nil)
  H.wait('view inlay hints', 5000, function()
    return H.hints(vbuf)[3] ~= nil
  end)
  H.eq('view: hint on the turn 1 heading', H.hints(vbuf)[3], DEMO_TURN_HINTS[3])
  H.wait('view tokens', 5000, function()
    return H.token_at(vbuf, 8, 0) ~= ''
  end)
  H.eq('view: tokens at the prompt and the final answer', { H.token_at(vbuf, 5, 2), H.token_at(vbuf, 8, 0) }, { 'prompt', 'finalAnswer' })
  H.wait('view folds', 5000, function()
    return vim.fn.foldlevel(9) > 0
  end)
  -- Turn 1 folds from its heading (line 4) to its change summary (line 16).
  vim.cmd('normal! zM')
  H.eq('view: turn 1 folds lines 4–16', { vim.fn.foldclosed(9), vim.fn.foldclosedend(9), vim.fn.foldlevel(17) }, { 4, 16, 0 })
  -- PROTOCOL.md gives turn folds `Turn N: title · C comments · A tool calls`; the view's turn
  -- region may carry the title alone (its heading already shows it), so only the title is
  -- required here.
  local vlabel = vim.fn.foldtextresult(4)
  local vtitle = 'Turn 1: GET /accounts?currency=usd returns a 500, but currency=USD works. Can you find …'
  H.check('view: closed turn label starts with the turn title', vlabel:sub(1, #vtitle) == vtitle, vlabel)
  vim.cmd('normal! zR')
  local lenses = {}
  H.wait('view lenses', 5000, function()
    lenses = H.lenses(vbuf)
    return #lenses >= 14
  end)
  local function kind_of(title)
    if title:find('^Show activity: ') then
      return 'activity'
    elseif title:find('^✎ ') then
      return 'changes'
    end
    return 'gate'
  end
  local function lines_of(kind)
    return vim.tbl_map(function(l)
      return l[1]
    end, vim.tbl_filter(function(l)
      return kind_of(l[2]) == kind
    end, lenses))
  end
  H.eq('view: gate lenses on the gate lines', lines_of('gate'), { 21, 25, 30, 53, 62 })
  -- Change lenses (issue 22): the session's on the title line, each changing turn's on its heading.
  H.eq('view: change lenses (session on line 1, turns 1, 3, 5, 6 on their headings)', lines_of('changes'), { 0, 3, 32, 55, 68 })
  -- The quiet view's hidden activity is one lens away (issue 11): on each turn heading, and on
  -- turn 8's `(no reply — …)` line; running it opens the verbose view at that turn.
  H.eq('view: Show activity lenses (headings; turn 8 on its no-reply line)', lines_of('activity'), { 3, 17, 32, 43, 55, 68, 83, 96, 98 })
  H.eq('view: line 97 is turn 8\'s no-reply line', lines[97], '(no reply — 1 comment · 1 tool call)')
  vim.api.nvim_win_set_cursor(0, { 97, 0 })
  vim.lsp.codelens.run()
  H.wait('verbose view at turn 8', 5000, function()
    return vim.api.nvim_buf_get_name(0):find('verbose=1', 1, true) ~= nil
      and vim.api.nvim_get_current_line() == '## Turn 8'
  end)
  H.eq('view: the no-reply lens opens the verbose view at turn 8', { vim.api.nvim_buf_get_name(0), vim.api.nvim_get_current_line() },
    { 'transcript://' .. DEMO .. '?verbose=1', '## Turn 8' })
  vim.cmd.buffer(vbuf)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })

  -- :TranscriptView in a view toggles verbose.
  vim.cmd('TranscriptView')
  local vvbuf = vim.api.nvim_get_current_buf()
  H.eq('view: verbose toggle', vim.api.nvim_buf_get_name(vvbuf), 'transcript://' .. DEMO .. '?verbose=1')
  local vlines = vim.api.nvim_buf_get_lines(vvbuf, 0, -1, false)
  H.check('view: verbose shows the work runs', #vlines > #lines and table.concat(vlines, '\n'):find('Grep', 1, true) ~= nil, #vlines .. ' lines')
end

--- A live session: lines appended to the file on disk show up in the raw buffer (followed), its
--- hints and outline, and in the view.
local function live_append()
  local path = TMP .. '/live/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl'
  vim.fn.mkdir(TMP .. '/live', 'p')
  vim.fn.writefile(vim.fn.readfile(DEMO, 'b'), path, 'b')
  vim.cmd('tabnew')
  local buf, client = open(path)
  if not H.check('live: client attached', client ~= nil) then
    return
  end
  vim.cmd('TranscriptView')
  local vbuf = vim.api.nvim_get_current_buf()
  H.wait('live: view', 5000, function()
    return vim.api.nvim_buf_line_count(vbuf) > 50
  end)
  vim.cmd.buffer(buf)
  H.wait('live: hints', 5000, function()
    return H.hints(buf)[3] ~= nil
  end)
  H.eq('live: before, turn 1 hint', H.hints(buf)[3], RAW_TURN_HINTS[3])

  local prompt = {
    parentUuid = '2a6eaf7d-aab0-4004-a99e-620588f11315',
    isSidechain = false,
    promptId = 'e2e00000-0000-4000-8000-000000000001',
    type = 'user',
    message = { role = 'user', content = 'Thanks, that is all for today.' },
    uuid = 'e2e00000-0000-4000-8000-000000000002',
    timestamp = '2026-05-12T12:10:00.000Z',
    userType = 'external',
    cwd = '/home/user/project',
    sessionId = '3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63',
    version = '2.1.114',
  }
  local answer = {
    parentUuid = prompt.uuid,
    isSidechain = false,
    message = {
      model = 'claude-sonnet-4-5-20250929',
      id = 'msg_e2e_append_0001',
      type = 'message',
      role = 'assistant',
      content = { { type = 'text', text = 'You are welcome. The branch is ready for review.' } },
      stop_reason = 'end_turn',
      usage = { input_tokens = 3, cache_creation_input_tokens = 10, cache_read_input_tokens = 100, output_tokens = 40 },
    },
    requestId = 'req_e2e_append_0001',
    type = 'assistant',
    uuid = 'e2e00000-0000-4000-8000-000000000003',
    timestamp = '2026-05-12T12:10:04.000Z',
    userType = 'external',
    cwd = '/home/user/project',
    sessionId = '3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63',
    version = '2.1.114',
  }
  local function append(s)
    local f = assert(io.open(path, 'ab'))
    f:write(s)
    f:close()
  end
  local answer_json = vim.json.encode(answer)
  local cut = math.floor(#answer_json / 2)
  -- The prompt and half of the answer line: a torn last line, as while the agent writes.
  append(vim.json.encode(prompt) .. '\n' .. answer_json:sub(1, cut))
  H.wait('live: torn line in the buffer', 5000, function()
    return vim.api.nvim_buf_line_count(buf) == 102
  end)
  H.eq('live: the buffer follows the file (torn last line)', { vim.api.nvim_buf_line_count(buf), vim.bo[buf].modified },
    { 102, false })
  append(answer_json:sub(cut + 1) .. '\n')
  H.wait('live: the answer line in the buffer', 5000, function()
    return vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1] == answer_json
  end)
  -- Hints are re-requested after the change; the turn is in flight until the answer is read.
  H.wait('live: new turn hint', 8000, function()
    local h = H.hints(buf)
    return h[100] ~= nil and not h[100]:find('in flight', 1, true) and (h[3] or ''):match('^▸ Turn 1/10') ~= nil
  end)
  local h = H.hints(buf)
  H.eq('live: appended lines', vim.api.nvim_buf_get_lines(buf, 100, -1, false), { vim.json.encode(prompt), answer_json })
  H.eq('live: turn 1 hint counts the new turn', h[3], (RAW_TURN_HINTS[3]:gsub('1/9', '1/10')))
  H.eq('live: hint of the appended turn', h[100], '▸ Turn 10/10 · Thanks, that is all for today.')
  H.eq('live: figures of the appended turn', (raw_turn_hint(buf, 100) or {}).figures,
    'turn 10/10 · no activity · 4s · 12:10 pm')  -- 40 tokens: no estimate (issue 20 item 10)
  local symbols = H.symbols(buf, client)
  H.eq('live: outline gains turn 10', symbols[#symbols] and symbols[#symbols].name, 'Turn 10: Thanks, that is all for today.')
  -- Diagnostics follow a change after a pause (150 ms), and the file's watcher may publish
  -- those of the buffer as it was a moment earlier: wait for them to settle, then check.
  local function diag_lines()
    return vim.tbl_map(function(d)
      return d.lnum
    end, vim.diagnostic.get(buf))
  end
  H.wait('live: diagnostics settle', 3000, function()
    return vim.deep_equal(diag_lines(), { 51 })
  end)
  H.eq('live: diagnostics (only the blocked gate; the torn line was pending)', diag_lines(), { 51 })
  H.wait('live: view refreshed', 8000, function()
    return table.concat(vim.api.nvim_buf_get_lines(vbuf, 0, -1, false), '\n'):find('You are welcome.', 1, true) ~= nil
  end)
  local vlines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  H.eq('live: view shows the new turn', vim.list_slice(vlines, #vlines - 5, #vlines), {
    '## Turn 10',
    '',
    '> Thanks, that is all for today.',
    '',
    '**Answer**',
    'You are welcome. The branch is ready for review.',
  })
  H.eq('live: the view stays read-only and unmodified', { vim.bo[vbuf].modifiable, vim.bo[vbuf].modified }, { false, false })
  vim.cmd('tabclose')
end

--- A real transcript from the corpus (Claude Code 2.1.42, streaming placeholder usage).
local function corpus()
  local buf, client = open(CORPUS)
  if not H.check('corpus: client attached', client ~= nil) then
    return
  end
  H.wait('corpus folds', 5000, function()
    return vim.fn.foldlevel(7) > 0
  end)
  -- Turn 1: prompt line 3, thinking/comment 4–6, Bash 7 + result 9, Read 10 + result 13, answer 14.
  -- The thought 4–5 starts on the activity's first line: only the activity folds there (one
  -- fold per start line, issue 11).
  H.eq('corpus: fold levels, lines 1–18', H.foldlevels(1, 18), { 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1 })
  local names = turn_names(H.symbols(buf, client))
  H.eq('corpus: outline', names, {
    'Before the first prompt',
    'Turn 1: Ok, so there\'s isn\'t much to see here, mostly one idea about how to organize th…',
    'Turn 2: I very much like this idea, and I used it already with some success in the clma…',
    'Turn 3: OK, so, to be fair, maybe also list 5 weak points, risks, or caveats.',
    'Turn 4: Fair enough. Can you write a balanced opinion on this approach? Keep it same ov…',
    'Turn 5: I actually don\'t like much this idea, and I somewhat struggled with it in the c…',
    'Turn 6: Ok, so, to be fair, maybe also list 5 strengths of this proposal.',
    'Turn 7: Fair enough. Can you write a balanced opinion on this approach? Keep it same ov…',
  })
  H.wait('corpus hints', 5000, function()
    return H.hints(buf)[2] ~= nil
  end)
  local hints = H.hints(buf)
  -- Streaming placeholders (stop_reason null, output 1–25): no tok/s, `out ?` (seed 002).
  H.eq('corpus: turn 1 hint', hints[2], "▸ Turn 1/7 · Ok, so there's isn't much to see here, mostly one idea about how to organize th…")
  H.eq('corpus: turn 1 figures (no throughput from placeholders)', (raw_turn_hint(buf, 2) or {}).figures,
    'turn 1/7 · 1 comment · 2 tool calls · 12s · 06:48 pm')
  H.eq('corpus: usage hint with a placeholder output count', hints[6], 'in 3 · cache write 5.4k · cache read 21.4k · out ?')
  H.wait('corpus tokens', 5000, function()
    return H.token_at(buf, 13, col_in(buf, 14, '"text":"Got it.')) ~= ''
  end)
  H.eq('corpus: token at the final answer (line 14)', H.token_at(buf, 13, col_in(buf, 14, '"text":"Got it.')), 'finalAnswer')
  H.eq('corpus: token at the tool name (line 7)', H.token_at(buf, 6, col_in(buf, 7, '"name":"')), 'toolName')
end

--- A Pi session (entry tree with two abandoned branches) and a Copilot CLI log opened under its
--- real name `events.jsonl` (issue 10). Counts checked by hand against the raw lines.
local function pi_and_copilot()
  local buf, client = open(PI)
  if not H.check('pi: client attached', client ~= nil) then
    return
  end
  local syms = H.symbols(buf, client)
  H.eq('pi: 35 turns and the preamble in the outline', #syms, 36)
  H.eq('pi: turn 19 holds the first abandoned branch', child_names(syms[20]),
    { 'Worked · bash ×6', 'Final answer', 'Compaction 2', 'abandoned branch · 18 entries' })
  H.wait('pi folds', 5000, function()
    return vim.fn.foldlevel(400) > 0
  end)
  -- Lines 399–416 are the abandoned branch, folded inside turn 19 (384–416).
  H.eq('pi: fold levels at the branch (398–400, 416–417)', { vim.fn.foldlevel(398), vim.fn.foldlevel(399), vim.fn.foldlevel(400), vim.fn.foldlevel(416), vim.fn.foldlevel(417) }, { 1, 2, 2, 2, 1 })
  vim.api.nvim_win_set_cursor(0, { 399, 0 })
  vim.cmd('normal! zc')
  H.eq('pi: the closed branch shows its label', vim.fn.foldtextresult(399):find('abandoned branch · 18 entries', 1, true) ~= nil, true)
  vim.cmd('normal! zR')
  vim.api.nvim_win_set_cursor(0, { 12, 0 })
  H.wait('pi hints', 5000, function()
    return H.hints(buf)[11] ~= nil
  end)
  -- The raw turn hint opens the turn's line (issue 7); its figures lead its tooltip.
  H.check('pi: turn 1 hint', vim.startswith(H.hints(buf)[11] or '', '▸ Turn 1/35 · '), H.hints(buf)[11])
  H.eq('pi: turn 1 figures', (raw_turn_hint(buf, 11) or {}).figures, 'turn 1/35 · 2 tool calls · 8s · ≈18 tok/s · 04:23 pm')

  -- Copilot CLI: the same bytes as the corpus file, under Copilot's own file name.
  local dir = TMP .. '/session-state/5ec41487-d2ea-4880-8e5b-23bb92ea7505'
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile(vim.fn.readfile(COPILOT, 'b'), dir .. '/events.jsonl', 'b')
  local cbuf, cclient = open(dir .. '/events.jsonl')
  if not H.check('copilot: client attached to events.jsonl', cclient ~= nil) then
    return
  end
  H.eq('copilot: one server for every agent', #vim.lsp.get_clients({ name = 'transcript' }), 1)
  local names = turn_names(H.symbols(cbuf, cclient))
  H.eq('copilot: outline (1 prompt, 5 autopilot continuations)', names, {
    'Before the first prompt',
    'Turn 1: Keep a tally file going. Every time you work on this, run exactly one bash comm…',
    'Turn 2: ⏰ automatic continuation',
    'Turn 3: ⏰ automatic continuation',
    'Turn 4: ⏰ automatic continuation',
    'Turn 5: ⏰ automatic continuation',
    'Turn 6: ⏰ automatic continuation',
  })
  H.wait('copilot tokens', 5000, function()
    return H.token_at(cbuf, 13, col_in(cbuf, 14, '"content":"Appended: 1.')) ~= ''
  end)
  H.eq('copilot: token at the final answer (line 14)', H.token_at(cbuf, 13, col_in(cbuf, 14, '"content":"Appended: 1.')), 'finalAnswer')
  vim.cmd('TranscriptView')
  local vbuf = vim.api.nvim_get_current_buf()
  H.wait('copilot view', 5000, function()
    return #vim.api.nvim_buf_get_lines(vbuf, 0, -1, false) > 10
  end)
  local text = table.concat(vim.api.nvim_buf_get_lines(vbuf, 0, -1, false), '\n')
  H.check('copilot view: header names the agent and the session usage', text:find('Copilot CLI 1.0.78 · gpt-5-mini', 1, true) ~= nil and text:find('tokens 38k in / 5.8k out / 118k cache read', 1, true) ~= nil, text:sub(1, 300))
  H.check('copilot view: six answers', select(2, text:gsub('%*%*Answer%*%*', '')) == 6, text)
  -- Leave no extra transcript buffers behind for the later scenarios.
  for _, b in ipairs({ vbuf, cbuf, buf }) do
    pcall(vim.api.nvim_buf_delete, b, { force = true })
  end
end

--- What a user sees: the screen grid of the raw demo (foldlevel 1) and of its view, saved under
--- tests/e2e/artifacts/ as text.
local function screens()
  local dir = ROOT .. '/tests/e2e/artifacts'
  vim.fn.mkdir(dir, 'p')
  vim.o.columns, vim.o.lines = 150, 40
  vim.o.showtabline = 0 -- screen row N is buffer line N while nothing is folded above it
  local function dump(name)
    vim.cmd('redraw!')
    local rows = {}
    for r = 1, vim.o.lines - 1 do
      rows[#rows + 1] = H.screen_row(r)
    end
    vim.fn.writefile(rows, dir .. '/' .. name)
    return rows
  end
  vim.cmd('tabnew')
  vim.cmd.edit(vim.fn.fnameescape(DEMO))
  vim.wo.foldlevel = 1
  vim.wo.wrap = false
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  H.wait('hints on screen', 3000, function()
    return H.hints(0)[3] ~= nil
  end)
  local rows = dump('nvim-raw-foldlevel1.txt')
  -- Row 4 is turn 1's prompt, its hint at the start where it is visible (issue 7); row 5 the
  -- closed activity fold with its label.
  H.check('screen: the turn 1 hint opens its line', (rows[4] or ''):match('^%s*▸ Turn 1/9 · GET /accounts') ~= nil, rows[4])
  H.check('screen: the closed activity shows its label', (rows[5] or ''):find('2 comments · 5 tool calls', 1, true) ~= nil, rows[5])
  vim.cmd('TranscriptView')
  vim.wo.wrap = false
  H.wait('view hints on screen', 3000, function()
    return H.hints(0)[3] ~= nil
  end)
  rows = dump('nvim-view.txt')
  H.check('screen: the view shows the turn 1 heading with its hint',
    (rows[4] or ''):find('## Turn 1 ', 1, true) == 1 and (rows[4] or ''):find('turn 1/9 · 2 comments', 1, true) ~= nil, rows[4])
  vim.cmd('tabclose')
end

--- :checkhealth transcript and the help file.
local function health_and_help()
  vim.cmd.edit(vim.fn.fnameescape(DEMO))
  vim.cmd('checkhealth transcript')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.check('checkhealth: no error', not text:find('ERROR', 1, true), text:match('ERROR[^\n]*'))
  H.check('checkhealth: server binary and version', text:find('OK binary: ' .. SERVER, 1, true) ~= nil and text:find('OK version: transcript-ls ', 1, true) ~= nil)
  H.check('checkhealth: client attached to the demo', text:find('%(transcript%): client %d+ attached, position encoding utf%-8') ~= nil)
  vim.cmd('tabclose')
  -- Help tags from a copy of doc/ (nothing is written into the repository).
  local doc = TMP .. '/doc'
  vim.fn.mkdir(doc, 'p')
  vim.fn.writefile(vim.fn.readfile(ROOT .. '/editors/nvim/doc/transcript.txt', 'b'), doc .. '/transcript.txt', 'b')
  local ok, err = pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  local tags = ok and vim.fn.readfile(doc .. '/tags') or {}
  H.check('help: :helptags generates tags', ok and #tags >= 10, ok and (#tags .. ' tags') or err)
  local want = { 'transcript.txt', ':TranscriptView', ':TranscriptNextTurn', ':TranscriptPrevTurn', ':TranscriptNextGate', ':TranscriptSubagents', ':TranscriptDiff', 'transcript-setup' }
  local missing = {}
  local have = {}
  for _, l in ipairs(tags) do
    have[l:match('^[^\t]+')] = true
  end
  for _, t in ipairs(want) do
    if not have[t] then
      missing[#missing + 1] = t
    end
  end
  H.eq('help: tags for the commands and setup', missing, {})
end


--- Sessions first (issue 7): `:Transcripts` through a stubbed `vim.ui.select`, `:Transcripts
--- <query>`, `:TranscriptLatest` for the current directory, `open = 'view'` on `:edit`,
--- `:TranscriptRaw`, `:help transcript` right after setup().
local function sessions()
  local view = require('transcript.view')
  -- A root with the demo session (and its sub-agent) and a session recorded in TMP/work.
  local root = TMP .. '/sessions/projects'
  local proj = root .. '/-home-user-project'
  vim.fn.mkdir(proj .. '/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63/subagents', 'p')
  vim.fn.writefile(vim.fn.readfile(DEMO, 'b'), proj .. '/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl', 'b')
  vim.fn.writefile(vim.fn.readfile(SUBAGENT, 'b'), proj .. '/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63/subagents/agent-a6e2b9f04c71d3a58.jsonl', 'b')
  local work = TMP .. '/work'
  vim.fn.mkdir(work, 'p')
  vim.fn.mkdir(root .. '/-work', 'p')
  local case16 = vim.fn.readfile(ROOT .. '/fixtures/cases/16-utc-timestamps-local-display.jsonl', 'b')
  local recorded_here = root .. '/-work/5e55e55e-0000-4000-8000-000000000016.jsonl'
  vim.fn.writefile(vim.tbl_map(function(l)
    return (l:gsub('"cwd":"[^"]*"', '"cwd":"' .. work .. '"'))
  end, case16), recorded_here, 'b')
  T.set({ roots = { root } })
  T.config.open = 'view' -- the default (the suite opens raw for the checks above)
  local client = T.ensure_client(vim.api.nvim_get_current_buf(), nil)
  local list = {}
  -- By default the client's workspace folder (the directory of the first transcript the suite
  -- opened) is indexed too (issue 7).
  local folder = client.workspace_folders and client.workspace_folders[1] and vim.uri_to_fname(client.workspace_folders[1].uri)
  local in_folder = 0
  H.wait('sessions: the root and the workspace folder', 10000, function()
    local r = client:request_sync('transcript/sessions', {}, 2000)
    list = r and r.result and r.result.sessions or {}
    in_folder = #vim.tbl_filter(function(s)
      return folder ~= nil and vim.startswith(vim.uri_to_fname(s.uri), folder .. '/')
    end, list)
    return #list > 3 and in_folder > 0
  end)
  H.eq('sessions: the workspace folder\'s transcripts are listed too', { more_than_3 = #list > 3, in_folder = in_folder > 0 }, { more_than_3 = true, in_folder = true })
  -- From here on only the root: `workspaceFolders = false`.
  T.set({ roots = { root }, workspaceFolders = false })
  H.wait('sessions: index of the new root', 10000, function()
    local r = client:request_sync('transcript/sessions', {}, 2000)
    list = r and r.result and r.result.sessions or {}
    return #list == 3
  end)
  H.eq('sessions: three sessions listed', #list, 3)

  -- :Transcripts with vim.ui.select stubbed: what the picker gets, and the choice opens the view.
  local real_select = vim.ui.select
  local shown
  local function stub(pick)
    vim.ui.select = function(items, opts, on_choice)
      shown = { prompt = opts.prompt, lines = vim.tbl_map(opts.format_item, items) }
      for i, line in ipairs(shown.lines) do
        if line:find(pick, 1, true) then
          return on_choice(items[i], i)
        end
      end
      on_choice(nil, nil)
    end
  end
  vim.cmd('tabnew')
  stub('GET /accounts')
  vim.cmd('Transcripts')
  H.wait(':Transcripts opens the chosen view', 5000, function()
    return view.is_view_name(vim.api.nvim_buf_get_name(0)) and vim.api.nvim_buf_line_count(0) > 50
  end)
  H.eq(':Transcripts: prompt and item count', { shown and shown.prompt, shown and #shown.lines }, { 'Transcripts', 3 })
  H.check(':Transcripts: item is title — project · age · turns', vim.iter(shown and shown.lines or {}):any(function(l)
    return l:match('^GET /accounts%?currency=usd returns a 500.* — project · %d+%a+ ago · 9 turns$') ~= nil
  end), shown and shown.lines)
  H.check(':Transcripts: the view of the demo is shown', vim.endswith(vim.api.nvim_buf_get_name(0), '3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl'),
    vim.api.nvim_buf_get_name(0))
  H.check(':Transcripts: the view starts with the session heading',
    (vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] or ''):find('GET /accounts', 1, true) ~= nil, vim.api.nvim_buf_get_lines(0, 0, 1, false)[1])
  -- Project folders that end the same are told apart by their parents (issue 23 item 7).
  H.eq(':Transcripts: project labels tell same-named folders apart',
    require('transcript.sessions').project_labels({ '/home/u/a/cwd', '/home/u/b/cwd', '/x/proj', '/x/proj' }),
    { ['/home/u/a/cwd'] = 'a/cwd', ['/home/u/b/cwd'] = 'b/cwd', ['/x/proj'] = 'proj' })
  -- With a query, the best match comes first.
  stub('settlement')
  vim.cmd('Transcripts settlement batch')
  H.wait(':Transcripts <query> opens the match', 5000, function()
    return vim.endswith(vim.api.nvim_buf_get_name(0), '5e55e55e-0000-4000-8000-000000000016.jsonl')
  end)
  H.eq(':Transcripts <query>: one match, first', shown and #shown.lines, 1)
  vim.ui.select = real_select

  -- :TranscriptLatest in the directory the second session was recorded in.
  vim.cmd('tabnew')
  vim.cmd.cd(vim.fn.fnameescape(work))
  vim.cmd('TranscriptLatest')
  H.wait(':TranscriptLatest opens the session of this directory', 5000, function()
    return view.is_view_name(vim.api.nvim_buf_get_name(0)) and vim.endswith(vim.api.nvim_buf_get_name(0), '5e55e55e-0000-4000-8000-000000000016.jsonl')
  end)
  H.check(':TranscriptLatest: the view of the session recorded here', vim.endswith(vim.api.nvim_buf_get_name(0), '5e55e55e-0000-4000-8000-000000000016.jsonl')
    and view.is_view_name(vim.api.nvim_buf_get_name(0)), vim.api.nvim_buf_get_name(0))
  vim.cmd.cd(vim.fn.fnameescape(ROOT))

  -- open = 'view' (the default): :edit of a transcript shows its view; :TranscriptRaw goes back.
  local copy = TMP .. '/open-view/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl'
  vim.fn.mkdir(TMP .. '/open-view', 'p')
  vim.fn.writefile(vim.fn.readfile(DEMO, 'b'), copy, 'b')
  vim.cmd('tabnew')
  vim.cmd.edit(vim.fn.fnameescape(copy))
  H.wait("open='view': the window switches to the view", 10000, function()
    return view.is_view_name(vim.api.nvim_buf_get_name(0)) and vim.api.nvim_buf_line_count(0) > 50
  end)
  H.check("open='view': :edit shows the view", view.is_view_name(vim.api.nvim_buf_get_name(0)), vim.api.nvim_buf_get_name(0))
  vim.cmd('TranscriptRaw')
  H.wait(':TranscriptRaw: the raw file', 3000, function()
    return vim.api.nvim_buf_get_name(0) == copy
  end)
  vim.wait(500)
  H.eq(':TranscriptRaw: the raw file stays', vim.api.nvim_buf_get_name(0), copy)
  T.config.open = 'raw'
  vim.cmd('tabclose')

  -- :help transcript right after setup() (the tags were generated by it).
  local ok, err = pcall(vim.cmd.help, 'transcript')
  H.check(':help transcript after setup()', ok and vim.endswith(vim.api.nvim_buf_get_name(0), 'transcript.txt'), ok and vim.api.nvim_buf_get_name(0) or err)
  local ok2 = pcall(vim.cmd.help, ':Transcripts')
  H.check(':help :Transcripts', ok2)
  vim.cmd('helpclose')
end

--- A Codex sub-agent rollout that replays its parent's history (issue 9): the inherited part is
--- one `imports` fold, `inherited from thr-parent (1 turn)` (lines 2–8), nested in the part
--- before the first prompt and so closed at the plugin's foldlevel 1; the sub-agent's own turn
--- (lines 9–16) stays open.
local function inherited()
  local path = ROOT .. '/fixtures/rules/codex-subagent-inherited.jsonl'
  open(path)
  H.wait('inherited: folds', 5000, function()
    return vim.fn.foldlevel(2) > 0 and vim.fn.foldclosed(2) ~= -1
  end)
  H.eq('inherited: the inherited history is closed (2–8)', { vim.fn.foldclosed(2), vim.fn.foldclosedend(2) }, { 2, 8 })
  H.eq('inherited: its label', vim.fn.foldtextresult(2), 'inherited from thr-parent (1 turn)')
  H.eq("inherited: the sub-agent's prompt is shown", vim.fn.foldclosed(11), -1)
end

--- Reading a session (issue 11): tests/e2e/nvim/reading.lua.
local function reading()
  dofile(ROOT .. '/tests/e2e/nvim/reading.lua')(H, T, { ROOT = ROOT, TMP = TMP, DEMO = DEMO, CORPUS = CORPUS, open = open })
end

--- What the agent changed (issue 22): tests/e2e/nvim/changes.lua.
local function changes()
  dofile(ROOT .. '/tests/e2e/nvim/changes.lua')(H, T, { ROOT = ROOT, TMP = TMP, open = open })
end

--- Full-text search (issue 26): tests/e2e/nvim/search.lua (sets the roots).
local function search()
  dofile(ROOT .. '/tests/e2e/nvim/search.lua')(H, T, { ROOT = ROOT, TMP = TMP })
end

--- From a source file to its sessions (issue 22): tests/e2e/nvim/history.lua (sets the roots).
local function history()
  dofile(ROOT .. '/tests/e2e/nvim/history.lua')(H, T, { ROOT = ROOT, TMP = TMP })
end

--- What is new since I last looked (issue 23 item 10): tests/e2e/nvim/unseen.lua (sets the roots).
local function unseen()
  dofile(ROOT .. '/tests/e2e/nvim/unseen.lua')(H, T, { ROOT = ROOT, TMP = TMP, DEMO = DEMO })
end

--- The view's default shape, wrapping and markdown (issue 23 items 5, 6, 8): tests/e2e/nvim/shape.lua.
local function shape()
  dofile(ROOT .. '/tests/e2e/nvim/shape.lua')(H, T, { ROOT = ROOT, TMP = TMP, DEMO = DEMO, CORPUS = CORPUS, open = open })
end

--- First contact (issue 23): tests/e2e/nvim/first_contact.lua (restarts the server: run last).
local function first_contact()
  dofile(ROOT .. '/tests/e2e/nvim/first_contact.lua')(H, T, { ROOT = ROOT, TMP = TMP })
end

local only = os.getenv('E2E_ONLY')
for _, scenario in ipairs(only == 'unseen' and { unseen } or only == 'shape' and { shape } or { demo_raw, demo_view, live_append, corpus, pi_and_copilot, inherited, screens, health_and_help, reading, changes, sessions, history, search, unseen, shape, first_contact }) do
  local ok, err = xpcall(scenario, debug.traceback)
  if not ok then
    H.check('no Lua error', false, err)
  end
end
H.finish()
