"""Reading what is handed in: the one place a submission is opened.

``submission`` opens anything a user hands in (a folder, a handout folder, a zip, a
notebook, loose drill files) into a typed ``Submission``; ``entries`` finds and
reads the entries of a class folder by the same rules; ``archives`` reads zips
without trusting them and packs submissions to travel; ``notebooks`` reads a
notebook's code without running it; ``times`` reads when an entry was handed in. Imports ``grader.core`` only.
"""
