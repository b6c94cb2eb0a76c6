"""Grading a whole class: ``grade-all``'s coordinator and ``merge`` (``classgrade``),
the long-lived grading processes (``gradeproc``), the gradebook (``gradebook``), a
class's submissions (``submissions``), the similarity evidence (``similarity``) and the
Gradescope autograder (``autograder``). May import ``grader.grading`` and the layers
below it, never ``grader.learner``.
"""
