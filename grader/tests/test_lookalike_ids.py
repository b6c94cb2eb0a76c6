"""Student ids that look the same are caught: a skeleton after NFKC and case folding,
with Unicode's confusables (UTS #39), compares them. Two entries of one class folder
that look alike are refused together; an entry that looks like a student already in
the gradebook is refused, and that student is graded. The rest of the class is graded,
and the refusals show in grade-all's summary and in class.html's "not graded" list.

No grading here: ``plan`` screens and reads the entries, nothing runs them.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from rich.console import Console

from grader.classroom import classgrade
from grader.classroom.gradebook import Gradebook
from grader.classroom.jobs import GradingJob
from grader.core import results_json, students
from grader.core.isolation import Isolation
from grader.core.layout import ClassLayout
from grader.core.outcomes import PASSED
from grader.core.results_json import ExerciseInfo
from grader.core.students import Lookalikes, lookalike_keys, skeleton, student_id_problem
from grader.intake import reader
from grader.intake.reader import lookalike_notes
from grader.tests.grading import REPO

DRILL = "tensors/one_hot"
CYRILLIC_A = "\u0430lice"  # а (U+0430) then "lice"
FULL_WIDTH = "\uff41\uff4c\uff49\uff43\uff45"  # ａｌｉｃｅ


def alike(a: str, b: str) -> bool:
    return bool(lookalike_keys(a) & lookalike_keys(b))


# ------------------------------------------------------------------ the skeleton

@pytest.mark.parametrize("other", [CYRILLIC_A, FULL_WIDTH, "Alice", "ALICE", "\u0430lic\u0435"])
def test_the_issues_look_alikes_have_alices_skeleton(other):
    assert student_id_problem(other) is None  # each is a valid id: only the pair is a problem
    assert alike(other, "alice")


@pytest.mark.parametrize("a, b", [
    ("alice1", "alicel"),  # UTS #39 maps the digit 1 to l, and 0 to O
    ("b0b", "bOb"),
    ("Ian", "lan"),  # and capital I to l: case folding first would hide it
    ("modern", "rnodern"),  # m to rn
    ("alice\ufe0f", "alice"),  # an invisible variation selector (default ignorable)
    ("alice\u3164", "alice"),  # a Hangul filler: a letter (Lo) that shows nothing
    ("\u039a\u0391\u03a4\u0395", "Kate"),  # Greek capitals ΚΑΤΕ: Latin K, A, T, E to a reader
])
def test_what_uts39_counts_as_confusable(a, b):
    assert alike(a, b)


@pytest.mark.parametrize("a, b", [
    ("张三", "张四"), ("José", "Jose"), ("Øystein", "Oystein"), ("zoë", "zoe"), ("Müller", "Muller"),
    ("Αλέξης", "Alexis"), ("Иван", "Ivan"), ("alice", "alice2"), ("s1234", "s1235"), ("ana", "anna"),
    ("José", "Josè"),  # one combining mark for another: not the same letter
])
def test_names_that_do_not_look_alike_are_kept_apart(a, b):
    assert student_id_problem(a) is None and student_id_problem(b) is None
    assert not alike(a, b)


def test_an_id_that_shows_nothing_is_refused():
    """A Hangul filler is a letter (Lo) that draws nothing: alone, it is no name."""
    assert "shows nothing" in (student_id_problem("\u3164\u3164") or "")
    assert student_id_problem("a\u3164") is None  # beside a letter: a look-alike of ``a``, caught in pairs


def test_a_skeleton_is_its_own_skeleton_across_the_whole_table():
    """The table is read one way from a copy that lists each mapping both ways: every
    character's skeleton is a fixed point, and its prototype's. (A character NFD takes
    apart is never looked up: UTS #39 decomposes first.)"""
    table = students._prototypes()
    assert len(table) > 6000
    for char, prototype in table.items():
        if unicodedata.normalize("NFD", char) == char:
            assert skeleton(skeleton(char)) == skeleton(char) == skeleton(prototype), (char, prototype)


def counting_keys(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids whose keys are computed from now on, in order."""
    calls: list[str] = []
    keys = students.lookalike_keys

    def counted(student: str) -> frozenset[str]:
        calls.append(student)
        return keys(student)

    monkeypatch.setattr(students, "lookalike_keys", counted)
    return calls


def test_groups_are_transitive_and_each_id_is_read_once(monkeypatch):
    calls = counting_keys(monkeypatch)
    index = Lookalikes(["alice", "bob", CYRILLIC_A])
    index.add(["ALICE", "allce", "bob", "carol"])
    assert index.groups() == [sorted(["alice", CYRILLIC_A, "ALICE", "allce"])]
    assert index.like("alice") == sorted([CYRILLIC_A, "ALICE"])
    assert index.like("b\u043eb") == ["bob"]  # an id not in the index: compared, not added
    assert sorted(calls) == sorted(["alice", "bob", CYRILLIC_A, "ALICE", "allce", "carol", "b\u043eb"])


def test_two_thousand_ids_are_screened_once_each(monkeypatch, tmp_path):
    """Linear: each id's keys are computed once per run, whatever the class's size."""
    calls = counting_keys(monkeypatch)
    ids = [f"s{n:04d}" for n in range(2000)]
    entries = [reader.Entry(s, tmp_path / s, "folder") for s in ids[1000:]] + [
        reader.Entry("s0O07", tmp_path / "s0O07", "folder")]
    notes = lookalike_notes(entries, known=ids[:1000])
    assert len(calls) == 2001
    assert list(notes) == ["s0O07"]  # looks like s0007, in the gradebook


# ------------------------------------------------------------------ the intake

def entry(folder: Path, name: str) -> None:
    (folder / name / "tensors").mkdir(parents=True)
    (folder / name / "tensors" / "one_hot.py").write_text(f"# {name}\n")


def test_look_alikes_in_one_folder_are_graded_each_with_a_note_naming_the_others(tmp_path):
    for name in ("alice", CYRILLIC_A, FULL_WIDTH, "bob"):
        entry(tmp_path, name)
    entries = {e.student: e for e in reader.discover(tmp_path, [DRILL])}
    notes = lookalike_notes(list(entries.values()))
    assert all(e.problem is None for e in entries.values()), "graded: which ids are one student is your call"
    assert sorted(notes) == sorted(["alice", CYRILLIC_A, FULL_WIDTH])
    assert "looks like" in notes["alice"] and "\\u0430lice" in notes["alice"]  # the difference, spelled out
    assert "alice" in notes[CYRILLIC_A] and "check that they are different students" in notes[FULL_WIDTH]


def test_a_look_alike_of_a_graded_student_keeps_nobody_from_being_graded(tmp_path):
    """The red team's attack: аlice graded first kept the real alice out on every run
    after. Now both are graded, each with the note."""
    for name in ("alice", CYRILLIC_A, "bob"):
        entry(tmp_path, name)
    entries = {e.student: e for e in reader.discover(tmp_path, [DRILL])}
    notes = lookalike_notes(list(entries.values()), known=[CYRILLIC_A, "carol"])
    assert all(e.problem is None for e in entries.values())
    assert set(notes) == {"alice", CYRILLIC_A} and "\\u0430lice" in notes["alice"]


def test_honest_names_the_table_joins_are_graded_not_refused(tmp_path):
    for name in ("amie", "arnie", "李鹃", "李鹂"):
        entry(tmp_path, name)
    entries = reader.discover(tmp_path, [DRILL])
    lookalike_notes(entries)
    assert all(e.problem is None for e in entries)


# ------------------------------------------------------------------ grade-all

def test_grade_all_grades_the_look_alike_and_says_so_loudly(tmp_path, capsys):
    """The gradebook has alice; the new class folder brings аlice (Cyrillic а) beside
    alice and bob: all are graded, and the look-alikes are in the summary and in class.html."""
    folder = tmp_path / "submissions"
    for name in ("alice", CYRILLIC_A, "bob"):
        entry(folder, name)
    out = tmp_path / "class"
    template = GradingJob(student="", course=str(REPO), files=b"", isolation=Isolation.NONE)
    grading = classgrade.ClassGrading(REPO, out, template, [DRILL], False, Console(quiet=True))
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        results = results_json.build("alice", {DRILL: ExerciseInfo(DRILL, 10)},
                                     [results_json.TestRecord(DRILL, "p", PASSED)], suite=grading.suite)
        book.record("alice", "earlier", results, wall_s=1, tests_s=1, worker="w")
        jobs = grading.plan(book, reader.discover(folder, [DRILL]), gpu=False)
        assert sorted(job.student for job in jobs) == sorted(["alice", CYRILLIC_A, "bob"])
        assert sorted(grading.tally.lookalikes) == sorted(["alice", CYRILLIC_A]) and not grading.tally.problems
        assert "looks like alice" in (grading._graded_problem(CYRILLIC_A) or "")
    classgrade._summary(grading.tally, {}, {}, out, 1.0)
    printed = capsys.readouterr().out
    assert "2 student id(s) look like another's" in printed and "\\u0430lice" in printed


def test_many_look_alikes_stay_one_line_each(tmp_path):
    """Case alone makes 32 spellings of alice: each note names five and counts the rest."""
    names = [''.join(c.upper() if n >> i & 1 else c for i, c in enumerate("alice")) for n in range(32)]
    entries = [reader.Entry(s, tmp_path / s, "folder") for s in names]
    notes = lookalike_notes(entries)
    assert len(notes) == 32 and all("and 26 more" in n and len(n) < 400 for n in notes.values())
