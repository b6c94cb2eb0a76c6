"""torchdrill's grading engine, one subpackage per layer (each one's docstring says
what it owns and what it may import), top to bottom:

- ``grader.cli``: the command line; parses arguments, imported by nothing;
- ``grader.classroom`` | ``grader.learner`` | ``grader.authoring`` | ``grader.gradescope``:
  grading a class | the learner's loop | what an instructor builds from the course, the
  handout | everything Gradescope: the autograder zip, the run on Gradescope, its
  results format (independent of each other);
- ``grader.grading``: one grading: ``pipeline.grade``, the pytest plugin, its options;
- ``grader.sandbox`` | ``grader.intake`` | ``grader.testing``: the processes that run
  untrusted code, and the wire to them | reading what is handed in (a folder, zip,
  notebook or loose files) into a ``Submission`` | the public API a course's tests
  import (and nothing else of the engine);
- ``grader.contract`` | ``grader.reports``: calling student code under the grading
  contract | rendering results for people;
- ``grader.core``: the data: outcomes, scores, results, the course, sources.

``import-linter`` (``[tool.importlinter]`` in pyproject.toml) holds every import to it.
"""

__version__ = "0.1.0"
