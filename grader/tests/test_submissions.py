"""A class's submissions: which entries are submissions, why the others are not,
and that what is read, hashed, packed and unpacked is exactly the exercises."""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from grader.core.sources import MAX_SOURCE_BYTES
from grader.core.students import student_id_problem
from grader.intake import archives, reader
from grader.intake.archives import SubmissionProblem
from grader.intake.reader import Entry
from grader.intake.submission import open_submission
from grader.tests.grading import REPO

IDS = ["nn/layer_norm", "tensors/one_hot", "tensors/padding"]
WORK = {
    "tensors/one_hot.py": b"def one_hot(x, n):\n    return x\n",
    "tensors/helpers.py": b"TWO = 2\n",
    "nn/layer_norm.py": b"def layer_norm(x):\n    return x\n",
}


def tree(base: Path, files: Mapping[str, bytes | str]) -> Path:
    for rel, data in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
    base.mkdir(parents=True, exist_ok=True)
    return base


def make_zip(path: Path, files: Mapping[str, bytes | str], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def under(prefix: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"{prefix}{k}": v for k, v in files.items()}


def one(folder: Path, ids=IDS) -> Entry:
    [entry] = reader.discover(folder, ids)
    return entry


def problem(folder: Path, ids=IDS) -> str:
    return reason(one(folder, ids))


def reason(entry: Entry) -> str:
    """Why ``entry`` is not a submission."""
    assert entry.problem is not None, entry
    return entry.problem


@pytest.fixture
def subs(tmp_path: Path) -> Path:
    folder = tmp_path / "submissions"
    folder.mkdir()
    return folder


# ------------------------------------------------------------------ accepted layouts

LAYOUTS = {
    "flat zip": lambda d: make_zip(d / "alice.zip", WORK),
    "zip with one top folder": lambda d: make_zip(d / "alice.zip", under("alice/", WORK)),
    "zip of handout contents": lambda d: make_zip(d / "alice.zip", {
        "course.toml": "", "tests/tensors/test_one_hot.py": "", **under("exercises/", WORK)}),
    "zip of a handout folder": lambda d: make_zip(d / "alice.zip", {
        "handout/course.toml": "", "handout/grader/cli.py": "x = 1\n",
        "handout/tests/tensors/test_one_hot.py": "", **under("handout/exercises/", WORK)}),
    "zip from windows (backslashes)": lambda d: make_zip(
        d / "alice.zip", {k.replace("/", "\\"): v for k, v in under("alice/", WORK).items()}),
    "zip from macOS (__MACOSX)": lambda d: make_zip(d / "alice.zip", {
        **under("alice/", WORK), "__MACOSX/alice/tensors/._one_hot.py": b"\0\5junk",
        "alice/.DS_Store": b"\0"}),
    "stored zip": lambda d: make_zip(d / "alice.zip", WORK, zipfile.ZIP_STORED),
    "folder": lambda d: tree(d / "alice", {**WORK, "notes.txt": "hi", ".hidden.py": "x",
                                           ".git/config.py": "", "tensors/__pycache__/a.pyc": ""}),
    "handout folder": lambda d: tree(d / "alice", {
        "course.toml": "", "tests/tensors/test_one_hot.py": "", "grader/cli.py": "",
        **under("exercises/", WORK), "exercises/.torchdrill-hints.json": "{}"}),
    "folder with one top folder (an unzipped zip)": lambda d: tree(d / "alice", under("alice-hw3/", WORK)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_accepted_layouts_read_the_same_files_and_hash_the_same(subs, layout):
    LAYOUTS[layout](subs)
    entry = one(subs)
    assert entry.problem is None, entry.problem
    assert entry.student == "alice"
    assert reader.files(entry) == WORK
    assert archives.content_hash(reader.files(entry)) == archives.content_hash(WORK)


def test_root_of_a_handout_folder_is_what_grade_uses(subs):
    LAYOUTS["handout folder"](subs)
    entry = one(subs)
    assert entry.kind == "folder" and entry.root == "exercises"
    assert open_submission(entry.source, REPO).folder == (entry.source / "exercises").resolve()


def test_kinds_and_roots(subs):
    make_zip(subs / "bob.ZIP", under("bob/exercises/", WORK))
    tree(subs / "carol", WORK)
    bob, carol = reader.discover(subs, IDS)
    assert (bob.student, bob.kind, bob.root, bob.label) == ("bob", "zip", "bob/exercises", "bob.ZIP")
    assert (carol.student, carol.kind, carol.root, carol.label) == ("carol", "folder", "", "carol/")


def test_exercise_ids_may_be_any_collection(subs):
    tree(subs / "alice", WORK)
    ids = reader.discover(subs, {"tensors/one_hot": Path("t.py")}.keys())
    assert ids[0].problem is None


# ------------------------------------------------------------------ order and isolation

def test_sorted_by_student_and_dotfiles_skipped(subs):
    tree(subs / "zed", WORK)
    make_zip(subs / "alice.zip", WORK)
    tree(subs / "bob", WORK)
    tree(subs / ".git", WORK)
    (subs / ".DS_Store").write_bytes(b"\0")
    entries = reader.discover(subs, IDS)
    assert [e.student for e in entries] == ["alice", "bob", "zed"]
    assert all(e.problem is None for e in entries)


def test_a_non_submission_does_not_stop_the_others(subs, monkeypatch):
    tree(subs / "alice", WORK)
    (subs / "bob.zip").write_bytes(b"not a zip at all")
    (subs / "carol.pdf").write_bytes(b"%PDF")
    make_zip(subs / "dave.zip", {"../../etc/evil.py": "x"})
    tree(subs / "erin", WORK)
    tree(subs / "frank", WORK)
    real = reader._listing

    def crash_for_erin(entry):
        if entry.student == "erin":
            raise RuntimeError("something nobody foresaw")
        return real(entry)

    monkeypatch.setattr(reader, "_listing", crash_for_erin)
    entries = {e.student: e for e in reader.discover(subs, IDS)}
    assert sorted(entries) == ["alice", "bob", "carol.pdf", "dave", "erin", "frank"]
    assert entries["alice"].problem is None and entries["frank"].problem is None
    assert reader.files(entries["frank"]) == WORK
    assert "not a readable zip" in reason(entries["bob"])
    assert "neither a folder, a .zip file nor a notebook" in reason(entries["carol.pdf"])
    assert "zip-slip" in reason(entries["dave"])
    assert entries["erin"].problem == "erin/ could not be read (RuntimeError: something nobody foresaw)"


def test_submissions_folder_must_be_a_folder(tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        reader.discover(tmp_path / "missing", IDS)


# ------------------------------------------------------------------ problems

def test_corrupt_zip_says_what_zipfile_said(subs):
    (subs / "alice.zip").write_bytes(b"PK\x03\x04 but nothing else")
    assert problem(subs) == ("alice.zip is not a readable zip file "
                             "(zipfile says: File is not a zip file)")


def test_truncated_zip(subs, tmp_path):
    data = make_zip(tmp_path / "whole.zip", WORK).read_bytes()
    (subs / "alice.zip").write_bytes(data[: len(data) - 30])
    assert problem(subs).startswith("alice.zip is not a readable zip file (zipfile says: ")


@pytest.mark.parametrize("name, why", [
    ("../evil.py", "a path through '..'"),
    ("alice/../../evil.py", "a path through '..'"),
    ("..\\..\\evil.py", "a path through '..'"),
    ("/etc/evil.py", "an absolute path"),
    ("C:/Windows/evil.py", "a path on a drive"),
])
def test_zip_slip_refused(subs, name, why):
    make_zip(subs / "alice.zip", {**WORK, name: "x"})
    message = problem(subs)
    assert message.startswith(f"alice.zip has a member named {name!r}, {why}")
    assert "zip-slip" in message


def _encrypt_flag(data: bytes) -> bytes:
    """Set the 'encrypted' bit on every member (zipfile cannot write encrypted zips)."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = out.find(signature)
        while at >= 0:
            out[at + offset] |= 0x1
            at = out.find(signature, at + 4)
    return bytes(out)


def test_encrypted_zip(subs, tmp_path):
    data = make_zip(tmp_path / "plain.zip", WORK).read_bytes()
    (subs / "alice.zip").write_bytes(_encrypt_flag(data))
    assert "is encrypted" in problem(subs) and "password" in problem(subs)


def test_zip_bomb_by_ratio(subs):
    make_zip(subs / "alice.zip", {**WORK, "tensors/padding.py": b"#" * (512 * 2**10)})
    message = problem(subs)
    assert message.startswith("alice.zip: tensors/padding.py expands ")
    assert "zip bomb" in message


def test_zip_bomb_by_total_size(subs):
    chunk = bytes(range(256)) * (MAX_SOURCE_BYTES // 256)  # 1 MiB, at the cap
    spread = {f"tensors/part{i:02}.py": chunk for i in range(17)}
    make_zip(subs / "alice.zip", {**WORK, **spread}, zipfile.ZIP_STORED)
    assert problem(subs).startswith("alice.zip: its .py files come to 17.0 MiB (at most 16.0 MiB)")


def test_zip_member_count_refused_before_parsing(subs, monkeypatch):
    make_zip(subs / "alice.zip", {**WORK, **{f"data/{i}.txt": "" for i in range(10)}})
    monkeypatch.setattr(archives, "MAX_MEMBERS", 5)

    def never(*args, **kwargs):
        raise AssertionError("the directory was parsed")

    monkeypatch.setattr(zipfile, "ZipFile", never)
    assert problem(subs) == "alice.zip has 13 members (at most 5): hand in the exercises only"


def _as_zip64(data: bytes) -> bytes:
    """The same zip with a zip64 end record: the classic one holds only sentinels."""
    eocd = struct.Struct("<4s4H2LH")
    at = len(data) - eocd.size
    _, _, _, here, count, size, offset, _ = eocd.unpack_from(data, at)
    zip64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, here, count, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at, 1)
    end = eocd.pack(b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:at] + zip64 + locator + end


def test_zip64_member_count_is_read_too(subs, tmp_path, monkeypatch):
    data = make_zip(tmp_path / "plain.zip", {**WORK, "notes.txt": ""}).read_bytes()
    (subs / "alice.zip").write_bytes(_as_zip64(data))
    entry = one(subs)
    assert entry.problem is None and reader.files(entry) == WORK  # zipfile reads it
    monkeypatch.setattr(archives, "MAX_MEMBERS", 3)
    monkeypatch.setattr(zipfile, "ZipFile", None)  # refused before zipfile parses anything
    assert problem(subs) == "alice.zip has 4 members (at most 3): hand in the exercises only"


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_with_a_member_twice(subs):
    with zipfile.ZipFile(subs / "alice.zip", "w") as zf:
        for name, data in WORK.items():
            zf.writestr(name, data)
        zf.writestr("tensors/one_hot.py", "the other one")
    assert problem(subs) == ("alice.zip holds two members named tensors/one_hot.py: "
                             "re-zip it so that each file is there once")


def test_zip_directory_size_refused(subs, monkeypatch):
    make_zip(subs / "alice.zip", WORK)
    monkeypatch.setattr(archives, "MAX_DIRECTORY_BYTES", 100)
    assert "member directory" in problem(subs)


def test_members_not_read_do_not_count(subs):
    # a student's data file is never decompressed: its size and ratio do not matter
    make_zip(subs / "alice.zip", {**WORK, "data.bin": b"\0" * (20 * 2**20)})
    entry = one(subs)
    assert entry.problem is None and reader.files(entry) == WORK


def test_bzip2_members_are_not_read(subs):
    make_zip(subs / "alice.zip", WORK, zipfile.ZIP_BZIP2)
    assert "is compressed with bzip2; only stored or deflated members are read" in problem(subs)


def test_oversized_file_skipped_as_the_sandbox_does(subs):
    tree(subs / "alice", {**WORK, "tensors/padding.py": b"#" * (MAX_SOURCE_BYTES + 1)})
    entry = one(subs)
    assert entry.problem is None
    assert reader.files(entry) == WORK


def test_only_oversized_exercise_files(subs):
    tree(subs / "alice", {"tensors/one_hot.py": b"#" * (MAX_SOURCE_BYTES + 1)})
    assert problem(subs) == ("alice/: every .py file is over 1.0 MiB (e.g. tensors/one_hot.py), "
                             "so none can be graded")


def test_empty_folder_and_zip(subs):
    (subs / "alice").mkdir()
    tree(subs / "bob", {".DS_Store": "x"})
    make_zip(subs / "carol.zip", {})
    found = {e.student: e.problem for e in reader.discover(subs, IDS)}
    assert found == {"alice": "alice/ is empty", "bob": "bob/ is empty", "carol": "carol.zip is empty"}


def test_no_exercise_file(subs):
    make_zip(subs / "alice.zip", {"notes.txt": "I did my best", "src/hw/one_hot.py": "x", "hw.zip": ""})
    assert problem(subs) == (
        "alice.zip has no exercise file: expected e.g. nn/layer_norm.py at the top of the zip, "
        "under exercises/, or under one top folder; found src/hw/one_hot.py, which belongs at "
        "tensors/one_hot.py; it holds hw.zip: zips inside a submission are not opened")


@pytest.mark.parametrize("prefix", ["", "alice/"])
def test_loose_drill_files_are_read_where_they_belong(subs, prefix):
    """Files handed in one by one (``one_hot.py``), at the top or in one top folder; a
    file that is not a drill's is left out, as is a name two drills would share."""
    make_zip(subs / "alice.zip", {f"{prefix}one_hot.py": "x = 1\n", f"{prefix}notes.py": "y = 2\n",
                                  f"{prefix}layer_norm.py": "z = 3\n"})
    entry = one(subs)
    assert entry.problem is None and entry.loose is not None
    assert reader.files(entry) == {"tensors/one_hot.py": b"x = 1\n", "nn/layer_norm.py": b"z = 3\n"}
    make_zip(subs / "alice.zip", {f"{prefix}one_hot.py": "x = 1\n"})
    assert "no exercise file" in problem(subs, ["tensors/one_hot", "other/one_hot"])  # which one_hot?


def test_exercise_files_too_deep(subs):
    make_zip(subs / "alice.zip", under("a/b/", WORK))
    tree(subs / "bob", under("bob/hw3/exercises/", WORK))
    alice, bob = reader.discover(subs, IDS)
    assert alice.problem == ("alice.zip: found nn/layer_norm.py under a/b/: "
                             "put the exercise folders at the top of the zip")
    assert bob.problem == ("bob/: found nn/layer_norm.py under bob/hw3/exercises/: "
                           "put the exercise folders at the top of the folder")


def test_exercise_files_at_two_depths(subs):
    make_zip(subs / "alice.zip", {**WORK, **under("exercises/", WORK)})
    assert problem(subs) == ("alice.zip has exercise files in 2 places (nn/layer_norm.py, "
                             "exercises/nn/layer_norm.py): keep one copy of the exercise folders")


def test_two_top_folders_with_exercises(subs):
    make_zip(subs / "alice.zip", {**under("alice/", WORK), **under("bob/", WORK)})
    assert "has exercise files in 2 places (alice/nn/layer_norm.py, bob/nn/layer_norm.py)" in problem(subs)


def test_neither_folder_nor_zip(subs):
    (subs / "alice.tar.gz").write_bytes(b"\x1f\x8b")
    entry = one(subs)
    assert (entry.student, entry.kind) == ("alice.tar.gz", "other")
    assert reason(entry).startswith("alice.tar.gz is a file, neither a folder, a .zip file nor a notebook")
    with pytest.raises(SubmissionProblem, match="neither a folder, a .zip file nor a notebook"):
        reader.files(entry)


def test_special_files_are_not_opened(subs):
    os.mkfifo(subs / "alice.zip")  # opening it would block discover forever
    os.mkfifo(subs / "bob")
    alice, bob = reader.discover(subs, IDS)
    assert alice.problem == "alice.zip is not a regular file"
    assert bob.kind == "other" and "a special file" in reason(bob)


def test_two_entries_for_one_student_both_refused(subs):
    tree(subs / "alice", WORK)
    make_zip(subs / "alice.zip", WORK)
    tree(subs / "bob", WORK)
    entries = reader.discover(subs, IDS)
    assert [(e.student, e.kind) for e in entries] == [("alice", "folder"), ("alice", "zip"), ("bob", "folder")]
    for entry in entries[:2]:
        assert entry.problem == (f"{entry.label}: student alice has more than one entry "
                                 "(alice.zip, alice/): keep one, then grade again")
    assert entries[2].problem is None


def test_ids_differing_only_in_case_both_refused(subs):
    tree(subs / "alice", WORK)
    make_zip(subs / "Alice.zip", WORK)
    upper, lower = reader.discover(subs, IDS)
    assert "case-insensitive" in reason(upper) and "case-insensitive" in reason(lower)


@pytest.mark.parametrize("name, expected", [
    ("bob smith", "has characters a student id may not have (space)"),
    ("bob;rm", "(';')"),
    ("zoe\u0308", "not in Unicode's composed form"),  # as typed on a Mac, unless the intake composes it
    ("a\u202eb", "('\\u202e')"),  # a right-to-left override: invisible, reorders what follows
    ("a\u200bb", "('\\u200b')"),  # a zero-width space
    ("a,b\"c", "('\"', ',')"),
    ("-rf", "must start with a letter or digit (a leading '-'"),
    ("+SUM", "must start with a letter or digit"),
    ("@home", "must start with a letter or digit"),
    ("a" * 101, "is 101 characters long (at most 100,"),
    ("张" * 70, "is 70 characters long (at most 100, and 200 bytes of UTF-8)"),
])
def test_unsafe_student_ids(name, expected):
    message = student_id_problem(name)
    assert message is not None and expected in message


@pytest.mark.parametrize("name, expected", [("bob smith", "(space)"), ("-rf", "a leading '-'")])
def test_unsafe_student_ids_are_refused_by_the_intake(subs, name, expected):
    tree(subs / name, WORK)
    message = problem(subs)
    assert message.startswith(f"{name}/: ") and expected in message


@pytest.mark.parametrize("name", ["alice", "a.b-c_d@uni.edu", "s+1", "0042", "a" * 100,
                                  "张三", "zoë", "Müller-Lüdenscheidt", "हिन्दी", "Иван"])
def test_safe_student_ids(name):
    assert student_id_problem(name) is None


def test_a_decomposed_name_is_the_composed_id(subs):
    """A zip named on a Mac (``zoe`` + a combining diaeresis) is student ``zoë``, the id
    the same name typed elsewhere gives, and one entry with it."""
    make_zip(subs / "zoe\u0308.zip", WORK)
    entry = one(subs)
    assert entry.student == "zo\u00eb" and entry.problem is None


def test_unsafe_id_from_a_zip_name(subs):
    make_zip(subs / "bob smith.zip", WORK)
    entry = one(subs)
    assert entry.student == "bob smith" and reason(entry).startswith("bob smith.zip: student id")


# ------------------------------------------------------------------ symbolic links

def test_symlinked_entry_is_a_problem(subs, tmp_path):
    outside = tree(tmp_path / "elsewhere" / "alice", WORK)
    zipped = make_zip(tmp_path / "elsewhere" / "bob.zip", WORK)
    (subs / "alice").symlink_to(outside)
    (subs / "bob.zip").symlink_to(zipped)
    (subs / "carol").symlink_to(tmp_path / "nowhere")
    entries = reader.discover(subs, IDS)
    assert [e.student for e in entries] == ["alice", "bob", "carol"]
    assert all("is a symbolic link" in reason(e) for e in entries)
    with pytest.raises(SubmissionProblem, match="symbolic link"):
        reader.files(entries[0])


def test_links_inside_a_folder_are_ignored(subs, tmp_path):
    secret = tree(tmp_path / "secret", {"nn/layer_norm.py": "SECRET", "key.py": "KEY"})
    alice = tree(subs / "alice", {"tensors/one_hot.py": WORK["tensors/one_hot.py"]})
    (alice / "tensors" / "padding.py").symlink_to(secret / "key.py")  # a file outside
    (alice / "nn").symlink_to(secret / "nn")  # a folder outside
    (alice / "tensors" / "again.py").symlink_to(alice / "tensors" / "one_hot.py")  # inside
    entry = one(subs)
    assert entry.problem is None
    assert reader.files(entry) == {"tensors/one_hot.py": WORK["tensors/one_hot.py"]}


def test_a_folder_of_links_only(subs, tmp_path):
    secret = tree(tmp_path / "secret", WORK)
    (subs / "alice").mkdir()
    (subs / "alice" / "tensors").symlink_to(secret / "tensors")
    assert problem(subs) == "alice/ is empty (it holds 1 symbolic link(s), which are ignored)"


def test_links_inside_a_zip_are_ignored(subs):
    link = zipfile.ZipInfo("tensors/padding.py")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(subs / "alice.zip", "w") as zf:
        for name, data in WORK.items():
            zf.writestr(name, data)
        zf.writestr(link, "/etc/passwd")
    entry = one(subs)
    assert entry.problem is None and reader.files(entry) == WORK


# ------------------------------------------------------------------ reading again

def test_files_refuses_an_entry_with_a_problem(subs):
    (subs / "alice.zip").write_bytes(b"junk")
    with pytest.raises(SubmissionProblem, match="alice.zip is not a readable zip"):
        reader.files(one(subs))


def test_files_rechecks_a_zip_that_changed(subs):
    make_zip(subs / "alice.zip", WORK, zipfile.ZIP_STORED)
    entry = one(subs)
    data = (subs / "alice.zip").read_bytes()
    (subs / "alice.zip").write_bytes(data.replace(b"return x", b"return y"))  # CRC now wrong
    with pytest.raises(SubmissionProblem, match=r"alice.zip: cannot read .* \(zipfile says: Bad CRC-32"):
        reader.files(entry)
    make_zip(subs / "alice.zip", {"../evil.py": "x", **WORK})
    with pytest.raises(SubmissionProblem, match="zip-slip"):
        reader.files(entry)


def test_files_of_a_folder_that_emptied(subs):
    tree(subs / "alice", WORK)
    entry = one(subs)
    for rel in WORK:
        (subs / "alice" / rel).unlink()
    with pytest.raises(SubmissionProblem, match="alice/ has no .py file left to grade"):
        reader.files(entry)


def test_names_no_module_can_have_are_skipped(subs):
    alice = tree(subs / "alice", WORK)
    (alice / "tensors" / "odd\\name.py").write_text("x")
    os.close(os.open(os.fsencode(alice / "tensors") + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    entry = one(subs)
    assert entry.problem is None and reader.files(entry) == WORK
    archives.pack(reader.files(entry))  # what files returns can always be packed


# ------------------------------------------------------------------ hashing

def test_content_hash():
    h = archives.content_hash(WORK)
    assert len(h) == 64 and int(h, 16) >= 0
    assert archives.content_hash(dict(reversed(WORK.items()))) == h
    assert archives.content_hash({**WORK, "tensors/helpers.py": b"TWO = 3\n"}) != h
    assert archives.content_hash({**WORK, "tensors/helper.py": WORK["tensors/helpers.py"]}) != h
    # bytes moved between a name and a content do not collide
    assert archives.content_hash({"a.py": b"b.py"}) != archives.content_hash({"a.pyb.py": b""})
    assert archives.content_hash({}) != archives.content_hash({"a.py": b""})


# ------------------------------------------------------------------ packing

def test_pack_is_deterministic(subs):
    once = archives.pack(WORK)
    assert archives.pack(WORK) == once
    assert archives.pack(dict(reversed(WORK.items()))) == once
    names = zipfile.ZipFile(io.BytesIO(once)).namelist()
    assert names == sorted(WORK)
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zipfile.ZipFile(io.BytesIO(once)).infolist())


def test_pack_unpack_round_trip(subs, tmp_path):
    make_zip(subs / "alice.zip", under("alice/exercises/", WORK))
    read = reader.files(one(subs))
    dest = tmp_path / "unpacked"
    old = os.umask(0o077)  # the modes are set, not left to the umask
    try:
        archives.unpack(archives.pack(read), dest)
    finally:
        os.umask(old)
    entry = Entry("alice", dest, "folder")
    assert reader.files(entry) == WORK
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "tensors").stat().st_mode) == 0o755
    assert stat.S_IMODE((dest / "tensors" / "one_hot.py").stat().st_mode) == 0o644
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == ["nn", "nn/layer_norm.py", "tensors",
                                                                         "tensors/helpers.py", "tensors/one_hot.py"]


def test_unpack_into_an_empty_folder_but_not_a_full_one(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    archives.unpack(archives.pack(WORK), empty)
    assert (empty / "tensors" / "one_hot.py").read_bytes() == WORK["tensors/one_hot.py"]
    with pytest.raises(FileExistsError, match="not an empty folder"):
        archives.unpack(archives.pack(WORK), empty)
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        archives.unpack(archives.pack(WORK), tmp_path / "file")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        archives.unpack(archives.pack(WORK), tmp_path / "link")
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("path", ["../evil.py", "/abs.py", "a/../b.py", "a\\b.py", "./a.py", "a//b.py",
                                  ".hidden.py", "a/.b/c.py", "notes.txt", "tensors/"])
def test_pack_refuses_what_files_never_returns(path):
    with pytest.raises(ValueError, match="cannot pack"):
        archives.pack({path: b"x"})


def test_pack_refuses_oversized():
    with pytest.raises(ValueError, match="at most 1.0 MiB"):
        archives.pack({"a.py": b"#" * (MAX_SOURCE_BYTES + 1)})


def _raw_zip(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


def _symlink_member() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("tensors/padding.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize("members, expected", [
    ([("../evil.py", b"x")], "a path through '..'"),
    ([("/tmp/evil.py", b"x")], "an absolute path"),
    ([("a/../../evil.py", b"x")], "a path through '..'"),
    ([("notes.txt", b"x")], "not a .py file"),
    ([(".hidden.py", b"x")], "a hidden file"),
    ([("tensors/", b"")], "not a normalized relative path"),
    ([(_symlink_member(), b"/etc/passwd")], "is not a regular file"),
    ([("a.py", b"1"), ("a.py", b"2")], "holds a.py twice"),
    ([("a.py", b"1"), ("a.py/b.py", b"2")], "both as a file and as a folder"),
    ([("big.py", b"#" * (2**20 + 1))], "is 1.0 MiB (at most 1.0 MiB)"),
])
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_unpack_refuses_an_unsafe_archive(tmp_path, members, expected):
    data = _raw_zip(members)
    with pytest.raises(SubmissionProblem, match=expected.replace("(", r"\(").replace(")", r"\)")):
        archives.unpack(data, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
    assert not (tmp_path / "evil.py").exists()


def test_unpack_refuses_a_bomb(tmp_path):
    bomb = _raw_zip([("a.py", b"#" * (512 * 2**10))], zipfile.ZIP_DEFLATED)
    with pytest.raises(SubmissionProblem, match="zip bomb"):
        archives.unpack(bomb, tmp_path / "dest")
    chunk = bytes(range(256)) * (2**20 // 256)
    big = _raw_zip([(f"p{i:02}.py", chunk) for i in range(17)])
    with pytest.raises(SubmissionProblem, match=r"unpacks to 17.0 MiB \(at most 16.0 MiB\)"):
        archives.unpack(big, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_unpack_refuses_many_members_and_encryption_and_junk(tmp_path, monkeypatch):
    with pytest.raises(SubmissionProblem, match="encrypted"):
        archives.unpack(_encrypt_flag(archives.pack(WORK)), tmp_path / "dest")
    with pytest.raises(SubmissionProblem, match="not a readable zip"):
        archives.unpack(b"junk" * 10, tmp_path / "dest")
    monkeypatch.setattr(archives, "MAX_MEMBERS", 2)
    with pytest.raises(SubmissionProblem, match=r"has 3 members \(at most 2\)"):
        archives.unpack(_raw_zip(list(WORK.items())), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_unpack_leaves_nothing_when_a_member_is_corrupt(tmp_path):
    data = archives.pack(WORK).replace(b"TWO = 2", b"TWO = 3")  # the last member written
    with pytest.raises(SubmissionProblem, match="Bad CRC-32"):
        archives.unpack(data, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionProblem):
        archives.unpack(data, tmp_path / "empty")
    assert (tmp_path / "empty").is_dir() and not any((tmp_path / "empty").iterdir())


# ------------------------------------------------------------------ one rule for both

def test_the_sandbox_copies_exactly_what_class_grading_reads(subs, tmp_path):
    """``grader.core.sources`` is the one rule: the sandbox's copy of a folder holds the
    very files, with the very bytes, that ``reader.files`` reads from it."""
    from grader.sandbox.sandboxes import copy_sources

    secret = tmp_path / "secret.py"
    secret.write_text("ANSWER = 42\n")
    alice = tree(subs / "alice", {**WORK, "notes.txt": "hi", ".hidden.py": "x", ".git/config.py": "x",
                                  "tensors/big.py": b"#" * (MAX_SOURCE_BYTES + 1),
                                  "nn/odd name.py": "y = 1\n"})
    (alice / "tensors" / "link.py").symlink_to(secret)
    (alice / "linked").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(alice / "tensors" / "fifo.py")
    copied = tmp_path / "copy"
    copy_sources(alice, copied)
    in_copy = {p.relative_to(copied).as_posix(): p.read_bytes()
               for p in copied.rglob("*") if p.is_file()}
    assert in_copy == reader.files(one(subs)) and "tensors/one_hot.py" in in_copy


def test_a_folder_holding_one_zip_is_graded_through_it(subs):
    """What some upload forms keep (``alice/alice.zip``): grade-all and grade read it alike."""
    make_zip(subs / "alice" / "handin.zip", WORK)
    entry = one(subs)
    assert entry.problem is None and entry.kind == "zip" and entry.student == "alice"
    assert reader.files(entry) == WORK
    assert dict(open_submission(subs / "alice", REPO).files) == WORK
    make_zip(subs / "alice" / "second.zip", WORK)  # two: which one is a guess
    assert "no exercise file" in problem(subs)
