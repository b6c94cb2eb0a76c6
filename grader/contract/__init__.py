"""The grading contract, on the side that calls student code: loading a submission's
module (``loader``), the ``impl`` object tests call it through, with outcomes and call
records (``impl``, ``call``, ``describe``), the forbidden-API guard (``forbid``) and what a
forbidden API stands for (``capabilities``: the operators that compute it), what a
call may change of its arguments (``arguments``) and of torch's global state
(``effects``), the examples a grading draws (``examples``), the assertions tests make
(``expect``) and the rank harness of the distributed drills (``harness``).
It runs in the grader (in-process grading) and inside sandbox workers alike. May
import ``grader.core`` only.
"""
