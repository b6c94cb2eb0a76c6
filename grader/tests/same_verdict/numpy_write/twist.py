# drill: losses/metrics
# losses/metrics forbids nothing, so numpy is allowed: after the reference's right answer, each
# call changes its first argument through numpy, which moves no version counter (every dtype
# seen as an integer of its size).
_reference = {"iou": iou, "pearson": pearson, "mae": mae}  # noqa: F821 - the reference's, above
_SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # noqa: F821


def _flip_first(t):
    if t.numel():
        bits = t.detach().view(_SAME_SIZE_INT[t.element_size()]).numpy()
        first = (0,) * t.dim()
        bits[first] = 1 if bits[first] == 0 else 0


def iou(pred, target):
    got = _reference["iou"](pred, target)
    _flip_first(pred)
    return got


def pearson(x, y):
    got = _reference["pearson"](x, y)
    _flip_first(x)
    return got


def mae(x, y):
    got = _reference["mae"](x, y)
    _flip_first(x)
    return got
