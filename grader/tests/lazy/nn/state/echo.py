"""Do-nothing: hands the arguments back (the module with the mask beside it, the model twice,
the checkpoint as it came)."""


def masked_copy(module, mask, persistent=True):
    return module, {"mask": mask}


def split_state(model):
    return model, model


def strip_prefix(state, prefix):
    return state
