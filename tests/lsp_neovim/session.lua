-- tests/lsp_neovim.rs: Neovim's built-in LSP client (0.7 and later) attached to `winlint lsp`
-- opens a manifest, reads the diagnostics, applies winlint's quick fix for WIN001 and reads the
-- diagnostics again. Writes what it saw as JSON to $LSP_OUT, then quits whatever happened.
local bin, file, out = os.getenv('WINLINT_BIN'), os.getenv('LSP_FILE'), os.getenv('LSP_OUT')
local result = { before = {}, after = {}, applied = '', text = '', error = '' }

local function code(d)
  return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ''
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = 'winlint',
    cmd = { bin, 'lsp' },
    root_dir = vim.fn.fnamemodify(file, ':h'),
  })
  vim.lsp.buf_attach_client(buf, id)
  local function codes()
    local c = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(c, code(d))
    end
    table.sort(c)
    return c
  end
  local function find(want)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if code(d) == want then
        return d
      end
    end
  end
  if not vim.wait(60000, function() return find('WIN001') ~= nil end, 50) then
    result.error = 'no WIN001 diagnostic within 60 s'
    return
  end
  result.before = codes()
  local d = find('WIN001')
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = {
      start = { line = d.lnum, character = d.col },
      ['end'] = { line = d.end_lnum, character = d.end_col },
    },
    context = { diagnostics = {} },
  }
  local res = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 60000)
  for _, r in pairs(res or {}) do
    for _, a in ipairs(r.result or {}) do
      if result.applied == '' and a.kind == 'quickfix' and a.title:sub(1, 6) == 'WIN001' then
        vim.lsp.util.apply_workspace_edit(a.edit, 'utf-16')
        result.applied = a.title
      end
    end
  end
  if result.applied == '' then
    result.error = 'no WIN001 quick fix: ' .. vim.inspect(res)
    return
  end
  -- Neovim sends the change (didChange); the server lints it after its debounce.
  if not vim.wait(60000, function() return find('WIN001') == nil end, 50) then
    result.error = 'WIN001 still reported 60 s after its fix'
  end
  result.after = codes()
  result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  vim.lsp.stop_client(id)
end

local ok, err = pcall(run)
if not ok then
  result.error = tostring(err)
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out)
vim.cmd('qa!')
