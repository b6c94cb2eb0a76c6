"""The course's data, with no torch and no pytest: outcomes and scores, the results
document (``results.json``: its shape, reading, scoring, merging; ``record``: the
learner's copy that ``grade`` and ``check`` update drill by drill), the course
(``course.toml``: where drills and tests are; its assignments, late policies and
term grades: ``assignments``, ``late_policy``, ``term_grades``), the learner's hint state, which files
of a submission are graded and how they are read, the rule for student ids, the
isolation modes, where commands write (``layout``) and the errors a command reports
(``errors``). Every other layer builds on it; it imports nothing else of the grader.
"""
