"""Family facts: what one family of rules asks about a file, built on the analysis core
(:mod:`torchlint.analysis`: syntax, names, the file's context, the project, the program model).

One package per family -- ``training`` (evaluation sites, gradient mode, training steps), ``numerics``
(softmax, log, exp and cross-entropy written by hand), ``loops`` (Python loops over tensor rows),
``shapes`` (shapes, dimensions, what carries a batch), ``api`` (rewrites of API calls).  A family imports
the core and, where it needs one, another family's public functions; the core never imports a family,
and no rule code is named here.  A new fact goes into the package of the family that asks for it.
"""
