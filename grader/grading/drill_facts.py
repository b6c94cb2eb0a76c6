"""What a grading knows of each graded test, found once, at collection.

A test is graded when its module carries ``pytest.mark.exercise``. ``DrillFacts`` puts
its drill's facts (exercise id, points, title, weight, markers, forbidden APIs) in the
item's stash, where the other concerns of the run read them (``facts``), and their JSON
in ``user_properties``, which carries them to the results collector in whatever process
it runs. An official grading also seeds each property from the course secret here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grader.core import course_secret, syllabus
from grader.core.syllabus import exercise_id as exercise_id_of
from grader.grading.collector import META

_facts = pytest.StashKey[dict[str, Any]]()  # a graded item's drill facts, as collected


def exercise_marker(item: pytest.Item) -> pytest.Mark | None:
    """The ``exercise`` marker of the item's test module (None: not a graded test)."""
    module = item.getparent(pytest.Module)
    if module is None:
        return None
    return next((m for m in module.iter_markers("exercise")), None)


def facts(item: pytest.Item) -> dict[str, Any] | None:
    """The drill facts collection found for a graded item (None: not graded)."""
    return item.stash.get(_facts, None)


class DrillFacts:
    """The collection hook: each graded item's facts, and its seed in an official grading."""

    def __init__(self, secret: course_secret.Secret | None):
        self.secret = secret

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            marker = exercise_marker(item)
            if marker is None:
                continue
            path = Path(str(item.path))
            if self.secret is not None:
                _salt(item, self.secret, exercise_id_of(path))
            weight = item.get_closest_marker("weight")
            module = item.getparent(pytest.Module)
            doc = (module.obj.__doc__ or "") if module else ""
            meta = {
                "exercise": exercise_id_of(path),
                "points": float(marker.kwargs.get("points", marker.args[0] if marker.args else 0)),
                "title": syllabus.summary(doc),  # the whole first sentence
                "weight": float(weight.args[0]) if weight else 1.0,
                "hidden": item.get_closest_marker("hidden") is not None,
                "forbid": dict(marker.kwargs.get("forbid") or {}),  # for the static scan
                "markers": sorted(m.name for m in item.iter_markers()
                                  if m.name in ("cuda", "distributed", "hidden")),
            }
            item.stash[_facts] = meta
            item.user_properties.append((META, json.dumps(meta)))


def _salt(item: pytest.Item, secret: course_secret.Secret, drill: str) -> None:
    """Seed the item's hypothesis test from the secret (hypothesis prefers an explicit
    seed to ``derandomize``'s digest of the test's source). Every parametrization of a
    function shares its seed, as they share the digest in the public run."""
    test = getattr(item, "obj", None)
    if test is None or not getattr(test, "is_hypothesis_test", False):
        return
    test._hypothesis_internal_use_seed = secret.seed(f"{drill}::{test.__qualname__}")
