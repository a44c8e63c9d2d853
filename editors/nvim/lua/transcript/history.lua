--- From a source file to the sessions that wrote it (issue 22 items 3, 4; server/PROTOCOL.md,
--- "File history and agent blame"), over the server's session index:
---
--- * `:TranscriptFileHistory`: every session and turn that changed the current file, newest
---   first, through `vim.ui.select`; picking one opens that turn in the session's view and the
---   turn's change of the file in a diff tab page.
--- * `:TranscriptBlame`: the lines of the buffer an agent wrote and that are still there, as
---   virtual text at the end of each block's first line (`✎ claude-code "Fix the parser" turn 3
---   · 2026-05-01 10:22 +12 −3`); kept current while the buffer changes. `:TranscriptBlame!`
---   clears it. `:TranscriptBlameOpen` opens the turn that wrote the cursor's line.
local M = {}

M.ns = vim.api.nvim_create_namespace('transcript_blame')

--- The absolute path of a buffer's file, or nil and why not.
---@param bufnr integer
---@return string? path, string? err
local function file_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= '' or name == '' or name:match('^%a[%w+.-]*://') then
    return nil, 'this buffer is not a file'
  end
  return vim.fn.fnamemodify(name, ':p')
end

--- Sends `method` with `params` to the transcript-ls client (started if none runs); calls
--- `cb(result)` on the main loop, or notifies the error.
local function request(method, params, cb)
  local T = require('transcript')
  local client, err = T.ensure_client(vim.api.nvim_get_current_buf(), vim.fn.getcwd())
  if not client then
    vim.notify('transcript: ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  client:request(method, params, function(rerr, result)
    vim.schedule(function()
      if rerr then
        vim.notify(('transcript: %s failed: %s'):format(method, rerr.message or vim.inspect(rerr)), vim.log.levels.ERROR)
      else
        cb(client, result)
      end
    end)
  end)
end

--- Opens a history or blame entry (`{ uri, turn, path? }`): the turn in the session's view
--- (cursor on its heading), then the turn's change of `file` in a diff tab page.
---@param client vim.lsp.Client
---@param entry table
---@param file string the changed file's absolute path
function M.open_entry(client, entry, file)
  local T = require('transcript')
  T.execute(client, 'transcript.openView', { { uri = entry.uri, turn = entry.turn } }, nil, function(opened)
    vim.schedule(function()
      local view = require('transcript.view')
      vim.cmd.edit(vim.fn.fnameescape(view.uri_for(vim.uri_to_fname(entry.uri))))
      local vbuf = vim.api.nvim_get_current_buf()
      local line = type(opened) == 'table' and tonumber(opened.line) or nil
      if line then
        vim.wait(3000, function()
          return vim.api.nvim_buf_line_count(vbuf) > line
        end, 10)
        pcall(vim.api.nvim_win_set_cursor, 0, { line + 1, 0 })
        vim.cmd('normal! zvzt')
      end
      -- (asked of the view, which the server reads from disk: the raw file is not open)
      local vuri = view.uri_for(vim.uri_to_fname(entry.uri))
      T.execute(client, 'transcript.showChanges', { { uri = vuri, turn = entry.turn } }, nil, function(set)
        vim.schedule(function()
          for _, f in ipairs(type(set) == 'table' and set.files or {}) do
            if f.path == file or vim.uv.fs_realpath(f.path) == vim.uv.fs_realpath(file) then
              require('transcript.diff').open(client, {
                before = f.before,
                after = f.after,
                path = f.path,
                title = ('%s · %s'):format(tostring(set.title), tostring(f.label)),
              })
              return
            end
          end
          vim.notify(('transcript: turn %d changed no %s'):format(entry.turn, file), vim.log.levels.WARN)
        end)
      end)
    end)
  end)
end

--- `:TranscriptFileHistory`: pick a session and turn that changed the current file.
function M.file_history()
  local path, err = file_of(vim.api.nvim_get_current_buf())
  if not path then
    vim.notify('transcript: ' .. err, vim.log.levels.WARN)
    return
  end
  request('transcript/fileHistory', { path = path }, function(client, result)
    local entries = type(result) == 'table' and result.entries or {}
    if #entries == 0 then
      vim.notify(('transcript: no indexed session changed %s'):format(vim.fn.fnamemodify(path, ':~:.')), vim.log.levels.INFO)
      return
    end
    vim.ui.select(entries, {
      prompt = ('Agent history of %s'):format(vim.fn.fnamemodify(path, ':~:.')),
      kind = 'transcript_file_history',
      format_item = function(e)
        return e.label
      end,
    }, function(choice)
      if choice then
        M.open_entry(client, choice, result.path or path)
      end
    end)
  end)
end

--- Per buffer: `{ ranges, path, client_id, timer }` while blame is shown.
local shown = {}

--- The buffer's text as the server wants it (lines joined, a final newline where the file has one).
local function text_of(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local eol = vim.bo[bufnr].eol and '\n' or ''
  return table.concat(lines, '\n') .. eol
end

--- Draws the blame ranges of `bufnr`: the label at the end of each range's first line, a thin
--- bar at the end of its other lines.
local function draw(bufnr, ranges)
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local count = vim.api.nvim_buf_line_count(bufnr)
  for _, r in ipairs(ranges) do
    local first, last = r.range.start.line, r.range['end'].line
    for l = first, math.min(last, count - 1) do
      local text = l == first and ('  ✎ ' .. r.label) or '  ┆'
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, l, 0, {
        virt_text = { { text, 'TranscriptBlame' } },
        virt_text_pos = 'eol',
        hl_mode = 'combine',
      })
    end
  end
end

--- Asks for the blame of `bufnr`'s current text and draws it.
local function refresh(bufnr)
  local s = shown[bufnr]
  if not s or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  request('transcript/blame', { path = s.path, text = text_of(bufnr) }, function(client, result)
    if not shown[bufnr] or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    local ranges = type(result) == 'table' and result.ranges or {}
    shown[bufnr].ranges = ranges
    shown[bufnr].client_id = client.id
    draw(bufnr, ranges)
    vim.b[bufnr].transcript_blame = #ranges
    if s.announce then
      s.announce = false
      local lines = 0
      for _, r in ipairs(ranges) do
        lines = lines + r.range['end'].line - r.range.start.line + 1
      end
      vim.notify(
        #ranges == 0 and 'transcript: no line of this file is an agent\'s (per the indexed sessions)'
          or ('transcript: %d lines in %d blocks written by agents (:TranscriptBlame! clears)'):format(lines, #ranges),
        vim.log.levels.INFO
      )
    end
  end)
end

--- Removes the blame of `bufnr`.
function M.clear(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local s = shown[bufnr]
  if s then
    if s.timer then
      s.timer:stop()
      s.timer:close()
    end
    pcall(vim.api.nvim_del_augroup_by_id, s.group)
  end
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    vim.b[bufnr].transcript_blame = nil
  end
end

--- `:TranscriptBlame[!]`: shows (or with `clear` removes) the agent blame of the buffer;
--- while shown it is asked again 300 ms after the text changes.
---@param clear boolean?
function M.blame(clear)
  local bufnr = vim.api.nvim_get_current_buf()
  if clear then
    M.clear(bufnr)
    return
  end
  local path, err = file_of(bufnr)
  if not path then
    vim.notify('transcript: ' .. err, vim.log.levels.WARN)
    return
  end
  if not shown[bufnr] then
    local group = vim.api.nvim_create_augroup('transcript_blame_' .. bufnr, { clear = true })
    shown[bufnr] = { path = path, ranges = {}, group = group, timer = vim.uv.new_timer() }
    vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        local s = shown[bufnr]
        if s then
          s.timer:stop()
          s.timer:start(300, 0, vim.schedule_wrap(function()
            refresh(bufnr)
          end))
        end
      end,
    })
    vim.api.nvim_create_autocmd({ 'BufWipeout' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        M.clear(bufnr)
      end,
    })
  end
  shown[bufnr].announce = true
  refresh(bufnr)
end

--- The blame ranges shown in `bufnr` (the server's objects), for tests and statuslines.
---@param bufnr integer?
---@return table[]
function M.ranges(bufnr)
  local s = shown[bufnr or vim.api.nvim_get_current_buf()]
  return s and s.ranges or {}
end

--- `:TranscriptBlameOpen`: the turn that wrote the cursor's line, in its view and diff.
function M.open_at_cursor()
  local bufnr = vim.api.nvim_get_current_buf()
  local s = shown[bufnr]
  if not s then
    vim.notify('transcript: no agent blame in this buffer (run :TranscriptBlame)', vim.log.levels.WARN)
    return
  end
  local l = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, r in ipairs(s.ranges) do
    if r.range.start.line <= l and l <= r.range['end'].line then
      local client = vim.lsp.get_client_by_id(s.client_id)
      if client then
        M.open_entry(client, r, s.path)
      end
      return
    end
  end
  vim.notify('transcript: no agent wrote this line (per the indexed sessions)', vim.log.levels.INFO)
end

return M
