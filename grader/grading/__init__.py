"""One grading: the pytest plugin (inert unless a run grades) and what it does in a
grading session (``plugin``, ``session``, ``verdict``, ``collector``, ``profiles``), the
options it shares with the command line (``options``), the static scan of a
submission (``scan``), running pytest to grade (``run``), what ``grade`` grades (a
folder, or a notebook read into one: ``intake``) and the ``grade`` and ``report``
commands (``commands``). May import ``grader.sandbox``, ``grader.contract``,
``grader.reports`` and ``grader.core``.
"""
