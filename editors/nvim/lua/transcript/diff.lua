--- The editor's own diff of a file edit (issue 11; PROTOCOL.md, "Native diffs"): the server's
--- `transcript.showDiff { uri, line }` names the two sides of the edit shown on a line by
--- `transcript:` URIs; their texts are fetched like views and shown side by side in a new tab
--- page, both windows in 'diff' mode. `:TranscriptDiff` runs it on the cursor's line; the
--- `Show diff` code lens runs it on its line.
local M = {}

--- A read-only scratch buffer holding `text`, named `transcript-diff://<side>/<path>`, with the
--- filetype of the edited file.
---@param side string `before` or `after`
---@param path string the edited file, as the transcript writes it
---@param text string
---@return integer bufnr
local function side_buffer(side, path, text)
  local b = vim.api.nvim_create_buf(false, true)
  local lines = vim.split(text, '\n', { plain = true })
  if #lines > 0 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = false
  -- A unique name: the same edit may be shown twice.
  local name = ('transcript-diff://%s/%s'):format(side, path:gsub('^/', ''))
  if vim.fn.bufexists(name) == 1 then
    name = name .. ' (' .. b .. ')'
  end
  pcall(vim.api.nvim_buf_set_name, b, name)
  local ft = vim.filetype.match({ filename = path })
  -- Not `jsonl`: a transcript buffer would attach the client to a fragment.
  if ft and ft ~= 'jsonl' then
    vim.bo[b].filetype = ft
  end
  return b
end

--- Opens the reply of `transcript.showDiff` (`{ before, after, title, path }`): a new tab page
--- with the before side on the left, the after side on the right, both diffed.
---@param client vim.lsp.Client
---@param result table?
function M.open(client, result)
  if result == nil or result == vim.NIL or type(result.before) ~= 'string' then
    vim.notify('transcript: no file edit on this line', vim.log.levels.INFO)
    return
  end
  local view = require('transcript.view')
  local before, err1 = view.fetch(client, result.before)
  local after, err2 = view.fetch(client, result.after)
  if not before or not after then
    vim.notify('transcript: cannot read the diff: ' .. tostring(err1 or err2), vim.log.levels.ERROR)
    return
  end
  local path = type(result.path) == 'string' and result.path ~= '' and result.path or 'edit'
  local left = side_buffer('before', path, before)
  local right = side_buffer('after', path, after)
  vim.cmd('tab split')
  vim.api.nvim_win_set_buf(0, left)
  vim.cmd.diffthis()
  vim.cmd('rightbelow vsplit')
  vim.api.nvim_win_set_buf(0, right)
  vim.cmd.diffthis()
  vim.t.transcript_diff = result.title
  -- Both windows show the whole change.
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    vim.wo[w].foldenable = false
  end
  vim.notify('transcript: ' .. tostring(result.title or 'diff'), vim.log.levels.INFO)
end

--- `:TranscriptDiff`: the diff of the file edit on the cursor's line (a tool call line or a
--- line of its diff in a view; the record's line in the raw file).
function M.at_cursor()
  local t = require('transcript')
  local client, bufnr = t.client_here()
  if not client then
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local args = { { uri = vim.uri_from_bufnr(bufnr), line = line } }
  t.execute(client, 'transcript.showDiff', args, bufnr, function(result)
    M.open(client, result)
  end)
end

return M
