"""The course's data, with no torch and no pytest: outcomes and scores, the results
document (``results.json``: its shape, reading, scoring, merging), the course
(``course.toml``, where drills, tests and submissions are), the learner's hint
state, which files of a submission are graded and how they are read, a notebook
read into exercise files without running it (``notebooks``), and the rule for
student ids. Every other layer builds on it; it imports nothing else of the grader.
"""
