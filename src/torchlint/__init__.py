"""torchlint: find PyTorch anti-patterns statically, and fix them."""

__version__ = "0.1.0"
