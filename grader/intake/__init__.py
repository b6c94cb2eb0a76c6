"""Reading what is handed in: the one place a submission is opened.

``submission`` opens anything a user hands in (a folder, a handout folder, a zip, a
notebook, loose drill files) into a typed ``Submission``; ``reader`` holds the rules
every intake shares, and finds and reads the entries of a class folder by them;
``archives`` reads zips without trusting them and packs submissions to travel;
``notebooks`` reads a notebook's code without running it, and ``cell_lines`` shows a
notebook's grading at its cells; ``times`` reads when an entry was handed in. Imports
``grader.core`` only.
"""
