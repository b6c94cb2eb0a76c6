"""Attack: answer with a module of 60,000 empty submodules.

No setting is implausible and no parameter is big, so every earlier check on a module
answer passed; rebuilding them took the grader to 2.2 GB and one drill's grading to
161 s (a normal grading of it: 280 MB, a few seconds).
"""

from torch import nn


def fuse_conv_bn(conv, bn):
    return nn.Sequential(*[nn.Identity() for _ in range(60_000)])
