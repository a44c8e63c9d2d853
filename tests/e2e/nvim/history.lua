-- From a source file to the sessions that wrote it (issue 22 items 3, 4), a self-contained
-- block of the Neovim suite: fixtures/history (a Claude Code session that wrote src/app.py in
-- turn 1 and edited it in turn 2, a Codex session that added `count`, and a person's later
-- change of the `print` line) copied into TMP with its absolute paths, indexed as the only root.
-- :TranscriptFileHistory (vim.ui.select) opens the picked turn in its view and its diff of the
-- file; :TranscriptBlame shows who wrote which lines as virtual text, follows an edit of the
-- buffer, and :TranscriptBlame! clears it.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP }.
return function(H, T, ctx)
  local dir = ctx.TMP .. '/history'
  local function copy(rel)
    local src = ctx.ROOT .. '/fixtures/history/' .. rel
    local dst = dir .. '/' .. rel
    vim.fn.mkdir(vim.fs.dirname(dst), 'p')
    vim.fn.writefile(vim.tbl_map(function(l)
      return (l:gsub('@ROOT@', dir))
    end, vim.fn.readfile(src, 'b')), dst, 'b')
  end
  for _, rel in ipairs({
    'root/claude/-proj/5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl',
    'root/codex/2026/05/02/rollout-2026-05-02T09-00-00-019e3c00-1111-7c01-9d02-4b72d3e5c6f8.jsonl',
    'src/app.py',
  }) do
    copy(rel)
  end
  local CLAUDE = dir .. '/root/claude/-proj/5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl'
  local CODEX = dir .. '/root/codex/2026/05/02/rollout-2026-05-02T09-00-00-019e3c00-1111-7c01-9d02-4b72d3e5c6f8.jsonl'
  local APP = dir .. '/src/app.py'
  local T_CLAUDE = '"Write a CSV line parser in src/app.py"'

  T.set({ roots = { dir .. '/root' }, workspaceFolders = false })
  local client = T.ensure_client(vim.api.nvim_get_current_buf(), nil)
  H.wait('history: the two fixture sessions indexed', 10000, function()
    local r = client:request_sync('transcript/sessions', {}, 2000)
    return r and r.result and #r.result.sessions == 2
  end)

  vim.cmd('tabonly')
  vim.cmd.edit(vim.fn.fnameescape(APP))
  local src = vim.api.nvim_get_current_buf()

  -- :TranscriptFileHistory through a stubbed vim.ui.select: the rows, then pick the newest.
  local select = vim.ui.select
  local rows, prompt
  vim.ui.select = function(items, opts, on_choice)
    prompt = opts.prompt
    rows = vim.tbl_map(opts.format_item, items)
    on_choice(items[2]) -- Claude Code's turn 2 (Skip empty fields)
  end
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd('TranscriptFileHistory')
  H.wait('history: the picker', 5000, function()
    return rows ~= nil
  end)
  vim.ui.select = select
  H.eq('history: the picker\'s prompt', prompt, 'Agent history of ' .. vim.fn.fnamemodify(APP, ':~:.'))
  H.eq('history: the picker\'s rows, newest first', rows, {
    '2026-05-02 09:00  codex  "Add a count helper"  turn 1 "Add a count helper"  M +4 −0',
    '2026-05-01 10:22  claude-code  ' .. T_CLAUDE .. '  turn 2 "Skip empty fields"  M +1 −1',
    '2026-05-01 10:00  claude-code  ' .. T_CLAUDE .. '  turn 1 ' .. T_CLAUDE .. '  A +11 −0',
  })
  H.wait('history: the diff tab of the picked turn', 5000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end)
  local wins = vim.api.nvim_tabpage_list_wins(0)
  local sides = vim.tbl_map(function(w)
    local b = vim.api.nvim_win_get_buf(w)
    return { vim.api.nvim_buf_get_name(b), table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n') }
  end, wins)
  H.check('history: the diff shows turn 2\'s change of app.py (before: no filter; after: `if p.strip()`)',
    #sides == 2 and sides[1][1]:find('transcript-diff://before/', 1, true) == 1 and sides[1][1]:sub(-10) == 'src/app.py'
      and not sides[1][2]:find('if p.strip()', 1, true) and sides[2][2]:find('if p.strip()', 1, true) ~= nil, sides)
  vim.cmd('tabclose')
  H.eq('history: the view of the Claude Code session is open at turn 2', {
    vim.api.nvim_buf_get_name(0), vim.api.nvim_get_current_line(),
  }, { 'transcript://' .. CLAUDE, '## Turn 2' })

  -- :TranscriptBlame on the source file.
  vim.cmd.buffer(src)
  local history = require('transcript.history')
  local function marks()
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(src, history.ns, 0, -1, { details = true })) do
      local t = m[4].virt_text and m[4].virt_text[1][1] or ''
      out[#out + 1] = { m[2] + 1, t == '  ┆' and '┆' or t }
    end
    return out
  end
  vim.cmd('TranscriptBlame')
  H.wait('history: blame drawn', 5000, function()
    return #marks() > 0
  end)
  local L1 = '  ✎ claude-code  ' .. T_CLAUDE .. '  turn 1  2026-05-01 10:00  +11 −0'
  local L2 = '  ✎ claude-code  ' .. T_CLAUDE .. '  turn 2  2026-05-01 10:22  +1 −1'
  local L3 = '  ✎ codex  "Add a count helper"  turn 1  2026-05-02 09:00  +4 −0'
  H.eq('history: blame virtual text (1-based lines; line 11, changed by a person, has none)', marks(), {
    { 1, L1 }, { 2, '┆' }, { 3, '┆' }, { 4, '┆' }, { 5, '┆' },
    { 6, L2 },
    { 7, L1 }, { 8, '┆' }, { 9, '┆' }, { 10, '┆' },
    { 12, L3 }, { 13, '┆' }, { 14, '┆' }, { 15, '┆' },
  })
  H.eq('history: b:transcript_blame counts the blocks', vim.b[src].transcript_blame, 4)
  H.eq('history: blame ranges carry the prompt', history.ranges(src)[4].prompt, 'Add a count helper')
  -- A person changes the `return` line of count: what is left of Codex's block (two blank
  -- lines and `def count(line):`, one short significant line) is no longer attributed.
  vim.api.nvim_buf_set_lines(src, 14, 15, false, { '    return sum(1 for _ in parse(line))' })
  vim.api.nvim_exec_autocmds('TextChanged', { buffer = src })
  H.wait('history: blame after the edit', 5000, function()
    return #history.ranges(src) == 3
  end)
  local after = marks()
  H.eq('history: after a person edits line 15, Codex\'s block is gone, the rest stays', after[#after], { 10, '┆' })
  H.eq('history: b:transcript_blame follows', vim.b[src].transcript_blame, 3)
  vim.cmd('TranscriptBlame!')
  H.eq('history: :TranscriptBlame! clears', { #marks(), vim.b[src].transcript_blame }, { 0, nil })
  vim.cmd('silent! edit!')
end
