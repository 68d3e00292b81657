"""The shapes family: tensor shapes and dimensions from construction, and what carries a batch."""
