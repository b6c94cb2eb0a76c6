"""Grading a whole class: ``grade-all``'s coordinator and ``merge`` (``classgrade``),
where its jobs run (``runners``), the long-lived grading processes (``gradeproc``)
and what they are sent and answer (``jobs``), the gradebook (``gradebook``), the term's
tables in it (``term_tables``), the term grades settled from them (``term``) and the
``extend`` and ``override`` commands (``term_commands``), the reports and exports made
from the gradebook (``publishing``), the
similarity evidence (``similarity``, with what a drill's docstring dictates in
``dictated_code``). May import ``grader.grading`` and the layers below it, never
``grader.learner``, ``grader.authoring`` or ``grader.gradescope`` (the class's
Gradescope files are written by the writer the command line hands in).
"""
