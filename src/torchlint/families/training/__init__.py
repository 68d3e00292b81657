"""The training family: where evaluation happens, the gradient mode code runs in, and the steps of a
training loop."""
