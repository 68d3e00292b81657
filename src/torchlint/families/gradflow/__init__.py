"""The gradient-flow family: what a backward pass reaches — submodules no code uses, loss terms cut off
the autograd graph, optimizers whose parameters the loss does not reach."""
