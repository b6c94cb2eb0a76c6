"""What an instructor builds from the course: the student handout (``release``, with
the tests cut to their public part in ``public_tests``, the check that nothing
leaks in ``leaks``, the files written for the student in ``student_files`` and the
topic notebooks in ``handout_notebooks``), the course secret (``make_secret``) and
the course's audit of its own holes (``audit``); the Gradescope autograder zip is
``grader.gradescope``'s. May import ``grader.grading`` and the layers below it, never
``grader.classroom``, ``grader.learner`` or ``grader.gradescope``.
"""
