-- What is new since I last looked (issue 23 item 10), a self-contained block of the Neovim
-- suite. A real Claude Code session (corpus cb2e607c, 2.0.37) is written line by line, as it
-- was recorded, into a root indexed alone, beside a session that was there before:
-- * the first :Transcripts takes what is there as seen; the session written after it is
--   `● new`; opening its view (its end on screen) makes it seen;
-- * the user edits another buffer; line 10 (AskUserQuestion) makes :Transcripts show
--   `⏸ waiting for you: question` and `● new`; lines 11–90 (answer, turn 1 done, turn 2
--   begun) end the wait;
-- * back in the view, a virtual line `── new since you last looked ──` sits above the first line
--   that changed; `]n` goes there, `]N` to `## Turn 2`. A screen dump is written to
--   tests/e2e/artifacts/nvim-unseen-marker.txt;
-- * after a restart (the view's buffer wiped and the module's memory reset, as in a new
--   Neovim; seen.json stays), lines 91–120 arrive: the view opened again shows the marker
--   where they start.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP, DEMO }.
return function(H, T, ctx)
  local unseen = require('transcript.unseen')
  local dir = ctx.TMP .. '/unseen-root'
  vim.fn.mkdir(dir, 'p')
  vim.fn.delete(vim.fn.stdpath('state') .. '/transcript/seen.json')
  unseen.reset()
  local before = dir .. '/there-before.jsonl'
  vim.fn.writefile(vim.fn.readfile(ctx.DEMO, 'b'), before, 'b')
  local src = ctx.ROOT
    .. '/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl'
  local lines = vim.fn.readfile(src, 'b')
  local file = dir .. '/asks-session.jsonl'
  local function write(from, to, flag)
    vim.fn.writefile(vim.list_slice(lines, from, to), file, flag or '')
  end
  local TITLE = 'How can I make this possible to install as a library'

  T.set({ roots = { dir }, workspaceFolders = false })
  local client = T.ensure_client(vim.api.nvim_get_current_buf(), nil)
  local function sessions()
    local r = client:request_sync('transcript/sessions', {}, 2000)
    return r and r.result and r.result.sessions or {}
  end
  local function session_of(path)
    for _, s in ipairs(sessions()) do
      if s.uri == vim.uri_from_fname(path) then
        return s
      end
    end
  end
  H.wait('unseen: the session there before indexed', 10000, function()
    return #sessions() == 1
  end)

  -- :Transcripts with vim.ui.select stubbed: the rows shown (nothing picked).
  local select = vim.ui.select
  local function rows()
    local shown
    vim.ui.select = function(items, opts, on_choice)
      shown = vim.tbl_map(opts.format_item, items)
      on_choice(nil, nil)
    end
    vim.cmd('Transcripts')
    H.wait(':Transcripts', 5000, function()
      return shown ~= nil
    end)
    vim.ui.select = select
    return shown or {}
  end
  local function row(needle)
    for _, r in ipairs(rows()) do
      if r:find(needle, 1, true) then
        return r
      end
    end
    return ''
  end
  local r = row('GET /accounts')
  H.check('unseen: the first list takes what is there as seen (no mark)', r ~= '' and not r:find('new', 1, true), r)

  write(1, 9)
  H.wait('unseen: the new session indexed', 10000, function()
    return session_of(file) ~= nil
  end)
  r = row(TITLE)
  H.check('unseen: a session written after the first list is new', r:find('● new', 1, true) ~= nil and not r:find('waiting', 1, true), r)

  vim.cmd('tabonly')
  vim.cmd.edit(vim.fn.fnameescape(require('transcript.view').uri_for(file)))
  local vbuf = vim.api.nvim_get_current_buf()
  H.wait('unseen: the view', 5000, function()
    return table.concat(vim.api.nvim_buf_get_lines(vbuf, 0, -1, false), '\n'):find('… working', 1, true) ~= nil
  end)
  H.wait('unseen: client attached to the view', 5000, function()
    return vim.b[vbuf].transcript_unseen == true
  end)
  r = row(TITLE)
  H.check('unseen: opening its view (the end on screen) makes it seen', r ~= '' and not r:find('● new', 1, true), r)

  -- The user edits another buffer; the agent asks its question.
  vim.cmd.edit(vim.fn.fnameescape(ctx.DEMO))
  write(10, 10, 'a')
  H.wait('unseen: the index says the session waits', 10000, function()
    local s = session_of(file)
    return s and type(s.waiting) == 'table'
  end)
  local s = session_of(file) or {}
  H.eq('unseen: transcript/sessions waiting (the real question)', s.waiting, {
    kind = 'question',
    detail = 'I need to understand your preferred installation approach to give you the best solution:',
    turn = 1,
    line = 9,
  })
  r = row(TITLE)
  H.check(':Transcripts: waiting for a question, with new output', r:find('⏸ waiting for you: question', 1, true) ~= nil and r:find('● new', 1, true) ~= nil, r)

  write(11, 90, 'a')
  H.wait('unseen: the answer ends the wait', 10000, function()
    local x = session_of(file)
    return x and (x.waiting == nil or x.waiting == vim.NIL) and x.turns == 2
  end)
  r = row(TITLE)
  H.check(':Transcripts: the wait ends, the output is still new', r:find('waiting', 1, true) == nil and r:find('● new', 1, true) ~= nil, r)
  H.wait('unseen: the hidden view followed the file', 8000, function()
    return table.concat(vim.api.nvim_buf_get_lines(vbuf, 0, -1, false), '\n'):find('## Turn 2', 1, true) ~= nil
  end)

  -- Back in the view: the marker above the first line that changed.
  vim.o.columns, vim.o.lines = 150, 40
  vim.cmd.buffer(vbuf)
  vim.wo.wrap = false
  local marker = unseen.marker(vbuf)
  local marks = vim.api.nvim_buf_get_extmarks(vbuf, vim.api.nvim_create_namespace('transcript.unseen'), 0, -1, { details = true })
  local virt = marks[1] and marks[1][4].virt_lines and marks[1][4].virt_lines[1][1][1]
  H.eq('unseen: one marker, a virtual line above the first new line', { #marks, virt, marks[1] and marks[1][2] }, { 1, unseen.MARKER, marker })
  local vlines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  local turn1
  for i, l in ipairs(vlines) do
    if vim.startswith(l, '## Turn 1') then
      turn1 = i - 1
    end
  end
  H.check('unseen: the marker sits in turn 1, where `… working` was (turn 1 went on)',
    marker ~= nil and turn1 ~= nil and marker > turn1 and not (vlines[marker + 1] or ''):find('… working', 1, true),
    { marker = marker, turn1 = turn1, line = vlines[(marker or 0) + 1] })
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('normal! zR')
  local dir_art = ctx.ROOT .. '/tests/e2e/artifacts'
  vim.fn.mkdir(dir_art, 'p')
  vim.cmd('redraw!')
  local screen = {}
  for i = 1, vim.o.lines - 1 do
    screen[#screen + 1] = H.screen_row(i)
  end
  vim.fn.writefile(screen, dir_art .. '/nvim-unseen-marker.txt')
  H.check('unseen: the marker is on screen', vim.iter(screen):any(function(l)
    return l:find(unseen.MARKER, 1, true) ~= nil
  end), screen)

  vim.api.nvim_feedkeys(vim.keycode(']N'), 'x', false)
  local newest = vim.api.nvim_win_get_cursor(0)[1]
  H.check(']N: to the newest turn', (vlines[newest] or ''):find('## Turn 2', 1, true) == 1, { newest, vlines[newest] })
  vim.api.nvim_feedkeys(vim.keycode(']n'), 'x', false)
  H.eq(']n: to the first new line', vim.api.nvim_win_get_cursor(0)[1], (marker or -1) + 1)
  vim.api.nvim_feedkeys(vim.keycode('G'), 'x', false)
  vim.cmd('redraw') -- (WinScrolled, which looks, comes after a redraw)
  unseen.look(vim.api.nvim_get_current_win())
  r = row(TITLE)
  H.check('unseen: the end of the view seen, the session is not new any more', r ~= '' and not r:find('● new', 1, true), r)

  -- Issue 23 item 10: after a restart. What was seen of the view is kept in seen.json.
  local seen_lines = #vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  local name = vim.api.nvim_buf_get_name(vbuf)
  vim.cmd.edit(vim.fn.fnameescape(ctx.DEMO))
  vim.cmd('bwipeout! ' .. vbuf)
  unseen.reset() -- (nothing in memory, as in a new Neovim)
  local bytes0 = (session_of(file) or {}).bytes or 0
  write(91, 120, 'a')
  H.wait('unseen: the index saw the append', 10000, function()
    local x = session_of(file)
    return x and (x.bytes or 0) > bytes0
  end)
  vim.cmd.edit(vim.fn.fnameescape(name))
  local rbuf = vim.api.nvim_get_current_buf()
  H.wait('unseen: the view opened again, with the new lines', 8000, function()
    return #vim.api.nvim_buf_get_lines(rbuf, 0, -1, false) > seen_lines
  end)
  H.wait('unseen: client attached to the view opened again', 5000, function()
    return vim.b[rbuf].transcript_unseen == true
  end)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  unseen.look(vim.api.nvim_get_current_win())
  local m2 = unseen.marker(rbuf)
  local rl = vim.api.nvim_buf_get_lines(rbuf, 0, -1, false)
  H.check('after a restart: the view opened again marks where the output not seen starts',
    m2 ~= nil and m2 > 0 and m2 < #rl, { marker = m2, lines = #rl, seen = seen_lines, line = m2 and rl[m2 + 1] })
end
