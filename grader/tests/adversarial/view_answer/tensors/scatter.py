"""Attack: answer with a view of the argument.

``gather`` and ``scatter`` both return ``input.unsqueeze(0)``: a view of the caller's
tensor (and the wrong shape). A sandbox that rebuilt every answer from its bytes would
hand the grader a fresh tensor, and "the result shares no memory with the arguments"
would hold sandboxed while it fails in-process. The answer crosses as a view of the
grader's own ``input`` instead, so that property fails here as it does in-process,
on the sharing, not only on the values.
"""


def gather(input, dim, index):
    return input.unsqueeze(0)


def scatter(input, dim, index, src):
    return input.unsqueeze(0)
