"""Grading a whole class: ``grade-all``'s coordinator and ``merge`` (``classgrade``),
the long-lived grading processes (``gradeproc``), the gradebook (``gradebook``) and a
class's submissions (``submissions``). May import ``grader.grading`` and the layers
below it, never ``grader.learner``.
"""
