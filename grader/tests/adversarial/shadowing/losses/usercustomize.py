"""Shadow file: must never be imported by the worker or the grader.

If anything imports it, it records itself (``builtins._torchdrill_shadows``, read
by this submission's one_hot) and raises, breaking whatever imported it.
"""

import builtins

builtins.__dict__.setdefault("_torchdrill_shadows", []).append(__file__)
raise ImportError(f"shadow module {__file__} was imported")
