-- The shared detection table (fixtures/detection-cases.json) run against the plugin's own
-- detector (lua/transcript/detect.lua): the same first lines must give the same format as on the
-- server (server/tests/it/detection.rs runs the same table). Run from the repository root:
--   nvim --headless --clean -l editors/nvim/tests/detect_spec.lua
-- Prints one line per case and exits 1 when any case disagrees.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h:h:h')
vim.opt.rtp:prepend(root .. '/editors/nvim')
local detect = require('transcript.detect')

local f = assert(io.open(root .. '/fixtures/detection-cases.json', 'r'))
local table_ = vim.json.decode(f:read('*a'))
f:close()

local failed = 0
for _, case in ipairs(table_.cases) do
  local got = detect.lines_format(case.lines) or 'unknown'
  if got == case.format then
    print(('ok    %s -> %s'):format(case.name, got))
  else
    failed = failed + 1
    print(('FAIL  %s: expected %s, got %s'):format(case.name, case.format, got))
  end
end
-- Copilot's file name is `events.jsonl`: the name never decides, the content does.
local buf = vim.api.nvim_create_buf(true, false)
vim.api.nvim_buf_set_name(buf, '/tmp/session-state/7d1c/events.jsonl')
vim.api.nvim_buf_set_lines(buf, 0, -1, false, table_.cases[13].lines)
local named = detect.buffer_format(buf, {})
if named ~= 'copilot-cli' then
  failed = failed + 1
  print(('FAIL  events.jsonl buffer: expected copilot-cli, got %s'):format(tostring(named)))
else
  print('ok    events.jsonl buffer -> copilot-cli')
end
-- A first line still being written (not JSON yet): Kiro CLI and Mistral Vibe lines have no
-- `type`, their first keys tell (client-side leniency; the server decides once it is complete).
local torn = {
  { '{"version":"v1","kind":"Prompt","data":{"message_id":"m1","cont', 'kiro-cli' },
  { '{"role": "user", "content": "Reply with exactly the wo', 'mistral-vibe' },
  { '{"role": "user", "type": "message", "content": "x', 'nil' },
}
for _, c in ipairs(torn) do
  local got = tostring(detect.torn_line_format(c[1]))
  if got == c[2] then
    print(('ok    torn %s -> %s'):format(c[2], got))
  else
    failed = failed + 1
    print(('FAIL  torn line %s: expected %s, got %s'):format(c[1], c[2], got))
  end
end
print(('%d cases, %d failed'):format(#table_.cases + 1 + #torn, failed))
os.exit(failed == 0 and 0 or 1)
