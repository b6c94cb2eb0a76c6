"""One grading: every front door builds one ``GradingRequest`` (``request``), and
``pipeline.grade`` grades a ``Submission`` as it asks (``pipeline``: its stages) into results, in memory (every
command grades through it). Around it: the pytest plugin (inert unless a run grades)
and what it does in a grading session (``plugin``, ``session``, which registers one plugin
per concern: ``drill_facts``, ``sandboxing``, ``budgets``, ``judge``; and ``verdict``,
``collector``, ``profiles``), the options it shares with the command line
(``options``), the static scan of a submission (``scan``), and the ``grade`` and
``report`` commands (``commands``). May import ``grader.intake``, ``grader.sandbox``,
``grader.contract``, ``grader.reports`` and ``grader.core``.
"""
