"""Do-nothing: returns the conv it was given."""


def fuse_conv_bn(conv, bn):
    return conv
