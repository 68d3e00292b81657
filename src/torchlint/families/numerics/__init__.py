"""The numerics family: softmax, log, exp, log-sum-exp and cross-entropy written by hand, and how
they are rewritten stably."""
