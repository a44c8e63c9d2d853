--- `:checkhealth transcript`: Neovim version, the server binary and its version, whether the
--- plugin is set up and a client serves the current buffer.
local M = {}

local function features(client)
  local caps = client.server_capabilities or {}
  local feats = {}
  for _, f in ipairs({
    'foldingRangeProvider',
    'documentSymbolProvider',
    'semanticTokensProvider',
    'inlayHintProvider',
    'codeLensProvider',
    'hoverProvider',
    'definitionProvider',
    'executeCommandProvider',
  }) do
    if caps[f] then
      feats[#feats + 1] = (f:gsub('Provider$', ''))
    end
  end
  return table.concat(feats, ', ')
end

function M.check()
  local h = vim.health
  local T = require('transcript')

  h.start('Neovim')
  local v = vim.version()
  local vs = tostring(v)
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. vs .. ' (0.11 or newer: vim.lsp.config, LSP folding, inlay hints)')
  else
    h.error('Neovim ' .. vs .. ' is too old', { 'transcript.nvim needs Neovim 0.11 or newer' })
  end

  h.start('Setup')
  if T._did_setup then
    h.ok("require('transcript').setup() was called")
  else
    h.warn("require('transcript').setup() was not called", { "Add require('transcript').setup({}) to your config" })
  end
  if vim.lsp.is_enabled and vim.lsp.is_enabled(T.name) then
    h.ok('LSP config `' .. T.name .. '` is enabled')
  elseif T._did_setup then
    h.warn('LSP config `' .. T.name .. '` is not enabled')
  end

  h.start('Server')
  local cmd = T.config.cmd or {}
  local exe = cmd[1] and vim.fn.exepath(cmd[1]) or ''
  if exe == '' then
    h.error('server binary not found: ' .. tostring(cmd[1]), {
      'Install it: cargo install --path server (from the transcript-ls repository; -> ~/.cargo/bin), or copy target/release/transcript-ls to ~/.local/bin',
      "or set the path: require('transcript').setup({ cmd = { '/path/to/transcript-ls' } })",
    })
  else
    h.ok('binary: ' .. exe)
    local ok, res = pcall(function()
      return vim.system({ exe, '--version' }, { text = true }):wait(5000)
    end)
    if ok and res and res.code == 0 then
      h.ok('version: ' .. vim.trim(res.stdout or ''))
    else
      h.error('`' .. exe .. ' --version` failed', { ok and vim.trim((res and res.stderr) or '') or tostring(res) })
    end
  end

  h.start('Transcript buffers')
  local shown = 0
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    local is_view = vim.b[bufnr].transcript_view == true
    local is_raw = not is_view and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype == 'jsonl'
    if (is_view or is_raw) and shown < 20 then
      shown = shown + 1
      local client = T.get_client(bufnr)
      local what = is_view and 'view' or (T.is_transcript(bufnr) and 'transcript' or 'jsonl, not a transcript')
      if client then
        h.ok(string.format('%s (%s): client %d attached, position encoding %s; server offers: %s', name, what,
          client.id, client.offset_encoding, features(client)))
      elseif is_raw and what ~= 'transcript' then
        h.info(name .. ' (' .. what .. ')')
      else
        h.warn(name .. ' (' .. what .. '): no transcript-ls client attached', { 'See :LspLog and :checkhealth vim.lsp' })
      end
    end
  end
  if shown == 0 then
    h.info('no transcript buffer is open')
  end
end

return M
