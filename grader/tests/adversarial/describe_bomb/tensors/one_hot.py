"""Attack: answer with a 12-dimensional view of one stored number (3**12 = 531,441
elements, under the wire's element limit: a few bytes cross the wire).

It has the wrong dtype, so a property's failing ``assert got.dtype == ...`` has pytest
show the answer, and torch prints it by walking its slices in Python: seconds of the
grader's own time per example. When budgets charged only the grader's and its workers'
CPU time, with a wall allowance of four times the budget, a 16-dimensional one held one
drill's grading for 124 s against a 47 s budget.
"""

import torch


def one_hot(labels, num_classes=-1):
    return torch.zeros(1).expand(*[3] * 12)
