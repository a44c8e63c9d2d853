--- Highlight groups for the server's custom semantic token types and modifiers
--- (server/PROTOCOL.md, "Semantic tokens"). Each `@lsp.type.<type>` / `@lsp.mod.<modifier>` is
--- linked to a `Transcript*` group, and those link to groups every colour scheme defines, so
--- the tokens are visible out of the box and a user can restyle one group by name. All links are
--- `default = true`: a colour scheme or the user's config wins.
local M = {}

--- Token type -> { our group, the builtin group it links to }.
M.types = {
  prompt = { 'TranscriptPrompt', 'Title' },
  finalAnswer = { 'TranscriptFinalAnswer', 'DiagnosticOk' },
  narration = { 'TranscriptNarration', 'Identifier' },
  thinking = { 'TranscriptThinking', 'Comment' },
  toolName = { 'TranscriptToolName', 'Function' },
  toolError = { 'TranscriptToolError', 'DiagnosticError' },
  gate = { 'TranscriptGate', 'DiagnosticWarn' },
  meta = { 'TranscriptMeta', 'PreProc' },
  -- Diff mode's own groups (a background in the default scheme), so an added line never has
  -- the final answer's colour (`Added` is `DiagnosticOk`'s green there).
  diffAdded = { 'TranscriptDiffAdded', 'DiffAdd' },
  diffRemoved = { 'TranscriptDiffRemoved', 'DiffDelete' },
}

--- Token modifier -> { our group, attributes }. Modifiers add a style on top of the type's
--- colour (their extmarks have a higher priority, and attributes without a colour combine).
M.modifiers = {
  incomplete = { 'TranscriptIncomplete', { italic = true, underdashed = true } },
  inFlight = { 'TranscriptInFlight', { italic = true, underdotted = true } },
  sidechain = { 'TranscriptSidechain', { italic = true } },
}

--- Defines (or re-defines after `:colorscheme`) every group.
function M.apply()
  local set = vim.api.nvim_set_hl
  for ty, g in pairs(M.types) do
    set(0, g[1], { link = g[2], default = true })
    set(0, '@lsp.type.' .. ty, { link = g[1], default = true })
  end
  for mod, g in pairs(M.modifiers) do
    local attrs = vim.tbl_extend('force', g[2], { default = true })
    set(0, g[1], attrs)
    set(0, '@lsp.mod.' .. mod, { link = g[1], default = true })
  end
  -- In views (filetype `transcript`) the answers are highlighted as markdown (view.lua,
  -- issue 23 item 6): the final-answer token adds no colour over it there.
  set(0, 'TranscriptViewFinalAnswer', { default = true })
  set(0, '@lsp.type.finalAnswer.transcript', { link = 'TranscriptViewFinalAnswer', default = true })
  -- Agent blame's virtual text in source files (:TranscriptBlame, issue 22).
  set(0, 'TranscriptBlame', { link = 'Comment', default = true })
end

return M
