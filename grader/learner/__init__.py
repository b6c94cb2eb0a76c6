"""The learner's loop (``list``, ``check``, ``watch``, ``hint``: ``learn``) and the
student handout a course releases (``release``). May import ``grader.grading`` and the
layers below it, never ``grader.classroom``.
"""
