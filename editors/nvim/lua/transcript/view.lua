--- The rendered view of a transcript: `transcript:///abs/path/session.jsonl[?verbose=1]` buffers.
---
--- Neovim 0.11 has no client side of LSP 3.18 `workspace/textDocumentContent`, so this module
--- does what it would: a `BufReadCmd` fetches the text (the standard request, or the server's
--- alias `transcript/virtualDocument` when the standard one is refused), fills a read-only
--- scratch buffer and attaches the client to it (didOpen carries the text, so folding, semantic
--- tokens, inlay hints and code lenses work on the view). When the server says the content
--- changed (`workspace/textDocumentContent/refresh` or `transcript/didChangeVirtualDocument`),
--- the text is fetched again and only the lines that differ are replaced, which the client sends
--- as one small incremental didChange.
local M = {}

local SCHEME = 'transcript'

--- The view URI of a transcript file.
---@param path string absolute path of the `.jsonl`
---@param verbose boolean? nil: no query (the server's `verbose` setting decides)
---@return string
function M.uri_for(path, verbose)
  local uri = SCHEME .. vim.uri_from_fname(path):sub(#'file' + 1)
  if verbose ~= nil then
    uri = uri .. (verbose and '?verbose=1' or '?verbose=0')
  end
  return uri
end

--- True for a `transcript:` URI or buffer name.
---@param name string
function M.is_view_name(name)
  return vim.startswith(name, SCHEME .. ':')
end

--- The source file path and the verbose flag of a view URI.
---@param uri string
---@return string path, boolean? verbose nil when the URI does not say
function M.parse(uri)
  local base, query = uri:match('^([^?#]*)%??([^#]*)')
  local verbose = nil
  -- A percent-encoded query (`?verbose%3D1`, as VS Code writes it) means the same.
  query = vim.uri_decode(query or '')
  for k, v in query:gmatch('([^&=]+)=?([^&]*)') do
    if k == 'verbose' then
      verbose = v == '1' or v == 'true' or v == ''
    end
  end
  local file_uri = 'file' .. base:sub(#SCHEME + 1)
  return vim.uri_to_fname(file_uri), verbose
end

--- Percent-decoded form of a URI, so `%2F`/`/` or `%3A`/`:` spellings compare equal.
local function norm(uri)
  return vim.uri_decode(uri)
end

--- View buffers whose name is `uri` (compared decoded).
---@param uri string
---@return integer[]
function M.buffers_for(uri)
  local want = norm(uri)
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.b[b].transcript_view and norm(vim.api.nvim_buf_get_name(b)) == want then
      out[#out + 1] = b
    end
  end
  return out
end

--- Fetches a view's text synchronously. Tries `workspace/textDocumentContent` first and falls
--- back, once per client, to `transcript/virtualDocument`.
---@param client vim.lsp.Client
---@param uri string
---@param bufnr integer?
---@return string? text, string? err
function M.fetch(client, uri, bufnr)
  local timeout = require('transcript').config.timeout_ms
  -- A big file takes longer to read and render: 1 ms more per 50 KB (the server shows its
  -- progress meanwhile).
  local path = M.parse(uri)
  local size = vim.fn.getfsize(path)
  if size > 0 then
    timeout = timeout + math.floor(size / 50000)
  end
  local methods = { 'workspace/textDocumentContent', 'transcript/virtualDocument' }
  if client._transcript_alias_only then
    methods = { 'transcript/virtualDocument' }
  end
  local last_err
  for i, method in ipairs(methods) do
    local resp, err = client:request_sync(method, { uri = uri }, timeout, bufnr)
    if resp and resp.result and type(resp.result.text) == 'string' then
      return resp.result.text
    end
    last_err = err or (resp and resp.err and (resp.err.message or vim.inspect(resp.err))) or 'no text in the reply'
    -- MethodNotFound / not registered: remember to use the alias for this client.
    if i == 1 and resp and resp.err and resp.err.code == -32601 then
      client._transcript_alias_only = true
    end
  end
  return nil, last_err
end

--- Lines of a text, without the empty last element a trailing newline gives.
local function split(text)
  local lines = vim.split(text, '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- Replaces the lines that differ between the buffer and `lines` (common prefix and suffix
--- kept), leaving the buffer read-only and unmodified.
---@param bufnr integer
---@param lines string[]
function M.set_lines(bufnr, lines)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local n_old, n_new = #old, #lines
  local pre = 0
  while pre < n_old and pre < n_new and old[pre + 1] == lines[pre + 1] do
    pre = pre + 1
  end
  local suf = 0
  while suf < n_old - pre and suf < n_new - pre and old[n_old - suf] == lines[n_new - suf] do
    suf = suf + 1
  end
  if pre == n_old and pre == n_new then
    return
  end
  local bo = vim.bo[bufnr]
  bo.modifiable = true
  bo.readonly = false
  vim.api.nvim_buf_set_lines(bufnr, pre, n_old - suf, false, vim.list_slice(lines, pre + 1, n_new - suf))
  bo.modifiable = false
  bo.readonly = true
  bo.modified = false
end

--- Fills view buffer `bufnr` named `uri` and attaches `client` to it. Called by the
--- `BufReadCmd` autocmd (and again by `:edit` on the buffer).
---@param bufnr integer
---@param uri string
function M.read(bufnr, uri)
  local T = require('transcript')
  local path = M.parse(uri)
  local client, err = T.ensure_client(bufnr, vim.fs.dirname(path))
  local text
  if client then
    text, err = M.fetch(client, uri, bufnr)
  end
  local bo = vim.bo[bufnr]
  bo.buftype = 'nofile'
  bo.swapfile = false
  bo.bufhidden = 'hide'
  vim.b[bufnr].transcript_view = true
  if not text then
    M.set_lines(bufnr, { 'transcript: cannot show ' .. uri, tostring(err) })
    bo.filetype = 'transcript'
    vim.notify('transcript: view of ' .. path .. ' failed: ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  M.set_lines(bufnr, split(text))
  bo.filetype = 'transcript'
  M.markdown(bufnr)
  if client and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

--- Highlights the markdown of view buffer `bufnr` with Neovim's own markdown treesitter parser
--- (issue 23 item 6): the answers' emphasis, code spans, lists and fenced code in its language
--- (an injection, where the language's parser is installed), the headings and quoted prompts.
--- The final-answer semantic token paints nothing in views (`@lsp.type.finalAnswer.transcript`,
--- highlights.lua), so the markdown colours show through. Off with `markdown = false`; nothing
--- happens where the markdown parser is missing.
---@param bufnr integer
function M.markdown(bufnr)
  if require('transcript').config.markdown == false or vim.b[bufnr].transcript_markdown then
    return
  end
  -- (the filetype `transcript` reads as markdown, so `vim.treesitter.get_parser(buf)` works)
  pcall(vim.treesitter.language.register, 'markdown', 'transcript')
  if pcall(vim.treesitter.start, bufnr, 'markdown') then
    vim.b[bufnr].transcript_markdown = true
  end
end

--- Re-fetches the views named `uri` (all of them when `uri` is nil) after the server said their
--- content changed.
---@param client vim.lsp.Client
---@param uri string?
function M.refresh(client, uri)
  local targets = {}
  if uri then
    targets = M.buffers_for(uri)
  else
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.b[b].transcript_view then
        targets[#targets + 1] = b
      end
    end
  end
  for _, b in ipairs(targets) do
    local name = vim.api.nvim_buf_get_name(b)
    local text = M.fetch(client, name, b)
    if text then
      M.set_lines(b, split(text))
    end
  end
end

--- Opens the view of the transcript shown in buffer `bufnr` (or toggles a view between the
--- quiet form and the configured shape: a verbose view goes to the quiet one, the quiet one to
--- the `view_mode`'s shape).
---@param bufnr integer
---@param verbose boolean? nil: the server's default (the `verbose` setting)
function M.open(bufnr, verbose)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local path
  if M.is_view_name(name) then
    local p, was_verbose = M.parse(name)
    path = p
    if verbose == nil then
      local T = require('transcript')
      if was_verbose == nil then
        was_verbose = T.default_verbose()
      end
      if was_verbose then
        verbose = false
      elseif T.default_verbose() then
        verbose = nil -- the plain URI: the configured shape (reading: 'foldlevel' 2)
      else
        verbose = true
      end
    end
  else
    path = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  end
  if path == '' then
    vim.notify('transcript: this buffer has no file', vim.log.levels.WARN)
    return
  end
  vim.cmd.edit(vim.fn.fnameescape(M.uri_for(path, verbose)))
end

return M
