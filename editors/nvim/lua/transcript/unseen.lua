-- What is new since I last looked (issue 23 item 10). "Waiting for the user" comes from the
-- server (`waiting` of `transcript/sessions`); "unseen" is the client's knowledge:
--
-- * A session's output is seen up to the file's size when a window showed the last line of
--   one of its buffers (view or raw). Sizes are kept per file URI in
--   `stdpath('state')/transcript/seen.json`; the first complete session list ever loaded is
--   taken as seen, so only what changes from then on is new.
-- * In a view, the lines the window last showed to the end are kept; when the view changes,
--   the first line that differs is where the new output starts: a virtual line
--   `── new since you last looked ──` above it, until the next change after the end was seen.
--   What was seen of each view (a hash per line) is kept in seen.json too (`views`, the 100
--   views seen last), so a view opened after a restart shows the marker where the output not
--   seen starts (issue 23 item 10).
-- * `]n` / :TranscriptNew jump to it, `]N` / :TranscriptNewest to the newest turn.
local M = {}

M.MARKER = '── new since you last looked ──'
local ns = vim.api.nvim_create_namespace('transcript.unseen')

--- Per view buffer: `{ seen = { h = string[], body = integer }?, marker = integer? (0-based),
--- tick = integer? }` (`h`: a hash per line of what the window last showed to the end; `body`:
--- its first `## ` line, 0-based; `tick`: the buffer's changedtick when it was kept).
local views = {}
---@type { initialized: boolean, seen: table<string, integer>, views: table<string, table>, order: string[] }?
local state
--- Views kept in seen.json (the ones seen last) and the longest view kept.
local VIEWS_MAX, VIEW_LINES_MAX = 100, 100000

local function state_path()
  return vim.fn.stdpath('state') .. '/transcript/seen.json'
end

local function load()
  if state then
    return state
  end
  state = { initialized = false, seen = {}, views = {}, order = {} }
  local f = io.open(state_path(), 'r')
  if f then
    local ok, data = pcall(vim.json.decode, f:read('*a'))
    f:close()
    if ok and type(data) == 'table' and type(data.seen) == 'table' then
      state = {
        initialized = data.initialized == true,
        seen = data.seen,
        views = type(data.views) == 'table' and data.views or {},
        order = type(data.order) == 'table' and data.order or {},
      }
    end
  end
  return state
end

local function save()
  vim.fn.mkdir(vim.fs.dirname(state_path()), 'p')
  local f = io.open(state_path(), 'w')
  if f then
    f:write(vim.json.encode(state))
    f:close()
  end
end

--- True when session `s` (of `transcript/sessions`) has output the user has not seen.
---@param s table
---@return boolean
function M.is_unseen(s)
  local st = load()
  local seen = st.seen[s.uri]
  if seen == nil then
    return st.initialized
  end
  return (s.bytes or 0) > seen
end

--- Takes the sessions of the first complete list ever loaded as seen.
---@param list table[]
---@param complete boolean
function M.note_list(list, complete)
  local st = load()
  if st.initialized or not complete then
    return
  end
  for _, s in ipairs(list) do
    if st.seen[s.uri] == nil then
      st.seen[s.uri] = s.bytes or 0
    end
  end
  st.initialized = true
  save()
end

--- The marks of a session in the picker: `⏸ waiting for you: question`, `● new`.
---@param s table
---@return string[]
function M.marks(s)
  local out = {}
  if type(s.waiting) == 'table' then
    out[#out + 1] = '⏸ waiting for you: ' .. tostring(s.waiting.kind)
  end
  if M.is_unseen(s) then
    out[#out + 1] = '● new'
  end
  return out
end

local function file_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local view = require('transcript.view')
  if view.is_view_name(name) then
    return (view.parse(name))
  end
  return name ~= '' and vim.fs.normalize(vim.fn.fnamemodify(name, ':p')) or nil
end

local function mark_seen(bufnr)
  local path = file_of(bufnr)
  local stat = path and vim.uv.fs_stat(path)
  if not stat then
    return
  end
  local st = load()
  local uri = vim.uri_from_fname(path)
  if st.seen[uri] ~= stat.size then
    st.seen[uri] = stat.size
    save()
  end
end

--- What view `bufnr` shows now: `{ h = a hash per line, body = its first `## ` line }`.
local function snapshot(bufnr)
  local h, body = {}, nil
  for i, l in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    h[i] = vim.fn.sha256(l):sub(1, 12)
    if not body and vim.startswith(l, '## ') then
      body = i - 1
    end
  end
  return { h = h, body = body or 0 }
end

--- Keeps what was seen of view `bufnr` in seen.json (once per change of the buffer).
local function keep_view(bufnr, v)
  local tick = vim.b[bufnr].changedtick
  if v.tick == tick or #v.seen.h > VIEW_LINES_MAX then
    return
  end
  v.tick = tick
  local st = load()
  local key = vim.api.nvim_buf_get_name(bufnr)
  st.views[key] = v.seen
  st.order = vim.tbl_filter(function(k)
    return k ~= key
  end, st.order)
  table.insert(st.order, key)
  while #st.order > VIEWS_MAX do
    st.views[table.remove(st.order, 1)] = nil
  end
  save()
end

local function draw(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local v = views[bufnr]
  if v and v.marker and v.marker < vim.api.nvim_buf_line_count(bufnr) then
    vim.api.nvim_buf_set_extmark(bufnr, ns, v.marker, 0, {
      virt_lines = { { { M.MARKER, 'DiagnosticInfo' } } },
      virt_lines_above = true,
      sign_text = '▶',
      sign_hl_group = 'DiagnosticInfo',
    })
  end
end

--- Window `win` shows its buffer: when the buffer's last line is on screen, what it shows is
--- seen.
---@param win integer
function M.look(win)
  if not vim.api.nvim_win_is_valid(win) or vim.api.nvim_win_get_tabpage(win) ~= vim.api.nvim_get_current_tabpage() then
    return -- not on screen
  end
  local bufnr = vim.api.nvim_win_get_buf(win)
  if not vim.b[bufnr].transcript_unseen then
    return -- not a buffer the client attached to
  end
  local v = views[bufnr]
  if vim.b[bufnr].transcript_view and not v then
    -- What was seen of the view before (an earlier Neovim) is where "new" starts from; else
    -- what the view holds when first shown.
    local kept = load().views[vim.api.nvim_buf_get_name(bufnr)]
    v = { seen = type(kept) == 'table' and type(kept.h) == 'table' and kept or snapshot(bufnr) }
    views[bufnr] = v
    if v.seen == kept then
      M.changed(bufnr)
      return -- (changed() looks again)
    end
  end
  local last = vim.api.nvim_buf_line_count(bufnr)
  if vim.fn.line('w$', win) < last then
    return
  end
  if v and v.tick ~= vim.b[bufnr].changedtick then
    v.seen = snapshot(bufnr)
    keep_view(bufnr, v)
  end
  mark_seen(bufnr)
end

--- View `bufnr` changed: the marker goes to the first line that differs from what was seen.
---@param bufnr integer
function M.changed(bufnr)
  local v = views[bufnr]
  if not (v and v.seen) or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local cur = snapshot(bufnr)
  local now, was = cur.h, v.seen.h
  -- The header above the first `## ` heading (title, the session's figures) changes with
  -- every append: compare from the first heading of each text on.
  local a, b = cur.body, v.seen.body or 0
  local k = 0
  while a + k < #now and b + k < #was and now[a + k + 1] == was[b + k + 1] do
    k = k + 1
  end
  if a + k < #now then
    v.marker = a + k
  elseif #now - a ~= #was - b then
    v.marker = math.max(0, #now - 1) -- lines went away at the end: mark the last one
  else
    v.marker = nil
  end
  draw(bufnr)
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    M.look(win)
  end
end

--- Follows view or raw buffer `bufnr` (from the client's `on_attach`).
---@param bufnr integer
function M.attach(bufnr)
  if vim.b[bufnr].transcript_unseen then
    return
  end
  vim.b[bufnr].transcript_unseen = true
  if vim.b[bufnr].transcript_view then
    local pending = false
    vim.api.nvim_buf_attach(bufnr, false, {
      on_lines = function()
        if not pending then
          pending = true
          vim.schedule(function()
            pending = false
            M.changed(bufnr)
          end)
        end
      end,
      on_detach = function()
        views[bufnr] = nil
      end,
    })
  end
  local group = vim.api.nvim_create_augroup('transcript.unseen.' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufWinEnter', 'WinScrolled', 'CursorMoved', 'FocusGained' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.look(vim.api.nvim_get_current_win())
    end,
  })
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    M.look(win)
  end
end

--- The marker's line (0-based) in view `bufnr`, if any.
---@param bufnr integer
---@return integer?
function M.marker(bufnr)
  local v = views[bufnr]
  return v and v.marker
end

--- Moves the cursor to `line` (1-based), the jump list keeping where it was, the line
--- unfolded at the window's top.
local function go_to(line)
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.cmd('normal! zvzt')
end

--- `]n`, :TranscriptNew: to the first line of output not seen yet.
function M.jump_new()
  local bufnr = vim.api.nvim_get_current_buf()
  local m = M.marker(bufnr)
  if not m then
    vim.notify('transcript: no new output since you last looked', vim.log.levels.INFO)
    return
  end
  go_to(m + 1)
end

--- `]N`, :TranscriptNewest: to the newest turn (the last `## Turn` heading of a view, the last
--- turn of the outline in a raw transcript).
function M.jump_newest()
  local bufnr = vim.api.nvim_get_current_buf()
  local line
  if vim.b[bufnr].transcript_view then
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    for i = #lines, 1, -1 do
      if vim.startswith(lines[i], '## Turn ') then
        line = i
        break
      end
    end
  else
    local params = { textDocument = vim.lsp.util.make_text_document_params(bufnr) }
    for _, r in pairs(vim.lsp.buf_request_sync(bufnr, 'textDocument/documentSymbol', params, 3000) or {}) do
      for _, s in ipairs(r.result or {}) do
        if s.name:match('^Turn %d+') then
          local range = s.range or (s.location and s.location.range)
          line = range and range.start.line + 1 or line
        end
      end
    end
  end
  if not line then
    vim.notify('transcript: no turn yet', vim.log.levels.INFO)
    return
  end
  go_to(line)
end

--- Forgets what was seen (tests).
function M.reset()
  state = nil
  views = {}
end

return M
