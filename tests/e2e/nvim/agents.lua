-- The four agents added by the agent registry (issue 21), each opened from its default root:
-- run by tests/e2e/nvim/run.sh in a Neovim of its own whose HOME is a scratch folder holding one
-- real recorded session of Gemini CLI, Antigravity CLI, Kiro CLI and Mistral Vibe where each
-- agent writes it (~/.gemini/tmp, ~/.gemini/antigravity-cli/brain, ~/.kiro/sessions/cli,
-- ~/.vibe/logs/session). No `roots` setting: the plugin's and the server's defaults find them.
-- :Transcripts lists the four, each pick opens its view (heading, `## Turn 1`, the prompt, the
-- answer) and the view's outline names the turn.
--
--   HOME=$E2E_TMP/home nvim --headless --clean -n --cmd 'set rtp^=editors/nvim' \
--     -c 'luafile tests/e2e/nvim/agents.lua'
local ROOT = assert(os.getenv('E2E_ROOT'), 'E2E_ROOT')
local SERVER = assert(os.getenv('TRANSCRIPT_LS'), 'TRANSCRIPT_LS')
local HOME = assert(os.getenv('HOME'), 'HOME')
local H = dofile(ROOT .. '/tests/e2e/nvim/harness.lua')
local IRRLICHT = ROOT .. '/../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents'

--- The recording of scenario 2-2 (one shell call, then `done`) of `agent` in the corpus.
local function recording(agent)
  local dir = IRRLICHT .. '/' .. agent .. '/scenarios/2-2_auto-executed-tool-call/recordings'
  local found = vim.fn.glob(dir .. '/*/transcript.jsonl', false, true)
  assert(#found == 1, agent .. ': one recording expected in ' .. dir)
  return found[1]
end

local sessions = {
  {
    agent = 'Gemini CLI',
    from = recording('gemini-cli'),
    to = HOME .. '/.gemini/tmp/4f2a9c1e/chats/session-2026-06-11T21-05-be8dae6d.jsonl',
    prompt = "Run the shell command 'echo hello' using the run_shell_command tool",
  },
  {
    agent = 'Antigravity CLI',
    from = recording('antigravity'),
    to = HOME .. '/.gemini/antigravity-cli/brain/7e1ff85c-2de4-47c2-a48f-2a029dcfeae4/.system_generated/logs/transcript.jsonl',
    prompt = 'Run the shell command `echo hello` using your run_command tool',
  },
  {
    agent = 'Kiro CLI',
    from = recording('kiro-cli'),
    to = HOME .. '/.kiro/sessions/cli/0b6f3f5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b.jsonl',
    prompt = "Run the shell command 'echo hello' using your shell tool",
  },
  {
    agent = 'Mistral Vibe',
    from = recording('mistral-vibe'),
    to = HOME .. '/.vibe/logs/session/session_20260707_163450_0682560a/messages.jsonl',
    prompt = "Run bash 'echo hello' using the bash tool",
  },
}
for _, s in ipairs(sessions) do
  vim.fn.mkdir(vim.fn.fnamemodify(s.to, ':h'), 'p')
  vim.fn.writefile(vim.fn.readfile(s.from, 'b'), s.to, 'b')
  -- Recorded an hour ago: finished by the file-age rule (Gemini CLI writes no finish record,
  -- so a file written a moment ago reads as still being written).
  local an_hour_ago = os.time() - 3600
  vim.uv.fs_utime(s.to, an_hour_ago, an_hour_ago)
end

local T = require('transcript')
T.setup({ cmd = { SERVER }, timeZone = 'UTC', workspaceFolders = false, indexCache = false, view_mode = 'quiet' })
local detect = require('transcript.detect')
H.check('agents: the default roots are under this HOME', vim.iter(detect.default_roots):all(function(r)
  return vim.startswith(vim.fn.expand(r), HOME .. '/')
end), detect.default_roots)

local real_select = vim.ui.select
local shown
--- vim.ui.select stubbed: records the rows and picks the first that contains `pick`.
local function stub(pick)
  vim.ui.select = function(items, opts, on_choice)
    shown = vim.tbl_map(opts.format_item, items)
    for i, line in ipairs(shown) do
      if line:find(pick, 1, true) then
        return on_choice(items[i], i)
      end
    end
    on_choice(nil, nil)
  end
end

local view = require('transcript.view')
for i, s in ipairs(sessions) do
  vim.cmd(i == 1 and 'enew' or 'tabnew')
  shown = nil
  stub(s.prompt)
  vim.cmd('Transcripts')
  local want = vim.fn.fnamemodify(s.to, ':t')
  H.wait(('agents: %s: :Transcripts opens its view'):format(s.agent), 30000, function()
    local name = vim.api.nvim_buf_get_name(0)
    return view.is_view_name(name) and vim.endswith(name, want) and vim.api.nvim_buf_line_count(0) > 3
  end)
  H.eq(('agents: %s: the picker lists the four sessions'):format(s.agent), shown and #shown, 4)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local text = table.concat(lines, '\n')
  H.check(('agents: %s: the view opens with the session heading'):format(s.agent),
    vim.startswith(lines[1] or '', '# ' .. s.prompt:sub(1, 20)), lines[1])
  H.check(('agents: %s: the header names the agent'):format(s.agent), text:find(s.agent, 1, true) ~= nil, lines[2])
  H.check(('agents: %s: turn 1 with its prompt and answer'):format(s.agent),
    text:find('## Turn 1', 1, true) ~= nil and text:find('> ' .. s.prompt, 1, true) ~= nil and text:find('**Answer**\ndone', 1, true) ~= nil,
    lines)
  local buf = vim.api.nvim_get_current_buf()
  local client = T.get_client(buf)
  local symbols = client and H.symbols(buf, client) or {}
  H.eq(('agents: %s: the outline has turn 1'):format(s.agent), symbols[1] and symbols[1].name:match('^Turn 1') ~= nil, true)
end
vim.ui.select = real_select
H.finish()
