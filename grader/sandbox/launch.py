"""Start one of the grader's own modules in a new, isolated interpreter.

``python -I -m grader.sandbox.zygote_loop`` runs whichever ``grader`` that interpreter finds
first, and ``-I`` leaves only site-packages to look in: an installed torchdrill,
or an editable install pointing at another checkout. A grader run from a second
checkout (a worktree, a copy being benchmarked) then started a zygote from the
first one, or none at all where bubblewrap hides the first one's folder.
``command`` loads the ``grader`` package from this file's own folder instead,
and puts no folder on ``sys.path`` (the course's ``reference/`` and ``tests/``
beside it stay out of reach), then calls the module's ``main()``.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the ``grader`` package, not this subpackage

_BOOT = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location(
    "grader", {init!r}, submodule_search_locations=[{folder!r}])
package = importlib.util.module_from_spec(spec)
sys.modules["grader"] = package
spec.loader.exec_module(package)
from grader.{module} import main
main()
"""


def command(module: str) -> list[str]:
    """``python -I`` running ``grader.<module>.main()`` from this very grader package
    (``module`` is dotted below ``grader``: ``sandbox.zygote_loop``)."""
    boot = _BOOT.format(init=str(PACKAGE_DIR / "__init__.py"), folder=str(PACKAGE_DIR),
                        module=module)
    return [sys.executable, "-I", "-c", boot]
