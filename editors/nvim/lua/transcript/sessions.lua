--- Sessions first (issue 7): `:Transcripts [query]` (a `vim.ui.select` picker over the server's
--- `transcript/sessions`, so telescope / fzf-lua / snacks overrides of `vim.ui.select` apply),
--- `:TranscriptLatest` (the newest session recorded in the current directory), `:TranscriptRaw`,
--- and opening a transcript as its view (`open = 'view'`).
local M = {}

--- `3h ago`, `2d ago`, `just now` for an ISO 8601 UTC time (`2026-11-30T09:14:03.512Z`).
---@param iso string?
---@param now integer? seconds since the epoch (default: now)
---@return string
function M.relative_time(iso, now)
  if type(iso) ~= 'string' then
    return ''
  end
  local y, mo, d, h, mi, s = iso:match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return ''
  end
  -- Days since the epoch of a civil date (proleptic Gregorian), so no time zone is involved.
  local function days(yy, mm, dd)
    yy = mm <= 2 and yy - 1 or yy
    local era = math.floor(yy / 400)
    local yoe = yy - era * 400
    local doy = math.floor((153 * (mm + (mm > 2 and -3 or 9)) + 2) / 5) + dd - 1
    local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
    return era * 146097 + doe - 719468
  end
  local t = days(tonumber(y), tonumber(mo), tonumber(d)) * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s)
  local ago = math.max(0, (now or os.time()) - t)
  if ago < 60 then
    return 'just now'
  end
  local label = ''
  for _, step in ipairs({ { 60, 'm' }, { 3600, 'h' }, { 86400, 'd' }, { 86400 * 30, 'mo' }, { 86400 * 365, 'y' } }) do
    if ago >= step[1] then
      label = ('%d%s ago'):format(math.floor(ago / step[1]), step[2])
    end
  end
  return label
end

--- Labels for project folders that tell them apart, as editor tabs do (issue 23 item 7): each
--- folder's last segment, with as many parent segments as it takes to differ from every other
--- folder of `projects` that ends the same (`a/cwd`, `b/cwd`).
---@param projects string[]
---@return table<string, string> folder -> label
function M.project_labels(projects)
  local segs, depth, all = {}, {}, {}
  for _, p in ipairs(projects) do
    if not segs[p] then
      segs[p] = vim.split(p, '/', { trimempty = true })
      depth[p] = 1
      all[#all + 1] = p
    end
  end
  local function label(p)
    local s = segs[p]
    if #s == 0 then
      return p
    end
    return table.concat(vim.list_slice(s, math.max(1, #s - depth[p] + 1), #s), '/')
  end
  for _ = 1, 64 do
    local by = {}
    for _, p in ipairs(all) do
      local l = label(p)
      by[l] = by[l] or {}
      table.insert(by[l], p)
    end
    local grew = false
    for _, same in pairs(by) do
      if #same > 1 then
        for _, p in ipairs(same) do
          if depth[p] < #segs[p] then
            depth[p] = depth[p] + 1
            grew = true
          end
        end
      end
    end
    if not grew then
      break
    end
  end
  local out = {}
  for _, p in ipairs(all) do
    out[p] = label(p)
  end
  return out
end

--- The picker line of a session: `title — project · 3h ago · 12 turns ●live`, then
--- `⏸ waiting for you: question` and `● new` when they apply.
---@param s table a session of `transcript/sessions`
---@param now integer?
---@param labels table<string, string>? project labels ([`project_labels`]); default: the folder's name
---@return string
function M.format_item(s, now, labels)
  local parts = {}
  if type(s.project) == 'string' and s.project ~= '' then
    parts[#parts + 1] = (labels and labels[s.project]) or vim.fn.fnamemodify(s.project, ':t')
  end
  local when = M.relative_time(s.ended ~= vim.NIL and s.ended or s.started, now)
  if when ~= '' then
    parts[#parts + 1] = when
  end
  parts[#parts + 1] = ('%d turn%s'):format(s.turns or 0, s.turns == 1 and '' or 's')
  local line = (s.title or '?') .. ' — ' .. table.concat(parts, ' · ')
  if s.live then
    line = line .. ' ●live'
  end
  -- Waiting for the user (server) and output not seen yet (issue 23 item 10).
  for _, m in ipairs(require('transcript.unseen').marks(s)) do
    line = line .. ' ' .. m
  end
  return line
end

--- Asks the server for sessions; calls `cb(sessions)` (nil and a message on failure).
---@param params table `{ query?, project?, limit? }`
---@param cb fun(sessions: table[]?, err: string?, complete: boolean?)
function M.fetch(params, cb)
  local T = require('transcript')
  local client, err = T.ensure_client(vim.api.nvim_get_current_buf(), vim.fn.getcwd())
  if not client then
    cb(nil, err)
    return
  end
  -- While the first index build runs the answer is partial (`complete: false`, issue 23 item
  -- 2: the first :Transcripts after start listed nothing): ask again every 250 ms until it is
  -- complete (at most `M.index_wait_ms`), saying so once.
  local deadline = vim.uv.now() + M.index_wait_ms
  local told = false
  local function ask()
    client:request('transcript/sessions', params, function(rerr, result)
      if rerr then
        cb(nil, rerr.message or vim.inspect(rerr))
        return
      end
      if type(result) == 'table' and result.complete == false and vim.uv.now() < deadline then
        if not told then
          told = true
          vim.notify('transcript: indexing sessions… (the list follows when the index is ready)', vim.log.levels.INFO)
        end
        vim.defer_fn(ask, 250)
        return
      end
      cb(result and result.sessions or {}, nil, type(result) == 'table' and result.complete ~= false)
    end)
  end
  ask()
end

--- How long `fetch` waits for the first index build before showing a partial list (ms).
M.index_wait_ms = 30000

--- Opens a session as `open` says (default: the plugin's `open` option).
---@param s table a session (needs `uri`)
---@param how 'view'|'raw'|'both'|nil
function M.open(s, how)
  local T = require('transcript')
  local view = require('transcript.view')
  how = how or T.config.open
  local path = vim.uri_to_fname(s.uri)
  if how == 'raw' or how == 'both' then
    vim.cmd.edit(vim.fn.fnameescape(path))
    vim.b.transcript_raw = true
  end
  if how == 'both' then
    vim.cmd.vsplit(vim.fn.fnameescape(view.uri_for(path)))
  elseif how ~= 'raw' then
    vim.cmd.edit(vim.fn.fnameescape(view.uri_for(path)))
  end
end

--- `:Transcripts [query]`: pick a session (best match first with a query, else newest first).
---@param query string?
function M.pick(query)
  local params = { limit = 500 }
  if query and query ~= '' then
    params.query = query
  end
  M.fetch(params, function(list, err, complete)
    vim.schedule(function()
      if not list then
        vim.notify('transcript: cannot list sessions: ' .. tostring(err), vim.log.levels.ERROR)
        return
      end
      if not params.query then
        require('transcript.unseen').note_list(list, complete == true)
      end
      if #list == 0 then
        vim.notify(
          query and query ~= '' and ('transcript: no session matches %q'):format(query)
            or 'transcript: no transcripts under the configured roots (settings.roots)',
          vim.log.levels.INFO
        )
        return
      end
      local now = os.time()
      local projects = {}
      for _, s in ipairs(list) do
        if type(s.project) == 'string' and s.project ~= '' then
          projects[#projects + 1] = s.project
        end
      end
      local labels = M.project_labels(projects)
      vim.ui.select(list, {
        prompt = 'Transcripts',
        kind = 'transcript_session',
        format_item = function(s)
          return M.format_item(s, now, labels)
        end,
      }, function(choice)
        if choice then
          M.open(choice)
        end
      end)
    end)
  end)
end

--- `:TranscriptLatest`: the newest session whose project is the current directory (or below).
function M.latest()
  local cwd = vim.fn.getcwd()
  M.fetch({ project = cwd, limit = 1 }, function(list, err)
    vim.schedule(function()
      if not list then
        vim.notify('transcript: cannot list sessions: ' .. tostring(err), vim.log.levels.ERROR)
      elseif #list == 0 then
        vim.notify('transcript: no session recorded in ' .. cwd, vim.log.levels.INFO)
      else
        M.open(list[1])
      end
    end)
  end)
end

--- `:TranscriptRaw`: from a view, the raw `.jsonl` (and it stays raw); from a raw transcript,
--- its view.
function M.toggle_raw()
  local view = require('transcript.view')
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if view.is_view_name(name) then
    local path = view.parse(name)
    local raw = vim.fn.bufnr(path)
    if raw > 0 then
      vim.b[raw].transcript_raw = true
    end
    vim.cmd.edit(vim.fn.fnameescape(path))
    vim.b.transcript_raw = true
  else
    view.open(buf)
  end
end

--- Called when the client attaches to a raw transcript buffer: with `open = 'view'` the windows
--- showing it switch to its view (once; `:TranscriptRaw` brings the raw file back and leaves it);
--- with `open = 'both'` the view opens in a vertical split.
---@param bufnr integer
function M.on_raw_attach(bufnr)
  local T = require('transcript')
  local how = T.config.open
  if how == 'raw' or vim.b[bufnr].transcript_raw or vim.b[bufnr].transcript_view then
    return
  end
  vim.b[bufnr].transcript_raw = true -- switch once
  local view = require('transcript.view')
  local path = vim.fs.normalize(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':p'))
  local uri = vim.fn.fnameescape(view.uri_for(path))
  vim.schedule(function()
    for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
      vim.api.nvim_win_call(win, function()
        if how == 'both' then
          vim.cmd.vsplit(uri)
        else
          vim.cmd.edit(uri)
        end
      end)
      if how == 'both' then
        break
      end
    end
  end)
end

return M
