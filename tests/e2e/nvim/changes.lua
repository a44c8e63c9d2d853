-- What the agent changed (issue 22 item 2), a self-contained block of the Neovim suite, on a
-- real Claude Code session from the corpus (JSSoundRecorder): turn 2's one Edit was rejected,
-- turn 4 created package.json and .gitignore and edited CLAUDE.md, the session changed eleven
-- files in four turns. Change lenses on the raw file, :TranscriptChanges [N|session] and the
-- lens fill the quickfix list, <CR> and :TranscriptChangeDiff open a file's change as a diff.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP, open }.
return function(H, T, ctx)
  local SRC = ctx.ROOT
    .. '/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl'
  local path = ctx.TMP .. '/changes-session.jsonl'
  vim.fn.writefile(vim.fn.readfile(SRC, 'b'), path, 'b')
  local t = os.time() - 600
  vim.uv.fs_utime(path, t, t)
  local DIR = '/Users/dain/workspace/JSSoundRecorder/'

  local buf, client = ctx.open(path)
  if not H.check('changes: client attached', client ~= nil) then
    return
  end
  local lenses = {}
  H.wait('changes: code lenses', 5000, function()
    lenses = H.lenses(buf)
    return #lenses > 0
  end)
  local change_lenses = vim.tbl_filter(function(l)
    return l[2]:find('^✎ ') ~= nil
  end, lenses)
  H.eq('changes: change lenses on the raw file (0-based lines)', change_lenses, {
    { 2, '✎ 1 file changed · +107 −0' },
    { 46, '✎ no file changed · 1 edit not applied' },
    { 63, '✎ 3 files changed · +35 −5' },
    { 98, '✎ 7 files changed · +18 −24' },
    { 168, '✎ 5 files changed · +142 −27 · 1 edit not applied' },
  })

  local function qf()
    local q = vim.fn.getqflist({ title = 1, items = 1 })
    return q.title, vim.tbl_map(function(i)
      return { vim.api.nvim_buf_get_name(i.bufnr), i.text }
    end, q.items)
  end
  local function wait_qf(prefix)
    H.wait('changes: quickfix ' .. prefix, 5000, function()
      return (qf()):sub(1, #prefix) == prefix
    end)
    return qf()
  end
  local TURN4 = {
    { DIR .. 'package.json', 'A package.json +17 −0' },
    { DIR .. '.gitignore', 'A .gitignore +4 −0' },
    { DIR .. 'CLAUDE.md', 'M CLAUDE.md +14 −5' },
  }

  -- :TranscriptChanges 4
  vim.fn.setqflist({}, 'r', { title = 'other', items = {} })
  vim.cmd('TranscriptChanges 4')
  local title, items = wait_qf('Transcript: Turn 4')
  H.eq('changes: :TranscriptChanges 4 quickfix title', title, "Transcript: Turn 4: ok, fine, let's do vite · ✎ 3 files changed · +35 −5")
  H.eq('changes: :TranscriptChanges 4 quickfix entries (file, label)', items, TURN4)
  H.eq('changes: the quickfix window is open', vim.bo.buftype, 'quickfix')

  -- <CR> on CLAUDE.md's entry opens its change in a diff tab page.
  local tabs = #vim.api.nvim_list_tabpages()
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  H.wait('changes: diff tab', 5000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end)
  local function diff_tab()
    local out = {}
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      out[#out + 1] = {
        name = vim.api.nvim_buf_get_name(b),
        diff = vim.wo[w].diff,
        text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'),
      }
    end
    return out
  end
  local d = diff_tab()
  H.eq('changes: <CR> opens a diff tab of two windows (before, after)', vim.tbl_map(function(w)
    return { w.name, w.diff }
  end, d), {
    { 'transcript-diff://before/Users/dain/workspace/JSSoundRecorder/CLAUDE.md', true },
    { 'transcript-diff://after/Users/dain/workspace/JSSoundRecorder/CLAUDE.md', true },
  })
  H.check('changes: the before side has the Rack server, the after side the Vite one',
    d[1] and d[2] and d[1].text:find('rackup config.ru', 1, true) ~= nil and d[2].text:find('pnpm install', 1, true) ~= nil
      and d[1].text:find('pnpm install', 1, true) == nil, d[2] and d[2].text:sub(1, 200))
  H.eq('changes: the tab is titled by the turn and the file', vim.t.transcript_diff,
    "Turn 4: ok, fine, let's do vite · ✎ 3 files changed · +35 −5 · M CLAUDE.md +14 −5")
  vim.cmd('tabclose')

  -- :TranscriptChangeDiff on the current entry (package.json, created: empty before side).
  vim.cmd('cc 1')
  vim.cmd('TranscriptChangeDiff')
  H.wait('changes: second diff tab', 5000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end)
  d = diff_tab()
  H.eq('changes: :TranscriptChangeDiff of a created file: empty before, whole file after',
    d[1] and { d[1].text, d[2].text:match('^{\n  "name": "jssoundrecorder"') ~= nil }, { '', true })
  vim.cmd('tabclose')

  -- The lens on turn 4's first line runs the same command.
  vim.cmd.buffer(buf)
  vim.fn.setqflist({}, 'r', { title = 'other', items = {} })
  vim.api.nvim_win_set_cursor(0, { 64, 0 })
  vim.lsp.codelens.run()
  title, items = wait_qf('Transcript: Turn 4')
  H.eq('changes: the change lens fills the quickfix list', items, TURN4)

  -- :TranscriptChanges with no argument: the cursor's turn (turn 5, raw lines 99–168).
  vim.cmd.buffer(buf)
  vim.api.nvim_win_set_cursor(0, { 120, 0 })
  vim.cmd('TranscriptChanges')
  title = wait_qf('Transcript: Turn 5')
  H.eq('changes: :TranscriptChanges at the cursor: its turn', title, "Transcript: Turn 5: yes please, and let's make it cross-browser · ✎ 7 files changed · +18 −24")

  -- :TranscriptChanges session, from the view.
  vim.cmd.buffer(buf)
  vim.cmd('TranscriptView')
  vim.cmd('TranscriptChanges session')
  title, items = wait_qf('Transcript: Session')
  H.eq('changes: :TranscriptChanges session (title, number of files)', { title, #items },
    { 'Transcript: Session · ✎ 11 files changed in 4 turns · +291 −45', 11 })
  vim.cmd('cclose')
end
