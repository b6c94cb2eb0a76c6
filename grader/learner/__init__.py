"""The learner's loop: ``list`` (``listing``), ``check`` (``check``), ``watch``
(``watch``), ``hint`` (``hint``) and ``stubs`` (``stub_language``: the stubs'
docstrings in another language), what they share (``place``: where things are,
the last results, the next drill), ``check`` from inside a notebook
(``notebook``), and the warm process that serves a later ``check`` at once
(``warm``). May import ``grader.grading`` and the layers below it, never
``grader.classroom``, ``grader.authoring`` or ``grader.gradescope``.
"""
