"""What people read, rendered from results alone: words shared by every view
(``present``) and values, calls and counterexamples as text (``counterexamples``),
the terminal score table (``table``), the student's HTML report (``student_report``),
the class report (``class_report``) with its charts (``class_charts``) and its similarity
section (``similarity_view``, also ``similarity.csv``), how a term grade reads in each of
them (``term_view``), and the exports (JUnit, grades CSV: ``exports``; Gradescope's
results are ``grader.gradescope``'s). May import ``grader.core`` only.
"""
