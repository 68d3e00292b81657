-- Headless Neovim (0.7+): start `torchlint server` on a file, wait for its diagnostics, apply the
-- preferred quick fix of the first one, wait for the diagnostics to be refreshed, write the file.
-- Prints lines starting with "DIAG", "ACTION", "AFTER" and "DONE" on stdout; exits 0 on success.
local file = os.getenv("TL_FILE")
local python = os.getenv("TL_PYTHON")
local out = io.stdout

local function finish(code, msg)
  out:write(msg .. "\n")
  out:flush()
  vim.cmd(code == 0 and "qall!" or "cquit! " .. code)
end

local function main()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  local client_id = vim.lsp.start_client({
    name = "torchlint",
    cmd = { python, "-m", "torchlint", "server" },
    root_dir = vim.fn.fnamemodify(file, ":p:h"),
  })
  if not client_id then
    finish(3, "DONE could not start the server")
    return
  end
  vim.lsp.buf_attach_client(bufnr, client_id)

  local function diags()
    return vim.diagnostic.get(bufnr)
  end

  if not vim.wait(90000, function() return #diags() > 0 end, 50) then
    finish(4, "DONE no diagnostics")
    return
  end
  local before = diags()
  table.sort(before, function(a, b) return a.lnum < b.lnum end)
  for _, d in ipairs(before) do
    out:write(string.format("DIAG %d:%d %s %s\n", d.lnum + 1, d.col + 1, tostring(d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)), d.message))
  end

  local first = before[1]
  vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = {}, only = { "quickfix" } }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 60000) or {}
  local applied = false
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      out:write("ACTION " .. action.title .. "\n")
      if action.isPreferred and action.edit and not applied then
        vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
        applied = true
      end
    end
  end
  if not applied then
    finish(5, "DONE no quick fix applied")
    return
  end

  local n = #before
  if not vim.wait(90000, function() return #diags() < n end, 50) then
    finish(6, "DONE diagnostics were not refreshed")
    return
  end
  for _, d in ipairs(diags()) do
    out:write(string.format("AFTER %d:%d %s\n", d.lnum + 1, d.col + 1, d.message))
  end
  vim.cmd("write")
  vim.lsp.stop_client(client_id)
  finish(0, "DONE ok")
end

local ok, err = pcall(main)
if not ok then
  finish(7, "DONE error: " .. tostring(err))
end
