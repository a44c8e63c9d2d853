-- Full-text search across sessions (issue 26), a self-contained block of the Neovim suite:
-- fixtures/search/root (a Claude Code and a Codex session) copied into TMP and indexed as the
-- only root. :TranscriptSearch (vim.ui.select stubbed) lists the hits and the picked one opens
-- its view at the hit's turn with the cursor on the match; :TranscriptSearch! fills the
-- quickfix list at the transcript lines.
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP }.
return function(H, T, ctx)
  local dir = ctx.TMP .. '/search'
  local CLAUDE = dir .. '/root/claude/-home-me-app/c1a2b3c4-0000-4000-8000-000000000001.jsonl'
  local CODEX = dir .. '/root/codex/2026/05/03/rollout-2026-05-03T09-00-00-019e3c00-3333-7c01-9d02-4b72d3e5c6f8.jsonl'
  for _, dst in ipairs({ CLAUDE, CODEX }) do
    local rel = dst:sub(#dir + 2)
    vim.fn.mkdir(vim.fs.dirname(dst), 'p')
    vim.fn.writefile(vim.fn.readfile(ctx.ROOT .. '/fixtures/search/' .. rel, 'b'), dst, 'b')
  end

  T.set({ roots = { dir .. '/root' }, workspaceFolders = false })
  local client = T.ensure_client(vim.api.nvim_get_current_buf(), nil)
  H.wait('search: the two fixture sessions searchable', 15000, function()
    local r = client:request_sync('transcript/search', { query = 'changelog' }, 2000)
    return r and r.result and r.result.complete and #r.result.hits == 2
  end)

  vim.cmd('tabonly')
  local select = vim.ui.select
  local rows, prompt
  vim.ui.select = function(items, opts, on_choice)
    prompt = opts.prompt
    rows = vim.tbl_map(opts.format_item, items)
    on_choice(items[2]) -- the French answer of turn 2
  end
  vim.cmd('TranscriptSearch resume')
  H.wait('search: the picker', 5000, function()
    return rows ~= nil
  end)
  vim.ui.select = select
  H.eq('search: the picker\'s prompt', prompt, 'Search all sessions: resume')
  local title = 'Why does the flaky test in tests/api_test.py fail on CI?'
  H.eq('search: the picker\'s rows (accents folded, prompt then answer)', rows, {
    'prompt · turn 2 · Écris le ‹résumé› en français, s\'il te plaît — ' .. title .. ' (claude-code)',
    'answer · turn 2 · ‹Résumé› : le test échoue à cause de l\'horloge. 测试修复完成。 — ' .. title .. ' (claude-code)',
  })
  H.wait('search: the view of the picked hit', 5000, function()
    return vim.api.nvim_buf_get_name(0) == 'transcript://' .. CLAUDE and vim.api.nvim_get_current_line():find('Résumé', 1, true) ~= nil
  end)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local lines = vim.api.nvim_buf_get_lines(0, 0, row, false)
  local heading
  for i = #lines, 1, -1 do
    if lines[i]:match('^## Turn ') then
      heading = lines[i]
      break
    end
  end
  H.eq('search: the cursor is on the match, in turn 2', { heading, vim.api.nvim_get_current_line():sub(col + 1, col + #'Résumé') },
    { '## Turn 2', 'Résumé' })

  -- A tool result: the verbose view.
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[2])
  end
  vim.cmd('TranscriptSearch alembic')
  H.wait('search: a tool result opens the verbose view', 5000, function()
    return vim.api.nvim_buf_get_name(0) == 'transcript://' .. CODEX .. '?verbose=1'
  end)
  vim.ui.select = select

  -- The quickfix list.
  vim.cmd('TranscriptSearch! alembic')
  H.wait('search: the quickfix list', 5000, function()
    return #vim.fn.getqflist() == 2
  end)
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  H.eq('search: quickfix entries at the transcript lines', vim.tbl_map(function(i)
    return { vim.api.nvim_buf_get_name(i.bufnr), i.lnum, i.text }
  end, qf.items), {
    { CODEX, 7, 'tool-input · turn 1 · shell bash -lc ‹alembic› upgrade head /home/me/db — Run the database migration for the accounts table (codex)' },
    { CODEX, 8, 'tool-result · turn 1 · INFO  [‹alembic›.runtime] Running upgrade -> accounts_v2, add currency column — Run the database migration for the accounts table (codex)' },
  })
  H.eq('search: the quickfix title', qf.title, 'Transcript search: alembic')
  vim.cmd('cclose')
end
