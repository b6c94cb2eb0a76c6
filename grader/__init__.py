"""torchdrill's grading engine, one subpackage per layer (each one's docstring says
what it owns and what it may import), top to bottom:

- ``grader.cli``: the command line; parses arguments, imported by nothing;
- ``grader.classroom`` | ``grader.learner``: grading a class | the learner's loop and
  the course release (independent of each other);
- ``grader.grading``: one grading: the pytest plugin, its options, ``run_grading``;
- ``grader.sandbox``: the processes that run untrusted code, and the wire to them;
- ``grader.contract`` | ``grader.reports``: calling student code under the grading
  contract | rendering results for people;
- ``grader.core``: the data: outcomes, scores, results, the course, sources.

``import-linter`` (``[tool.importlinter]`` in pyproject.toml) holds every import to it.
"""

__version__ = "0.1.0"
