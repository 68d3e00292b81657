"""The language server (``torchlint server``); needs the ``lsp`` extra (pygls, lsprotocol)."""
