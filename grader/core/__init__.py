"""The course's data, with no torch and no pytest. Every other layer builds on it; it
imports nothing else of the grader. By job:

- a grading's outcomes and scores: ``outcomes`` (what a test ended as), ``scoring``
  (the one score formula), ``results_json`` (``results.json``: its shape, reading,
  scoring, merging), ``record`` (the learner's copy that ``grade`` and ``check`` update
  drill by drill), ``differences`` (what a failed property shows);
- the course: ``syllabus`` (``course.toml``: where drills and tests are, in order),
  ``stubs`` (the stubs as handed out), ``time_budgets`` (each drill's time), ``hints``
  (the learner's hint state), ``docstring_record`` (the English docstrings kept beside
  a learner's work); its term: ``assignments``, ``late_policy``, ``term_grades``;
- a submission: ``sources`` (which files are graded and how they are read),
  ``students`` (the rule for student ids), ``isolation`` (the isolation modes),
  ``course_secret`` (what an official grading draws from);
- words and places: ``i18n`` (the reader's language), ``drill_texts`` (a drill's words
  in another language), ``engine_phrases`` (the engine's words inside kept messages),
  ``layout`` (where commands write), ``files`` (writing files whole), ``errors`` (the
  errors a command reports).
"""
