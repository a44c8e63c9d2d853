-- Reading a session (issue 11), a self-contained block of the Neovim suite: a finished real
-- session shows its last answer in the view (file-age rule), the fold label of a turn whose
-- activity and first work run start on the same line is the activity's, and a percent-encoded
-- view query is understood.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP, DEMO, CORPUS, open }.
return function(H, T, ctx)
  -- A real Claude Code session whose last turn has no completion evidence of its own: copied
  -- with its modification time ten minutes back (finished), and copied fresh (still written).
  local function copy(name, age_s)
    local dst = ctx.TMP .. '/' .. name
    vim.fn.writefile(vim.fn.readfile(ctx.CORPUS, 'b'), dst, 'b')
    local t = os.time() - age_s
    vim.uv.fs_utime(dst, t, t)
    return dst
  end
  local LAST = 'The `dev-docs/` vs `work/` split works best'
  local function view_of(path)
    vim.cmd.edit(vim.fn.fnameescape(path))
    vim.cmd('TranscriptView')
    local vbuf = vim.api.nvim_get_current_buf()
    local text = table.concat(vim.api.nvim_buf_get_lines(vbuf, 0, -1, false), '\n')
    return text, vbuf
  end
  local finished = copy('finished-session.jsonl', 600)
  local text = view_of(finished)
  H.check('reading: a finished session shows its last answer', text:find(LAST, 1, true) ~= nil and not text:find('… working', 1, true),
    text:sub(-160))
  local fresh = copy('fresh-session.jsonl', 0)
  text = view_of(fresh)
  H.check('reading: a session still being written ends in flight', text:find(LAST, 1, true) == nil and text:find('… working', 1, true) ~= nil,
    text:sub(-60))
  -- The raw finished file: transcript/stats counts its last turn as complete with its answer.
  local buf, client = ctx.open(finished)
  if client then
    local ok, st = pcall(H.request, buf, client, 'transcript/stats', { uri = vim.uri_from_bufnr(buf) })
    local last = ok and st.turn_list[#st.turn_list] or {}
    H.eq('reading: transcript/stats of the finished session (turns, answers, last turn)',
      ok and { st.turns, st.final_answers, last.state } or st, { 7, 7, 'complete' })
  end

  -- The demo's turn 9: its activity (lines 94–98) and its first work run (94–95) start on the
  -- same line; the fold on that line is the activity's, labelled as such.
  buf, client = ctx.open(ctx.DEMO)
  H.wait('demo folds', 5000, function()
    return vim.fn.foldlevel(94) > 0
  end)
  vim.wo.foldlevel = 1
  H.eq('reading: turn 9 activity fold (94–98) and its label',
    { vim.fn.foldclosed(94), vim.fn.foldclosedend(94), vim.fn.foldtextresult(94) },
    { 94, 98, '1 comment · 2 tool calls' })
  vim.cmd('normal! zR')

  -- Show diff (item 3): a real session with one Write (a new file) and four Edits. The raw
  -- file has a `Show diff` lens on each edit; in the verbose view the lens on the second edit
  -- (+3 −4) opens a tab page with two windows in diff mode, before | after; :TranscriptDiff
  -- on the Write gives an empty before side.
  local AGENT = ctx.ROOT .. '/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/'
    .. '-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a4ca7529859c158c2.jsonl'
  buf, client = ctx.open(AGENT)
  local function diff_lenses(b)
    local out = {}
    H.wait('Show diff lenses', 8000, function()
      out = vim.tbl_filter(function(l)
        return l[2]:find('^Show diff') ~= nil
      end, H.lenses(b))
      return #out >= 5
    end)
    return out
  end
  H.eq('reading: Show diff lenses on the raw file', diff_lenses(buf), {
    { 30, 'Show diff · +106 −0' }, { 35, 'Show diff · +3 −4' }, { 37, 'Show diff · +5 −6' },
    { 39, 'Show diff · +3 −3' }, { 44, 'Show diff · +10 −10' },
  })
  vim.cmd('TranscriptView!')
  local vbuf = vim.api.nvim_get_current_buf()
  local lenses = diff_lenses(vbuf)
  local vlines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  H.eq('reading: Show diff lenses in the verbose view sit on the edit lines', vim.tbl_map(function(l)
    return (vlines[l[1] + 1] or ''):match('⚙ (%a+)')
  end, lenses), { 'Write', 'Edit', 'Edit', 'Edit', 'Edit' })
  local tabs = #vim.api.nvim_list_tabpages()
  vim.api.nvim_win_set_cursor(0, { lenses[2][1] + 1, 0 })
  vim.lsp.codelens.run()
  H.wait('diff tab page', 5000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end)
  local function diff_windows()
    return vim.tbl_map(function(w)
      local b = vim.api.nvim_win_get_buf(w)
      return { name = vim.api.nvim_buf_get_name(b):gsub('^.*transcript%-diff://', ''), diff = vim.wo[w].diff,
        lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) }
    end, vim.api.nvim_tabpage_list_wins(0))
  end
  local w = diff_windows()
  H.eq('reading: the lens opens two windows in diff mode (before | after)', {
    #w, w[1] and w[1].diff, w[2] and w[2].diff,
    w[1] and w[1].name, w[2] and w[2].name, w[1] and #w[1].lines, w[2] and #w[2].lines,
  }, { 2, true, true, 'before/-experiments/worktrees/.claude/worktrees/agent-a4ca7529/work/research-plan-mode.md',
    'after/-experiments/worktrees/.claude/worktrees/agent-a4ca7529/work/research-plan-mode.md', 7, 6 })
  H.check('reading: the sides differ where the edit changed them', w[1] and w[2] and w[1].lines[1] == w[2].lines[1]
    and table.concat(w[1].lines, '\n') ~= table.concat(w[2].lines, '\n'), w)
  H.eq('reading: the diff buffers take the edited file type', w[1] and vim.bo[vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_list_wins(0)[1])].filetype, 'markdown')
  -- The screen as text (tests/e2e/artifacts/nvim-show-diff.txt).
  vim.cmd('redraw!')
  local rows = {}
  for r = 1, vim.o.lines - 1 do
    rows[#rows + 1] = H.screen_row(r)
  end
  vim.fn.mkdir(ctx.ROOT .. '/tests/e2e/artifacts', 'p')
  vim.fn.writefile(rows, ctx.ROOT .. '/tests/e2e/artifacts/nvim-show-diff.txt')
  vim.cmd.tabclose()
  -- :TranscriptDiff on the Write's line: a new file diffs against empty.
  vim.api.nvim_set_current_buf(vbuf)
  vim.api.nvim_win_set_cursor(0, { lenses[1][1] + 1, 0 })
  vim.cmd('TranscriptDiff')
  H.wait(':TranscriptDiff tab page', 5000, function()
    return #vim.api.nvim_list_tabpages() == tabs + 1
  end)
  w = diff_windows()
  H.eq(':TranscriptDiff on a Write: empty before, 106 lines after', { #w, w[1] and w[1].diff, w[1] and table.concat(w[1].lines, ''), w[2] and #w[2].lines, w[2] and w[2].lines[1] },
    { 2, true, '', 106, '# Plan Mode in Claude Code' })
  vim.cmd.tabclose()

  -- A view URI whose query is percent-encoded (as VS Code writes it) opens the verbose view.
  local view = require('transcript.view')
  local _, verbose = view.parse('transcript://' .. ctx.DEMO .. '?verbose%3D1')
  H.eq('reading: a percent-encoded view query is understood', verbose, true)
end
