"""The CLI's answers to bad input: one clear sentence, exit code 2, nothing graded."""

from __future__ import annotations

import pytest

from grader.cli import exercise_tests, main
from grader.tests.grading import REPO


def test_exercises_are_learned_from_the_test_files():
    assert {"tensors/one_hot", "tensors/contiguity", "attention/attention",
            "distributed/sync_bn", "distributed/sampler", "training/gan"} <= set(exercise_tests(REPO))


def test_unknown_exercise_is_refused_with_the_known_ones(capsys, tmp_path):
    code = main(["grade", "reference", "--course", str(REPO), "--out", str(tmp_path),
                 "--only", "tensors/one_hotx"])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown exercise tensors/one_hotx" in err and "tensors/one_hot" in err


def test_missing_submission_folder_is_refused(capsys, tmp_path):
    code = main(["grade", str(tmp_path / "nowhere"), "--course", str(REPO), "--out", str(tmp_path)])
    assert code == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_file_is_not_a_submission(capsys, tmp_path):
    f = tmp_path / "sub.py"
    f.write_text("")
    code = main(["grade", str(f), "--course", str(REPO), "--out", str(tmp_path)])
    assert code == 2
    assert "is not a folder" in capsys.readouterr().err


def test_no_course_found(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["grade"]) == 2
    assert "no torchdrill course" in capsys.readouterr().err


def test_help_names_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    out = capsys.readouterr().out
    for option in ("--out", "--only", "--workers", "--profile", "--course"):
        assert option in out


def test_ctrl_c_fails_a_grade_and_stops_a_check(monkeypatch, tmp_path):
    """One pytest runner serves grade and check; an interrupt means 'grading failed'
    to grade, and Ctrl-C (KeyboardInterrupt) to check."""
    import pytest as pytest_module

    from grader import cli, learn

    monkeypatch.setattr(pytest_module, "main", lambda *a, **k: pytest_module.ExitCode.INTERRUPTED)
    with pytest.raises(cli.GraderFailed, match="exit code 2 before writing results"):
        cli.grade(REPO, REPO / "reference", tmp_path, only=["tensors/one_hot"], show_progress=False)
    with pytest.raises(KeyboardInterrupt):
        learn.run_check(REPO, "tensors/one_hot", REPO / "reference")
