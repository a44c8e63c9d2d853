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

  -- A view URI whose query is percent-encoded (as VS Code writes it) opens the verbose view.
  local view = require('transcript.view')
  local _, verbose = view.parse('transcript://' .. ctx.DEMO .. '?verbose%3D1')
  H.eq('reading: a percent-encoded view query is understood', verbose, true)
end
