"""The CLI: its answers to bad input (one clear sentence, exit code 2, nothing
graded), and how ``grade`` starts the sandbox."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from grader.cli import main
from grader.core.syllabus import exercise_tests
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


def test_a_file_is_not_a_submission_unless_named_after_a_drill(capsys, tmp_path):
    f = tmp_path / "sub.py"
    f.write_text("")
    code = main(["grade", str(f), "--course", str(REPO), "--out", str(tmp_path)])
    assert code == 2
    assert "sub.py is not named after a drill" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


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


def test_ctrl_c_stops_a_grade_keeping_the_last_results_and_stops_a_check(monkeypatch, tmp_path):
    """One pytest runner serves grade and check; an interrupted grade records nothing and
    leaves the last results.json as it was, and the command says so (exit 130); check
    turns it into Ctrl-C (KeyboardInterrupt)."""
    import pytest as pytest_module

    from grader.core.errors import GradingInterrupted
    from grader.grading import pipeline
    from grader.grading.request import GradingRequest
    from grader.intake.submission import open_submission
    from grader.learner import check

    last = tmp_path / "results.json"
    last.write_text('{"the learner": "last results"}')
    monkeypatch.setattr(pytest_module, "main", lambda *a, **k: pytest_module.ExitCode.INTERRUPTED)
    with pytest.raises(GradingInterrupted, match="nothing was recorded"):
        pipeline.grade(GradingRequest(course=REPO, only=("tensors/one_hot",)),
                       open_submission(REPO / "reference", REPO))
    assert last.read_text() == '{"the learner": "last results"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no partial file either
    assert main(["grade", "reference", "--only", "tensors/one_hot", "--out", str(tmp_path),
                 "--course", str(REPO)]) == 130
    assert last.read_text() == '{"the learner": "last results"}'
    with pytest.raises(KeyboardInterrupt):
        check.run_check(REPO, "tensors/one_hot", REPO / "reference")


def test_ctrl_c_in_a_terminal_keeps_the_learners_results(tmp_path):
    """A real SIGINT to the whole process group, as a terminal's Ctrl-C sends it, in the
    middle of a parallel grading: exit 130, the last results.json and report untouched."""
    import os
    import signal
    import time

    out = tmp_path / "reports"
    out.mkdir()
    (out / "results.json").write_text("last")
    (out / "index.html").write_text("last report")
    proc = subprocess.Popen(
        [sys.executable, "-c", "import signal, runpy, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "sys.argv = ['torchdrill', *sys.argv[1:]]; runpy.run_module('grader', run_name='__main__')",
         "grade", "reference", "-n", "2", "--isolation", "none", "--out", str(out), "--course", str(REPO)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(6)  # torch loaded, pytest-xdist's workers grading
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert (out / "results.json").read_text() == "last" and (out / "index.html").read_text() == "last report"
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "results.json"]


def test_the_command_line_loads_without_torch():
    """``grade`` starts the sandbox's zygote before this process imports torch, so the
    two imports overlap; that holds only while the command line imports no torch."""
    code = "import sys; from grader import cli; cli.build_parser(); sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_grade_starts_the_one_zygote_its_grading_uses_before_torch_loads(tmp_path):
    code = textwrap.dedent("""
        import sys
        from grader import cli
        from grader.sandbox import zygote
        started = []
        real_init = zygote.Zygote.__init__
        def init(self, plan, warm=False):
            started.append(("torch" in sys.modules, str(plan.isolation), warm))
            real_init(self, plan, warm)
        zygote.Zygote.__init__ = init
        code = cli.main(["grade", "reference", "--only", "tensors/one_hot",
                         "--isolation", "process", "--out", sys.argv[1]])
        print(started, code)
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    # one drill: a cold zygote (``grader.sandbox.zygote.warm_for``)
    assert done.stdout.strip().splitlines()[-1] == "[(False, 'process', False)] 0", done.stderr[-2000:]
