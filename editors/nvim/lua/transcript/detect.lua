--- Content detection of agent transcripts (`.jsonl` written by Claude Code, Codex, Pi, GitHub
--- Copilot CLI (whose file is `events.jsonl`), Kiro CLI, Mistral Vibe (`messages.jsonl`) or
--- Gemini CLI, Antigravity CLI (`transcript.jsonl`)).
---
--- The rule mirrors the server's `formats::detect_line` (server/src/formats/mod.rs): a Claude
--- Code record has a `type` and the conversation envelope (`uuid`, `sessionId`, `message`) or is
--- one of the envelope-less Claude record types; a Codex record is
--- `{"timestamp","type","payload"}` with a Codex `type`, and legacy Codex files open with a bare
--- meta object (`instructions`) or carry `record_type`; a Pi file opens with a `session` header or
--- tree entries (`id`, `parentId`); a Copilot CLI event has a dotted `type` and `data`; a Gemini
--- CLI file has a header `{sessionId, projectHash}` without `type`, `$set` / `$rewindTo`
--- envelopes and `gemini` messages; an Antigravity CLI step has `step_index`, `source` and a
--- `type`. Only the
--- first non-blank lines are read. The cases both detectors must agree on are one table,
--- `fixtures/detection-cases.json`, run by the server's tests and by `tests/detect_spec.lua`.
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
}

local codex_types = {
  session_meta = true,
  turn_context = true,
  response_item = true,
  event_msg = true,
  compacted = true,
}

local codex_bare_items = {
  reasoning = true,
  function_call = true,
  function_call_output = true,
  custom_tool_call = true,
  custom_tool_call_output = true,
  local_shell_call = true,
  web_search_call = true,
}

local pi_entry_types = {
  model_change = true,
  thinking_level_change = true,
  compaction = true,
  branch_summary = true,
  custom = true,
  custom_message = true,
  label = true,
  session_info = true,
  context_edit = true,
}

local kiro_kinds = {
  Prompt = true,
  AssistantMessage = true,
  ToolResults = true,
  Clear = true,
}

local vibe_roles = {
  user = true,
  assistant = true,
  tool = true,
  system = true,
}

local copilot_prefixes = {
  'session.',
  'user.',
  'assistant.',
  'tool.',
  'subagent.',
  'hook.',
  'system.',
  'skill.',
  'permission.',
}

--- True for Copilot CLI's dotted event types (`session.start`, …) and its `abort`.
---@param ty string?
---@return boolean
function M.is_copilot_type(ty)
  if ty == nil then
    return false
  end
  if ty == 'abort' then
    return true
  end
  for _, p in ipairs(copilot_prefixes) do
    if vim.startswith(ty, p) and #ty > #p then
      return true
    end
  end
  return false
end

--- Format of one decoded record: 'claude-code', 'codex', 'pi', 'copilot-cli', 'gemini-cli',
--- 'kiro-cli', 'mistral-vibe', 'antigravity' or nil. Mirrors
--- `formats::detect_line` rule for rule: a key that is merely present (even `null`) counts for
--- `instructions`, `record_type`, `git`, `timestamp`, `role`, `parentId`, `id`, `version`,
--- `cwd`; a `null` does not count for `payload`, `message`, `uuid`, `sessionId`, `data`.
---@param rec any
---@return string?
function M.record_format(rec)
  if type(rec) ~= 'table' then
    return nil
  end
  local function val(k)
    local v = rec[k]
    if v == vim.NIL then
      return nil
    end
    return v
  end
  local function present(k)
    return rec[k] ~= nil
  end
  local ty = val('type')
  if ty ~= nil and type(ty) ~= 'string' then
    return nil
  end
  if val('payload') ~= nil and ty and codex_types[ty] then
    return 'codex'
  end
  local envelope = val('uuid') ~= nil or val('sessionId') ~= nil
  if not envelope and val('payload') == nil then
    if val('data') ~= nil and M.is_copilot_type(ty) then
      return 'copilot-cli'
    end
    -- Pi's first format (late 2025) has no `version` in its header (issue 20 item 4).
    if ty == 'session' and present('id') and present('cwd') and (present('version') or present('timestamp')) then
      return 'pi'
    end
    local pi_entry = (ty == 'message' and val('message') ~= nil and not present('role'))
      or (ty ~= nil and pi_entry_types[ty] == true)
    if pi_entry and present('parentId') and present('id') then
      return 'pi'
    end
  end
  -- Gemini CLI (server: `gemini::detect`).
  if ty == nil and val('sessionId') ~= nil and present('projectHash') then
    return 'gemini-cli'
  end
  if ty == nil and val('uuid') == nil and (present('$set') or present('$rewindTo')) then
    return 'gemini-cli'
  end
  if ty == 'gemini' and present('id') and present('content') and val('message') == nil then
    return 'gemini-cli'
  end
  -- Antigravity CLI (server `formats::antigravity::detect`): a step of its transcript.
  if not envelope and val('payload') == nil and present('step_index') and present('source') and ty then
    return 'antigravity'
  end
  -- Kiro CLI: a `{version, kind, data}` envelope with no `type` (server: `kiro::detect`).
  if not present('type') and present('version') and val('data') ~= nil and kiro_kinds[val('kind')] == true then
    return 'kiro-cli'
  end
  -- Mistral Vibe: a chat message with `injected` and no `type` (server: `vibe::detect`).
  if not present('type') and present('injected') and vibe_roles[val('role')] == true then
    return 'mistral-vibe'
  end
  if not envelope then
    if present('instructions') or present('record_type') then
      return 'codex'
    end
    if val('payload') ~= nil and present('timestamp') and ty then
      return 'codex'
    end
    if ty == nil and present('git') and present('timestamp') then
      return 'codex'
    end
    if (ty == 'message' and present('role')) or (ty ~= nil and codex_bare_items[ty]) then
      return 'codex'
    end
  end
  if envelope and ty then
    return 'claude-code'
  end
  if ty and claude_types[ty] then
    return 'claude-code'
  end
  if (ty == 'user' or ty == 'assistant') and val('message') ~= nil then
    return 'claude-code'
  end
  return nil
end

--- Format of one line of text. A line that is not valid JSON is no evidence (as on the
--- server), except as a last resort in `buffer_format` (see there).
---@param line string
---@return string?
function M.line_format(line)
  local ok, rec = pcall(vim.json.decode, line)
  if ok then
    return M.record_format(rec)
  end
  return nil
end

--- The format a torn line (not valid JSON: the first line of a file still being written) most
--- likely starts, from its leading bytes; nil when they do not tell. Client-side leniency only:
--- the server decides once the line is complete.
---@param line string
---@return string?
function M.torn_line_format(line)
  local head = line:sub(1, 4096)
  if not head:find('^%s*{') then
    return nil
  end
  -- Gemini CLI: an envelope, or its header (`sessionId` first, `projectHash`, no `type`).
  if head:find('^%s*{%s*"%$set"%s*:') or head:find('^%s*{%s*"%$rewindTo"%s*:') then
    return 'gemini-cli'
  end
  if head:find('^%s*{%s*"sessionId"%s*:') and head:find('"projectHash"%s*:') and not head:find('"type"%s*:') then
    return 'gemini-cli'
  end
  -- Kiro CLI and Mistral Vibe lines have no `type`: their first keys tell.
  if head:find('^%s*{%s*"version"%s*:%s*"[^"]*"%s*,%s*"kind"%s*:%s*"[A-Z]') then
    return 'kiro-cli'
  end
  if head:find('^%s*{%s*"role"%s*:%s*"[a-z]+"%s*,') and not head:find('"type"%s*:') then
    return 'mistral-vibe'
  end
  if not head:find('"type"%s*:') then
    return nil
  end
  if head:find('"step_index"%s*:') and head:find('"source"%s*:') then
    return 'antigravity'
  end
  if head:find('"payload"%s*:') then
    return 'codex'
  end
  if head:find('"data"%s*:') and head:find('"type"%s*:%s*"[a-z]+%.') then
    return 'copilot-cli'
  end
  if head:find('"parentId"%s*:') or head:find('"type"%s*:%s*"session"') then
    return 'pi'
  end
  if head:find('"sessionId"%s*:') or head:find('"uuid"%s*:') or head:find('"message"%s*:') then
    return 'claude-code'
  end
  return nil
end

--- The agents' default session folders, as the server's agent registry has them
--- (server/src/formats/agents.rs; `server/tests/it/agents.rs` checks this table against it): `home`
--- under `~`, or `under_env` under `$env` when that variable is set and not empty.
M.agent_roots = {
  { home = '~/.claude/projects', env = 'CLAUDE_CONFIG_DIR', under_env = 'projects' },
  { home = '~/.codex/sessions', env = 'CODEX_HOME', under_env = 'sessions' },
  { home = '~/.pi/agent/sessions', env = 'PI_CODING_AGENT_DIR', under_env = 'sessions' },
  { home = '~/.copilot/session-state', env = 'COPILOT_HOME', under_env = 'session-state' },
  { home = '~/.kiro/sessions/cli', env = 'KIRO_HOME', under_env = 'sessions/cli' },
  { home = '~/.vibe/logs/session', env = 'VIBE_HOME', under_env = 'logs/session' },
  { home = '~/.gemini/tmp', env = 'GEMINI_CLI_HOME', under_env = '.gemini/tmp' },
  { home = '~/.gemini/antigravity-cli/brain', env = 'GEMINI_CLI_HOME', under_env = '.gemini/antigravity-cli/brain' },
  { home = '~/.gemini/antigravity/brain', env = 'GEMINI_CLI_HOME', under_env = '.gemini/antigravity/brain' },
}

--- The default roots now (the server's default `roots`): each agent's folder, moved by its
--- variable when set.
---@return string[]
function M.resolve_default_roots()
  local out = {}
  for _, r in ipairs(M.agent_roots) do
    local v = vim.env[r.env]
    if v ~= nil and v ~= '' then
      table.insert(out, (v:gsub('/$', '')) .. '/' .. r.under_env)
    else
      table.insert(out, r.home)
    end
  end
  return out
end

--- Default folders of the agents' sessions (the server's default `roots`), resolved when the
--- plugin loads.
M.default_roots = M.resolve_default_roots()

--- How many non-blank lines are looked at before giving up (the server's `DETECT_WINDOW`).
M.window = 64

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

--- Format of the first lines of a file, as the server decides it: the first of the first
--- `M.window` non-blank lines that tells. Returns the format (or nil), the number of non-blank
--- lines seen, and the format a torn line suggests (see `torn_line_format`) when every line
--- seen was torn.
---@param lines string[]
---@return string?, integer, string?
function M.lines_format(lines)
  local seen, torn, all_torn = 0, nil, true
  for _, line in ipairs(lines) do
    if seen >= M.window then
      break
    end
    if line:find('%S') then
      seen = seen + 1
      local ok, rec = pcall(vim.json.decode, line)
      if ok then
        all_torn = false
        local f = M.record_format(rec)
        if f then
          return f, seen, nil
        end
      elseif torn == nil then
        torn = M.torn_line_format(line)
      end
    end
  end
  return nil, seen, all_torn and torn or nil
end

--- Format of a buffer's content ('claude-code' | 'codex' | 'pi' | 'copilot-cli' | 'gemini-cli' |
--- 'kiro-cli' | 'mistral-vibe'), or nil when it is no transcript. An empty `.jsonl` under one of
--- `roots` counts as a transcript (a session that has just started), and so does a file whose only
--- lines are torn (still being written) when their leading bytes tell.
---@param bufnr integer
---@param roots string[]?
---@return string?
function M.buffer_format(bufnr, roots)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, math.min(vim.api.nvim_buf_line_count(bufnr), 4 * M.window), false)
  local f, seen, torn = M.lines_format(lines)
  if f then
    return f
  end
  if torn then
    return torn
  end
  if seen == 0 then
    local name = vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr))
    if name:match('%.jsonl$') and M.under_roots(name, roots) then
      return 'claude-code'
    end
  end
  return nil
end

return M
