--- transcript.nvim: Neovim (0.11+) client of transcript-ls, the language server that turns AI
--- coding-agent transcripts (`.jsonl` of Claude Code, Codex, Pi, GitHub Copilot CLI, Kiro CLI,
--- Mistral Vibe, Gemini CLI and Antigravity CLI) into readable documents.
---
--- Usage: `require('transcript').setup({})`. See `:help transcript`.
local M = {}

local detect = require('transcript.detect')
local view = require('transcript.view')
local highlights = require('transcript.highlights')

--- Name of the LSP config (`vim.lsp.config.transcript`) and of the client.
M.name = 'transcript'

--- Server settings (server/PROTOCOL.md, section `transcript`), accepted at the top level of the
--- options as well as under `settings`.
M.server_keys = { 'verbose', 'finalMarker', 'roots', 'workspaceFolders', 'indexCache', 'timeZone', 'gatePhases', 'semanticTokens', 'fileState' }

--- Commands the server executes (`workspace/executeCommand`); a code lens may carry any of them.
M.server_commands = {
  'transcript.nextTurn',
  'transcript.previousTurn',
  'transcript.nextGate',
  'transcript.openView',
  'transcript.listSessionFiles',
  'transcript.openSubagent',
  'transcript.showDiff',
  'transcript.showChanges',
}

M.defaults = {
  --- Command that starts the server (LSP on stdio).
  cmd = { 'transcript-ls' },
  --- Server settings: verbose, finalMarker, roots, workspaceFolders, indexCache, timeZone, gatePhases, semanticTokens, fileState.
  settings = {},
  --- 'foldlevel' set in windows showing a transcript the first time (1: turns open, their
  --- activity folded, so a window reads as prompts and final answers). nil: leave it alone.
  --- A view in the reading shape (`view_mode`) opens at 2 instead.
  foldlevel = 1,
  --- The shape of a view when it opens (issue 23 item 5): 'reading' (the verbose view at
  --- 'foldlevel' 2: prompts, the agent's comments, each work run and thought folded to one line,
  --- the answers), 'quiet' (prompts and final answers) or 'verbose' (the verbose view at
  --- `foldlevel`). Sets the server's `verbose` unless `settings.verbose` is given.
  view_mode = 'reading',
  --- Highlight views as markdown with the treesitter markdown parser (answers' emphasis, code
  --- spans, fenced code in its language), the final-answer token adding no colour there.
  markdown = true,
  --- Show the per-turn figures as inlay hints.
  inlay_hints = true,
  --- Show and refresh code lenses (gates, sub-agents).
  code_lens = true,
  --- Follow a raw transcript that grows on disk (an agent still writing): appended lines are
  --- added to the unmodified buffer, which the client sends as an incremental change.
  follow = true,
  --- Buffer-local mappings: `]]`/`[[` next/previous turn, `]g` next gate, `gV` open the view,
  --- `gO` the outline in the location list (rows named by the session's title, not its URI).
  keymaps = true,
  --- Wrap long lines in windows showing a transcript, raw or view ('wrap', 'linebreak',
  --- 'breakindent'), so that text on a long JSON line stays in sight. false: leave them alone.
  wrap = true,
  --- Timeout of synchronous requests (view content), in milliseconds; a view of a big file
  --- waits 1 ms more per 50 KB of the file (20 s more for 1 GB).
  timeout_ms = 5000,
  --- Show the server's progress while a big transcript loads (8 MiB and more: `Reading`,
  --- `Rendering`) and while it indexes sessions, in the message area. Neovim 0.11 shows none by
  --- itself; `require('transcript').progress_status()` gives the same text for a statusline.
  progress = true,
  --- Optional `fun(bufnr): boolean?` overriding content detection (nil: use the default).
  detect = nil,
  --- How a transcript opens (`:e file.jsonl`, `:Transcripts`, `:TranscriptLatest`): 'view' (the
  --- rendered view replaces the raw buffer in its window; `:TranscriptRaw` goes back), 'raw'
  --- (the JSONL itself), 'both' (raw, with the view in a vertical split).
  open = 'view',
}

M.config = vim.deepcopy(M.defaults)

local function empty_dict_if_empty(t)
  if next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- The settings sent to the server.
function M.server_settings()
  local s = {}
  for _, k in ipairs(M.server_keys) do
    if M.config.settings[k] ~= nil then
      s[k] = M.config.settings[k]
    end
  end
  if s.verbose == nil then
    s.verbose = M.view_mode() ~= 'quiet'
  end
  return empty_dict_if_empty(s)
end

--- The configured shape of views: 'reading', 'quiet' or 'verbose' (`view_mode`; an unknown
--- value is read as 'reading').
---@return 'reading'|'quiet'|'verbose'
function M.view_mode()
  local m = M.config.view_mode
  if m == 'quiet' or m == 'verbose' then
    return m
  end
  return 'reading'
end

--- True when the server renders a view without a `verbose` query verbose.
---@return boolean
function M.default_verbose()
  return M.server_settings().verbose == true
end

--- True when buffer `bufnr` holds a transcript (content detection, see `transcript.detect`).
---@param bufnr integer
---@return boolean
function M.is_transcript(bufnr)
  if M.config.detect then
    local r = M.config.detect(bufnr)
    if r ~= nil then
      return r and true or false
    end
  end
  local roots = M.config.settings.roots or detect.default_roots
  return detect.buffer_format(bufnr, roots) ~= nil
end

--- The transcript client attached to `bufnr` (nil when none).
---@param bufnr integer?
---@return vim.lsp.Client?
function M.get_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr or 0, name = M.name })[1]
end

--- The transcript client of the current buffer, and the buffer; nil (the user told) when
--- none is attached. For the commands that act on the current buffer.
---@return vim.lsp.Client?, integer
function M.client_here()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr)
  if not client then
    vim.notify('transcript: no transcript-ls client in this buffer', vim.log.levels.WARN)
  end
  return client, bufnr
end

--- A running, initialised transcript client, started for `bufnr` (not attached) if there is
--- none yet.
---@param bufnr integer
---@param root_dir string?
---@return vim.lsp.Client? client, string? err
function M.ensure_client(bufnr, root_dir)
  local client = vim.lsp.get_clients({ name = M.name })[1]
  if not client then
    local cfg = vim.deepcopy(vim.lsp.config[M.name])
    cfg.name = M.name
    cfg.root_dir = root_dir
    local id = vim.lsp.start(cfg, { bufnr = bufnr, attach = false, reuse_client = cfg.reuse_client, silent = true })
    client = id and vim.lsp.get_client_by_id(id) or nil
    if not client then
      return nil, 'cannot start the server: ' .. table.concat(M.config.cmd, ' ')
    end
  end
  if not client.initialized then
    vim.wait(M.config.timeout_ms, function()
      return client.initialized or client:is_stopped()
    end, 10)
  end
  if not client.initialized then
    return nil, 'the server did not initialise'
  end
  return client
end

--- Opens the result of a server command: a Location/LocationLink is jumped to, a URI (or
--- `{ uri }`) is edited.
---@param client vim.lsp.Client
---@param result any
---@param what string what was asked, for the message when nothing came back
function M.show_result(client, result, what)
  if result == nil or result == vim.NIL then
    vim.notify('transcript: no ' .. what, vim.log.levels.INFO)
    return
  end
  if type(result) == 'string' then
    vim.cmd.edit(vim.fn.fnameescape(vim.startswith(result, 'file:') and vim.uri_to_fname(result) or result))
    return
  end
  if vim.islist(result) then
    result = result[1]
    if result == nil then
      vim.notify('transcript: no ' .. what, vim.log.levels.INFO)
      return
    end
  end
  if result.targetUri then
    result = { uri = result.targetUri, range = result.targetSelectionRange or result.targetRange }
  end
  if result.uri and result.range then
    vim.lsp.util.show_document(result, client.offset_encoding, { focus = true })
  elseif result.uri then
    M.show_result(client, result.uri, what)
  else
    vim.notify('transcript: unexpected reply to ' .. what .. ': ' .. vim.inspect(result), vim.log.levels.WARN)
  end
end

--- Runs a server command and calls `on_result(result)` (default: `show_result`).
---@param client vim.lsp.Client
---@param command string
---@param arguments any[]
---@param bufnr integer
---@param on_result fun(result: any)?
function M.execute(client, command, arguments, bufnr, on_result)
  client:request('workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
    if err then
      vim.notify('transcript: ' .. command .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    else
      M.show_result(client, result, command)
    end
  end, bufnr)
end

--- Arguments of the position commands (PROTOCOL.md, Commands): one object with the document
--- URI and the cursor position (in the client's position encoding).
local function position_arguments(client)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  return { { uri = params.textDocument.uri, line = params.position.line, position = params.position } }
end

--- `:TranscriptNextTurn` and friends: runs `command` at the cursor and jumps to the Location it
--- returns.
---@param command string
function M.jump(command)
  local client, bufnr = M.client_here()
  if not client then
    return
  end
  M.execute(client, command, position_arguments(client), bufnr)
end

--- `:TranscriptSubagents`: the transcripts of the session (main, sub-agents, compaction
--- summariser runs) in `vim.ui.select`; the chosen one is opened.
---@param opts { quickfix: boolean? }?
function M.session_files(opts)
  local client, bufnr = M.client_here()
  if not client then
    return
  end
  M.pick_session_files(client, { vim.uri_from_bufnr(bufnr) }, bufnr, opts)
end

--- Asks the server for the session's transcripts (`transcript.listSessionFiles` with
--- `arguments`) and lets the user pick one, or fills the quickfix list.
---@param client vim.lsp.Client
---@param arguments any[]
---@param bufnr integer
---@param opts { quickfix: boolean? }?
function M.pick_session_files(client, arguments, bufnr, opts)
  opts = opts or {}
  M.execute(client, 'transcript.listSessionFiles', arguments, bufnr, function(result)
    local items = M.session_items(result)
    if #items == 0 then
      vim.notify('transcript: no transcript found for this session', vim.log.levels.INFO)
      return
    end
    if opts.quickfix then
      vim.fn.setqflist({}, ' ', {
        title = 'Transcript session files',
        items = vim.tbl_map(function(it)
          return { filename = it.path, lnum = 1, text = it.label }
        end, items),
      })
      vim.cmd.copen()
      return
    end
    vim.ui.select(items, {
      prompt = 'Session transcripts',
      format_item = function(it)
        return it.label
      end,
    }, function(choice)
      if choice then
        vim.cmd.edit(vim.fn.fnameescape(choice.path))
      end
    end)
  end)
end

--- Flattens the reply of `transcript.listSessionFiles` into `{ label, path }` items.
---@param result any
---@return { label: string, path: string, kind: string }[]
function M.session_items(result)
  local items = {}
  if type(result) ~= 'table' then
    return items
  end
  local function path_of(f)
    local u = type(f) == 'string' and f or (type(f) == 'table' and (f.uri or f.path)) or nil
    if not u then
      return nil
    end
    return vim.startswith(u, 'file:') and vim.uri_to_fname(u) or u
  end
  local kind_names = { subagent = 'sub-agent', compaction = 'compaction', main = 'main' }
  local function add(kind, f)
    kind = kind_names[kind] or kind
    local p = path_of(f)
    if not p then
      return
    end
    local label = kind .. ': ' .. vim.fn.fnamemodify(p, ':t')
    if type(f) == 'table' then
      local extra = {}
      for _, k in ipairs({ 'agentId', 'agentType', 'description', 'label', 'title' }) do
        if type(f[k]) == 'string' and f[k] ~= '' then
          extra[#extra + 1] = f[k]
        end
      end
      if #extra > 0 then
        label = label .. ' (' .. table.concat(extra, ', ') .. ')'
      end
    end
    items[#items + 1] = { label = label, path = p, kind = kind }
  end
  if result.main then
    add('main', result.main)
  end
  for _, f in ipairs(result.subagents or {}) do
    add(type(f) == 'table' and f.compaction and 'compaction' or 'sub-agent', f)
  end
  for _, f in ipairs(result.compaction or result.compactions or {}) do
    add('compaction', f)
  end
  if vim.islist(result) then
    for _, f in ipairs(result) do
      add(type(f) == 'table' and f.kind or 'file', f)
    end
  end
  return items
end

-- Code lenses -------------------------------------------------------------------------------

local lens_timers = {}

--- Refreshes the code lenses of `bufnr` soon (coalescing bursts of changes).
---@param bufnr integer
function M.refresh_lenses(bufnr)
  if not M.config.code_lens or lens_timers[bufnr] then
    return
  end
  lens_timers[bufnr] = true
  vim.defer_fn(function()
    lens_timers[bufnr] = nil
    local client = vim.api.nvim_buf_is_valid(bufnr) and M.get_client(bufnr)
    if client and not client:is_stopped() then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
  end, 50)
end

-- Following a transcript that grows on disk -----------------------------------------------

local follows = {}

local function read_range(path, offset, len)
  local fd = vim.uv.fs_open(path, 'r', 0)
  if not fd then
    return nil
  end
  local data = vim.uv.fs_read(fd, len, offset)
  vim.uv.fs_close(fd)
  return data
end

--- Brings buffer `bufnr` in step with its file after a change on disk: appended bytes are
--- added as lines (the last buffer line completed when it was a torn line), anything else
--- (truncation, replacement) reloads the buffer.
function M.catch_up(bufnr)
  local st = follows[bufnr]
  if not st or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local size = vim.fn.getfsize(st.path)
  if size < 0 or size == st.size then
    return
  end
  if vim.bo[bufnr].modified then
    return -- the user's edits win; `:e` reloads
  end
  if size < st.size then
    st.size = size
    vim.cmd.checktime(bufnr)
    st.partial = not vim.bo[bufnr].eol
    return
  end
  local chunk = read_range(st.path, st.size, size - st.size)
  if not chunk then
    return
  end
  local parts = vim.split(chunk, '\n', { plain = true })
  local ends_nl = chunk:sub(-1) == '\n'
  if ends_nl then
    parts[#parts] = nil
  end
  local count = vim.api.nvim_buf_line_count(bufnr)
  local start
  if st.size == 0 then
    start = 0
  elseif st.partial then
    start = count - 1
    parts[1] = (vim.api.nvim_buf_get_lines(bufnr, start, count, false)[1] or '') .. parts[1]
  else
    start = count
  end
  local bo = vim.bo[bufnr]
  local modifiable = bo.modifiable
  bo.modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, start, -1, false, parts)
  bo.modifiable = modifiable
  bo.eol = ends_nl
  bo.modified = false
  st.size = size
  st.partial = not ends_nl
end

--- Starts following the file of raw transcript buffer `bufnr`.
---@param bufnr integer
function M.follow(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if follows[bufnr] or path == '' or view.is_view_name(path) or vim.fn.filereadable(path) ~= 1 then
    return
  end
  local st = { path = path, size = vim.fn.getfsize(path), partial = not vim.bo[bufnr].eol }
  if st.size == 0 then
    st.partial = false
  end
  vim.bo[bufnr].autoread = true
  local pending = false
  local function on_event()
    if pending then
      return
    end
    pending = true
    vim.defer_fn(function()
      pending = false
      M.catch_up(bufnr)
    end, 30)
  end
  local handle = vim.uv.new_fs_event()
  if not handle then
    return
  end
  local function start()
    handle:start(path, {}, function(err, _, events)
      if err then
        return
      end
      if events and events.rename then
        -- replaced (editor save, rotation): watch the new file at that path
        handle:stop()
        vim.schedule(function()
          if follows[bufnr] then
            start()
            on_event()
          end
        end)
        return
      end
      vim.schedule(on_event)
    end)
  end
  start()
  st.handle = handle
  follows[bufnr] = st
  vim.api.nvim_create_autocmd({ 'BufUnload', 'BufDelete' }, {
    buffer = bufnr,
    once = true,
    callback = function()
      M.unfollow(bufnr)
    end,
  })
end

--- Stops following buffer `bufnr`.
function M.unfollow(bufnr)
  local st = follows[bufnr]
  if st then
    follows[bufnr] = nil
    if st.handle and not st.handle:is_closing() then
      st.handle:stop()
      st.handle:close()
    end
  end
end

-- Attaching ------------------------------------------------------------------------------

--- Window-local options for a window showing transcript buffer `bufnr`.
local function set_window_options(win, bufnr)
  if not vim.api.nvim_win_is_valid(win) or vim.api.nvim_win_get_buf(win) ~= bufnr then
    return
  end
  local wo = vim.wo[win][0]
  if M.config.wrap then
    wo.wrap = true
    wo.linebreak = true
    wo.breakindent = true
  end
  wo.foldmethod = 'expr'
  wo.foldexpr = 'v:lua.vim.lsp.foldexpr()'
  wo.foldtext = 'v:lua.vim.lsp.foldtext()'
  local seen = vim.w[win].transcript_foldlevel_set or {}
  if M.config.foldlevel and not seen[tostring(bufnr)] then
    wo.foldlevel = M.config.foldlevel
    -- A verbose view opened in the reading shape (no `verbose` in its URI; issue 23 item 5).
    if vim.b[bufnr].transcript_view and M.view_mode() == 'reading' then
      local _, verbose = view.parse(vim.api.nvim_buf_get_name(bufnr))
      if verbose == nil and M.default_verbose() then
        wo.foldlevel = 2
      end
    end
    seen[tostring(bufnr)] = true
    vim.w[win].transcript_foldlevel_set = seen
  end
end

local function map_keys(bufnr)
  local function map(lhs, rhs, desc)
    vim.keymap.set('n', lhs, rhs, { buffer = bufnr, desc = desc, silent = true })
  end
  map(']]', function()
    M.jump('transcript.nextTurn')
  end, 'Transcript: next turn')
  map('[[', function()
    M.jump('transcript.previousTurn')
  end, 'Transcript: previous turn')
  map(']g', function()
    M.jump('transcript.nextGate')
  end, 'Transcript: next gate')
  map('gV', function()
    view.open(bufnr)
  end, 'Transcript: open the rendered view')
  map('gO', function()
    M.outline(bufnr)
  end, 'Transcript: outline in the location list')
  map(']n', function()
    require('transcript.unseen').jump_new()
  end, 'Transcript: jump to new output (since you last looked)')
  map(']N', function()
    require('transcript.unseen').jump_newest()
  end, 'Transcript: jump to the newest turn')
end

--- The short name of transcript buffer `bufnr` in lists (issue 23 item 7): a view's title (its
--- first line without `# `), else the file's name; at most 40 characters.
---@param bufnr integer
---@return string
function M.short_name(bufnr)
  local name
  if vim.b[bufnr].transcript_view then
    local first = vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] or ''
    name = first:match('^#%s+(.+)$')
  end
  name = name or vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
  if vim.fn.strchars(name) > 40 then
    name = vim.fn.strcharpart(name, 0, 39) .. '…'
  end
  return name
end

--- The outline of transcript buffer `bufnr` (document symbols) in the window's location list,
--- each row named by [`short_name`] instead of the buffer's name (a view's `transcript://` URI is
--- ~100 columns). What `gO` does in transcript buffers.
---@param bufnr integer
function M.outline(bufnr)
  local label = M.short_name(bufnr)
  vim.lsp.buf.document_symbol({
    on_list = function(t)
      for _, item in ipairs(t.items or {}) do
        item.module = label
      end
      vim.fn.setloclist(0, {}, ' ', { title = t.title, items = t.items })
      vim.cmd('lopen')
    end,
  })
end

--- `on_attach` of the client: folding, inlay hints, code lenses, following, mappings.
---@param client vim.lsp.Client
---@param bufnr integer
function M.on_attach(client, bufnr)
  local group = vim.api.nvim_create_augroup('transcript.buf.' .. bufnr, { clear = true })
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    set_window_options(win, bufnr)
  end
  vim.api.nvim_create_autocmd('BufWinEnter', {
    group = group,
    buffer = bufnr,
    callback = function()
      set_window_options(vim.api.nvim_get_current_win(), bufnr)
    end,
  })
  if M.config.inlay_hints then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if M.config.code_lens and client:supports_method('textDocument/codeLens') then
    M.refresh_lenses(bufnr)
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        M.refresh_lenses(bufnr)
      end,
    })
    vim.api.nvim_create_autocmd('LspNotify', {
      group = group,
      buffer = bufnr,
      callback = function(ev)
        local m = ev.data and ev.data.method
        if m == 'textDocument/didChange' or m == 'textDocument/didOpen' then
          M.refresh_lenses(bufnr)
        end
      end,
    })
  end
  if M.config.follow and not vim.b[bufnr].transcript_view then
    M.follow(bufnr)
  end
  if M.config.keymaps then
    map_keys(bufnr)
  end
  if not vim.b[bufnr].transcript_view then
    require('transcript.sessions').on_raw_attach(bufnr)
  end
  -- What is new since the user last looked (issue 23 item 10).
  require('transcript.unseen').attach(bufnr)
end

-- Handlers of server -> client messages ------------------------------------------------------

local function view_refresh_handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local uri = type(params) == 'table' and params.uri or nil
  if client then
    vim.schedule(function()
      view.refresh(client, uri)
    end)
  end
  return vim.NIL
end

M.handlers = {
  ['workspace/textDocumentContent/refresh'] = view_refresh_handler,
  ['transcript/didChangeVirtualDocument'] = view_refresh_handler,
  -- A raw transcript open here changed on disk: catch up now (the plugin's own file watcher
  -- may not have fired yet).
  ['transcript/didChangeFile'] = function(_, params)
    local uri = type(params) == 'table' and params.uri or nil
    if uri and vim.startswith(uri, 'file:') then
      vim.schedule(function()
        local path = vim.fn.resolve(vim.uri_to_fname(uri))
        for b, st in pairs(follows) do
          if vim.fn.resolve(st.path) == path then
            M.catch_up(b)
          end
        end
      end)
    end
  end,
  -- Neovim 0.11 has no default handler for this request.
  ['workspace/codeLens/refresh'] = function(_, _, ctx)
    vim.schedule(function()
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      for bufnr in pairs(client and client.attached_buffers or {}) do
        M.refresh_lenses(bufnr)
      end
    end)
    return vim.NIL
  end,
}

--- Client-side implementations of the commands a code lens carries: the server runs them and
--- the client shows what they return (a Location to jump to, a transcript to open).
local function lens_commands()
  local cmds = {}
  for _, name in ipairs(M.server_commands) do
    cmds[name] = function(command, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if not client then
        return
      end
      if name == 'transcript.listSessionFiles' then
        M.pick_session_files(client, command.arguments or {}, ctx.bufnr)
        return
      end
      if name == 'transcript.showDiff' then
        M.execute(client, name, command.arguments or {}, ctx.bufnr, function(result)
          require('transcript.diff').open(client, result)
        end)
        return
      end
      if name == 'transcript.showChanges' then
        M.execute(client, name, command.arguments or {}, ctx.bufnr, function(result)
          require('transcript.changes').open_list(client, result)
        end)
        return
      end
      local args = command.arguments or {}
      local first = args[1]
      if type(first) == 'table' and first.reveal == true then
        -- the server shows the target itself (window/showDocument)
        M.execute(client, name, args, ctx.bufnr, function() end)
      else
        M.execute(client, name, args, ctx.bufnr)
      end
    end
  end
  return cmds
end

--- The `vim.lsp.config` entry this plugin registers.
function M.lsp_config()
  local settings = M.server_settings()
  return {
    cmd = M.config.cmd,
    filetypes = { 'jsonl' },
    -- Activate only for transcripts (decided from the content), wherever the file is.
    root_dir = function(bufnr, on_dir)
      if M.is_transcript(bufnr) then
        on_dir(vim.fs.dirname(vim.api.nvim_buf_get_name(bufnr)))
      end
    end,
    -- One server for every transcript, whatever its directory.
    reuse_client = function(client, config)
      return client.name == config.name
    end,
    init_options = settings,
    settings = { transcript = settings },
    capabilities = {
      workspace = { codeLens = { refreshSupport = true } },
    },
    handlers = M.handlers,
    commands = lens_commands(),
    on_attach = M.on_attach,
  }
end

--- Changes server settings at run time (sent as `workspace/didChangeConfiguration`).
---@param settings table
function M.set(settings)
  M.config.settings = vim.tbl_extend('force', M.config.settings, settings)
  local s = M.server_settings()
  vim.lsp.config(M.name, { init_options = s, settings = { transcript = s } })
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    client.settings = { transcript = s }
    client:notify('workspace/didChangeConfiguration', { settings = { transcript = s } })
  end
end

local function create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('TranscriptView', function(a)
    view.open(vim.api.nvim_get_current_buf(), a.bang and true or nil)
  end, { bang = true, desc = 'Open the rendered view of this transcript (! verbose); in a view, toggle quiet' })
  cmd('TranscriptNextTurn', function()
    M.jump('transcript.nextTurn')
  end, { desc = 'Go to the next turn' })
  cmd('TranscriptPrevTurn', function()
    M.jump('transcript.previousTurn')
  end, { desc = 'Go to the previous turn' })
  cmd('TranscriptNextGate', function()
    M.jump('transcript.nextGate')
  end, { desc = 'Go to the next dev-pipeline gate' })
  cmd('TranscriptDiff', function()
    require('transcript.diff').at_cursor()
  end, { desc = "Show the file edit on the cursor's line in a diff (new tab page)" })
  cmd('TranscriptChanges', function(a)
    require('transcript.changes').show(a.args)
  end, {
    nargs = '?',
    complete = function()
      return { 'session' }
    end,
    desc = "List the files a turn changed in the quickfix list (N: turn N; session: the whole session; none: the cursor's turn)",
  })
  cmd('TranscriptSearch', function(a)
    require('transcript.search').search(a.args, a.bang)
  end, { nargs = '*', bang = true, desc = 'Search every session (prompts, answers, tool calls); ! fills the quickfix list' })
  local history = require('transcript.history')
  cmd('TranscriptFileHistory', function()
    history.file_history()
  end, { desc = 'Pick a session and turn that changed this file (opens the turn and its diff)' })
  cmd('TranscriptBlame', function(a)
    history.blame(a.bang)
  end, { bang = true, desc = 'Show which agent turn wrote the lines of this file (! clears)' })
  cmd('TranscriptBlameOpen', function()
    history.open_at_cursor()
  end, { desc = "Open the turn that wrote the cursor's line (view and diff)" })
  cmd('TranscriptChangeDiff', function()
    require('transcript.changes').diff(0)
  end, { desc = "Open the current quickfix entry of a change set in a diff (new tab page)" })
  cmd('TranscriptSubagents', function(a)
    M.session_files({ quickfix = a.bang })
  end, { bang = true, desc = 'List the transcripts of this session (! quickfix)' })
  local sessions = require('transcript.sessions')
  cmd('Transcripts', function(a)
    sessions.pick(a.args)
  end, { nargs = '?', desc = 'Pick a session by title, first prompt or project (vim.ui.select)' })
  cmd('TranscriptLatest', function()
    sessions.latest()
  end, { desc = 'Open the newest session recorded in the current directory' })
  cmd('TranscriptNew', function()
    require('transcript.unseen').jump_new()
  end, { desc = 'Go to the first line of output not seen yet (the marker)' })
  cmd('TranscriptNewest', function()
    require('transcript.unseen').jump_newest()
  end, { desc = 'Go to the newest turn' })
  cmd('TranscriptRaw', function()
    sessions.toggle_raw()
  end, { desc = 'From a view, the raw JSONL; from the raw file, its view' })
end

--- Generates `doc/tags` of this plugin when it is missing or older than the manual, so
--- `:help transcript` works right after a plain install (a read-only install is left alone).
local function ensure_helptags()
  local src = debug.getinfo(1, 'S').source:sub(2)
  local doc = vim.fs.joinpath(vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(src))), 'doc')
  local manual = vim.uv.fs_stat(vim.fs.joinpath(doc, 'transcript.txt'))
  if not manual then
    return
  end
  local tags = vim.uv.fs_stat(vim.fs.joinpath(doc, 'tags'))
  if tags and tags.mtime.sec >= manual.mtime.sec then
    return
  end
  pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
end

--- The server command's program: `exe` itself when it is executable (on PATH or a path), else
--- for a bare name the first executable of `~/.cargo/bin/<exe>` (`cargo install`) and
--- `~/.local/bin/<exe>`, which a fresh account may not have on PATH yet; else `exe` unchanged.
---@param exe string
---@return string
function M.find_server(exe)
  if type(exe) ~= 'string' or vim.fn.executable(exe) == 1 or exe:find('/', 1, true) then
    return exe
  end
  local home = vim.uv.os_homedir() or vim.env.HOME or ''
  for _, dir in ipairs({ home .. '/.cargo/bin', home .. '/.local/bin' }) do
    local p = dir .. '/' .. exe
    if vim.fn.executable(p) == 1 then
      return p
    end
  end
  return exe
end

--- The server's work-done progress in flight, by token: `{ title, percentage?, message? }`.
local progress_items = {}

--- The server's progress in flight as one line (`Reading big.jsonl 34% 34 / 102 MB`), or '' when
--- none: a statusline component (`%{v:lua.require'transcript'.progress_status()}`).
---@return string
function M.progress_status()
  local parts = {}
  for _, p in pairs(progress_items) do
    local s = p.title or ''
    if p.percentage then
      s = s .. (' %d%%'):format(p.percentage)
    end
    if p.message and p.message ~= '' then
      s = s .. ' ' .. p.message
    end
    parts[#parts + 1] = s
  end
  table.sort(parts)
  return table.concat(parts, ', ')
end

--- `LspProgress` of the transcript client: kept for `progress_status()` and, with
--- `config.progress`, echoed in the message area (the end message stays there).
local function on_progress(ev)
  local client = vim.lsp.get_client_by_id(ev.data.client_id)
  if not client or client.name ~= M.name then
    return
  end
  local params = ev.data.params or {}
  local value = params.value
  if type(value) ~= 'table' then
    return
  end
  local token = tostring(params.token)
  local line
  if value.kind == 'end' then
    local title = (progress_items[token] and progress_items[token].title) or value.title or ''
    progress_items[token] = nil
    line = ('transcript-ls: %s: %s'):format(title, value.message or 'done')
  else
    local item = progress_items[token] or {}
    item.title = value.title or item.title
    item.percentage = value.percentage or item.percentage
    item.message = value.message or item.message
    progress_items[token] = item
    line = 'transcript-ls: ' .. M.progress_status()
  end
  if M.config.progress then
    -- One line, shorter than the screen: never a hit-enter prompt.
    line = line:sub(1, math.max(vim.o.columns - 12, 20))
    vim.api.nvim_echo({ { line } }, false, {})
    vim.cmd.redrawstatus()
  end
end

--- Sets the plugin up: highlight links, the LSP config (enabled), the view's `BufReadCmd`, the
--- user commands.
---@param opts table?
function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  M.config.settings = vim.deepcopy(opts.settings or {})
  for _, k in ipairs(M.server_keys) do
    if opts[k] ~= nil then
      M.config.settings[k] = opts[k]
    end
  end
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd }
  end
  M.config.cmd[1] = M.find_server(M.config.cmd[1])

  highlights.apply()
  local group = vim.api.nvim_create_augroup('transcript', { clear = true })
  vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = highlights.apply })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = on_progress })
  vim.api.nvim_create_autocmd('BufReadCmd', {
    group = group,
    pattern = 'transcript://*',
    callback = function(ev)
      view.read(ev.buf, ev.match)
    end,
  })

  create_commands()
  ensure_helptags()
  vim.lsp.config(M.name, M.lsp_config())
  vim.lsp.enable(M.name)
  M._did_setup = true
  -- A missing server binary would otherwise leave transcripts as plain JSONL, silently.
  local exe = M.config.cmd[1]
  if type(exe) == 'string' and vim.fn.executable(exe) == 0 then
    vim.schedule(function()
      vim.notify(
        ('transcript: server %q not found on PATH, in ~/.cargo/bin or ~/.local/bin (install it with `cargo install --path server` from the transcript-ls repository, or pass cmd); see :checkhealth transcript'):format(
          exe
        ),
        vim.log.levels.WARN
      )
    end)
  end
end

return M
