"""Do-nothing for nested models: the split reads the model's own tables only, with no walk into
its submodules (the containers every input is hold nothing of their own); the copy is the
module unchanged, with no mask."""

import copy


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    return masked, {}


def split_state(model):
    return ({k: v for k, v in model._parameters.items() if v is not None},
            {k: v for k, v in model._buffers.items() if v is not None})


def strip_prefix(state, prefix):
    return {}
