"""What an instructor builds from the course: the student handout (``release``, with
the tests cut to their public part in ``public_tests``, the check that nothing
leaks in ``leaks``, the files written for the student in ``student_files`` and the
topic notebooks in ``handout_notebooks``) and the Gradescope autograder zip
(``gradescope``; the run on Gradescope is the classroom's). May import
``grader.grading`` and the layers below it, never ``grader.classroom`` or
``grader.learner``.
"""
