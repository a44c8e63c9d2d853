--- Content detection of agent transcripts (`.jsonl` written by Claude Code or Codex).
---
--- The rule mirrors the server's `formats::detect_line` (server/src/formats/mod.rs): a Claude
--- Code record has a `type` and the conversation envelope (`uuid`, `sessionId`, `message`) or is
--- one of the envelope-less Claude record types; a Codex record is
--- `{"timestamp","type","payload"}` with a Codex `type`, and legacy Codex files open with a bare
--- meta object (`instructions`) or carry `record_type`. Only the first non-blank lines are read.
local M = {}

local claude_types = {
  summary = true,
  ['file-history-snapshot'] = true,
  ['queue-operation'] = true,
  ['permission-mode'] = true,
  ['last-prompt'] = true,
  ['custom-title'] = true,
  ['ai-title'] = true,
  ['agent-name'] = true,
  ['pr-link'] = true,
  ['agent-setting'] = true,
  ['bridge-session'] = true,
  ['worktree-state'] = true,
  user = true,
  assistant = true,
  system = true,
  progress = true,
  attachment = true,
}

local codex_types = {
  session_meta = true,
  turn_context = true,
  response_item = true,
  event_msg = true,
  compacted = true,
}

--- Format of one decoded record: 'claude', 'codex' or nil.
---@param rec any
---@return string?
function M.record_format(rec)
  if type(rec) ~= 'table' then
    return nil
  end
  local ty = type(rec.type) == 'string' and rec.type or nil
  if rec.payload ~= nil and ty and codex_types[ty] then
    return 'codex'
  end
  if rec.instructions ~= nil or rec.record_type ~= nil then
    return 'codex'
  end
  if ty and (rec.uuid ~= nil or rec.sessionId ~= nil or rec.message ~= nil) then
    return 'claude'
  end
  if ty and claude_types[ty] then
    return 'claude'
  end
  return nil
end

--- Format of one line of text. A line too long or not valid JSON (a torn line of a file being
--- written, say) is probed by its leading bytes: a `"type"` key plus an envelope key.
---@param line string
---@return string?
function M.line_format(line)
  local ok, rec = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if ok then
    return M.record_format(rec)
  end
  local head = line:sub(1, 4096)
  if not head:find('^%s*{') or not head:find('"type"%s*:') then
    return nil
  end
  if head:find('"payload"%s*:') then
    return 'codex'
  end
  if head:find('"sessionId"%s*:') or head:find('"uuid"%s*:') or head:find('"message"%s*:') then
    return 'claude'
  end
  return nil
end

--- How many non-blank lines are looked at before giving up.
M.window = 8

--- True when `path` lies under one of `roots` (absolute, `~` expanded).
---@param path string
---@param roots string[]?
---@return boolean
function M.under_roots(path, roots)
  if path == '' then
    return false
  end
  for _, root in ipairs(roots or {}) do
    local r = vim.fs.normalize(vim.fn.expand(root))
    if r ~= '' and (path == r or vim.startswith(path, r:gsub('/$', '') .. '/')) then
      return true
    end
  end
  return false
end

--- Format of a buffer's content ('claude' | 'codex'), or nil when it is no transcript. An empty
--- `.jsonl` under one of `roots` counts as a transcript (a session that has just started).
---@param bufnr integer
---@param roots string[]?
---@return string?
function M.buffer_format(bufnr, roots)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local n = vim.api.nvim_buf_line_count(bufnr)
  local seen, i = 0, 0
  while i < n and seen < M.window do
    local line = vim.api.nvim_buf_get_lines(bufnr, i, i + 1, false)[1] or ''
    i = i + 1
    if line:find('%S') then
      seen = seen + 1
      local f = M.line_format(line)
      if f then
        return f
      end
    end
  end
  if seen == 0 then
    local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
    if name:match('%.jsonl$') and M.under_roots(name, roots) then
      return 'claude'
    end
  end
  return nil
end

return M
