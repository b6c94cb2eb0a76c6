"""What people read, rendered from results alone: the terminal score table, the
student's HTML report, the class report with its charts and its similarity
section (``similarity_view``, also ``similarity.csv``), and the exports
(Gradescope, JUnit, grades CSV). May import ``grader.core`` only.
"""
