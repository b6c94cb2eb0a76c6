"""Mistake: calls torch's own fuser on eval copies instead of doing the fold."""

import copy

from torch.nn.utils.fusion import fuse_conv_bn_eval as fold

CAUGHT_BY = ("test_fused_output_equals_conv_then_bn_eval",)


def fuse_conv_bn(conv, bn):
    return fold(copy.deepcopy(conv).eval(), copy.deepcopy(bn).eval())
