--- What the agent changed (issue 22; server/PROTOCOL.md, "Change sets"): the server's
--- `transcript.showChanges` answers a turn's (or the session's) change set, each file with the
--- two sides of its net change named by `transcript:` URIs. `:TranscriptChanges [N|session]`
--- and the `✎ N files changed` code lens put the files in the quickfix list (title: the turn);
--- `<CR>` on an entry, or `:TranscriptChangeDiff` anywhere, opens that file's change in a diff
--- tab page (before left, after right) as `:TranscriptDiff` does for one edit.
local M = {}

--- The quickfix context key that marks a list as ours.
local KEY = 'transcript_changes'

--- Quickfix items of a `transcript.showChanges` reply: one per file, `filename` the changed
--- file's absolute path, `text` its label (`M src/calc.rs +2 −2`), `user_data` the two sides.
---@param result table
---@return table[]
function M.items(result)
  local items = {}
  for _, f in ipairs(result.files or {}) do
    items[#items + 1] = {
      filename = f.path,
      lnum = 1,
      text = f.label or f.path,
      user_data = { before = f.before, after = f.after, path = f.path, label = f.label },
    }
  end
  return items
end

--- Shows a reply of `transcript.showChanges` (`{ title, turn, session, files }`, or nil when
--- the turn changed no file) as the quickfix list and opens its window.
---@param client vim.lsp.Client
---@param result table?
function M.open_list(client, result)
  if result == nil or result == vim.NIL or type(result.files) ~= 'table' or #result.files == 0 then
    vim.notify('transcript: no file changed here', vim.log.levels.INFO)
    return
  end
  vim.fn.setqflist({}, ' ', {
    title = 'Transcript: ' .. tostring(result.title or 'changes'),
    items = M.items(result),
    context = { [KEY] = { client_id = client.id, title = result.title } },
  })
  vim.cmd('botright copen')
  local qbuf = vim.api.nvim_get_current_buf()
  vim.keymap.set('n', '<CR>', function()
    M.enter()
  end, { buffer = qbuf, desc = "Transcript: open the change's diff (other lists: jump)" })
  vim.notify(('transcript: %s'):format(tostring(result.title)), vim.log.levels.INFO)
end

--- The quickfix list's context if it is a change set of ours, with the entry `idx` (0: current).
---@param idx integer
---@return table? ctx, table? item
local function ours(idx)
  -- (`idx` and `items` together would give the one entry: ask for all of them.)
  local q = vim.fn.getqflist({ context = 1, items = 1 })
  local ctx = type(q.context) == 'table' and q.context[KEY] or nil
  if not ctx then
    return nil
  end
  local i = idx == 0 and vim.fn.getqflist({ idx = 0 }).idx or idx
  return ctx, q.items[i]
end

--- Opens the diff of quickfix entry `idx` (0: the current one) of a change set list.
---@param idx integer?
---@return boolean opened
function M.diff(idx)
  local ctx, item = ours(idx or 0)
  if not ctx then
    vim.notify('transcript: the quickfix list is not a change set (run :TranscriptChanges)', vim.log.levels.WARN)
    return false
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    vim.notify('transcript: the transcript-ls client of this list has stopped', vim.log.levels.WARN)
    return false
  end
  local d = item and item.user_data
  if type(d) ~= 'table' or type(d.before) ~= 'string' then
    vim.notify('transcript: no change on this entry', vim.log.levels.WARN)
    return false
  end
  require('transcript.diff').open(client, {
    before = d.before,
    after = d.after,
    path = d.path,
    title = ('%s · %s'):format(tostring(ctx.title or 'changes'), tostring(d.label or d.path)),
  })
  return true
end

--- `<CR>` in the quickfix window: the entry's diff for a change set list (and the entry made
--- current), the usual jump for any other list or a location list.
function M.enter()
  local win = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1]
  local line = vim.fn.line('.')
  if win and win.loclist == 0 and ours(line) then
    vim.fn.setqflist({}, 'a', { idx = line })
    M.diff(line)
  else
    vim.cmd((win and win.loclist == 1 and '%dll' or '%dcc'):format(line))
  end
end

--- `:TranscriptChanges [N|session]`: the change set of turn N, of the whole session, or (no
--- argument) of the turn shown on the cursor's line, in the quickfix list.
---@param arg string?
function M.show(arg)
  local t = require('transcript')
  local client, bufnr = t.client_here()
  if not client then
    return
  end
  local a = { uri = vim.uri_from_bufnr(bufnr) }
  arg = vim.trim(arg or '')
  if arg == 'session' then
    a.session = true
  elseif arg == '' or arg == 'turn' then
    a.line = vim.api.nvim_win_get_cursor(0)[1] - 1
  elseif arg:match('^%d+$') then
    a.turn = tonumber(arg)
  else
    vim.notify(('transcript: :TranscriptChanges takes a turn number or "session", not %q'):format(arg), vim.log.levels.ERROR)
    return
  end
  t.execute(client, 'transcript.showChanges', { a }, bufnr, function(result)
    M.open_list(client, result)
  end)
end

return M
