"""The grading profiles: a profile's example count is a ceiling on a property's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.grading import profiles


@pytest.fixture
def profile() -> Iterator[None]:
    """Put back whichever hypothesis profile this test process had loaded."""
    before = settings.get_current_profile_name()
    profiles.register()
    try:
        yield
    finally:
        settings.load_profile(before)


def test_a_profile_caps_a_propertys_own_count_and_gives_it_back(profile):
    drawn: list[int] = []

    @settings(max_examples=50, derandomize=True, database=None)
    @given(st.integers())
    def prop(x: int) -> None:
        drawn.append(x)

    settings.load_profile(profiles.QUICK)  # check's 25
    with profiles.at_most_the_profile(prop):
        prop()
    assert len(drawn) == 25
    drawn.clear()
    prop()  # its own settings are back: 50
    assert len(drawn) == 50

    settings.load_profile(profiles.GRADING)  # 100 lowers nothing
    drawn.clear()
    with profiles.at_most_the_profile(prop):
        prop()
    assert len(drawn) == 50
