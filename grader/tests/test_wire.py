"""The boundary's data format: exact round trips, and refusals of anything malformed."""

from __future__ import annotations

import math
import socket
import struct
from typing import cast

import pytest
import torch
from torch import nn

from grader.sandbox import wire


def round_trip(value, *, strict=True):
    """Encode, frame through a real socket pair, decode."""
    encoder = wire.Encoder(strict=strict)
    node = encoder.value(value)
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"ok": node, "objects": encoder.objects}, encoder.buffers)
        header, payload = wire.receive(b)
    decoder = wire.Decoder(header["objects"], payload)
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


def _decode(objects, payload=b"", node=None):
    return wire.Decoder(objects, bytearray(payload)).value(node if node is not None else {"obj": 0})


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
    wire.write_back(t, new)
    assert torch.equal(t, new)
    p = nn.Parameter(torch.zeros(2))
    q = nn.Parameter(torch.ones(2))
    q.grad = torch.full((2,), 7.0)
    wire.write_back(p, q)
    assert torch.equal(p, q) and torch.equal(cast(torch.Tensor, p.grad), q.grad) and p.requires_grad


def test_an_oversize_answer_is_refused_before_it_is_copied(monkeypatch):
    monkeypatch.setattr(wire, "MAX_PAYLOAD_BYTES", 1000)
    with pytest.raises(wire.WireError, match="MiB of tensor data"):
        wire.Encoder(strict=False).value([torch.zeros(100), torch.zeros(200)])


def _decoded_with(attrs: list) -> nn.Module:
    """A worker's answer written by hand: a Conv2d, plus ``attrs`` (name -> value to encode)."""
    encoder = wire.Encoder(strict=False)
    node = encoder.value(nn.Conv2d(1, 1, 1))
    for name, value in attrs:
        encoder.objects[node["obj"]]["attrs"].append([name, encoder.value(value)])
    a, b = socket.socketpair()
    with a, b:
        wire.send(a, {"ok": node, "objects": encoder.objects}, encoder.buffers)
        header, payload = wire.receive(b)
    return wire.Decoder(header["objects"], payload).value(header["ok"])


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
