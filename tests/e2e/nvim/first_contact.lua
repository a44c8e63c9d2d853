-- First contact (issue 23), a self-contained block of the Neovim suite, run last: the first
-- :Transcripts after the server starts, while its index build is still running (a root of
-- eight copies of a real 2.8 MB session), shows the picker with every session once the index
-- is ready (it did nothing: the first answer was partial, `complete: false`).
--
-- dofile()d by test.lua: returns `function(H, T, ctx)` with ctx = { ROOT, TMP }.
return function(H, T, ctx)
  local SPOTTER = ctx.ROOT .. '/../shared/corpus/marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl'
  local root = ctx.TMP .. '/first-contact/projects/-big'
  vim.fn.mkdir(root, 'p')
  local bytes = vim.fn.readfile(SPOTTER, 'b')
  for i = 1, 8 do
    vim.fn.writefile(bytes, ('%s/258c7280-ae70-4798-800f-63464d01a8%02d.jsonl'):format(root, i), 'b')
  end
  -- A fresh server: stop every client first.
  vim.cmd('silent! %bwipeout!')
  for _, c in ipairs(vim.lsp.get_clients({ name = T.name })) do
    c:stop(true)
  end
  H.wait('first contact: the clients stopped', 5000, function()
    return #vim.lsp.get_clients({ name = T.name }) == 0
  end)
  T.set({ roots = { ctx.TMP .. '/first-contact/projects' }, workspaceFolders = false, indexCache = false })
  local select = vim.ui.select
  local shown
  vim.ui.select = function(items, opts, on_choice)
    shown = { prompt = opts.prompt, n = #items }
    on_choice(nil, nil)
  end
  local t0 = vim.uv.now()
  vim.cmd('Transcripts')
  H.wait('first contact: the first :Transcripts shows its picker', 30000, function()
    return shown ~= nil
  end)
  vim.ui.select = select
  H.eq('first contact: the first :Transcripts after start lists every session', shown and shown.n, 8)
  H.log(('first contact: picker after %d ms (server start and index build included)'):format(vim.uv.now() - t0))
end
