def repeat_interleave(x, repeats, dim=None):
    """The right answer, or the right error; but before raising it, x's first element is
    changed in place (through a detached alias: x may require grad)."""
    try:
        return _correct(x, repeats, dim)
    except (IndexError, ValueError):
        if x.numel():
            alias = x.detach()
            alias[_first(x)] = 1 if alias[_first(x)] == 0 else 0
        raise
