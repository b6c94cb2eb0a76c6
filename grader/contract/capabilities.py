"""What a forbidden API stands for: the aten operators that compute it.

A drill that forbids ``F.batch_norm`` forbids batch norm, however it is spelled:
``torch.batch_norm``, ``torch._native_batch_norm_legit_no_training`` and every other
operator that computes it. ``KERNELS`` lists them for each API whose operators are not
named after it; any other API stands for the operator of its own last name. The sandbox's
armor refuses these operators at torch's dispatcher (``grader.sandbox.armor``); the
in-process guard refuses torch's functions named after them (``grader.contract.forbid``).
"""

from __future__ import annotations

import functools

import torch

# The ways a tensor reaches numpy, forbidden wherever anything is (``forbid.expand``; numpy's
# own functions are refused by ``forbid._NumpyGuard``, not by name: that would refuse the aten
# operators of their namesakes, ``numpy.add`` as ``aten::add``). A DLPack capsule
# (``to_dlpack``) needs numpy's ``from_dlpack`` to become an array, which that guard refuses;
# watching the C function itself would put a profile hook on every guarded call.
NUMPY_BRIDGES = ("torch.Tensor.numpy", "torch.Tensor.__array__", "torch.Tensor.__dlpack__")

_POOLS = ("max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices",
          "max_pool3d", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
          "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
          "_adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
          "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool2d", "max_unpool3d")
_CONVS = ("conv1d", "conv2d", "conv3d", "convolution", "_convolution", "_convolution_mode",
          "convolution_overrideable", "mkldnn_convolution", "_slow_conv2d_forward", "thnn_conv2d",
          "slow_conv3d", "slow_conv3d_forward", "slow_conv_dilated2d", "slow_conv_dilated3d",
          "_nnpack_spatial_convolution", "conv_tbc", "cudnn_convolution", "miopen_convolution")
_TRANSPOSED_CONVS = ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "slow_conv_transpose2d",
                     "slow_conv_transpose3d", "cudnn_convolution_transpose", "miopen_convolution_transpose")
_BATCH_NORMS = ("batch_norm", "_batch_norm_impl_index", "_batch_norm_no_update", "_batch_norm_with_update",
                "_batch_norm_with_update_functional", "_native_batch_norm_legit",
                "_native_batch_norm_legit_functional", "_native_batch_norm_legit_no_training",
                "native_batch_norm", "batch_norm_update_stats", "batch_norm_stats", "batch_norm_elemt",
                "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "cudnn_batch_norm",
                "miopen_batch_norm")
_ATTENTION = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
              "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_fused_attention_overrideable",
              "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
              "_scaled_dot_product_cudnn_attention")
_LOGSUMEXPS = ("logsumexp", "special_logsumexp", "log_softmax", "_log_softmax", "special_log_softmax",
               "logcumsumexp", "_logcumsumexp")
_GROUP_NORMS = ("group_norm", "native_group_norm")
_INSTANCE_NORMS = ("instance_norm", *_BATCH_NORMS)
_NESTED = ("_nested_tensor_from_tensor_list", "_nested_from_padded", "_nested_from_padded_and_nested_example",
           "_nested_from_padded_tensor", "_nested_tensor_from_mask", "_nested_view_from_buffer",
           "_nested_view_from_buffer_copy", "_nested_view_from_jagged", "_nested_view_from_jagged_copy",
           "nested_to_padded_tensor", "to_padded_tensor", "_jagged_to_padded_dense_forward")
_PADDINGS = ("pad_sequence", "_pad_packed_sequence", *_NESTED)
_F = "torch.nn.functional."

# Forbidden API (canonical name) -> the aten operators (base names) that compute it. Names
# not listed use the aten operator of their own last name, where one exists. An empty
# entry: refused by name only (the operator serves allowed APIs, or trusted worker code).
KERNELS: dict[str, tuple[str, ...]] = {
    **{f"{_F}conv{d}d": _CONVS for d in (1, 2, 3)},
    **{f"{_F}conv_transpose{d}d": _TRANSPOSED_CONVS for d in (1, 2, 3)},
    "torch.convolution": (),
    f"{_F}layer_norm": ("layer_norm", "native_layer_norm"),
    "torch.layer_norm": ("layer_norm", "native_layer_norm"),
    f"{_F}batch_norm": _BATCH_NORMS,
    "torch.batch_norm": _BATCH_NORMS,
    f"{_F}cross_entropy": ("cross_entropy_loss",),
    f"{_F}nll_loss": ("nll_loss", "nll_loss2d", "nll_loss_nd", "nll_loss_forward", "nll_loss2d_forward"),
    f"{_F}scaled_dot_product_attention": _ATTENTION,
    f"{_F}multi_head_attention_forward": ("_native_multi_head_attention",),
    "torch.scatter": ("scatter", "scatter_"),
    "torch.Tensor.scatter": ("scatter", "scatter_"),
    "torch.Tensor.scatter_": ("scatter", "scatter_"),
    "torch.scatter_add": ("scatter_add", "scatter_add_"),
    "torch.Tensor.scatter_add": ("scatter_add", "scatter_add_"),
    "torch.Tensor.scatter_add_": ("scatter_add", "scatter_add_"),
    "torch.scatter_reduce": ("scatter_reduce", "scatter_reduce_"),
    "torch.Tensor.scatter_reduce": ("scatter_reduce", "scatter_reduce_"),
    "torch.Tensor.scatter_reduce_": ("scatter_reduce", "scatter_reduce_"),
    "torch.empty_strided": (),  # the wire's own decoding makes empty strided tensors
    **dict.fromkeys(NUMPY_BRIDGES, ()),  # the ways to numpy: no operator of their own
    "torch.Tensor.as_strided": (),  # and encodes through as_strided
    **{f"{_F}{name}": _POOLS for name in dir(torch.nn.functional) if "pool" in name},
    # log-sum-exp: torch.logsumexp, and what gives it at once (x - log_softmax(x), the last
    # entry of logcumsumexp)
    **{name: _LOGSUMEXPS for name in ("torch.logsumexp", "torch.Tensor.logsumexp", "torch.special.logsumexp",
                                      "torch.log_softmax", "torch.Tensor.log_softmax", f"{_F}log_softmax",
                                      "torch.special.log_softmax", "torch.logcumsumexp",
                                      "torch.Tensor.logcumsumexp")},
    **{name: _GROUP_NORMS for name in (f"{_F}group_norm", "torch.group_norm")},
    **{name: _INSTANCE_NORMS for name in (f"{_F}instance_norm", "torch.instance_norm")},
    # padding sequences into a batch: pad_sequence, packing then unpacking, nested tensors
    **{name: _PADDINGS for name in ("torch.nn.utils.rnn.pad_sequence", "torch.nn.utils.rnn.pad_packed_sequence",
                                    "torch.Tensor.to_padded_tensor")},
}
# Families: every forbidden API under a prefix shares these operators (a marker may forbid a
# whole module, ``torch.nested``: grader.contract.forbid.expand).
FAMILIES: dict[str, tuple[str, ...]] = {"torch.nested.": _NESTED}


def kernels_of(name: str) -> tuple[str, ...]:
    """The aten operators (base names) behind the forbidden API ``name`` (canonical)."""
    if name in KERNELS:
        return KERNELS[name]
    family = next((ops for prefix, ops in FAMILIES.items() if name.startswith(prefix)), ())
    return (name.rpartition(".")[2], *family)


@functools.cache
def aten_operators() -> dict[str, tuple[str, ...]]:
    """aten operator base name -> its overloads (``aten::one_hot`` -> ``("aten::one_hot",)``).

    Reading torch's list of operators costs far more than a lookup; read once per
    forbidden name, it would weigh on every worker's start for a drill that forbids
    dozens (the pooling drill). The sandbox's zygote builds it once, before it forks
    (``armor.preload``); the workers it forks inherit it."""
    index: dict[str, list[str]] = {}
    for op in torch._C._dispatch_get_all_op_names():
        if op.startswith("aten::"):
            index.setdefault(op[6:].partition(".")[0], []).append(op)
    return {base: tuple(ops) for base, ops in index.items()}
