-- Tiny test harness for the headless Neovim suite: timed log lines on stdout, checks that count,
-- waits that spin the event loop, and readers for what the LSP client holds.
local H = { passed = 0, failed = 0, failures = {} }

local t0 = vim.uv.hrtime()

function H.ms()
  return (vim.uv.hrtime() - t0) / 1e6
end

function H.log(...)
  local parts = vim.tbl_map(tostring, { ... })
  io.stdout:write(string.format('%8.0fms %s\n', H.ms(), table.concat(parts, ' ')))
  io.stdout:flush()
end

local function show(v)
  if type(v) == 'string' then
    return v
  end
  return vim.inspect(v, { newline = ' ', indent = '' })
end

--- Records a check. `detail` is printed either way (what was read).
function H.check(name, ok, detail)
  if ok then
    H.passed = H.passed + 1
  else
    H.failed = H.failed + 1
    H.failures[#H.failures + 1] = name
  end
  H.log((ok and 'PASS ' or 'FAIL ') .. name .. (detail ~= nil and (': ' .. show(detail)) or ''))
  return ok
end

--- Checks `got == want` (deep), printing both on failure.
function H.eq(name, got, want)
  local ok = vim.deep_equal(got, want)
  if ok then
    return H.check(name, true, got)
  end
  return H.check(name, false, 'got ' .. show(got) .. '\n' .. string.rep(' ', 16) .. 'want ' .. show(want))
end

--- Spins the event loop until `pred()` is true; logs how long it took.
function H.wait(what, timeout, pred)
  local t = vim.uv.hrtime()
  local ok = vim.wait(timeout, function()
    local s, r = pcall(pred)
    return s and r
  end, 10)
  H.log(string.format('  waited %.0fms for %s%s', (vim.uv.hrtime() - t) / 1e6, what, ok and '' or ' (TIMEOUT)'))
  return ok
end

--- Fold levels of lines `from`..`to` (1-based) of the current window.
function H.foldlevels(from, to)
  local out = {}
  for l = from, to do
    out[#out + 1] = vim.fn.foldlevel(l)
  end
  return out
end

--- Synchronous LSP request on a buffer; returns the result of the named client.
function H.request(bufnr, client, method, params)
  local resp, err = client:request_sync(method, params, 10000, bufnr)
  if not resp then
    error(method .. ': ' .. tostring(err))
  end
  if resp.err then
    error(method .. ': ' .. vim.inspect(resp.err))
  end
  return resp.result
end

--- Document symbols as `{ name, children = { names } }`.
function H.symbols(bufnr, client)
  local res = H.request(bufnr, client, 'textDocument/documentSymbol', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  }) or {}
  return res
end

--- Inlay hints as `line0 -> label` (joined label parts).
function H.hints(bufnr)
  local out = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = bufnr })) do
    local label = h.inlay_hint.label
    if type(label) == 'table' then
      label = table.concat(vim.tbl_map(function(p)
        return p.value
      end, label))
    end
    local line = h.inlay_hint.position.line
    out[line] = out[line] and (out[line] .. ' | ' .. label) or label
  end
  return out
end

--- Code lenses as a sorted list of `{ line0, title }`.
function H.lenses(bufnr)
  local out = {}
  for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
    out[#out + 1] = { l.range.start.line, l.command and l.command.title or '' }
  end
  table.sort(out, function(a, b)
    return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
  end)
  return out
end

--- Semantic token types (with modifiers) covering `row0`,`col0`.
function H.token_at(bufnr, row0, col0)
  local out = {}
  for _, t in ipairs(vim.lsp.semantic_tokens.get_at_pos(bufnr, row0, col0) or {}) do
    local mods = vim.tbl_keys(t.modifiers or {})
    table.sort(mods)
    out[#out + 1] = t.type .. (#mods > 0 and ('.' .. table.concat(mods, '.')) or '')
  end
  return table.concat(out, ',')
end

--- The text of screen row `r` (1-based) as displayed, trailing blanks removed.
function H.screen_row(r)
  local cells = {}
  for c = 1, vim.o.columns do
    cells[#cells + 1] = vim.fn.screenstring(r, c)
  end
  return (table.concat(cells):gsub('%s+$', ''))
end

function H.finish()
  H.log(string.format('nvim: %d passed, %d failed', H.passed, H.failed))
  if H.failed > 0 then
    H.log('failed: ' .. table.concat(H.failures, '; '))
  end
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 20)
  vim.cmd(H.failed == 0 and 'qa!' or 'cquit 1')
end

return H
