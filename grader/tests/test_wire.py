"""The boundary's data format: exact round trips, and refusals of anything malformed."""

from __future__ import annotations

import copy
import math
import pickle
import socket
import struct
from pathlib import Path
from typing import Any, cast

import pytest
import torch
from torch import nn

from grader.contract.harness import BatchSizes
from grader.sandbox import wire
from grader.sandbox.decoding import Decoder
from grader.sandbox.encoding import Encoder
from grader.sandbox.worker import Worker
from grader.sandbox.writeback import write_back


def round_trip(value, *, strict=True):
    """Encode, frame through a real socket pair, decode."""
    encoder = Encoder(strict=strict)
    node = encoder.value(value)
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"ok": node, "objects": encoder.objects}, encoder.buffers)
        header, payload = wire.receive(b)
    decoder = Decoder(header["objects"], payload)
    return decoder.value(header["ok"])


def test_plain_values_keep_their_exact_types():
    value = [None, True, 3, -0.0, 2.5, "s", (1, (2,)), {1: "a", "b": [2.0]}, torch.Size([2, 3]),
             torch.float16, torch.device("cpu")]
    got = round_trip(value)
    assert got == value
    assert [type(x) for x in got] == [type(x) for x in value]
    assert math.copysign(1, got[3]) == -1


def test_non_finite_floats():
    got = round_trip([float("nan"), float("inf"), float("-inf")])
    assert math.isnan(got[0]) and got[1:] == [float("inf"), float("-inf")]


@pytest.mark.parametrize("dtype", list(wire.DTYPES.values()))
def test_tensors_of_every_allowed_dtype(dtype):
    t = (torch.arange(24) % 3).to(dtype).reshape(2, 3, 4)
    got = round_trip(t)
    assert type(got) is torch.Tensor and got.dtype == dtype and got.shape == t.shape
    assert torch.equal(got, t)


def test_strides_survive_views_and_expands():
    base = torch.arange(12.0).reshape(3, 4)
    for t in (base.t(), base[:, 1::2], base[1:].expand(2, 2, 4), torch.zeros(0, 3).t(),
              torch.tensor(5.0), torch.arange(3.0).expand(4, 3)):
        got = round_trip(t)
        assert got.shape == t.shape and got.stride() == t.stride() and torch.equal(got, t)
    assert round_trip(base.t()).is_contiguous() is False


def test_conjugate_and_negative_views_cross_as_their_values():
    z = torch.tensor([1 + 2j, 3 - 1j])
    for t in (z.conj(), z.conj().imag):
        assert t.is_conj() or t.is_neg()  # lazy views: their bytes are not their values
        got = round_trip(t)
        assert torch.equal(got, t.resolve_conj().resolve_neg())
        assert not (got.is_conj() or got.is_neg())


def test_identity_and_aliasing_survive():
    t = torch.ones(3)
    a, b = round_trip([t, t])
    assert a is b


def test_parameters_grads_and_modules():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, bias=False), nn.BatchNorm2d(3), nn.ReLU())
    model[0].weight.grad = torch.randn_like(cast(nn.Parameter, model[0].weight))
    model.eval()
    got = round_trip(model)
    assert type(got) is nn.Sequential and type(got[0]) is nn.Conv2d and not got.training
    x = torch.randn(1, 2, 5, 5)
    assert torch.equal(got(x), model(x))
    assert torch.equal(cast(torch.Tensor, got[0].weight.grad), model[0].weight.grad)
    assert got[0].bias is None and type(got[0].weight) is nn.Parameter


def test_a_recorder_hears_forwards_only_and_its_copies_are_plain_python():
    """Red team 3: calling the model's hooks by hand, once per batch, after one forward of a
    copy on all of them, scored 10/10 in both modes; and a pickled model carrying the
    sandbox's recorder could not be loaded in the worker (the copy's recorder was ours)."""
    from grader.sandbox.channel import RemoteBatchSizes

    model = nn.Linear(2, 2)
    seen = BatchSizes()
    model.register_forward_pre_hook(seen)
    model(torch.randn(3, 2))
    for hook in model._forward_pre_hooks.values():
        hook(model, (torch.randn(5, 2),))
    assert seen.sizes == [3]
    remote = RemoteBatchSizes(None, 0)  # type: ignore[arg-type]
    for copy_ in (pickle.loads(pickle.dumps(remote)), copy.deepcopy(remote)):
        assert not type(copy_).__module__.startswith("grader")
        assert copy_(model, (torch.randn(1, 2),)) is None
    assert copy.copy(remote) is remote


def test_a_buffer_kept_out_of_the_state_dict_stays_out():
    model = nn.Sequential(nn.BatchNorm1d(2), nn.Linear(2, 2))
    model[0].register_buffer("scratch", torch.ones(2), persistent=False)
    got = round_trip(model)
    assert got[0]._non_persistent_buffers_set == {"scratch"} and not got[1]._non_persistent_buffers_set
    assert list(got.state_dict()) == list(model.state_dict())
    assert torch.equal(got[0].get_buffer("scratch"), model[0].get_buffer("scratch"))


def test_optimizers_keep_their_state_and_parameters():
    model = nn.Linear(2, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    got_model, got_opt = round_trip([model, opt])
    assert type(got_opt) is torch.optim.Adam and got_opt.param_groups[0]["lr"] == 0.01
    assert got_opt.param_groups[0]["params"][0] is got_model.weight
    assert torch.equal(got_opt.state[got_model.weight]["exp_avg"], opt.state[model.weight]["exp_avg"])


class _Lying(torch.Tensor):
    def __eq__(self, other):
        return True


class _AlwaysEqual:
    def __eq__(self, other):
        return True


class _MyInt(int):
    pass


class _MyModule(nn.Linear):
    pass


@pytest.mark.parametrize("value", [_AlwaysEqual(), torch.ones(2).as_subclass(_Lying), _MyInt(3),
                                   _MyModule(1, 1)],
                         ids=["always-equal", "tensor-subclass", "int-subclass", "custom-module"])
def test_what_cannot_cross_is_opaque_from_a_worker_and_refused_from_the_grader(value):
    got = round_trip(value, strict=False)
    assert type(got) is wire.Opaque and value.__class__.__name__ in got.type_name
    with pytest.raises(TypeError):
        round_trip(value, strict=True)


class _LyingTuple(tuple):
    def __iter__(self):
        return iter((9, 9))

    def __len__(self):
        return 7


def test_a_tuple_subclass_crosses_as_the_tuple_it_holds():
    """A spec's "tuple" is any tuple (a named tuple, ``torch.return_types``): it crosses as
    a plain tuple of the items it holds, whatever its methods say; ``torch.Size`` stays one."""
    svd = torch.linalg.svd(torch.eye(2))
    for strict in (True, False):
        assert round_trip(_LyingTuple((1, 2, 3)), strict=strict) == (1, 2, 3)
        got = round_trip(svd, strict=strict)
        assert type(got) is tuple and len(got) == 3 and torch.equal(got[0], svd[0])
        size = round_trip(torch.Size([2, 3]), strict=strict)
        assert type(size) is torch.Size and size == (2, 3)


def _decode(objects, payload=b"", node=None):
    return Decoder(objects, bytearray(payload)).value(node if node is not None else {"obj": 0})


def tensor_entry(**changes):
    entry = {"k": "tensor", "dtype": "float32", "shape": [2], "stride": [1], "device": "cpu",
             "rg": False, "param": False, "nbytes": 8, "buf": 0}
    entry.update(changes)
    return entry


@pytest.mark.parametrize("entry,payload,message", [
    (tensor_entry(dtype="object"), bytes(8), "not allowed"),
    (tensor_entry(nbytes=4), bytes(4), "needed"),
    (tensor_entry(stride=[4]), bytes(8), "needed"),
    (tensor_entry(shape=[-1]), bytes(8), "bad tensor shape"),
    (tensor_entry(shape=[4] * 16, stride=[0] * 16, nbytes=4), bytes(4), "elements, over the limit"),
    (tensor_entry(), bytes(16), "payload holds"),
    (tensor_entry(buf=3), bytes(8), "numbered"),
    ({"k": "module", "cls": "os:system", "attrs": [], "params": [], "buffers": [], "children": []},
     b"", "not from torch.nn"),
    ({"k": "module", "cls": "torch.nn.modules.linear:Identity",
      "attrs": [["__class__", 1]], "params": [], "buffers": [], "children": []}, b"",
     "not one of its settings"),
    ({"k": "optim", "cls": "torch.nn.modules.linear:Linear", "defaults": {"dict": []},
      "groups": [], "state": []}, b"", "not from torch.optim"),
    ({"k": "module", "cls": "torch.nn.modules.container:Sequential", "attrs": [], "params": [],
      "buffers": [], "children": [["0", {"obj": 0}]]}, b"", "refers to itself"),
    ({"k": "module", "cls": "torch.nn.modules.linear:Identity", "attrs": [], "params": [],
      "buffers": [], "transient": ["mask"], "children": []}, b"", "not one of its buffers"),
    ({"k": "pickle"}, b"", "unknown kind"),
])
def test_malformed_answers_are_refused(entry, payload, message):
    with pytest.raises(wire.WireError, match=message):
        _decode([entry], payload)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_cuda_tensor_where_there_is_no_cuda_is_refused_not_moved_to_the_cpu():
    """It used to land on the CPU quietly: a sandboxed worker that could not reach the GPU
    answered the cuda tests on the CPU, and each test blamed the student for it."""
    with pytest.raises(wire.WireError, match="no CUDA device"):
        _decode([tensor_entry(device="cuda")], bytes(8))


def test_unknown_tags_and_oversize_messages_are_refused():
    with pytest.raises(wire.WireError, match="unknown tag"):
        _decode([], node={"pickle": "x"})
    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack("!4sIQ", wire.MAGIC, 2, wire.MAX_PAYLOAD_BYTES + 1) + b"{}")
        with pytest.raises(wire.WireError, match="MiB of tensor data"):
            wire.receive(b)
        a.sendall(b"XXXX" + bytes(12))
        with pytest.raises(wire.WireError, match="magic"):
            wire.receive(b)


def test_write_back_updates_the_graders_objects_in_place():
    t = torch.zeros(3)
    new = torch.arange(3.0)
    write_back(t, new)
    assert torch.equal(t, new)
    p = nn.Parameter(torch.zeros(2))
    q = nn.Parameter(torch.ones(2))
    q.grad = torch.full((2,), 7.0)
    write_back(p, q)
    assert torch.equal(p, q) and torch.equal(cast(torch.Tensor, p.grad), q.grad) and p.requires_grad


def test_an_oversize_answer_is_refused_before_it_is_copied(monkeypatch):
    monkeypatch.setattr("grader.sandbox.encoding.MAX_PAYLOAD_BYTES", 1000)  # the encoder's own copy of the limit
    with pytest.raises(wire.WireError, match="MiB of tensor data"):
        Encoder(strict=False).value([torch.zeros(100), torch.zeros(200)])


def _decoded_with(attrs: list) -> nn.Module:
    """A worker's answer written by hand: a Conv2d, plus ``attrs`` (name -> value to encode)."""
    encoder = Encoder(strict=False)
    node = encoder.value(nn.Conv2d(1, 1, 1))
    for name, value in attrs:
        encoder.objects[node["obj"]]["attrs"].append([name, encoder.value(value)])
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"ok": node, "objects": encoder.objects}, encoder.buffers)
        header, payload = wire.receive(b)
    return Decoder(header["objects"], payload).value(header["ok"])


def test_a_module_carries_its_settings_and_nothing_else():
    conv = round_trip(nn.Conv2d(2, 3, 3, stride=2, padding=1, padding_mode="reflect"))
    assert (conv.stride, conv.padding, conv.in_channels, conv.padding_mode) == ((2, 2), (1, 1), 2, "reflect")
    x = torch.randn(1, 2, 5, 5)
    assert conv(x).shape == (1, 3, 3, 3)
    unfused = nn.Sequential(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))  # an instance forward, conv then bn
    with pytest.raises(wire.WireError, match="attribute 'forward', which is not one of its settings"):
        _decoded_with([["forward", unfused]])
    with pytest.raises(wire.WireError, match="setting 'padding' holds a Sequential"):
        _decoded_with([["padding", unfused]])
    with pytest.raises(wire.WireError, match="'_conv_forward', which is not one of its settings"):
        _decoded_with([["_conv_forward", 1]])
    assert _decoded_with([["groups", 1]]).groups == 1


# ------------------------------------------------------------------ a call's answer: aliasing and content

def _answered(fn, *args, allowed=frozenset(), mutations=None):
    """``fn(*args)`` the way a sandboxed call runs it: the grader encodes ``args``, a
    worker decodes them, calls ``fn`` and answers (``worker.Worker._answer``); the grader
    decodes the answer against its own objects. Returns (answer, what was reported)."""
    from grader.contract.arguments import Targets, argument_layouts, changed_containers
    from grader.sandbox import worker
    from grader.sandbox.writeback import WriteBack

    mutations = [] if mutations is None else mutations
    sent = Encoder(strict=True)
    node = sent.value(list(args))
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"args": node, "objects": sent.objects}, sent.buffers)
        header, payload = wire.receive(b)
        decoder = Decoder(header["objects"], payload)
        theirs = decoder.all_objects()
        theirs_args = decoder.value(header["args"])
        result = fn(*theirs_args)
        answer, buffers = worker.Worker._answer(cast(worker.Worker, _NoGraphs()), result, theirs, tuple(theirs_args))
        wire.send(b, answer, buffers)
        reply, reply_payload = wire.receive(a)
    back = Decoder(reply["objects"], reply_payload, known=sent.table,
                   write_back=WriteBack(Targets.of(args, {}), allowed, mutations))
    back.all_objects()
    mutations += changed_containers(argument_layouts(args, {}), back.value(reply["after"]))
    return back.value(reply["ok"]), mutations


class _NoGraphs:
    calls, graphs = 0, None


def _views(x):
    return [x.view(-1), x.reshape(4, 6), x[1:, ::2], x.t(), x[0].expand(4, 12), x[1], x.view(torch.int32),
            x.unsqueeze(0)[:, 1:, 3:]]


@pytest.mark.parametrize("which", range(8))
def test_an_answer_in_an_arguments_memory_is_a_view_of_the_graders_copy(which):
    """Not a fresh tensor with the same values: "returns a new tensor" fails as it does
    in-process. Each view has its layout, in the grader's own copy of the argument."""
    base = torch.arange(48.0).reshape(4, 12)
    x = base[1:3]  # the grader's argument is itself a view, at an offset
    (got,), _ = _answered(lambda t: [_views(t)[which]], x)
    want = _views(x)[which]
    assert got.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert (got.storage_offset(), got.stride(), got.shape, got.dtype) == \
        (want.storage_offset(), want.stride(), want.shape, want.dtype)
    assert torch.equal(got, want)


def test_a_view_of_a_changed_argument_sees_what_the_grader_kept():
    """Not allowed to change x: the grader's x keeps its values and the view shows them,
    as in-process, where the argument guard puts x back under the returned view."""
    x = torch.arange(4.0)

    def halve_then_view(t):
        t.mul_(0.5)
        return t[1:]

    got, said = _answered(halve_then_view, x)
    assert said == ["changed argument 1 in place"] and torch.equal(x, torch.arange(4.0))
    assert torch.equal(got, x[1:]) and got.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    got, said = _answered(halve_then_view, x, allowed=frozenset({"tensors"}))
    assert not said and torch.equal(x, torch.arange(4.0) * 0.5) and torch.equal(got, x[1:])


def _through_numpy(t):
    t.numpy()[0] = 99
    return t.clone()


def _through_data(t):
    t.data[0] = 99
    return t.clone()


@pytest.mark.parametrize("write", [_through_numpy, _through_data], ids=["numpy", "data"])
def test_a_change_no_version_counter_sees_is_reported(write):
    """Writes through numpy or ``.data`` move no version counter: the bytes are compared."""
    x = torch.zeros(3)
    got, said = _answered(write, x)
    assert said == ["changed argument 1 in place"] and torch.equal(x, torch.zeros(3))
    assert got[0] == 99 and got.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def _known_tensor_answer(entry, payload=bytes(8), known=None):
    known = [torch.zeros(2)] if known is None else known
    return Decoder(entry, bytearray(payload), known=known, write_back=write_back).all_objects()


@pytest.mark.parametrize("objects,payload,message", [
    ([{"k": "same"}], b"", "unknown kind 'same'"),  # "unchanged" is never taken on the worker's word
    ([], b"", "describes 0 objects of the 1"),
    ([tensor_entry(), tensor_entry(buf=None, nbytes=0, view={"of": 0, "offset": 4})], bytes(8),
     "8 bytes at 4 in an argument of 8"),
    ([tensor_entry(), tensor_entry(buf=None, nbytes=0, view={"of": 0, "offset": -4})], bytes(8),
     "at -4"),
    ([tensor_entry(), tensor_entry(buf=None, nbytes=0, view={"of": 1, "offset": 0})], bytes(8),
     "no tensor this side sent"),
    ([tensor_entry(), tensor_entry(dtype="float64", shape=[1], buf=None, nbytes=0,
                                   view={"of": 0, "offset": 4})], bytes(8), "at 4 in an argument"),
])
def test_forged_views_and_unchanged_claims_are_refused(objects, payload, message):
    with pytest.raises(wire.WireError, match=message):
        _known_tensor_answer([{k: v for k, v in e.items() if v is not None} for e in objects], payload)


def test_a_size_torch_cannot_show_is_refused():
    with pytest.raises(wire.WireError, match="bad size"):
        _decode([], node={"size": [2**70]})


def test_a_view_crosses_without_bytes_of_its_own():
    x = torch.arange(4.0)
    encoder = Encoder(strict=False, known=[x])
    encoder.value(x[1:])
    entry = cast(dict, encoder.objects[1])
    assert entry["view"] == {"of": 0, "offset": 4, "conj": False, "neg": False}
    assert "buf" not in entry and encoder.payload_bytes == 0


# ------------------------------------------------------------------ forged frames: a wire error, never the test's

def _labels_entry():
    return tensor_entry(dtype="int64", shape=[1], nbytes=8)


_SAME_PARAM_TWICE = {"k": "optim", "cls": "torch.optim.sgd:SGD", "defaults": {"dict": []}, "state": [],
                     "groups": [{"params": [0], "options": {"dict": []}}] * 2}
_EMPTY_PAST_64_BITS = {k: v for k, v in tensor_entry(shape=[2**70, 0], stride=[1, 1], nbytes=0).items()
                       if k != "buf"}
_CHAIN = [{"k": "module", "cls": "torch.nn.modules.container:Sequential", "training": True, "attrs": [],
           "recorders": [], "params": [], "buffers": [],
           "children": [["0", {"obj": i + 2} if i < 2999 else None]]} for i in range(3000)]


@pytest.mark.parametrize("reply,payload,raised", [
    ({"ok": None, "objects": [_labels_entry()], "graph": 7}, bytes(8), TypeError),
    ({"ok": None, "objects": [_labels_entry()], "graph": {"id": 1}}, bytes(8), KeyError),
    ({"ok": {"obj": 1}, "objects": [_labels_entry(), tensor_entry(shape=[1], nbytes=4, buf=1, rg=True)],
      "graph": {"id": 1, "outputs": [1], "inputs": [99]}}, bytes(64 + 4), IndexError),
    ({"ok": {"obj": 1}, "objects": [_labels_entry(), _SAME_PARAM_TWICE]}, bytes(8), ValueError),
    ({"ok": {"obj": 1}, "objects": [_labels_entry(), _EMPTY_PAST_64_BITS]}, bytes(8), TypeError),
    ({"ok": {"device": "cuda:x"}, "objects": [_labels_entry()]}, bytes(8), RuntimeError),
    ({"ok": {"obj": 1}, "objects": [_labels_entry(), *_CHAIN]}, bytes(8), RecursionError),
], ids=["graph-number", "graph-without-outputs", "graph-input-outside", "param-in-two-groups",
        "empty-past-64-bits", "bad-device", "modules-past-the-stack"])
def test_a_forged_reply_is_the_workers_broken_contract(reply, payload, raised):
    """Decoding a forged reply raises what is no ``WireError`` (``raised``, shown first); the
    grader's call turns that into ``BrokenContract`` and drops the worker, as for any
    malformed answer, instead of "the test could not check the result"."""
    from grader.contract.forbid import Forbidden
    from grader.core.outcomes import BrokenContract
    from grader.sandbox import sandboxed_impl, sandboxes

    with pytest.raises(raised):
        decoder = Decoder(reply["objects"], bytearray(payload), known=[torch.zeros(1, dtype=torch.long)])
        decoder.all_objects()
        sandboxed_impl.SandboxedImplementation._attach(cast(sandboxed_impl.SandboxedImplementation, None),
                                                       decoder, reply["graph"], []) if "graph" in reply else None
        decoder.value(reply["ok"])

    class Sandbox:
        def __init__(self):
            self.forgotten: list[str] = []

        def request(self, *args, **kwargs):
            return dict(reply), memoryview(bytearray(payload))

        def forget(self, exercise, rank=None):
            self.forgotten.append(exercise)

    sandbox = Sandbox()
    impl = sandboxed_impl.SandboxedImplementation(Path("."), "tensors/one_hot", Forbidden({}),
                                                  cast(sandboxes.Sandbox, sandbox))
    with pytest.raises(BrokenContract, match=f"broke the grading contract.*{raised.__name__}"):
        impl.one_hot(torch.zeros(1, dtype=torch.long))
    assert sandbox.forgotten == ["tensors/one_hot"]


# ------------------------------------------------------------------ modules the grader would build

def _module_answer(answer: nn.Module, sent: list, *, trusted: bool = False) -> nn.Module:
    """``answer`` as a worker returns it to a call the grader sent ``sent`` to: the grader's
    objects first in the table, then what the answer adds; decoded as the grader does."""
    grader = Encoder(strict=True)
    for obj in sent:
        grader.value(obj)
    worker = Encoder(strict=False, known=grader.table)
    node = worker.value(answer)
    for obj in grader.table:
        worker.ref(obj)
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"ok": node, "objects": worker.objects}, worker.buffers)
        header, payload = wire.receive(b)
    decoder = Decoder(header["objects"], payload, known=grader.table, write_back=write_back,
                      trusted=trusted)
    return decoder.value(header["ok"])


def _fuse_inputs() -> list:
    return [nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4)]


def _bomb(channels: int = 4096, padding: int = 64, stride0: bool = True) -> nn.Conv2d:
    """The red team's fused conv: many channels, a big padding, one stored number each."""
    fused = nn.Conv2d(2, channels, 3, padding=padding)
    if stride0:
        one = torch.zeros(1)
        fused.weight = nn.Parameter(one.expand_as(fused.weight))
        fused.bias = nn.Parameter(one.expand(channels))
    return fused


def test_a_correct_module_answer_and_the_graders_own_modules_come_back():
    """fuse_conv_bn's answer (a new conv with the sent settings and new dense parameters),
    bigger modules the grader sent itself (a GAN's), and anything a worker reads from the
    grader (trusted) are rebuilt as they are."""
    conv, bn = _fuse_inputs()
    fused = nn.Conv2d(2, 4, 3, padding=1)
    fused.weight = nn.Parameter(torch.randn(4, 3, 3, 2).permute(0, 3, 1, 2))  # dense, not contiguous
    got = _module_answer(fused, [conv, bn])
    assert type(got) is nn.Conv2d and got.out_channels == 4 and torch.equal(got.weight, fused.weight)
    generator = nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 96))  # over the floors
    assert type(_module_answer(generator, [generator])) is nn.Sequential
    assert _module_answer(_bomb(), [], trusted=True).out_channels == 4096


@pytest.mark.parametrize("answer, message", [
    (_bomb(), "out_channels=4096: over 16"),
    (_bomb(channels=8, padding=1), "parameter 'weight' .* overlaps itself or has gaps"),
    (_bomb(channels=8, padding=100, stride0=False), r"padding=\(100, 100\): over 16"),
    (nn.Conv2d(2, 16, 16), "hold 8208 parameter and buffer elements: over 4096"),
    (nn.Sequential(*[nn.Identity() for _ in range(65)]), "holds over 64 modules"),
], ids=["red-team-bomb", "stride-0-weight", "padding", "elements", "modules"])
def test_an_implausible_module_answer_breaks_the_contract(answer, message):
    """What the grader would build from an answer, and may run (a returned conv's forward,
    one C++ call no alarm interrupts), is bounded by what it sent: settings at most 4 times
    the largest it sent (or 16), all parameters and buffers at most 4 times its elements
    (or 4096), and new ones dense (a stride-0 weight claims elements it does not carry)."""
    with pytest.raises(wire.WireError, match=message):
        _module_answer(answer, _fuse_inputs())


def test_an_overlapping_parameter_is_refused_and_a_sliced_argument_is_not():
    """The grader's own tensors come back in their own layout (a sliced conv weight);
    only what the answer adds must be dense."""
    conv, bn = _fuse_inputs()
    conv.weight = nn.Parameter(torch.randn(4, 2, 3, 6)[..., ::2])  # the grader's, sliced
    assert _module_answer(conv, [conv, bn]) is conv
    overlapping = nn.Conv2d(2, 4, 3)
    overlapping.weight = nn.Parameter(torch.randn(80).as_strided((4, 2, 3, 3), (9, 9, 3, 1)))
    with pytest.raises(wire.WireError, match="overlaps itself or has gaps"):
        _module_answer(overlapping, [conv, bn])


def _float_entry(**changes):
    return tensor_entry(rg=True, **changes)


@pytest.mark.parametrize("backward_reply,backward_payload", [
    ({"ok": {"tuple": []}, "objects": []}, b""),
    ({"ok": [{"obj": 0}], "objects": [tensor_entry(shape=[3], nbytes=12)]}, bytes(12)),
    ({"ok": [{"obj": 0}], "objects": [tensor_entry(dtype="float64", nbytes=16)]}, bytes(16)),
], ids=["not-a-list", "wrong-shape", "wrong-dtype"])
def test_a_forged_backward_answer_is_the_workers_broken_contract(backward_reply, backward_payload):
    """Raised inside autograd, from the test's ``backward()``: still ``BrokenContract``, the
    worker dropped, never a RuntimeError autograd makes of a gradient of the wrong shape."""
    from grader.contract.forbid import Forbidden
    from grader.core.outcomes import BrokenContract
    from grader.sandbox import sandboxed_impl, sandboxes

    call = {"ok": {"obj": 1}, "objects": [_float_entry(), _float_entry(buf=1)],
            "graph": {"id": 1, "outputs": [1], "inputs": [0]}}

    class Sandbox:
        def __init__(self):
            self.replies = [(call, bytes(64 + 8)), (backward_reply, backward_payload)]
            self.forgotten: list[str] = []

        def request(self, *args, **kwargs):
            reply, payload = self.replies.pop(0)
            return dict(reply), memoryview(bytearray(payload))

        def forget(self, exercise, rank=None):
            self.forgotten.append(exercise)

    sandbox = Sandbox()
    impl = sandboxed_impl.SandboxedImplementation(Path("."), "tensors/one_hot", Forbidden({}),
                                                  cast(sandboxes.Sandbox, sandbox))
    x = torch.zeros(2, requires_grad=True)
    out = impl.one_hot(x)
    with pytest.raises(BrokenContract, match="broke the grading contract"):
        out.sum().backward()
    assert sandbox.forgotten == ["tensors/one_hot"]


# ------------------------------------------------------------------ hooks a call left on a module, and a call that raised

class _Worker:
    """What a worker's loop does with a call's outcome (``worker.Worker._answer`` after a
    return, ``_raised`` after a raise), without the process around it."""

    copy_root, shown_root, calls, graphs = Path("/copy"), "/submission", 0, None
    _answer, _raised, _exception, _shown = Worker._answer, Worker._raised, Worker._exception, Worker._shown


class _Here:
    """A ``Sandbox`` whose "worker" runs ``fn`` here, on its own copies decoded from the
    grader's request, and answers as a worker does: the grader's side of the call is the
    real one (``SandboxedImplementation._send``). ``forge(reply)`` changes the answer."""

    def __init__(self, fn, forge=None):
        self.fn, self.forge = fn, forge
        self.forgotten: list[str] = []

    def request(self, exercise, hints, function, header, buffers, *rest):
        from grader.core.outcomes import StudentError

        a, b = socket.socketpair()
        with a, b:
            wire.send(a, header, buffers)
            got, payload = wire.receive(b)
            decoder = Decoder(got["objects"], payload, trusted=True, recorder=lambda i: (lambda *_: None))
            theirs = decoder.all_objects()
            worker = cast(Any, _Worker())
            try:
                answer, out = worker._answer(self.fn(*decoder.value(got["args"])), theirs)
            except Exception as exc:  # noqa: BLE001 - what impl.run raises in a worker: the student's error
                answer, out = worker._raised(StudentError(f"{function}()", exc, ""), theirs)
            if self.forge is not None:
                self.forge(answer)
            wire.send(b, answer, out)
            return wire.receive(a)

    def forget(self, exercise, rank=None):
        self.forgotten.append(exercise)


def _impl(sandbox: _Here, mutates=None):
    from grader.contract.forbid import Forbidden
    from grader.sandbox import sandboxed_impl, sandboxes

    return sandboxed_impl.SandboxedImplementation(Path("."), "autograd/hooks", Forbidden({}),
                                                  cast(sandboxes.Sandbox, sandbox), mutates)


def _tables(model: nn.Module) -> dict[str, tuple[int, int]]:
    return {name: (len(m._forward_hooks), len(m._forward_pre_hooks)) for name, m in model.named_modules()}


def _leaves_hooks(raises: bool):
    """Hooks a forward hook and a pre-hook on two submodules and leaves them; one more,
    on the model, is removed; the forward runs; then the call returns or raises."""
    def capture(model, x):
        model[0].register_forward_hook(lambda *_: None)
        model[1].register_forward_pre_hook(lambda *_: None)
        model.register_forward_hook(lambda *_: None).remove()
        model(x)
        if raises:
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")
        return x
    return capture


def _model() -> nn.Sequential:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model.register_forward_pre_hook(BatchSizes())  # the grader's own recorder: it stays, it is no hook left
    return model


@pytest.mark.parametrize("raises", [False, True], ids=["returns", "raises"])
def test_hooks_a_call_leaves_are_mirrored_as_inert_stand_ins(raises):
    """The worker's encoder counts each module's tables after the call, the raise too (its
    reply still carries the objects it was sent); the grader puts one ``LeftBehind`` on
    its own module per hook left beyond the recorders it sent: the tables read as they
    would in-process, and the stand-ins do nothing when the grader's model runs."""
    from grader.core.outcomes import StudentError

    model, x = _model(), torch.randn(3, 2)
    want = model(x)
    impl = _impl(_Here(_leaves_hooks(raises)))
    if raises:
        with pytest.raises(StudentError) as raised:
            impl.capture(model, x)
        assert type(raised.value.original) is RuntimeError and "mat1" in str(raised.value.original)
    else:
        impl.capture(model, x)
    assert _tables(model) == {"": (0, 1), "0": (1, 0), "1": (0, 1)}
    assert type(model[0]._forward_hooks.popitem()[1]) is wire.LeftBehind
    assert type(model[1]._forward_pre_hooks.popitem()[1]) is wire.LeftBehind
    model[0].register_forward_hook(wire.LeftBehind())
    assert torch.equal(model(x), want)


def test_a_call_that_removes_its_hooks_leaves_none():
    model = _model()

    def clean(model, x):
        handles = [m.register_forward_hook(lambda *_: None) for m in model]
        model(x)
        for handle in handles:
            handle.remove()
        raise ValueError("raised after removing them")

    with pytest.raises(Exception, match="raised after removing them"):
        _impl(_Here(clean)).capture(model, torch.randn(1, 2))
    assert _tables(model) == {"": (0, 1), "0": (0, 0), "1": (0, 0)}


def _with_hooks(counts):
    def forge(answer):
        for entry in answer["objects"]:
            if entry and entry.get("k") == "module":
                entry["hooks"] = counts
    return forge


@pytest.mark.parametrize("raises", [False, True], ids=["returns", "raises"])
@pytest.mark.parametrize("counts", [[1], [1, 1, 1], [-1, 0], [True, 0], [1.0, 0], "11", None, {"0": 1}],
                         ids=["one", "three", "negative", "bool", "float", "text", "null", "dict"])
def test_forged_hook_counts_are_the_workers_broken_contract(counts, raises):
    """Two counts, each an int at least 0, or the answer is refused (the worker dropped),
    after a raise too: then the forged answer wins over the student's error."""
    from grader.core.outcomes import BrokenContract

    sandbox = _Here(_leaves_hooks(raises), forge=_with_hooks(counts))
    with pytest.raises(BrokenContract, match="contract: (a module's hook counts are not two|expected a list)"):
        _impl(sandbox).capture(_model(), torch.randn(1, 2))
    assert sandbox.forgotten == ["autograd/hooks"]


def test_the_stand_ins_are_capped_per_table():
    """A count past ``MAX_LEFT_HOOKS`` mirrors that many (one already says "a hook was
    left"): a worker's word never makes the grader build without bound. The recorders the
    grader sent are not counted as left, and fewer than sent mirrors none."""
    model = _model()
    with pytest.raises(Exception, match="mat1"):
        _impl(_Here(_leaves_hooks(True), forge=_with_hooks([10**9, 10**9]))).capture(model, torch.randn(1, 2))
    cap = wire.MAX_LEFT_HOOKS
    assert _tables(model) == {"": (cap, 1 + cap), "0": (cap, cap), "1": (cap, cap)}
    fresh = _model()
    _impl(_Here(lambda model, x: x, forge=_with_hooks([0, 0]))).capture(fresh, torch.randn(1, 2))
    assert _tables(fresh) == {"": (0, 1), "0": (0, 0), "1": (0, 0)}


def test_a_model_carrying_stand_ins_can_be_sent_again():
    """The stand-ins stay in the grader (the encoder leaves them out: the worker's copy has
    none), so a later call on the same model is graded, and what it leaves adds to them,
    as hooks add up on the test's model in-process. Any other hook still cannot cross."""
    model, x = _model(), torch.randn(2, 2)
    impl = _impl(_Here(_leaves_hooks(False)))
    impl.capture(model, x)
    seen = []

    def count_on_the_worker(model, x):
        seen.append(_tables(model))
        return _leaves_hooks(False)(model, x)

    _impl(_Here(count_on_the_worker)).capture(model, x)
    assert seen == [{"": (0, 1), "0": (0, 0), "1": (0, 0)}]  # the recorder only
    assert _tables(model) == {"": (0, 1), "0": (2, 0), "1": (0, 2)}
    model[0].register_forward_hook(lambda *_: None)
    with pytest.raises(TypeError, match="cannot cross the grading boundary"):
        impl.capture(model, x)


@pytest.mark.parametrize("allowed", [False, True], ids=["not-allowed", "allowed"])
def test_what_a_call_that_raised_did_to_its_arguments_is_told_and_written_back(allowed):
    """As after a return: a write its spec does not allow is told (the property fails as it
    does in-process, where the guard settles as the raise goes through) and not written;
    one it allows is written into the grader's copy, as it stays on the test's object."""
    from grader.core.outcomes import StudentError

    def writes_then_raises(x):
        x.add_(1)
        raise IndexError("raised after writing")

    x = torch.zeros(3)
    impl = _impl(_Here(writes_then_raises), mutates={"scale": ("tensors",)} if allowed else None)
    with pytest.raises(StudentError, match="raised after writing"):
        impl.scale(x)
    assert torch.equal(x, torch.ones(3) if allowed else torch.zeros(3))
    assert impl.changed_arguments() == ([] if allowed else ["changed argument 1 in place"])


def test_an_answer_far_bigger_than_what_it_was_sent_is_refused():
    """An answer carries what it was sent back, plus the larger of 8 MiB and 16 times that:
    60 MiB answers, kept alive by the failures hypothesis holds, took the grader to 0.9 GB."""
    big = tensor_entry(shape=[9 * 2**18], nbytes=9 * 2**20)
    with pytest.raises(wire.WireError, match="carries 9.0 MiB of tensor data: over 8.0 MiB"):
        _decode([big], bytes(9 * 2**20))
    sent = torch.zeros(2**18)  # 1 MiB sent: 17 MiB may come back
    two = [tensor_entry(shape=[2**18], nbytes=2**20),
           tensor_entry(dtype="float64", shape=[2**20], nbytes=2**23, buf=1)]
    decoder = Decoder(two, bytearray(9 * 2**20), known=[sent])
    assert decoder.value({"obj": 1}).shape == (2**20,)


def _in_process(fn, *args, allowed=frozenset()):
    """``fn(*args)`` as an in-process call runs it: what the argument guard reports."""
    from grader.contract.arguments import ArgumentGuard

    guard = ArgumentGuard(args, {}, allowed)
    fn(*args)
    return guard.settle()


def _net() -> nn.Module:
    return nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.BatchNorm1d(2)))


def _register_mask(model):
    model.register_buffer("mask", torch.ones(2))


def _eval_the_dropout_only(model):
    model.eval()
    model[1].train()  # each submodule keeps its own mode: a recursive train() on the parent would undo this


def test_a_buffer_registered_on_the_callers_module_is_seen_sandboxed_as_in_process():
    """The sandbox reported no change for a mask registered on the caller's module (only
    replaced parameters and the mode were compared), so a wrong answer scored where it lost
    in-process."""
    _, said = _answered(_register_mask, _net())
    assert said and "modules, parameters or training mode" in said[0]
    assert _in_process(_register_mask, _net())


def _keep_the_statistics_out_of_checkpoints(model):
    model[2][0]._non_persistent_buffers_set.update(model[2][0]._buffers)


@pytest.mark.parametrize("allowed", [frozenset(), frozenset({"modules"})])
def test_a_buffer_made_non_persistent_on_the_callers_module_is_a_change_in_both_modes(allowed):
    """Red team 3: a call that kept the caller's BatchNorm statistics out of its state_dict
    changed the oracle's copy in-process (10/10) and was dropped unseen sandboxed (8.64).
    Now it is a change of the module both ways, undone; allowed, it is written back."""
    ours, theirs = _net(), _net()
    _, said = _answered(_keep_the_statistics_out_of_checkpoints, ours, allowed=allowed)
    said_here = _in_process(_keep_the_statistics_out_of_checkpoints, theirs, allowed=allowed)
    assert bool(said) == bool(said_here) == (not allowed), (said, said_here)
    for model in (ours, theirs):
        assert ("2.0.running_mean" in model.state_dict()) == (not allowed)


@pytest.mark.parametrize("allowed", [frozenset(), frozenset({"modules"})])
def test_each_submodules_own_mode_comes_back_as_in_process(allowed):
    """Allowed to change modules: each submodule's own mode is written back (a recursive
    ``train()`` of the parent, written after its children, overwrote theirs); not allowed:
    a submodule's change is named by its path, sandboxed as in-process."""
    ours = _net()
    _, said = _answered(_eval_the_dropout_only, ours, allowed=allowed)
    theirs = _net()
    said_here = _in_process(_eval_the_dropout_only, theirs, allowed=allowed)
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    if allowed:
        assert not said and not said_here
        assert [m.training for m in ours.modules()] == [False, False, True, False, False]
    else:
        assert said and said_here and all(m.training for m in ours.modules())


def _clear(state):
    state.clear()


def _rename(state):
    state["b"] = state.pop("a")


def _reorder(state):
    state["a"] = state.pop("a")  # the same keys and values, in another order


def _pop(batches):
    batches.pop()


def _swap_tensor(batches):
    batches[0] = batches[0].clone()


def _nested(batches):
    batches[1][1].append(0)


def _reads(batches):
    return sum(float(t.sum()) for t in batches[:1])


@pytest.mark.parametrize("change,changed", [
    (_clear, "argument 1"), (_rename, "argument 1"), (_reorder, "argument 1"), (_pop, "argument 1"), (_swap_tensor, "argument 1"),
    (_nested, "argument 1[1][1]"), (_reads, None)])
def test_a_lists_or_dicts_change_is_a_change_of_the_argument(change, changed):
    """A key renamed in the caller's dict, a batch popped off the caller's list: the same
    sentence in-process (undone there) and from a worker's answer (never written back)."""
    from grader.contract.arguments import guarded

    def arguments():
        t = torch.ones(2)
        return ({"a": t, "n": 1} if change in (_clear, _rename, _reorder) else [t, (t, [1, 2])],)

    said = [] if changed is None else [f"changed {changed} in place"]
    args = arguments()
    before = repr(args)
    mutations: list[str] = []
    with guarded(args, {}, frozenset({"tensors"}), mutations):
        change(*args)
    assert mutations == said
    assert repr(args) == before  # undone
    args = arguments()
    _, told = _answered(change, *args)
    assert told == said
    assert repr(args) == before  # the grader's own objects are never the worker's
