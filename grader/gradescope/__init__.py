"""Everything Gradescope, one module per job: where the autograder's files lie under
``/autograder`` and the results a run writes when there is no grading to report
(``facts``), the autograder zip ``torchdrill gradescope-autograder`` builds
(``autograder``), grading one submission on Gradescope, what the zip's
``run_autograder`` runs (``run``), and Gradescope's ``results.json`` for one
submission and for a class (``results``). May import ``grader.grading`` and the
layers below it, never ``grader.classroom``, ``grader.learner`` or
``grader.authoring``: the commands of those rooms that write Gradescope's results
(``grade``'s and ``report``'s, which sit lower, too) get its writers from the command
line (``grader.cli``).
"""
