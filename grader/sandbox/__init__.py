"""The only code that starts, confines or talks to processes that run untrusted code:
the zygote and its workers (``zygote``, ``worker``, ``launch``), the confinement layers
(``confine``), the plain-data wire between grader and worker (``wire``) and the
sandboxed ``impl`` (``remote``). May import ``grader.contract`` and ``grader.core``.
"""
