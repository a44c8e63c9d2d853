-- The default shape of a view and what reads well in it (issue 23 items 5, 6, 8), a
-- self-contained block of the Neovim suite run last but one (before first_contact): the reading
-- shape (the verbose view at 'foldlevel' 2) as the default, a live turn's latest comment in it,
-- the quiet toggle; wrap/linebreak/breakindent on transcript windows only, and no word broken
-- mid-word on screen; the answers' markdown highlighted by treesitter (fenced code in its
-- language) with the final-answer token adding no colour over it. Real corpus files.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP, DEMO, CORPUS, open }.
return function(H, T, ctx)
  local CORPUS = ctx.ROOT .. '/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/'
  -- A finished real session whose second answer holds three ```json fences (JSSoundRecorder).
  local FENCES = CORPUS .. '-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl'
  local function copy(src, name, age_s)
    local dst = ctx.TMP .. '/' .. name
    vim.fn.writefile(vim.fn.readfile(src, 'b'), dst, 'b')
    local t = os.time() - age_s
    vim.uv.fs_utime(dst, t, t)
    return dst
  end
  local function find(buf, pat, from)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if i >= (from or 1) and l:find(pat) then
        return i
      end
    end
  end
  local function view_of(path)
    vim.cmd.edit(vim.fn.fnameescape(path))
    vim.cmd('TranscriptView')
    local buf = vim.api.nvim_get_current_buf()
    H.wait('view folds of ' .. vim.fn.fnamemodify(path, ':t'), 8000, function()
      return vim.fn.foldlevel(find(buf, '^## Turn 1') or 1) > 0
    end)
    return buf
  end

  -- Item 5: the default shape is `reading`. The suite set `view_mode = 'quiet'` at setup for
  -- its older checks; the plugin's own default is checked, then put back.
  H.eq('shape: the default view_mode', T.defaults.view_mode, 'reading')
  T.config.view_mode = T.defaults.view_mode
  T.set({})
  H.eq('shape: the server is asked for the verbose view', T.server_settings().verbose, true)
  local finished = copy(ctx.CORPUS, 'shape-finished.jsonl', 600)
  local buf = view_of(finished)
  local name = vim.api.nvim_buf_get_name(buf)
  local worked = find(buf, '^▸ Worked')
  local comment = worked and find(buf, '^[A-Z]', find(buf, '^## Turn 1'))
  local answer = find(buf, '^%*%*Answer%*%*')
  H.check('shape: the reading view is the verbose one (work runs, comments)', worked ~= nil and comment ~= nil and answer ~= nil,
    { name = name, worked = worked, comment = comment, answer = answer })
  H.eq("shape: the reading view's window 'foldlevel'", vim.wo.foldlevel, 2)
  if worked and comment and answer then
    H.eq('shape: a work run is one closed line, the comment and the answer are open',
      { vim.fn.foldclosed(worked), vim.fn.foldclosed(comment), vim.fn.foldclosed(answer) }, { worked, -1, -1 })
    H.check('shape: the closed work run is labelled', vim.fn.foldtextresult(worked):find('Worked', 1, true) ~= nil,
      vim.fn.foldtextresult(worked))
  end
  -- The quiet view stays one toggle away, and the toggle comes back to the reading shape.
  vim.cmd('TranscriptView')
  local quiet = vim.api.nvim_get_current_buf()
  H.check('shape: :TranscriptView in the reading view opens the quiet view',
    vim.api.nvim_buf_get_name(quiet):find('?verbose=0', 1, true) ~= nil and find(quiet, '^▸ Worked') == nil,
    vim.api.nvim_buf_get_name(quiet))
  vim.cmd('TranscriptView')
  H.eq('shape: and again the reading view', { vim.api.nvim_buf_get_name(0), vim.wo.foldlevel }, { name, 2 })

  -- A live turn shows the agent's latest comment (the quiet view writes its first words after
  -- `… working ·`): the reading view has that comment in sight, not folded.
  local LIVE = ctx.ROOT .. '/../shared/corpus/marot__spotter/test/fixtures/transcripts/'
    .. '258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl'
  local fresh = copy(LIVE, 'shape-fresh.jsonl', 0)
  buf = view_of(fresh)
  vim.cmd.edit(vim.fn.fnameescape(require('transcript.view').uri_for(fresh, false)))
  local qtext = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  local latest = qtext:match('… working · ([^\n]+)')
  local words = latest and latest:sub(1, 30)
  local at = words and find(buf, vim.pesc(words))
  H.check("shape: a live turn's latest comment is in sight in the reading view",
    at ~= nil,
    { latest = latest, line = at })
  vim.api.nvim_set_current_buf(buf)
  if at then
    H.eq('shape: that comment is not folded', vim.fn.foldclosed(at), -1)
  end

  -- Item 8: wrap, linebreak, breakindent on a raw transcript's window; another buffer shown in
  -- the same window gets its own (global) values back.
  vim.o.wrap, vim.o.linebreak, vim.o.breakindent = false, false, false
  local raw = ctx.open(FENCES)
  H.eq('shape: raw transcript window: wrap, linebreak, breakindent', { vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent }, { true, true, true })
  local plain = ctx.TMP .. '/plain.txt'
  vim.fn.writefile({ string.rep('word ', 60) }, plain)
  vim.cmd.edit(vim.fn.fnameescape(plain))
  H.eq('shape: a plain file in that window: its own wrap, linebreak, breakindent', { vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent },
    { false, false, false })
  vim.cmd.buffer(raw)
  H.eq('shape: back to the transcript: wrapped again', { vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent }, { true, true, true })
  vim.o.wrap = true

  -- The view breaks lines between words: on an 80-column screen, no screen row of the first
  -- answer ends inside a word that the next row finishes.
  vim.cmd('tabnew')
  vim.o.columns, vim.o.lines = 80, 40
  vim.o.showtabline = 0
  buf = view_of(copy(FENCES, 'shape-fences.jsonl', 600))
  H.eq("shape: the view's window wraps at word ends", { vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent }, { true, true, true })
  answer = find(buf, '^%*%*Answer%*%*')
  vim.cmd('normal! zR')
  vim.api.nvim_win_set_cursor(0, { answer, 0 })
  vim.cmd('normal! zt')
  vim.cmd('redraw!')
  local rows, split = {}, {}
  for r = 1, vim.o.lines - 1 do
    rows[#rows + 1] = H.screen_row(r)
  end
  vim.fn.writefile(rows, ctx.ROOT .. '/tests/e2e/artifacts/nvim-view-wrapped-80.txt')
  local full = vim.fn.getline(answer + 1)
  for r = 1, #rows - 1 do
    local a, b = rows[r]:match('(%w+)$'), rows[r + 1]:match('^%s*(%w+)')
    if a and b and full:find(a .. b, 1, true) and not full:find(a .. ' ' .. b, 1, true) then
      split[#split + 1] = a .. '|' .. b
    end
  end
  H.check('shape: the answer wraps between words (screen in nvim-view-wrapped-80.txt)', #rows > 0 and #split == 0 and #full > 80, split)

  -- Item 6: the answers' markdown is highlighted by treesitter, fenced code in its language.
  H.eq('shape: the view is parsed as markdown', vim.b[buf].transcript_markdown, true)
  local fence = find(buf, '^```json')
  local inside = fence and fence + 2 -- `  "scripts": {`
  local caps = {}
  if inside then
    H.wait('treesitter captures in the fence', 3000, function()
      vim.treesitter.get_parser(buf, 'markdown'):parse(true)
      caps = vim.tbl_map(function(c)
        return c.capture
      end, vim.treesitter.get_captures_at_pos(buf, inside - 1, 4))
      return vim.tbl_contains(caps, 'markup.raw.block')
    end)
  end
  -- (in its language too where that parser is installed: this Neovim bundles c, lua, vim,
  -- vimdoc, query only, no json)
  H.check('shape: the fenced ```json of the answer is a code block (markup.raw.block)', vim.tbl_contains(caps, 'markup.raw.block'),
    { fence = fence, caps = caps })
  local bold = find(buf, '^%*%*Option 1')
  caps = bold and vim.tbl_map(function(c)
    return c.capture
  end, vim.treesitter.get_captures_at_pos(buf, bold - 1, 3)) or {}
  H.check('shape: **bold** in the answer is markup.strong', vim.tbl_contains(caps, 'markup.strong'), caps)
  -- The final answer's semantic token paints no colour over the markdown in views.
  local types, groups, fg = '', {}, {}
  if inside then
    H.wait('semantic tokens in the answer', 5000, function()
      types = H.token_at(buf, inside - 1, 4)
      return types ~= ''
    end)
    -- (Neovim places the token's highlight when the line is drawn)
    vim.api.nvim_win_set_cursor(0, { inside, 0 })
    vim.cmd('normal! zz')
    vim.cmd('redraw!')
    for _, t in ipairs(vim.inspect_pos(buf, inside - 1, 4).semantic_tokens) do
      local g = t.opts and t.opts.hl_group
      groups[#groups + 1] = g
      fg[#fg + 1] = g and vim.api.nvim_get_hl(0, { name = g, link = false }).fg or false
    end
  end
  H.check('shape: the final-answer token is there and adds no colour in the view',
    types == 'finalAnswer' and vim.tbl_contains(groups, '@lsp.type.finalAnswer.transcript') and not vim.iter(fg):any(function(x)
      return x ~= false and x ~= nil
    end), { types = types, groups = groups, fg = fg })
  H.check('shape: on raw files the final answer keeps its colour', vim.api.nvim_get_hl(0, { name = '@lsp.type.finalAnswer', link = false }).fg ~= nil)
  vim.cmd('redraw!')
  rows = {}
  for r = 1, vim.o.lines - 1 do
    rows[#rows + 1] = H.screen_row(r)
  end
  vim.fn.writefile(rows, ctx.ROOT .. '/tests/e2e/artifacts/nvim-view-markdown.txt')
  vim.cmd('tabclose')
  vim.o.columns, vim.o.lines = 150, 40
  T.config.view_mode = 'quiet'
  T.set({})
end
