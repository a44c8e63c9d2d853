--- Full-text search across every session (issue 26; server/PROTOCOL.md, "Full-text search"),
--- over the server's search index (`transcript/search`):
---
--- * `:TranscriptSearch [query]`: the hits through `vim.ui.select` (so telescope, fzf-lua or
---   any picker that replaces it shows them); without a query, asks for one. Picking a hit
---   opens its session's view (verbose when the quiet view hides the text) at the hit's turn,
---   the cursor on the first match after the turn's heading.
--- * `:TranscriptSearch! query`: the hits in the quickfix list, each at its transcript line.
local M = {}

--- Hits asked for at most.
M.limit = 100

--- The snippet with its matches between ‹ and › (ranges are UTF-8 bytes: the client
--- negotiates UTF-8).
---@param s table `{ text, matches }`
---@return string
function M.marked(s)
  local out, at = {}, 0
  for _, m in ipairs(s.matches or {}) do
    out[#out + 1] = s.text:sub(at + 1, m[1])
    out[#out + 1] = '‹' .. s.text:sub(m[1] + 1, m[2]) .. '›'
    at = m[2]
  end
  out[#out + 1] = s.text:sub(at + 1)
  return table.concat(out)
end

--- One line for a picker: `answer · turn 3 · ‹flaky test› is unrelated — Session title (codex)`.
---@param h table a hit
---@return string
function M.label(h)
  return ('%s · turn %d · %s — %s (%s)'):format(h.kind, h.turn, M.marked(h.snippet), h.title, h.agent)
end

--- Opens a hit: the view at its turn, the cursor on the first match after the heading.
---@param client vim.lsp.Client
---@param hit table
function M.open(client, hit)
  local T = require('transcript')
  local verbose = hit.viewUri:find('verbose=1', 1, true) ~= nil
  T.execute(client, 'transcript.openView', { { uri = hit.uri, turn = hit.turn, verbose = verbose } }, nil, function(opened)
    vim.schedule(function()
      local view = require('transcript.view')
      vim.cmd.edit(vim.fn.fnameescape(view.uri_for(vim.uri_to_fname(hit.uri), verbose or nil)))
      local vbuf = vim.api.nvim_get_current_buf()
      local line = type(opened) == 'table' and tonumber(opened.line) or 0
      vim.wait(3000, function()
        return vim.api.nvim_buf_line_count(vbuf) > line
      end, 10)
      local m = (hit.snippet.matches or {})[1]
      local want = m and hit.snippet.text:sub(m[1] + 1, m[2]):lower() or ''
      -- The match with what follows it in the snippet finds the hit's own text first (the
      -- prompt may hold the same word as the answer).
      local after = m and hit.snippet.text:sub(m[2] + 1, m[2] + 24) or ''
      local context = vim.trim(want .. (after:match('^(.-)…') or after):lower())
      local row, col = line, 0
      local lines = vim.api.nvim_buf_get_lines(vbuf, line, -1, false)
      local function find(needle)
        for i, l in ipairs(needle ~= '' and lines or {}) do
          if i > 1 and l:match('^## Turn ') then
            return nil
          end
          local s = l:lower():find(needle, 1, true)
          if s then
            return line + i - 1, s - 1
          end
        end
      end
      local r, c = find(context)
      if not r then
        r, c = find(want)
      end
      if r then
        row, col = r, c
      end
      pcall(vim.api.nvim_win_set_cursor, 0, { row + 1, col })
      vim.cmd('normal! zvzz')
    end)
  end)
end

--- `:TranscriptSearch[!] [query]`.
---@param query string
---@param quickfix boolean
function M.search(query, quickfix)
  if query == nil or query == '' then
    if quickfix then
      vim.notify('transcript: :TranscriptSearch! needs a query', vim.log.levels.WARN)
      return
    end
    vim.ui.input({ prompt = 'Search all sessions: ' }, function(q)
      if q and q ~= '' then
        M.search(q, false)
      end
    end)
    return
  end
  local T = require('transcript')
  local client, err = T.ensure_client(vim.api.nvim_get_current_buf(), vim.fn.getcwd())
  if not client then
    vim.notify('transcript: ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  client:request('transcript/search', { query = query, limit = M.limit }, function(rerr, result)
    vim.schedule(function()
      if rerr then
        vim.notify('transcript: search failed: ' .. (rerr.message or vim.inspect(rerr)), vim.log.levels.ERROR)
        return
      end
      local hits = type(result) == 'table' and result.hits or {}
      local partial = type(result) == 'table' and result.complete == false
      local note = partial and ' (still indexing: partial)' or ''
      if #hits == 0 then
        vim.notify(('transcript: nothing matches %q%s'):format(query, note), vim.log.levels.INFO)
        return
      end
      if quickfix then
        local items = {}
        for _, h in ipairs(hits) do
          items[#items + 1] = {
            filename = vim.uri_to_fname(h.uri),
            lnum = h.line + 1,
            col = 1,
            text = M.label(h),
          }
        end
        vim.fn.setqflist({}, ' ', { title = ('Transcript search: %s%s'):format(query, note), items = items })
        vim.cmd('copen')
        return
      end
      vim.ui.select(hits, {
        prompt = ('Search all sessions: %s%s'):format(query, note),
        kind = 'transcript_search',
        format_item = M.label,
      }, function(choice)
        if choice then
          M.open(client, choice)
        end
      end)
    end)
  end)
end

return M
