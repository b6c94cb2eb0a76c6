"""An instructor's decisions are checked and kept: ``extend`` and ``override`` refuse a
student the gradebook does not have and an assignment or drill the course does not
have, saying what was probably meant; a later decision given without ``--reason``
keeps the reason in force; the decision log keeps every change with the value and
reason it replaced.

No grading: the class of ``test_term`` (ana, ben, cat, dan) is recorded by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grader import cli
from grader.classroom import term_tables
from grader.classroom.gradebook import Gradebook
from grader.core.errors import EXIT_USAGE
from grader.core.layout import ClassLayout
from grader.tests.test_term import SCORES, make_course, make_results, student_term


@pytest.fixture
def term(tmp_path: Path) -> tuple[Path, Path]:
    """(the course, the class folder) of a term graded once."""
    course = make_course(tmp_path / "course")
    out = tmp_path / "class"
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        for student, passed in SCORES.items():
            book.record(student, f"{student}-1", make_results(student, passed), wall_s=1, tests_s=1, worker="w")
    return course, out


def run(term: tuple[Path, Path], *args: str) -> int:
    course, out = term
    return cli.main([args[0], str(out), *args[1:], "--by", "prof", "--course", str(course), "--lang", "en"])


def log(term: tuple[Path, Path]) -> list[dict[str, Any]]:
    with Gradebook.open(ClassLayout(term[1]).gradebook) as book:
        return term_tables.decisions(book.connection)


# ------------------------------------------------------------------ checked

@pytest.mark.parametrize("command", [
    ("extend", "bn", "week1", "--days", "1", "--reason", "x"),
    ("override", "bn", "week1", "5", "--reason", "x"),
])
def test_an_unknown_student_is_refused_with_a_suggestion(term, capsys, command):
    assert run(term, *command) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no student 'bn' in" in err and "did you mean ben?" in err
    assert log(term) == []  # stored nowhere


def test_a_look_alike_of_a_student_is_suggested(term, capsys):
    assert run(term, "extend", "d\u0430n", "week1", "--days", "1", "--reason", "x") == EXIT_USAGE  # Cyrillic а
    assert "no student 'd\u0430n' (d\\u0430n) in" in capsys.readouterr().err  # the difference, spelled out
    assert run(term, "override", "d\u0430n", "week1", "5", "--reason", "x") == EXIT_USAGE
    assert "did you mean dan?" in capsys.readouterr().err
    assert run(term, "extend", "zed", "week1", "--days", "1", "--reason", "x") == EXIT_USAGE
    assert "no student 'zed' in" in capsys.readouterr().err
    assert log(term) == []


def test_an_unknown_assignment_or_drill_is_refused_with_a_suggestion(term, capsys):
    assert run(term, "extend", "ben", "wek1", "--days", "1", "--reason", "x") == EXIT_USAGE
    assert "did you mean week1?" in capsys.readouterr().err
    assert run(term, "override", "ben", "wek2", "5", "--reason", "x") == EXIT_USAGE
    assert "did you mean the assignment week2?" in capsys.readouterr().err
    assert run(term, "override", "ben", "t/bb", "5", "--reason", "x") == EXIT_USAGE
    assert "did you mean b?" in capsys.readouterr().err
    assert log(term) == []


# ------------------------------------------------------------------ kept

def test_a_later_extension_without_a_reason_keeps_the_reason(term, capsys):
    assert run(term, "extend", "cat", "week1", "--days", "2", "--reason", "doctor's note") == 0
    assert run(term, "extend", "cat", "week1", "--days", "3") == 0
    assert "doctor's note" in capsys.readouterr().out  # said, not silently kept
    week1 = student_term(term[1], "cat")["assignments"][0]
    assert week1["extension"]["reason"] == "doctor's note" and "3 day" in week1["extension"]["text"]
    assert run(term, "extend", "cat", "week1", "--days", "4", "--reason", "second note") == 0
    assert run(term, "extend", "cat", "week1", "--clear") == 0
    assert [(d["value"], d["reason"], d["previous_value"], d["previous_reason"]) for d in log(term)] == [
        ('{"until": null, "days": 2.0}', "doctor's note", None, None),
        ('{"until": null, "days": 3.0}', "doctor's note", '{"until": null, "days": 2.0}', "doctor's note"),
        ('{"until": null, "days": 4.0}', "second note", '{"until": null, "days": 3.0}', "doctor's note"),
        (None, "", '{"until": null, "days": 4.0}', "second note"),
    ]


def test_a_later_override_without_a_reason_keeps_the_reason(term):
    assert run(term, "override", "ben", "b", "9") == EXIT_USAGE  # a first override needs its reason
    assert run(term, "override", "ben", "b", "8", "--reason", "regrade: p1 was wrong") == 0
    assert run(term, "override", "ben", "b", "9") == 0
    assert run(term, "override", "ben", "b", "9", "--reason", "  ") == 0  # a blank reason is none
    [override] = student_term(term[1], "ben")["assignments"][0]["overrides"]
    assert override["points"] == 9 and override["reason"] == "regrade: p1 was wrong"
    assert [(d["value"], d["reason"], d["previous_value"]) for d in log(term)] == [
        ("8.0", "regrade: p1 was wrong", None), ("9.0", "regrade: p1 was wrong", "8.0"),
        ("9.0", "regrade: p1 was wrong", "9.0")]



def test_a_decomposed_id_typed_on_a_mac_is_the_student(tmp_path):
    course = make_course(tmp_path / "course")
    out = tmp_path / "class"
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        book.record("zo\u00eb", "z-1", make_results("zo\u00eb", SCORES["ana"]), wall_s=1, tests_s=1, worker="w")
    assert run((course, out), "extend", "zoe\u0308", "week1", "--days", "1", "--reason", "x") == 0
    assert [d["student"] for d in log((course, out))] == ["zo\u00eb"]


# ------------------------------------------------------------------ in range

@pytest.mark.parametrize("command, said", [
    (("extend", "ben", "week1", "--until", "9999-12-31T23:59"), "more than 3650 days after week1's due date"),
    (("extend", "ben", "week1", "--until", "0001-01-01T00:00+01:00"), "is not after week1's due date"),
    (("extend", "ben", "week1", "--until", "2020-01-01T00:00"), "is not after week1's due date"),
    (("extend", "ben", "week1", "--days", "3000000"), "at most 3650"),
])
def test_a_date_out_of_range_is_refused_before_it_is_stored(term, capsys, command, said):
    """The red team's year 9999 was stored, then stopped every later command of the class
    with an OverflowError; a date before the due date would penalize the student."""
    assert run(term, *command, "--reason", "a typo") == EXIT_USAGE
    assert said in capsys.readouterr().err
    assert log(term) == []
    assert run(term, "extend", "ben", "week1", "--days", "1", "--reason", "a doctor's note") == 0


def test_an_override_may_not_give_more_than_the_target_is_worth():
    from grader.classroom import term_commands
    from grader.tests.grading import REPO

    assert term_commands._most_points(REPO, "tensors/one_hot") == 10.0
    assert term_commands._most_points(REPO / "missing", "tensors/one_hot") is None  # not known: not bounded
