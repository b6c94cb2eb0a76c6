"""The learner's loop (``list``, ``check``, ``watch``, ``hint``: ``learn``) and the
student handout a course releases (``release``), with its notebooks
(``handout_notebooks``) and ``check`` from inside a notebook (``notebook``). May
import ``grader.grading`` and the layers below it, never ``grader.classroom``.
"""
