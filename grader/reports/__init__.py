"""What people read, rendered from results alone: words shared by every view
(``present``) and values, calls and counterexamples as text (``counterexamples``),
the terminal score table (``table``), the student's HTML report (``report``), the
class report (``classreport``) with its charts (``class_charts``) and its similarity
section (``similarity_view``, also ``similarity.csv``), and the exports (Gradescope,
JUnit, grades CSV: ``exports``). May import ``grader.core`` only.
"""
