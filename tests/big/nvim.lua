-- One Neovim session of tests/big/figures.sh: opens a big transcript with the plugin
-- (editors/nvim) and the release server and prints what a user waits for, in ms:
-- open -> text shown, open -> outline (first documentSymbol answered), then the median of 5 of
-- each request Neovim sends while reading (documentSymbol, foldingRange, next turn, hover,
-- inlay hints and semantic tokens of one screen, full semantic tokens, the inlay hints of the
-- whole buffer as Neovim asks for them after every change, code lenses), and the server's RSS
-- and peak RSS (also the peak after each request's five runs: which one raised it).
--
-- Environment: BIG_FILE (the transcript), BIG_MODE ('view': the `transcript:` view read from
-- disk; 'raw': the JSONL itself, synced with didOpen), TRANSCRIPT_LS (server binary).
local FILE = assert(os.getenv('BIG_FILE'), 'BIG_FILE')
local MODE = os.getenv('BIG_MODE') or 'view'
local SERVER = assert(os.getenv('TRANSCRIPT_LS'), 'TRANSCRIPT_LS')
local T = require('transcript')

local function out(...)
  io.stdout:write(table.concat(vim.tbl_map(tostring, { ... }), ' ') .. '\n')
  io.stdout:flush()
end

local function now()
  return vim.uv.hrtime() / 1e6
end

local function fail(msg)
  out('FAIL ' .. MODE .. ': ' .. msg)
  vim.cmd('cquit 1')
end

-- No session index of the user's own transcripts: only this file is measured.
-- progress = false: the echo would mix with these figures (the autocmd below records it).
T.setup({ cmd = { SERVER }, open = MODE, roots = {}, workspaceFolders = false, indexCache = false, timeout_ms = 60000, progress = false })

--- The server's pid: the child of this Neovim running the server binary.
local function server_pid()
  local me = vim.fn.getpid()
  for _, dir in ipairs(vim.fn.glob('/proc/[0-9]*', false, true)) do
    local f = io.open(dir .. '/stat')
    if f then
      local stat = f:read('*l') or ''
      f:close()
      local comm, ppid = stat:match('^%d+ %((.-)%) %S+ (%d+)')
      if tonumber(ppid) == me and comm and comm:find('transcript') then
        return tonumber(dir:match('%d+$'))
      end
    end
  end
end

--- VmRSS and VmHWM of `pid` in MB.
local function rss(pid)
  local f = pid and io.open('/proc/' .. pid .. '/status')
  if not f then
    return '?', '?'
  end
  local s = f:read('*a')
  f:close()
  local cur = tonumber(s:match('VmRSS:%s+(%d+)')) or 0
  local peak = tonumber(s:match('VmHWM:%s+(%d+)')) or 0
  return math.floor(cur / 1024), math.floor(peak / 1024)
end

local size_mb = math.floor(vim.fn.getfsize(FILE) / 1e6)
local progress = {}
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    local v = ev.data.params.value
    if v.kind == 'begin' then
      progress[#progress + 1] = v.title
    end
  end,
})

local t0 = now()
if MODE == 'view' then
  vim.cmd.edit(vim.fn.fnameescape(require('transcript.view').uri_for(FILE, false)))
else
  vim.cmd.edit(vim.fn.fnameescape(FILE))
end
local buf = vim.api.nvim_get_current_buf()
local t_shown = now() - t0
local client
local attached = vim.wait(600000, function()
  client = T.get_client(buf)
  return client ~= nil and client.initialized and vim.lsp.buf_is_attached(buf, client.id)
end, 10)
if not attached then
  return fail('no client attached')
end
local uri = vim.uri_from_bufnr(buf)
local td = { textDocument = { uri = uri } }

local function req(method, params)
  local t = now()
  local resp, err = client:request_sync(method, params, 600000, buf)
  local ms = now() - t
  if not resp or resp.err then
    fail(method .. ': ' .. vim.inspect(err or resp.err))
  end
  return resp.result, ms
end

local symbols = req('textDocument/documentSymbol', td)
local t_outline = now() - t0
local pid = server_pid()
local rss_open, hwm_open = rss(pid)

local lines = vim.api.nvim_buf_line_count(buf)
local turn_line = 0
if symbols and #symbols > 2 then
  turn_line = symbols[math.floor(#symbols / 2)].selectionRange.start.line
end
local mid = math.floor(lines / 2)
local screen = { start = { line = mid, character = 0 }, ['end'] = { line = mid + 50, character = 0 } }

-- The server's peak RSS (MB) after each request's five runs, in order: which request raised it.
local peaks = {}

local function median(method, params)
  local times = {}
  for _ = 1, 5 do
    local _, ms = req(method, params)
    times[#times + 1] = ms
  end
  table.sort(times)
  local _, hwm_after = rss(pid)
  peaks[#peaks + 1] = hwm_after
  return times[3]
end

local figures = {
  { 'documentSymbol', median('textDocument/documentSymbol', td) },
  { 'foldingRange', median('textDocument/foldingRange', td) },
  {
    'next turn (transcript.nextTurn)',
    median('workspace/executeCommand', { command = 'transcript.nextTurn', arguments = { { uri = uri, line = mid } } }),
  },
  { 'hover (turn heading)', median('textDocument/hover', { textDocument = { uri = uri }, position = { line = turn_line, character = 2 } }) },
  { 'inlayHint (50 lines)', median('textDocument/inlayHint', { textDocument = { uri = uri }, range = screen }) },
  { 'semanticTokens/range (50 lines)', median('textDocument/semanticTokens/range', { textDocument = { uri = uri }, range = screen }) },
  { 'semanticTokens/full', median('textDocument/semanticTokens/full', td) },
  -- What Neovim itself asks after every change (vim.lsp.inlay_hint: the whole buffer).
  {
    'inlayHint (whole buffer)',
    median('textDocument/inlayHint', { textDocument = { uri = uri }, range = { start = { line = 0, character = 0 }, ['end'] = { line = lines, character = 0 } } }),
  },
  { 'codeLens', median('textDocument/codeLens', td) },
}
local rss_now, hwm = rss(pid)

out(('%s of %d MB (%d lines in the buffer, %d outline entries); progress shown: %s'):format(
  MODE, size_mb, lines, symbols and #symbols or 0, #progress > 0 and table.concat(progress, ', ') or 'none'))
out(('  open -> text shown            %8.0f ms'):format(t_shown))
out(('  open -> outline               %8.0f ms'):format(t_outline))
for _, f in ipairs(figures) do
  out(('  %-30s%8.1f ms (median of 5)%s'):format(f[1], f[2], f[2] <= 50 and '' or '  > 50 ms'))
end
local rows = {}
for i, f in ipairs(figures) do
  rows[#rows + 1] = ('%s %s'):format(f[1]:match('^%S+'), peaks[i])
end
out('  server peak RSS (MB) after each: ' .. table.concat(rows, ', '))
out(('  server RSS after open         %8s MB (%.2fx size), peak %s MB (%.2fx)'):format(
  rss_open, (tonumber(rss_open) or 0) / math.max(size_mb, 1), hwm_open, (tonumber(hwm_open) or 0) / math.max(size_mb, 1)))
out(('  server RSS after requests     %8s MB, peak %s MB (%.2fx size)'):format(
  rss_now, hwm, (tonumber(hwm) or 0) / math.max(size_mb, 1)))
for _, c in ipairs(vim.lsp.get_clients()) do
  c:stop()
end
vim.wait(3000, function()
  return #vim.lsp.get_clients() == 0
end, 20)
vim.cmd('qa!')
